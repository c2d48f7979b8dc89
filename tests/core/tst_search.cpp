// The search API and the budgeted algorithms: budget, determinism, stop, progress,
// finding the optimum of a tiny space, and answers when nothing is valid.
#include <QtTest>

#include <atomic>

#include "plugin/rl_plugin.h"
#include "runner/run_search.h"
#include "search/budgeted_evaluator.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

// Counts every simulator call and every progress report; can request a stop.
class Recorder : public SearchObserver {
public:
    int evaluations = 0;
    int reports = 0;
    int finishedReports = 0;
    int lastReportedCalls = -1;
    size_t maxSamples = 0;
    bool monotonic = true;
    int stopAt = -1;
    std::atomic<bool> stop{false};

    void progress(const SearchProgress& p) override
    {
        ++reports;
        finishedReports += p.finished;
        monotonic = monotonic && p.calls >= lastReportedCalls;
        lastReportedCalls = p.calls;
        maxSamples = std::max(maxSamples, p.recentSamples.size());
    }
    void evaluated(int call, const Plan&, const SimResult&) override
    {
        ++evaluations;
        if (call == stopAt)
            stop = true;
    }
};

// Dense tiny model on 2 GPUs with a handful of values per slot: a few hundred plans.
Scenario tinyDense() { return tinyScenario(TinyModel::Dense, 2, 1, 0.8, 0.5, 0.6); }
SearchSpaceOptions tinySpace()
{
    SearchSpaceOptions o;
    o.batchValues = {16, 64, 128, 256};
    o.microBatchValues = {1, 2};
    for (OpId id : {OpId::Embedding, OpId::AttnNorm, OpId::FfnNorm, OpId::LmHead, OpId::GateUp})
        o.operatorOptions.push_back({id, {opInfo(id).megatronOption}});
    return o;
}

SearchOutcome run(const Scenario& s, const std::string& algo, int budget, std::uint64_t seed,
                  SearchObserver* obs = nullptr, const std::atomic<bool>* stop = nullptr,
                  const SearchSpaceOptions& space = {})
{
    SearchOptions o;
    o.algorithm = algo;
    o.budget = budget;
    o.seed = seed;
    o.space = space;
    return runSearch(s, o, obs, stop);
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void registryListsBuiltIns();
    void budgetCoversTheBatchRefinement();
    void invalidOptionsAreNamed();
    void findsOptimumOfTinySpace_data();
    void findsOptimumOfTinySpace();
    void sameSeedSameResult_data();
    void sameSeedSameResult();
    void budgetIsNeverExceeded_data();
    void budgetIsNeverExceeded();
    void stopIsHonouredWithinOneEvaluation_data();
    void stopIsHonouredWithinOneEvaluation();
    void progressIsBoundedAndEnds();
    void noValidPlanFoundIsSaid();
    void megatronCountsItsCalls();
    void evaluatorCachesRepeatedPlans();
    void evictionChangesNoResult_data();
    void evictionChangesNoResult();
    void registeredAlgorithmRuns();
    void outOfMemoryKeepsTheBestPlan();
};

void TestSearch::registryListsBuiltIns()
{
#ifdef SHARDLAB_HAVE_RL
    // ppo is listed from the core's registry without loading its plugin (LibTorch).
    QCOMPARE(QString::fromStdString(knownSearchAlgorithms()), QString("megatron, random, anneal, genetic, exact, ppo"));
    QVERIFY(!rlPluginLoaded());
#else
    QCOMPARE(QString::fromStdString(knownSearchAlgorithms()), QString("megatron, random, anneal, genetic, exact"));
#endif
    SearchAlgorithmInfo info;
    QVERIFY(findSearchAlgorithm("exact", info));
    QVERIFY(!info.budgeted);
    QVERIFY(!findSearchAlgorithm("ppo-not-yet", info));
}

void TestSearch::invalidOptionsAreNamed()
{
    SearchOptions o;
    o.algorithm = "simplex";
    const SearchOutcome out = runSearch(presetScenario("llama3-70b-8gpu"), o);
    QVERIFY(!out.found);
    QVERIFY2(QString::fromStdString(out.message).contains("unknown algorithm 'simplex'"), out.message.c_str());
    o.algorithm = "random";
    o.budget = 0;
    QVERIFY(QString::fromStdString(runSearch(presetScenario("llama3-70b-8gpu"), o).message).startsWith("budget"));
}

void TestSearch::findsOptimumOfTinySpace_data()
{
    QTest::addColumn<QString>("algo");
    QTest::newRow("random") << "random";
    QTest::newRow("anneal") << "anneal";
    QTest::newRow("genetic") << "genetic";
}

