// Serving under load (sim/serving_load.h): each step is priced as the cost model prices
// that step, a lone request sees the unloaded prices, the queue answers the load, an
// overloaded open loop says it is saturated, runs are deterministic per seed, and the
// protocol reads from and writes to scenario files.
#include <QtTest>

#include "model/plan_text.h"

#include <cmath>
#include <limits>

#include "io/scenario_json.h"
#include "model/printf_text.h"
#include "sim/deployment.h"
#include "sim/megatron.h"
#include "sim/serving_load.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {
struct Setup {
    Scenario s;
    Plan plan;
    SimResult steady;
};
Setup recipe(const char* name)
{
    Setup x;
    x.s = presetScenario(name);
    const RecipePlan m = megatronPlan(Simulator(x.s));
    x.plan = m.plan;
    x.steady = Simulator(x.s).evaluate(x.plan);
    return x;
}
// Llama-3-70B on 8 GPUs as four TP 2 replicas of batch 16: small enough to queue under a loop.
Setup fourReplicas()
{
    Setup x = recipe("llama3-70b-8gpu");
    x.plan.tensorParallel = 2;
    x.plan.dataParallel = 4;
    x.plan.batch = 16;
    x.steady = Simulator(x.s).evaluate(x.plan);
    return x;
}
} // namespace

class TestServingLoad : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void steadyCompositionIsTheSteadyStep_data();
    void steadyCompositionIsTheSteadyStep();
    void loneRequestSeesUnloadedSteps();
    void ttftGrowsWithLoadAndSaturates();
    void lockStepReplicasWaitForEachOthersPrompts();
    void fewerRequestsThanInstances();
    void deterministicPerSeed();
    void openLoopMeasuresTheCountAsked();
    void closedLoopMeasuresTheCountAsked();
    void closedLoopStartsOnAnIdleEngine();
    void oneOutputTokenHasNoTpot();
    void protocolFlagsKeepTheScenarioTraffic();
    void protocolRoundTripsAndBadFieldsAreNamed();
};

void TestServingLoad::steadyCompositionIsTheSteadyStep_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::newRow("dense") << QStringLiteral("llama3-70b-8gpu");
    QTest::newRow("moe") << QStringLiteral("mixtral-8x22b-64gpu");
    QTest::newRow("mla") << QStringLiteral("deepseek-v3-256gpu");
}

// The steady state's step composed from explicit steps is priced exactly as the steady
// state: one cost model, two ways to drive it. When every step carries prompt tokens it is
// the mean step (batch sequences, batch x ISL/OSL prompt tokens); with prefill as events,
// the share-weighted mean of the step with one prompt piece and the step without.
void TestServingLoad::steadyCompositionIsTheSteadyStep()
{
    QFETCH(QString, scenario);
    const Setup x = recipe(scenario.toLatin1().constData());
    QVERIFY(x.steady.valid);
    const Simulator sim(x.s);
    const WorkloadSpec& w = x.s.workload;
    const double meanChunk = double(x.plan.batch) * w.promptTokens / w.outputTokens;
    const double share = sim.costs().chunkStepShare(x.plan);
    QVERIFY(share > 0 && share <= 1);
    SimResult r;
    if (share == 1) {
        const StepLoad mean{double(x.plan.batch), meanChunk};
        sim.evaluate(x.plan, r, false, &mean);
        QCOMPARE(r.tpotMs, x.steady.tpotMs);
    } else {
        QCOMPARE(x.plan.pipelineParallel, 1); // one stage: the cycle is the step's operators' sum
        StepLoad piece{double(x.plan.batch), meanChunk / share};
        piece.pieceShare = share;
        sim.evaluate(x.plan, r, false, &piece);
        const double withPiece = r.tpotMs;
        const StepLoad plain{double(x.plan.batch), 0};
        sim.evaluate(x.plan, r, false, &plain);
        const double mixed = share * withPiece + (1 - share) * r.tpotMs;
        QVERIFY2(std::abs(mixed - x.steady.tpotMs) <= 1e-9 * x.steady.tpotMs,
                 qPrintable(QString("%1 vs %2").arg(mixed, 0, 'g', 12).arg(x.steady.tpotMs, 0, 'g', 12)));
    }
    const StepLoad decodeOnly{double(x.plan.batch), 0};
    sim.evaluate(x.plan, r, false, &decodeOnly);
    QVERIFY(r.tpotMs < x.steady.tpotMs); // the prompt chunk costs something
}

