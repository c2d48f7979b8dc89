// Speculative decoding (docs/simulator.md §4, "Speculative decoding"): off changes nothing,
// the tokens-per-step formula, the verification's and the drafts' costs, what it buys at
// batch 1 and what it costs at large batch, the request-level run, and the file's errors.
#include <QtTest>

#include <cmath>
#include <string>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "runner/run_search.h"
#include "sim/megatron.h"
#include "sim/serving_load.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {
Scenario withMtp(Scenario s, int k, double a)
{
    s.workload.speculative.method = SpeculativeMethod::Mtp;
    s.workload.speculative.draftTokens = k;
    s.workload.speculative.acceptanceRate = a;
    return s;
}
struct Pair {
    SimResult off, on;
};
Pair evaluateBoth(const Scenario& s, int batch, int k, double a)
{
    Plan p = megatronPlan(Simulator(s)).plan;
    p.batch = batch;
    p.microBatches = 1;
    return {Simulator(s).evaluate(p), Simulator(withMtp(s, k, a)).evaluate(p)};
}
} // namespace

class TestSpeculative : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tokensPerStepFormula();
    void offIsUnchanged();
    void batchOneGainsLargeBatchLoses();
    void draftCostAndMemoryArePaid();
    void requestLevelRunAgreesWithSteadyState();
    void badFieldsAreNamed();
    void acceptanceLengthAsEnginesReportIt();
    void exactCertifiesWithDrafting();
};

void TestSpeculative::tokensPerStepFormula()
{
    QCOMPARE(speculativeTokensPerStep(0.5, 0), 1.0);
    QCOMPARE(speculativeTokensPerStep(0.0, 3), 1.0);
    QCOMPARE(speculativeTokensPerStep(1.0, 3), 4.0);
    QVERIFY(std::abs(speculativeTokensPerStep(0.5, 3) - 1.875) < 1e-12); // 1 + .5 + .25 + .125
    QVERIFY(std::abs(speculativeTokensPerStep(0.8, 1) - 1.8) < 1e-12);
    // A first-draft rate apart from the deeper drafts' one.
    QVERIFY(std::abs(speculativeTokensPerStep(DraftAcceptance{0.8, 0.5}, 3) - (1 + 0.8 * (1 + 0.5 + 0.25))) < 1e-12);
    QCOMPARE(speculativeTokensPerStep(DraftAcceptance{0.8, 0.5}, 1), 1.8);
    // The family default is published for DeepSeek-V3/R1 only: the V3 report's rate for the
    // first draft, and deeper drafts at the rate that gives GLM-5's measured acceptance
    // length of DeepSeek-V3.2 (2.55 tokens per step at 4 drafts).
    const DraftAcceptance v3 = publishedMtpAcceptance(presetScenario("deepseek-v3-256gpu").model);
    QCOMPARE(v3.first, 0.875);
    QVERIFY(v3.later > 0.3 && v3.later < v3.first);
    QVERIFY(std::abs(speculativeTokensPerStep(v3, 4) - 2.55) < 1e-9);
    QVERIFY(publishedMtpAcceptance(presetScenario("llama3-70b-8gpu").model).first < 0);
}

void TestSpeculative::offIsUnchanged()
{
    // A method of "none" (or zero drafts) is the same scenario: every figure bit for bit.
    for (const char* name : {"llama3-70b-8gpu", "deepseek-v3-256gpu"}) {
        Scenario s = presetScenario(name);
        const Plan p = megatronPlan(Simulator(s)).plan;
        const SimResult a = Simulator(s).evaluate(p);
        s.workload.speculative.draftTokens = 3; // no method: off
        const SimResult b = Simulator(s).evaluate(p);
        QCOMPARE(b.tpotMs, a.tpotMs);
        QCOMPARE(b.ttftMs, a.ttftMs);
        QCOMPARE(b.tokensPerSPerGpu, a.tokensPerSPerGpu);
        QCOMPARE(b.memory.totalGb, a.memory.totalGb);
        QCOMPARE(b.draftUs, 0.0);
        QCOMPARE(b.tokensPerStep, 1.0);
    }
}