void TestSearch::findsOptimumOfTinySpace()
{
    QFETCH(QString, algo);
    const Scenario s = tinyDense();
    const SearchSpace space(s, tinySpace());
    QVERIFY2(space.log10Size() < 3.5, qPrintable(QString::number(space.log10Size())));
    const BruteForce b = bruteForce(s, tinySpace());
    QVERIFY2(b.valid > 0 && b.valid < b.plans, qPrintable(QStringLiteral("%1 of %2 plans valid").arg(b.valid).arg(b.plans)));
    // The best plan of the space's batch grid is found, then its batch is refined to the
    // largest valid one: at least the grid's optimum, at most exact's (every batch).
    SearchOptions eo;
    eo.algorithm = "exact";
    eo.space = tinySpace();
    const SearchOutcome ex = runSearch(s, eo);
    QVERIFY2(ex.provedOptimal, ex.message.c_str());
    for (std::uint64_t seed : {1, 2, 3}) {
        const SearchOutcome out = run(s, algo.toStdString(), 4000, seed, nullptr, nullptr, tinySpace());
        QVERIFY2(out.found, out.message.c_str());
        QVERIFY(out.bestResult.tokensPerSPerGpu >= b.best * (1 - 1e-12));
        QVERIFY(out.bestResult.tokensPerSPerGpu <= ex.bestResult.tokensPerSPerGpu * (1 + 1e-12));
        QVERIFY(out.calls <= 4000);
    }
}

void TestSearch::sameSeedSameResult_data()
{
    QTest::addColumn<QString>("algo");
    QTest::addColumn<QString>("preset");
    for (const char* a : {"random", "anneal", "genetic"}) {
        QTest::newRow((std::string(a) + " mixtral").c_str()) << a << "mixtral-8x22b-64gpu";
        QTest::newRow((std::string(a) + " deepseek").c_str()) << a << "deepseek-v3-256gpu";
    }
}

void TestSearch::sameSeedSameResult()
{
    QFETCH(QString, algo);
    QFETCH(QString, preset);
    const Scenario s = presetScenario(preset.toUtf8().constData());
    const SearchOutcome a = run(s, algo.toStdString(), 800, 42);
    const SearchOutcome b = run(s, algo.toStdString(), 800, 42);
    QVERIFY(a.found);
    QVERIFY(a.best == b.best);
    QCOMPARE(a.calls, b.calls);
    QVERIFY(a.bestCurve == b.bestCurve);
    QCOMPARE(a.bestResult.tokensPerSPerGpu, b.bestResult.tokensPerSPerGpu);
    // Another seed explores differently.
    const SearchOutcome c = run(s, algo.toStdString(), 800, 43);
    QVERIFY(c.bestCurve != a.bestCurve);
}

void TestSearch::budgetIsNeverExceeded_data()
{
    QTest::addColumn<QString>("algo");
    QTest::addColumn<int>("budget");
    for (const char* a : {"random", "anneal", "genetic"})
        for (int budget : {1, 7, 100, 1000}) {
            const std::string name = std::string(a) + " " + std::to_string(budget);
            QTest::newRow(name.c_str()) << a << budget;
        }
}

void TestSearch::budgetIsNeverExceeded()
{
    QFETCH(QString, algo);
    QFETCH(int, budget);
    Recorder rec;
    const SearchOutcome out = run(presetScenario("moe-1.6t-1024gpu"), algo.toStdString(), budget, 5, &rec);
    QVERIFY(rec.evaluations <= budget);
    QCOMPARE(out.calls, rec.evaluations);
    // Spaces this large always have room for the whole budget: the algorithm spends its
    // share, the batch refinement some of what was held back for it.
    QVERIFY(out.calls <= budget && out.calls >= budget - refinementReserve(budget));
    for (const auto& [call, v] : out.bestCurve)
        QVERIFY(call >= 1 && call <= budget && v > 0);
}

void TestSearch::stopIsHonouredWithinOneEvaluation_data()
{
    QTest::addColumn<QString>("algo");
    QTest::newRow("random") << "random";
    QTest::newRow("anneal") << "anneal";
    QTest::newRow("genetic") << "genetic";
}

void TestSearch::stopIsHonouredWithinOneEvaluation()
{
    QFETCH(QString, algo);
    Recorder rec;
    rec.stopAt = 120; // set from the observer, as a GUI's cancel button would
    const SearchOutcome out = run(presetScenario("deepseek-v3-256gpu"), algo.toStdString(), 4000, 1, &rec, &rec.stop);
    QVERIFY(out.stopped);
    QCOMPARE(out.calls, 120);
    QCOMPARE(rec.evaluations, 120);
    QVERIFY2(QString::fromStdString(out.message).contains("stopped"), out.message.c_str());
    QCOMPARE(rec.finishedReports, 1);
}