// One request at a time: its first token comes after one step carrying its whole prompt
// (within the budget), its other tokens one decode step of one sequence apart.
void TestServingLoad::loneRequestSeesUnloadedSteps()
{
    const Setup x = recipe("llama3-70b-8gpu");
    const Simulator sim(x.s);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = 1;
    l.requests = 3;
    l.warmupRequests = 0;
    const LoadRun run = simulateLoad(sim, x.plan, x.steady, l);
    QVERIFY2(run.ok(), run.error.c_str());
    QVERIFY(x.s.workload.promptTokens <= x.s.workload.maxNumTokens);
    SimResult r;
    const StepLoad prefill{0, double(x.s.workload.promptTokens)}, decode{1, 0};
    sim.evaluate(x.plan, r, false, &prefill);
    const double prefillMs = r.tpotMs;
    sim.evaluate(x.plan, r, false, &decode);
    const double decodeMs = r.tpotMs;
    QCOMPARE(run.figures.requests, 3);
    QVERIFY(std::fabs(run.figures.ttftMeanMs - prefillMs) < 1e-6 * prefillMs);
    QVERIFY(std::fabs(run.figures.tpotMeanMs - decodeMs) < 1e-6 * decodeMs);
    QCOMPARE(run.figures.ttftP99Ms, run.figures.ttftP50Ms);
    QVERIFY(!run.figures.saturated);
}

// Mean TTFT rises with the offered rate; above the capacity the open loop is saturated and
// a longer run waits longer.
void TestServingLoad::ttftGrowsWithLoadAndSaturates()
{
    const Setup x = recipe("llama3-70b-8gpu");
    const Simulator sim(x.s);
    const double cap = simulateLoad(sim, x.plan, x.steady, openLoop(1, 50)).figures.capacityRequestsPerS;
    QVERIFY(cap > 0);
    double previous = 0;
    for (double share : {0.2, 0.6, 0.95}) {
        const LoadRun run = simulateLoad(sim, x.plan, x.steady, openLoop(share * cap, 400));
        QVERIFY2(run.ok(), run.error.c_str());
        QVERIFY2(run.figures.ttftMeanMs > previous, qPrintable(QString::number(share)));
        QVERIFY(!run.figures.saturated);
        QVERIFY(run.figures.ttftP99Ms >= run.figures.ttftP90Ms && run.figures.ttftP90Ms >= run.figures.ttftP50Ms);
        previous = run.figures.ttftMeanMs;
    }
    const LoadRun shortRun = simulateLoad(sim, x.plan, x.steady, openLoop(2 * cap, 200));
    const LoadRun longRun = simulateLoad(sim, x.plan, x.steady, openLoop(2 * cap, 800));
    QVERIFY(shortRun.figures.saturated && longRun.figures.saturated);
    QVERIFY(longRun.figures.ttftMeanMs > 1.5 * shortRun.figures.ttftMeanMs);
    // Served output never beats the steady state's capacity by more than the tail's slack.
    QVERIFY(longRun.figures.outputTokensPerS <= 1.05 * x.steady.outputTokensPerS);
}