void TestSpeculative::batchOneGainsLargeBatchLoses()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Decode;
    s.workload.tpotSloMs = s.workload.ttftSloMs = 1e9;
    s.cluster.gpu.hbmGb = 1e6; // memory out of the way: the step's cost alone
    const Pair one = evaluateBoth(s, 1, 3, 0.8);
    // Batch 1 is weight-read bound: verifying 4 tokens costs little more than 1.
    QVERIFY2(one.on.tpotMs < 0.6 * one.off.tpotMs, qPrintable(QString("%1 vs %2").arg(one.on.tpotMs).arg(one.off.tpotMs)));
    QVERIFY(one.on.stageStepUs > one.off.stageStepUs); // the step itself is longer
    // At a large batch with short contexts the step is compute bound (the cache read that
    // the k + 1 queries share is small): k + 1 tokens per sequence cost about k + 1 times as
    // much, more than the accepted tokens repay.
    s.workload.promptTokens = s.workload.outputTokens = 128;
    const Pair big = evaluateBoth(s, 4096, 3, 0.8);
    QVERIFY2(big.on.tokensPerSPerGpu < big.off.tokensPerSPerGpu,
             qPrintable(QString("%1 vs %2").arg(big.on.tokensPerSPerGpu).arg(big.off.tokensPerSPerGpu)));
    QVERIFY(big.on.tpotMs / big.off.tpotMs > one.on.tpotMs / one.off.tpotMs);
}

void TestSpeculative::draftCostAndMemoryArePaid()
{
    Scenario s = presetScenario("deepseek-v3-256gpu");
    const Plan p = megatronPlan(Simulator(s)).plan;
    const SimResult off = Simulator(s).evaluate(p);
    const Scenario on = withMtp(s, 2, -1); // the family's published rate
    QVERIFY(validateScenario(on).empty());
    const SimResult r = Simulator(on).evaluate(p);
    QVERIFY(r.draftUs > 0);
    QVERIFY(std::abs(r.tokensPerStep - speculativeTokensPerStep(publishedMtpAcceptance(s.model), 2)) < 1e-12);
    QVERIFY(r.memory.weightsGb > off.memory.weightsGb); // the MTP block's weights
    QVERIFY(r.memory.kvCacheGb > off.memory.kvCacheGb); // its cache and the draft positions
    QVERIFY(r.stepTokens > off.stepTokens);             // k + 1 tokens per sequence in the budget
    // More drafts cost more drafting passes.
    const SimResult r3 = Simulator(withMtp(s, 3, -1)).evaluate(p);
    QVERIFY(std::abs(r3.draftUs / r.draftUs - 1.5) < 0.25);
}

void TestSpeculative::requestLevelRunAgreesWithSteadyState()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s = withMtp(s, 3, 0.7);
    Plan p = megatronPlan(Simulator(s)).plan;
    p.batch = 1;
    p.microBatches = 1;
    const Simulator sim(s);
    const SimResult steady = sim.evaluate(p);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = 1;
    l.requests = 3;
    l.warmupRequests = 0;
    const LoadRun run = simulateLoad(sim, p, steady, l);
    QVERIFY2(run.ok(), run.error.c_str());
    // A lone request: decode steps without prompt chunks, each emitting tokensPerStep.
    StepLoad alone{1, 0};
    SimResult step;
    sim.evaluate(p, step, false, &alone);
    QVERIFY(std::abs(run.figures.tpotMeanMs / step.tpotMs - 1) < 0.05);
}

void TestSpeculative::badFieldsAreNamed()
{
    Scenario s = withMtp(presetScenario("llama3-70b-8gpu"), 3, 0.7);
    auto back = parseScenario(scenarioToJson(s), "mem");
    QVERIFY(back.ok());
    QVERIFY(back.value.workload.speculative == s.workload.speculative);
    auto expectError = [](std::string text, const std::string& from, const std::string& to, const char* where) {
        const size_t at = text.find(from);
        QVERIFY2(at != std::string::npos, from.c_str());
        text.replace(at, from.size(), to);
        auto bad = parseScenario(text, "bad.json");
        QVERIFY(!bad.ok());
        QCOMPARE(QString::fromStdString(bad.errors.front().where), QString(where));
    };
    const std::string text = scenarioToJson(s);
    expectError(text, "\"draft_tokens\": 3", "\"draft_tokens\": 0", "workload.speculative.draft_tokens");
    expectError(text, "\"acceptance_rate\": 0.7", "\"acceptance_rate\": 1.5", "workload.speculative.acceptance_rate");
    expectError(text, "\"method\": \"mtp\"", "\"method\": \"medusa\"", "workload.speculative.method");
    // No published rate for Llama: the default is refused, naming the field.
    s.workload.speculative.acceptanceRate = -1;
    const FieldErrors e = validateScenario(s);
    QVERIFY(!e.empty());
    QCOMPARE(QString::fromStdString(e.front().where), QString("workload.speculative.acceptance_rate"));
}