void TestSearch::progressIsBoundedAndEnds()
{
    Recorder rec;
    const SearchOutcome out = run(presetScenario("mixtral-8x22b-64gpu"), "anneal", 4000, 1, &rec);
    QVERIFY(out.calls <= 4000 && out.calls >= 4000 - refinementReserve(4000));
    // At most one report per 1% of the budget plus the 50 ms ones and the final one.
    QVERIFY2(rec.reports <= 101 + static_cast<int>(out.wallSeconds / 0.05) + 1,
             qPrintable(QString::number(rec.reports)));
    QVERIFY(rec.reports >= 2);
    QCOMPARE(rec.finishedReports, 1);
    QCOMPARE(rec.lastReportedCalls, out.calls);
    QVERIFY(rec.monotonic);
    QVERIFY(rec.maxSamples <= static_cast<size_t>(SearchProgress::kMaxRecentSamples));
}

void TestSearch::noValidPlanFoundIsSaid()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.cluster.gpusPerNode = 1; // 141 GB of weights on one 80 GB GPU
    for (const char* algo : {"random", "anneal", "genetic", "megatron"}) {
        const SearchOutcome out = run(s, algo, 200, 1);
        QVERIFY(!out.found);
        QVERIFY(!out.provedInfeasible);
        QVERIFY2(!out.message.empty(), algo);
    }
    // One GPU: every option choice is equivalent (one-rank groups), so the whole space is
    // a few hundred distinct strategies and random search exhausts it before the budget.
    const SearchOutcome r = run(s, "random", 200, 1);
    QVERIFY2(QString::fromStdString(r.message).contains("no valid plan found in"), r.message.c_str());
}

void TestSearch::megatronCountsItsCalls()
{
    Recorder rec;
    const SearchOutcome out = run(presetScenario("llama3-70b-8gpu"), "megatron", 4000, 0, &rec);
    QVERIFY(out.found);
    QVERIFY(out.calls > 1);
    QVERIFY(out.calls < 100);
    QCOMPARE(static_cast<int>(out.bestCurve.size()), 1);
    QCOMPARE(out.bestCurve.front().first, out.calls);
}

void TestSearch::evaluatorCachesRepeatedPlans()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    const Simulator sim(s);
    BudgetedEvaluator ev(sim, 2, StopToken(), nullptr);
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8;
    p.batch = 64;
    Evaluation e;
    QVERIFY(ev.evaluate(p, e));
    QVERIFY(!e.cached && e.valid);
    QVERIFY(ev.evaluate(p, e));
    QVERIFY(e.cached);
    QCOMPARE(ev.calls(), 1);
    p.batch = 128;
    QVERIFY(ev.evaluate(p, e));
    QCOMPARE(ev.calls(), 2);
    p.batch = 256;
    QVERIFY(!ev.evaluate(p, e)); // budget spent
    QVERIFY(ev.exhausted());
    QCOMPARE(ev.bestCurve().size(), size_t(2));
}

void TestSearch::evictionChangesNoResult_data()
{
    QTest::addColumn<QString>("algo");
    QTest::newRow("random") << "random";
    QTest::newRow("anneal") << "anneal";
    QTest::newRow("genetic") << "genetic";
}

// The evaluation cache is bounded; a repeat whose evaluation was evicted is simulated
// again but still answered as an uncharged repeat, so a one-slot cache (evicting almost
// --budget counts every simulator call of the run, the final batch refinement's included:
// a budgeted algorithm never reports more calls than its budget, and the refined plan is
// never worse than the algorithm's own best.
void TestSearch::budgetCoversTheBatchRefinement()
{
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu"}) {
        const Scenario s = presetScenario(name);
        for (const std::string algo : {"random", "anneal", "genetic"})
            for (int budget : {1, 10, 100, 1000}) {
                SearchOptions o;
                o.algorithm = algo;
                o.budget = budget;
                const SearchOutcome out = runSearch(s, o);
                QVERIFY2(out.calls <= budget, qPrintable(QString("%1 %2: %3 calls, budget %4")
                                                             .arg(name).arg(algo.c_str()).arg(out.calls).arg(budget)));
                if (out.found && !out.bestCurve.empty()) {
                    QCOMPARE(out.bestCurve.back().second, out.bestResult.tokensPerSPerGpu);
                    QVERIFY(out.bestCurve.back().first <= out.calls);
                }
            }
    }
}

