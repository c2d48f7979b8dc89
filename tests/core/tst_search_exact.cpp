// The exact search: its decomposition of the simulator's cost agrees with
// Simulator::evaluate, and its answer equals brute force over whole (small) spaces.
#include <QtTest>

#include <cmath>
#include <random>

#include "search/exact_model.h"
#include "search/search.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

SearchSpaceOptions restricted(std::vector<int> batches, std::vector<int> micro,
                              std::vector<std::pair<OpId, std::vector<int>>> ops = {})
{
    SearchSpaceOptions o;
    o.batchValues = std::move(batches);
    o.microBatchValues = std::move(micro);
    o.operatorOptions = std::move(ops);
    return o;
}

} // namespace

Q_DECLARE_METATYPE(shardlab::Scenario)
Q_DECLARE_METATYPE(shardlab::SearchSpaceOptions)

class TestSearchExact : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void decompositionMatchesSimulator_data();
    void decompositionMatchesSimulator();
    void exactEqualsBruteForce_data();
    void exactEqualsBruteForce();
    void exactEqualsBruteForceUnderRandomLimits_data();
    void exactEqualsBruteForceUnderRandomLimits();
    void exactBeatsEverySampledPlan_data();
    void exactBeatsEverySampledPlan();
    void noValidPlanIsProvedAndExplained();
    void exactHonoursStop();
};

void TestSearchExact::decompositionMatchesSimulator_data()
{
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<int>("prefillPrompts");
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(name) << presetScenario(name) << 1;
    QTest::newRow("deepseek, 4 prompts per prefill") << presetScenario("deepseek-v3-256gpu") << 4;
    QTest::newRow("tiny dense, 2 nodes") << tinyScenario(TinyModel::Dense, 2, 2, 1, 0.3, 0.6) << 1;
    QTest::newRow("tiny moe, shared + dense layer") << tinyScenario(TinyModel::MoeSharedDense, 4, 2, 1, 0.3, 0.6)
                                                    << 1;
    QTest::newRow("tiny mla moe, 3 nodes") << tinyScenario(TinyModel::MlaMoe, 2, 3, 1, 0.3, 0.6) << 2;
}

// The exact search relies on CostModel reproducing Simulator::evaluate figure by figure;
// this guards that mirror (core/search/exact_model.h) against changes to the simulator.
void TestSearchExact::decompositionMatchesSimulator()
{
    QFETCH(Scenario, scenario);
    QFETCH(int, prefillPrompts);
    SimConstants k;
    k.prefillPrompts = prefillPrompts;
    const Simulator sim(scenario, k);
    const SearchSpace space(scenario);
    exact::CostModel model(sim, space);
    std::mt19937_64 rng(7);
    SimResult r;
    for (int i = 0; i < 3000; ++i) {
        const Plan p = space.randomPlan(rng);
        sim.evaluate(p, r);
        QCOMPARE(r.structureChecks, 0u);
        const exact::Figures f = model.predict(p);
        const QByteArray where = QByteArray("plan ") + QByteArray::number(i) + " TP " + QByteArray::number(p.tensorParallel)
            + " PP " + QByteArray::number(p.pipelineParallel) + " EP " + QByteArray::number(p.expertParallel) + " B "
            + QByteArray::number(p.batch) + "/" + QByteArray::number(p.microBatches);
        QVERIFY2(close(f.tpotMs, r.tpotMs, 1e-12), where + " tpot " + QByteArray::number(f.tpotMs, 'g', 17) + " vs "
                                                        + QByteArray::number(r.tpotMs, 'g', 17));
        QVERIFY2(close(f.ttftMs, r.ttftMs, 1e-12), where + " ttft");
        QVERIFY2(close(f.memoryGb, r.memory.totalGb, 1e-12), where + " memory");
        QVERIFY2(close(f.tokensPerSPerGpu, r.tokensPerSPerGpu, 1e-12), where + " throughput");
        // Validity agrees except for figures within rounding of a limit.
        if (model.withinLimits(f, 1e-9) && !model.withinLimits(f, -1e-9))
            continue;
        QVERIFY2(model.withinLimits(f, 0) == r.valid, where + " validity");
    }
}