// The replicas of one MoE engine instance step together (their MoE layers exchange tokens
// every layer), so a prompt on any of them lengthens every one's step: a run of the group
// serves no more than the steady state, which prices that wait, says it can. The group's
// step with one replica's prompt costs more than the plain step and less than one where
// every replica carries such a prompt.
void TestServingLoad::lockStepReplicasWaitForEachOthersPrompts()
{
    const Setup x = recipe("deepseek-v3-256gpu");
    const Simulator sim(x.s);
    const int group = sim.costs().lockStepReplicas(x.plan);
    QVERIFY2(group > 1, qPrintable(QString::number(group)));
    const double seqs = x.plan.batch, prompt = x.s.workload.promptTokens;
    SimResult r;
    const StepLoad plain{seqs, 0}, everyReplica{seqs, prompt};
    StepLoad oneReplica{seqs, prompt};
    oneReplica.groupChunkTokens = prompt; // the busiest replica's is the group's only chunk
    sim.evaluate(x.plan, r, false, &plain);
    const double plainMs = r.tpotMs;
    sim.evaluate(x.plan, r, false, &oneReplica);
    const double oneMs = r.tpotMs;
    sim.evaluate(x.plan, r, false, &everyReplica);
    QVERIFY2(plainMs < oneMs && oneMs < r.tpotMs,
             qPrintable(QString("%1 %2 %3").arg(plainMs).arg(oneMs).arg(r.tpotMs)));
    // Above the steady capacity the group's run is saturated and serves at most the steady
    // output (one replica run alone, blind to the others' prompts, served 1.41x of it here).
    const double cap = x.steady.outputTokensPerS / x.s.workload.outputTokens;
    const LoadRun run = simulateLoad(sim, x.plan, x.steady, openLoop(1.3 * cap, 1500));
    QVERIFY2(run.ok(), run.error.c_str());
    QVERIFY(run.figures.saturated);
    QVERIFY2(run.figures.outputTokensPerS <= 1.05 * x.steady.outputTokensPerS,
             qPrintable(QString("%1 vs %2").arg(run.figures.outputTokensPerS).arg(x.steady.outputTokensPerS)));
    // A closed loop of fewer requests than replicas leaves the rest of the group idle: the
    // run measures the loop's requests, not one loop per replica.
    LoadSpec few;
    few.protocol = LoadProtocol::Concurrency;
    few.concurrency = group / 4;
    few.requests = 3 * few.concurrency;
    few.warmupRequests = 0;
    const LoadRun small = simulateLoad(sim, x.plan, x.steady, few);
    QVERIFY2(small.ok(), small.error.c_str());
    QCOMPARE(small.figures.requests, few.measuredRequests());
    // One request alone in the group: its prompt is the group's only one, not every
    // replica's, so it waits no longer than one of two requests on two replicas does.
    LoadSpec one = few, two = few;
    one.concurrency = 1;
    one.requests = 10;
    two.concurrency = 2;
    two.requests = 20;
    const LoadRun alone = simulateLoad(sim, x.plan, x.steady, one), pair = simulateLoad(sim, x.plan, x.steady, two);
    QVERIFY2(alone.ok() && pair.ok(), (alone.error + pair.error).c_str());
    QVERIFY2(alone.figures.ttftMeanMs <= pair.figures.ttftMeanMs * (1 + 1e-9),
             qPrintable(QString("%1 alone, %2 beside another").arg(alone.figures.ttftMeanMs).arg(pair.figures.ttftMeanMs)));
}

// A plan of several engine instances, each a lock-step group: a closed loop of fewer
// requests than instances runs those requests, not one per instance, and never emits more
// tokens than its requests can (one token per TPOT each).
void TestServingLoad::fewerRequestsThanInstances()
{
    Setup x = recipe("deepseek-v3-256gpu");
    x.plan.instances = x.plan.dataParallel / 2; // instances of two lock-step replicas
    x.plan.expertParallel = std::max(1, x.plan.expertParallel / x.plan.instances);
    x.plan.redundantExperts = 0;
    const Simulator sim(x.s);
    x.steady = sim.evaluate(x.plan);
    QVERIFY2(x.steady.structureChecks == 0, qPrintable(QString::fromStdString(planDegreesText(x.s, x.plan))));
    QCOMPARE(sim.costs().lockStepReplicas(x.plan), 2);
    for (const int c : {1, 3, x.plan.instances}) {
        LoadSpec l;
        l.protocol = LoadProtocol::Concurrency;
        l.concurrency = c;
        l.requests = 10 * c;
        l.warmupRequests = 0;
        const LoadRun run = simulateLoad(sim, x.plan, x.steady, l);
        QVERIFY2(run.ok(), run.error.c_str());
        QCOMPARE(run.figures.requests, l.measuredRequests());
        const double most = c * 1000.0 / run.figures.tpotMeanMs;
        QVERIFY2(run.figures.outputTokensPerS <= most * 1.0001,
                 qPrintable(QString("concurrency %1: %2 tokens/s, at most %3").arg(c).arg(run.figures.outputTokensPerS).arg(most)));
    }
}

void TestServingLoad::deterministicPerSeed()
{
    const Setup x = recipe("mixtral-8x22b-64gpu");
    const Simulator sim(x.s);
    LoadSpec l = openLoop(5, 300);
    l.uniformLengths = true;
    const LoadRun a = simulateLoad(sim, x.plan, x.steady, l), b = simulateLoad(sim, x.plan, x.steady, l);
    QVERIFY(a.ok() && b.ok());
    QCOMPARE(a.figures.ttftMeanMs, b.figures.ttftMeanMs);
    QCOMPARE(a.figures.tpotP99Ms, b.figures.tpotP99Ms);
    QCOMPARE(a.figures.steps, b.figures.steps);
    l.seed = 2;
    const LoadRun c = simulateLoad(sim, x.plan, x.steady, l);
    QVERIFY(c.figures.ttftMeanMs != a.figures.ttftMeanMs);
}