// everything) gives exactly the calls, curve and best plan of the default cache.
void TestSearch::evictionChangesNoResult()
{
    QFETCH(QString, algo);
    const Scenario s = presetScenario("mixtral-8x22b-64gpu");
    const Simulator sim(s);
    // One batch and micro-batch count: a space small enough that every algorithm repeats
    // plans within its budget (random too), so the one-slot cache has something to evict.
    SearchSpaceOptions narrow;
    narrow.batchValues = {256};
    narrow.microBatchValues = {1};
    const SearchSpace space(s, narrow);
    SearchOptions o;
    o.algorithm = algo.toStdString();
    o.budget = 3000;
    SearchAlgorithmInfo info;
    QVERIFY(findSearchAlgorithm(o.algorithm, info));
    struct Run {
        int calls;
        std::vector<std::pair<int, double>> curve;
        Plan best;
        long long resimulated;
        size_t distinct;
    };
    auto runWith = [&](size_t cacheSlots) {
        Recorder rec;
        BudgetedEvaluator ev(sim, o.budget, StopToken(), &rec, cacheSlots);
        SearchContext ctx{s, sim, space, ev, o, 11};
        info.create()->run(ctx);
        ev.finish();
        return Run{ev.calls(), ev.bestCurve(), ev.best(), ev.resimulated(), ev.distinctPlans()};
    };
    const Run big = runWith(BudgetedEvaluator::kDefaultCacheSlots);
    const Run tiny = runWith(1);
    QVERIFY2(tiny.resimulated > 0, "the one-slot cache evicted nothing: the test proves nothing");
    QVERIFY(big.resimulated < tiny.resimulated);
    QCOMPARE(tiny.calls, big.calls);
    QCOMPARE(tiny.curve, big.curve);
    QVERIFY(tiny.best == big.best);
    // Every charged call is one distinct plan (none of these algorithms uses `full`).
    QCOMPARE(static_cast<int>(tiny.distinct), tiny.calls);
}

void TestSearch::registeredAlgorithmRuns()
{
    // How ppo will plug in: a factory registered at start-up, then found by name.
    class FirstValid final : public SearchAlgorithm {
    public:
        AlgorithmReport run(SearchContext& ctx) override
        {
            std::mt19937_64 rng(ctx.seed);
            Evaluation e;
            while (ctx.evaluator.evaluate(ctx.space.randomPlan(rng), e) && !e.valid) {
            }
            return {"stopped at the first valid plan", false, false, {}};
        }
    };
    QVERIFY(registerSearchAlgorithm({"first-valid", "test", true, true, [] { return std::make_unique<FirstValid>(); }}));
    QVERIFY(!registerSearchAlgorithm({"first-valid", "again", true, true, [] { return std::make_unique<FirstValid>(); }}));
    const SearchOutcome out = run(presetScenario("mixtral-8x22b-64gpu"), "first-valid", 500, 3);
    QVERIFY(out.found);
    QVERIFY2(QString::fromStdString(out.message).endsWith("stopped at the first valid plan"), out.message.c_str());

    // A search that could not run is an error even when the evaluator holds a valid plan
    // (here one it evaluated itself, as ppo's warm start evaluates the recipe's).
    class BrokenAfterWarmStart final : public SearchAlgorithm {
    public:
        AlgorithmReport run(SearchContext& ctx) override
        {
            std::mt19937_64 rng(ctx.seed);
            Evaluation e;
            while (ctx.evaluator.evaluate(ctx.space.randomPlan(rng), e) && !e.valid) {
            }
            AlgorithmReport r;
            r.error = "the policy does not load";
            return r;
        }
    };
    QVERIFY(registerSearchAlgorithm({"broken", "test", true, true, [] { return std::make_unique<BrokenAfterWarmStart>(); }}));
    for (int budget : {200, 4000}) {
        const SearchOutcome broken = run(presetScenario("mixtral-8x22b-64gpu"), "broken", budget, 3);
        QVERIFY(broken.failed);
        QVERIFY(!broken.found);
        QCOMPARE(broken.message, std::string("broken could not run: the policy does not load"));
    }
}

void TestSearch::outOfMemoryKeepsTheBestPlan()
{
    // An algorithm that runs out of memory once it has found a valid plan.
    class Exhausting final : public SearchAlgorithm {
    public:
        AlgorithmReport run(SearchContext& ctx) override
        {
            std::mt19937_64 rng(ctx.seed);
            Evaluation e;
            while (ctx.evaluator.evaluate(ctx.space.randomPlan(rng), e))
                if (e.valid)
                    throw std::bad_alloc();
            return {};
        }
    };
    QVERIFY(registerSearchAlgorithm({"exhausting", "test", true, true, [] { return std::make_unique<Exhausting>(); }}));
    const SearchOutcome out = run(presetScenario("mixtral-8x22b-64gpu"), "exhausting", 5000, 3);
    QVERIFY(out.outOfMemory);
    QVERIFY(out.found);
    QVERIFY(out.bestResult.valid);
    QVERIFY(out.calls > 0 && out.calls < 5000);
    QCOMPARE(out.bestCurve.back().first, out.calls);
    QVERIFY(out.log10SpaceSize > 0);
    QVERIFY2(QString::fromStdString(out.message).startsWith("memory ran out after " + QString::number(out.calls)),
             out.message.c_str());
}

QTEST_APPLESS_MAIN(TestSearch)
#include "tst_search.moc"