void TestSearchExact::exactEqualsBruteForce_data()
{
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<SearchSpaceOptions>("options");
    // Limits chosen so memory (KV cache), TTFT and TPOT all reject part of each space.
    const auto dense = restricted({8, 32, 128, 256, 512, 1024}, {1, 2});
    QTest::newRow("dense, 2x2 GPUs, loose") << tinyScenario(TinyModel::Dense, 2, 2, 2, 1000, 1) << dense;
    QTest::newRow("dense, 2x2 GPUs, TTFT+TPOT") << tinyScenario(TinyModel::Dense, 2, 2, 1.5, 0.25, 0.6) << dense;
    QTest::newRow("dense, 2x2 GPUs, memory") << tinyScenario(TinyModel::Dense, 2, 2, 0.8, 0.25, 0.6) << dense;
    QTest::newRow("dense, 4 GPUs in a node, tight") << tinyScenario(TinyModel::Dense, 4, 1, 0.6, 0.2, 0.35) << dense;
    // Embedding and LM head fixed (their couplings are covered by the dense rows) and the
    // router fixed, to keep brute force near a million plans.
    const auto moe = restricted({64, 256}, {1, 2},
                                {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::Router, {1}}});
    QTest::newRow("moe shared+dense, 2 GPUs") << tinyScenario(TinyModel::MoeSharedDense, 2, 1, 0.7, 0.3, 0.6) << moe;
    const auto mla = restricted({32, 128, 512}, {1, 2}, {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}});
    QTest::newRow("mla moe, 2x2 GPUs") << tinyScenario(TinyModel::MlaMoe, 2, 2, 1, 0.3, 0.6) << mla;
    QTest::newRow("mla moe, 2x2 GPUs, tight") << tinyScenario(TinyModel::MlaMoe, 2, 2, 0.6, 0.3, 0.4) << mla;
}

void TestSearchExact::exactEqualsBruteForce()
{
    QFETCH(Scenario, scenario);
    QFETCH(SearchSpaceOptions, options);
    const BruteForce b = bruteForce(scenario, options);
    QVERIFY(b.valid > 0);
    QVERIFY2(b.valid < b.plans, "the limits should reject part of the space");
    SearchOptions o;
    o.algorithm = "exact";
    o.space = options;
    const SearchOutcome out = runSearch(scenario, o);
    QVERIFY2(out.found, out.message.c_str());
    QVERIFY2(out.provedOptimal, out.message.c_str());
    // The answer is a plan of the space, valid under the simulator, and as good as the best.
    const SearchSpace space(scenario, options);
    int choice[SearchSpace::kMaxSlots];
    QVERIFY(space.encode(out.best, choice));
    QVERIFY(space.isValid(choice));
    const SimResult r = Simulator(scenario).evaluate(out.best);
    QVERIFY(r.valid);
    QCOMPARE(r.tokensPerSPerGpu, out.bestResult.tokensPerSPerGpu);
    QCOMPARE(out.bestResult.tokensPerSPerGpu, b.best);
    QVERIFY(out.calls >= 1);
}

void TestSearchExact::exactEqualsBruteForceUnderRandomLimits_data()
{
    QTest::addColumn<int>("model");
    QTest::addColumn<int>("trials");
    QTest::addColumn<SearchSpaceOptions>("options");
    QTest::newRow("dense, 2x2 GPUs") << int(TinyModel::Dense) << 20 << restricted({16, 128, 512}, {1, 2});
    QTest::newRow("mla moe, 2x2 GPUs")
        << int(TinyModel::MlaMoe) << 6
        << restricted({32, 512}, {1, 2}, {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::Router, {1}}});
}