// An open loop over replicas that do not divide its requests measures exactly the count
// asked for (as the protocol line says), not a whole share per replica.
void TestServingLoad::openLoopMeasuresTheCountAsked()
{
    Setup x = recipe("llama3-70b-8gpu");
    x.plan.tensorParallel = 4;
    x.plan.dataParallel = 2;
    x.plan.batch = 64; // per replica: within the TPOT limit at TP 4
    const Simulator sim(x.s);
    x.steady = sim.evaluate(x.plan);
    QVERIFY(x.steady.valid);
    for (int n : {51, 50, 1}) {
        const LoadRun run = simulateLoad(sim, x.plan, x.steady, openLoop(1, n));
        QVERIFY2(run.ok(), run.error.c_str());
        QCOMPARE(run.figures.requests, std::max(n, 2)); // one each when fewer than the replicas
    }
}

// A closed loop whose requests its replicas' concurrencies do not divide measures exactly
// the counts asked for, each replica's share in proportion to its concurrency; fewer
// measured requests than the loop keeps in flight is refused with its path.
void TestServingLoad::closedLoopMeasuresTheCountAsked()
{
    Setup x = fourReplicas();
    const Simulator sim(x.s);
    QVERIFY(x.steady.valid);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    for (const auto& [c, n] : {std::pair{6, 130}, std::pair{8, 83}, std::pair{3, 10}, std::pair{16, 160}}) {
        l.concurrency = c;
        l.requests = n;
        const LoadRun run = simulateLoad(sim, x.plan, x.steady, l);
        QVERIFY2(run.ok(), run.error.c_str());
        QCOMPARE(run.figures.requests, n);
    }
    x.s.workload.load = l;
    x.s.workload.load.requests = 15; // fewer than the 16 in flight
    const FieldErrors e = validateWorkload(x.s.workload, "workload");
    QCOMPARE(e.size(), size_t(1));
    QCOMPARE(QString::fromStdString(e.front().where), QStringLiteral("workload.load.requests"));
    // The default is ten rounds of the loop, at most the requests a run may measure.
    l.requests = 0;
    l.concurrency = kMaxLoadConcurrency;
    QCOMPARE(l.measuredRequests(), kMaxLoadRequests);
}

// A closed loop's measured run starts on an idle engine with all C requests at once, as
// the benchmark tools send it after their warm-up phase: the warm-up count changes no
// figure, and with 256 warm-ups the last of the first round's prompts still waits for every
// prompt before it in its replica's token budget (with the warm-up run inside the measured
// loop, as until 2026-12-07, the measured requests arrived spread out and none waited so
// long).
void TestServingLoad::closedLoopStartsOnAnIdleEngine()
{
    const Setup x = fourReplicas();
    const Simulator sim(x.s);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = 64; // 16 per replica, its batch: every request runs at once
    l.requests = 64;
    l.warmupRequests = 0;
    const LoadRun cold = simulateLoad(sim, x.plan, x.steady, l);
    l.warmupRequests = 256;
    const LoadRun warmed = simulateLoad(sim, x.plan, x.steady, l);
    QVERIFY2(cold.ok() && warmed.ok(), (cold.error + warmed.error).c_str());
    QCOMPARE(warmed.figures.ttftMeanMs, cold.figures.ttftMeanMs);
    QCOMPARE(warmed.figures.tpotMeanMs, cold.figures.tpotMeanMs);
    QCOMPARE(warmed.figures.outputTokensPerS, cold.figures.outputTokensPerS);

    // 16 prompts of 2048 tokens per replica through a budget of max_num_tokens: at least
    // that many full prefill steps before the last prompt's first token.
    const WorkloadSpec& w = x.s.workload;
    const int budget = w.maxNumTokens;
    QVERIFY(budget >= w.promptTokens && budget < 16 * w.promptTokens);
    const int fullSteps = 16 * w.promptTokens / budget;
    SimResult r;
    const StepLoad full{0, double(budget)};
    sim.evaluate(x.plan, r, false, &full);
    const double lastMs = warmed.figures.ttftP99Ms; // the 64th of 64 requests
    QVERIFY2(lastMs >= 0.99 * fullSteps * r.tpotMs,
             printfText("last first token %.1f ms, %d prefill steps of %.1f ms", lastMs, fullSteps, r.tpotMs).c_str());
    QVERIFY(warmed.figures.ttftP50Ms < lastMs);
}