// An engine's reported acceptance length replaces the rate: the step emits that many tokens,
// any model may give it, it survives the file, and giving both or more than k + 1 is named.
void TestSpeculative::acceptanceLengthAsEnginesReportIt()
{
    Scenario s = withMtp(presetScenario("llama3-70b-8gpu"), 3, -1);
    s.workload.speculative.acceptanceLength = 2.4;
    QVERIFY(validateScenario(s).empty()); // no published rate needed
    const DraftAcceptance a = speculativeAcceptance(s.workload.speculative, s.model);
    QCOMPARE(a.first, a.later);
    QVERIFY(std::abs(speculativeTokensPerStep(a, 3) - 2.4) < 1e-9);
    Plan p = megatronPlan(Simulator(s)).plan;
    QVERIFY(std::abs(Simulator(s).evaluate(p).tokensPerStep - 2.4) < 1e-9);
    auto back = parseScenario(scenarioToJson(s), "mem");
    QVERIFY(back.ok());
    QCOMPARE(back.value.workload.speculative.acceptanceLength, 2.4);
    // The two ends: nothing accepted, everything accepted.
    s.workload.speculative.acceptanceLength = 1;
    QVERIFY(std::abs(speculativeTokensPerStep(speculativeAcceptance(s.workload.speculative, s.model), 3) - 1) < 1e-9);
    s.workload.speculative.acceptanceLength = 4;
    QVERIFY(std::abs(speculativeTokensPerStep(speculativeAcceptance(s.workload.speculative, s.model), 3) - 4) < 1e-9);
    auto whereOf = [](const Scenario& bad) {
        const FieldErrors e = validateScenario(bad);
        return e.empty() ? QString() : QString::fromStdString(e.front().where);
    };
    Scenario tooLong = s;
    tooLong.workload.speculative.acceptanceLength = 4.5;
    QCOMPARE(whereOf(tooLong), QString("workload.speculative.acceptance_length"));
    Scenario both = s;
    both.workload.speculative.acceptanceLength = 2;
    both.workload.speculative.acceptanceRate = 0.5;
    QCOMPARE(whereOf(both), QString("workload.speculative.acceptance_length"));
    auto parsed = parseScenario(scenarioToJson(tooLong), "bad.json");
    QVERIFY(!parsed.ok());
    QCOMPARE(QString::fromStdString(parsed.errors.front().where), QString("workload.speculative.acceptance_length"));
}

// Many drafts that are never accepted make drafting most of a step: exact's tables price
// it, so it proves the optimum at once (before, its bounds left it out and the search
// ran for minutes over ever more leaves, and then claimed no proof).
void TestSpeculative::exactCertifiesWithDrafting()
{
    Scenario s = withMtp(presetScenario("deepseek-v3-256gpu"), 16, 0.0);
    auto cluster = clusterPreset("h200-8");
    QVERIFY(cluster.ok());
    s.cluster = cluster.value;
    s.workload.promptTokens = s.workload.outputTokens = 1024;
    s.workload.ttftSloMs = 2000;
    s.workload.tpotSloMs = 50;
    QVERIFY(validateScenario(s).empty());
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome e = runSearch(s, o);
    QVERIFY2(e.found && e.provedOptimal, e.message.c_str());
    QVERIFY(e.bestResult.draftUs > 0);
    QVERIFY2(e.calls < 100000, qPrintable(QString::number(e.calls)));
}

QTEST_APPLESS_MAIN(TestSpeculative)
#include "tst_speculative.moc"