// Random memory sizes and SLOs make different constraints bind at the optimum (and
// sometimes leave no valid plan at all): exact must match brute force every time.
void TestSearchExact::exactEqualsBruteForceUnderRandomLimits()
{
    QFETCH(int, model);
    QFETCH(int, trials);
    QFETCH(SearchSpaceOptions, options);
    std::mt19937_64 rng(11);
    auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53; };
    int infeasible = 0;
    for (int t = 0; t < trials; ++t) {
        const Scenario s = tinyScenario(static_cast<TinyModel>(model), 2, 2, uniform(0.35, 2.0), uniform(0.08, 0.5),
                                        uniform(0.15, 1.0));
        const BruteForce b = bruteForce(s, options);
        SearchOptions o;
        o.algorithm = "exact";
        o.space = options;
        const SearchOutcome out = runSearch(s, o);
        const QByteArray where = "trial " + QByteArray::number(t) + ": " + QByteArray(out.message.c_str());
        if (b.valid == 0) {
            ++infeasible;
            QVERIFY2(!out.found && out.provedInfeasible, where);
            continue;
        }
        QVERIFY2(out.found && out.provedOptimal, where);
        QVERIFY2(out.bestResult.valid, where);
        QVERIFY2(out.bestResult.tokensPerSPerGpu == b.best, where + " brute force " + QByteArray::number(b.best, 'g', 17)
                                                               + " exact "
                                                               + QByteArray::number(out.bestResult.tokensPerSPerGpu, 'g', 17));
    }
    QVERIFY(infeasible < trials);
}

void TestSearchExact::exactBeatsEverySampledPlan_data()
{
    QTest::addColumn<QString>("preset");
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(name) << name;
}

// On the benchmark scenarios (too big for brute force): no random plan and no
// metaheuristic result beats exact, and its plan is valid.
void TestSearchExact::exactBeatsEverySampledPlan()
{
    QFETCH(QString, preset);
    const Scenario s = presetScenario(preset.toUtf8().constData());
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome ex = runSearch(s, o);
    QVERIFY2(ex.found && ex.provedOptimal, ex.message.c_str());
    QVERIFY(ex.bestResult.valid);
    const Simulator sim(s);
    const SearchSpace space(s);
    std::mt19937_64 rng(3);
    SimResult r;
    for (int i = 0; i < 10000; ++i) {
        sim.evaluate(space.randomPlan(rng), r, false);
        QVERIFY(!r.valid || r.tokensPerSPerGpu <= ex.bestResult.tokensPerSPerGpu);
    }
    for (const char* algo : {"anneal", "genetic"}) {
        o.algorithm = algo;
        o.budget = 2000;
        const SearchOutcome m = runSearch(s, o);
        QVERIFY(!m.found || m.bestResult.tokensPerSPerGpu <= ex.bestResult.tokensPerSPerGpu);
    }
}

void TestSearchExact::noValidPlanIsProvedAndExplained()
{
    // Llama-3-70B (141 GB of BF16 weights) on one 80 GB GPU.
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.cluster.gpusPerNode = 1;
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome out = runSearch(s, o);
    QVERIFY(!out.found);
    QVERIFY(out.provedInfeasible);
    QVERIFY(!out.provedOptimal);
    QVERIFY2(QString::fromStdString(out.message).contains("no valid plan exists"), out.message.c_str());
    QVERIFY2(QString::fromStdString(out.message).contains("GB per GPU"), out.message.c_str());
    QCOMPARE(out.calls, 0);

    // An SLO nothing can meet is named too.
    Scenario slow = presetScenario("llama3-70b-8gpu");
    slow.workload.tpotSloMs = 0.01;
    const SearchOutcome out2 = runSearch(slow, o);
    QVERIFY(!out2.found && out2.provedInfeasible);
    QVERIFY2(QString::fromStdString(out2.message).contains("time per output token"), out2.message.c_str());
}

void TestSearchExact::exactHonoursStop()
{
    std::atomic<bool> stop{true};
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome out = runSearch(presetScenario("mixtral-8x22b-64gpu"), o, nullptr, &stop);
    QVERIFY(out.stopped);
    QVERIFY(!out.provedOptimal);
    QCOMPARE(out.calls, 0);
    QVERIFY(QString::fromStdString(out.message).contains("stopped"));
}

QTEST_APPLESS_MAIN(TestSearchExact)
#include "tst_search_exact.moc"