// A request of one output token has no gap between tokens: TPOT is 0 and its limit binds
// nothing, while the steps (each prompt's prefill) still take their time, steady and under
// load alike.
void TestServingLoad::oneOutputTokenHasNoTpot()
{
    Setup x = fourReplicas();
    x.s.workload.outputTokens = 1;
    x.s.workload.tpotSloMs = 0.001;
    x.s.workload.ttftSloMs = 1e9;
    x.plan.batch = 2; // two prompts of 2048 tokens per step, within max_num_tokens 8192
    const Simulator sim(x.s);
    x.steady = sim.evaluate(x.plan);
    QVERIFY2(x.steady.valid, printfText("violations %u", x.steady.violations).c_str());
    QCOMPARE(x.steady.tpotMs, 0.0);
    QCOMPARE(x.steady.e2eMs, x.steady.ttftMs);
    QVERIFY(x.steady.cycleMs > 0 && x.steady.outputTokensPerS > 0);
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = 16;
    l.requests = 160;
    const LoadRun run = simulateLoad(sim, x.plan, x.steady, l);
    QVERIFY2(run.ok(), run.error.c_str());
    QCOMPARE(run.figures.tpotP90Ms, 0.0);
    // A loop of 16 keeps every replica's two slots full: the run serves about the steady
    // rate (its steps carry no decoding sequence beside the prompts, the steady mean step
    // does).
    const double ratio = run.figures.outputTokensPerS / x.steady.outputTokensPerS;
    QVERIFY2(ratio > 0.9 && ratio < 1.1, printfText("%.2f against the steady %.2f tokens/s",
                                                    run.figures.outputTokensPerS, x.steady.outputTokensPerS).c_str());
}

// A protocol given beside a scenario's own keeps its traffic (lengths, seed), its counts
// from an open loop or a closed loop at the same concurrency, and otherwise the defaults.
void TestServingLoad::protocolFlagsKeepTheScenarioTraffic()
{
    LoadSpec given;
    given.protocol = LoadProtocol::Concurrency;
    given.concurrency = 32;
    given.requests = 320;
    given.warmupRequests = 5;
    given.uniformLengths = true;
    given.seed = 7;
    QVERIFY(withProtocol(given, LoadProtocol::Concurrency, 32, 0) == given);
    const LoadSpec other = withProtocol(given, LoadProtocol::Concurrency, 64, 0);
    QVERIFY(other.uniformLengths && other.seed == 7);
    QCOMPARE(other.measuredRequests(), 640);
    QCOMPARE(other.warmup(), 128);
    const LoadSpec open = withProtocol(given, LoadProtocol::RequestRate, 0, 4);
    QVERIFY(open.uniformLengths && open.seed == 7 && open.requestRate == 4 && open.concurrency == 0);
    QCOMPARE(open.measuredRequests(), 500);
    QCOMPARE(open.warmup(), 0);
    const LoadSpec faster = withProtocol(openLoop(2, 300), LoadProtocol::RequestRate, 0, 8);
    QCOMPARE(faster.measuredRequests(), 300);
    QCOMPARE(faster.requestRate, 8.0);
}

void TestServingLoad::protocolRoundTripsAndBadFieldsAreNamed()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.workload.load.protocol = LoadProtocol::Concurrency;
    s.workload.load.concurrency = 64;
    s.workload.load.uniformLengths = true;
    auto back = parseScenario(scenarioToJson(s), "mem");
    QVERIFY(back.ok());
    QVERIFY(back.value.workload.load == s.workload.load);
    s.workload.load = openLoop(std::numeric_limits<double>::infinity(), 500);
    back = parseScenario(scenarioToJson(s), "mem");
    QVERIFY(back.ok());
    QVERIFY(std::isinf(back.value.workload.load.requestRate));

    std::string text = scenarioToJson(s);
    const std::string from = "\"request_rate\": \"inf\"";
    const size_t at = text.find(from);
    QVERIFY(at != std::string::npos);
    text.replace(at, from.size(), "\"request_rate\": \"fast\"");
    auto bad = parseScenario(text, "bad.json");
    QVERIFY(!bad.ok());
    QVERIFY(bad.errors.front().where == "workload.load.request_rate");

    // Under another serving mode the protocol is kept (a file, or the window's mode switch,
    // does not lose it) and the outcome says it was not run, and why.
    s.workload.serving = ServingMode::Decode;
    QVERIFY(validateWorkload(s.workload, "workload").empty());
    const Plan p = megatronPlan(Simulator(s)).plan;
    const DeploymentOutcome o = deploymentOutcome(s, p, Simulator(s).evaluate(p));
    QVERIFY(o.underLoad);
    QVERIFY2(o.loadError.find("aggregated and disaggregated serving") != std::string::npos, o.loadError.c_str());
}

QTEST_APPLESS_MAIN(TestServingLoad)
#include "tst_serving_load.moc"
