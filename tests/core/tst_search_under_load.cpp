// Searching under a load protocol (SearchOptions::underLoad): a plan ranked by its
// closed-loop run is that run's figures and verdict (rankUnderLoad, judgeLoad); a search
// under load finds a plan that serves more at the loop's concurrency than the steady
// optimum does, reports the run as its objective, keeps the batch at the replicas' share,
// is deterministic, and refuses what it cannot rank (exact, open loops, two pools).
#include <QtTest>

#include <cmath>

#include "io/count_list.h"
#include "runner/load_front.h"
#include "runner/run_search.h"
#include "sim/megatron.h"
#include "sim/serving_load.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {
LoadSpec closedLoop(int concurrency)
{
    LoadSpec l;
    l.protocol = LoadProtocol::Concurrency;
    l.concurrency = concurrency;
    return l;
}

Scenario llamaAt(int concurrency)
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.workload.load = closedLoop(concurrency);
    return s;
}

SearchOutcome searchUnderLoad(const Scenario& s, const char* algo, std::uint64_t seed = 0)
{
    SearchOptions o;
    o.algorithm = algo;
    o.budget = 2000; // not scaled for sanitizer runs: fewer calls would not find the plan the test asserts
    o.seed = seed;
    o.underLoad = true;
    return runSearch(s, o);
}
} // namespace

class TestSearchUnderLoad : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rankedPlanIsItsRun();
    void verdictNamesTheLimit();
    void searchBeatsTheSteadyOptimumAtItsConcurrency();
    void searchRefusesWhatItCannotRank();
    void frontFollowsTheConcurrency();
    void countListsAreReadAsTyped();
};

// The ranked result is the run: its output per GPU, p90s and verdict; a plan that does
// not fit memory is not run and keeps its steady reasons.
void TestSearchUnderLoad::rankedPlanIsItsRun()
{
    const Scenario s = llamaAt(16);
    const Simulator sim(s);
    const RecipePlan rp = megatronPlan(sim);
    QVERIFY(rp.found);
    SimResult steady;
    sim.evaluate(rp.plan, steady, false);
    const LoadRun run = simulateLoad(sim, rp.plan, steady, s.workload.load);
    QVERIFY2(run.ok(), run.error.c_str());
    SimResult ranked = steady;
    rankUnderLoad(sim, rp.plan, ranked, s.workload.load);
    QCOMPARE(ranked.tokensPerSPerGpu, run.figures.tokensPerSPerGpu);
    QCOMPARE(ranked.ttftMs, run.figures.ttftP90Ms);
    QCOMPARE(ranked.tpotMs, run.figures.tpotP90Ms);
    QCOMPARE(ranked.valid, judgeLoad(s.workload, run.figures).withinLimits);
    QVERIFY(ranked.tokensPerSPerGpu < steady.tokensPerSPerGpu); // 16 requests fill no batch of 8 GPUs

    Plan huge = rp.plan;
    huge.batch = 1 << 20; // far beyond memory
    SimResult big;
    sim.evaluate(huge, big, false);
    QVERIFY(big.violates(Violation::Memory));
    const double before = big.tokensPerSPerGpu;
    rankUnderLoad(sim, huge, big, s.workload.load);
    QVERIFY(!big.valid);
    QVERIFY(big.violates(Violation::Memory));
    QCOMPARE(big.tokensPerSPerGpu, before); // not run
}

void TestSearchUnderLoad::verdictNamesTheLimit()
{
    WorkloadSpec w;
    w.ttftSloMs = 500;
    w.tpotSloMs = 40;
    LoadFigures f;
    f.ttftP90Ms = 499;
    f.tpotP90Ms = 40;
    QVERIFY(judgeLoad(w, f).withinLimits);
    f.ttftP90Ms = 501;
    LoadVerdict v = judgeLoad(w, f);
    QVERIFY(!v.withinLimits);
    QVERIFY(v.ttftOver && !v.tpotOver && !v.saturated);
    QCOMPARE(int(v.reasons.size()), 1);
    QVERIFY(v.reasons[0].find("p90 TTFT") != std::string::npos);
    f.ttftP90Ms = 100;
    f.saturated = true;
    v = judgeLoad(w, f);
    QVERIFY(!v.withinLimits && v.saturated);
    f.saturated = false;
    f.tpotP90Ms = std::nan("");
    QVERIFY(!judgeLoad(w, f).withinLimits); // a figure that is not a number holds no limit
}

// At 8 requests in flight the steady optimum (the largest batch the TPOT limit allows)
// leaves most of its batch empty; ranked by the run, the search finds a plan that serves
// more there. Every reported figure is the run's, the batch is the replicas' share.
void TestSearchUnderLoad::searchBeatsTheSteadyOptimumAtItsConcurrency()
{
    const Scenario s = llamaAt(8);
    SearchOptions exact;
    exact.algorithm = "exact";
    const SearchOutcome opt = runSearch(s, exact);
    QVERIFY(opt.found && opt.provedOptimal);
    QVERIFY(opt.deployment.underLoad && !opt.underLoad);
    const double steadyOptUnderLoad = opt.deployment.load.tokensPerSPerGpu;

    for (const char* algo : {"anneal", "random"}) {
        const SearchOutcome r = searchUnderLoad(s, algo);
        QVERIFY2(r.found, r.message.c_str());
        QVERIFY(r.underLoad);
        QVERIFY(r.message.find("searched under the load protocol") != std::string::npos);
        QVERIFY(r.deployment.underLoad && r.deployment.loadError.empty());
        QVERIFY(r.deployment.loadVerdict.withinLimits);
        QCOMPARE(r.bestTokensPerSPerGpu(), r.deployment.load.tokensPerSPerGpu);
        QCOMPARE(r.bestCurve.back().second, r.bestTokensPerSPerGpu());
        QVERIFY2(r.bestTokensPerSPerGpu() > 1.2 * steadyOptUnderLoad,
                 qPrintable(QString("%1: %2 vs the steady optimum's %3 under load")
                                .arg(algo)
                                .arg(r.bestTokensPerSPerGpu())
                                .arg(steadyOptUnderLoad)));
        const int share = (8 + r.best.dataParallel - 1) / r.best.dataParallel;
        QVERIFY(r.best.batch <= share);
        QVERIFY(r.calls <= 2000);
        QVERIFY(!r.refinement.ran);
    }
    const SearchOutcome a = searchUnderLoad(s, "anneal", 3), b = searchUnderLoad(s, "anneal", 3);
    QVERIFY(a.best == b.best);
    QCOMPARE(a.bestCurve, b.bestCurve);
}

void TestSearchUnderLoad::searchRefusesWhatItCannotRank()
{
    auto refusal = [](const Scenario& s, const char* algo) {
        const SearchOutcome r = searchUnderLoad(s, algo);
        return r.found ? std::string() : r.message;
    };
    QVERIFY(refusal(llamaAt(8), "exact").find("exact certifies the steady state only") != std::string::npos);
    Scenario open = presetScenario("llama3-70b-8gpu");
    open.workload.load = openLoop(2, 50);
    QVERIFY(refusal(open, "anneal").find("needs a closed loop") != std::string::npos);
    QVERIFY(refusal(presetScenario("llama3-70b-8gpu"), "anneal").find("needs a load protocol") != std::string::npos);
    Scenario pools = llamaAt(8);
    pools.workload.serving = ServingMode::Disaggregated;
    QVERIFY(refusal(pools, "anneal").find("covers aggregated serving") != std::string::npos);
    QVERIFY(underLoadError(llamaAt(8), SearchOptions{}).empty());
}

// The front under load: one search per concurrency (each the same as searching under
// that loop), throughput per GPU rising with the concurrency while the per-user speed
// falls, the front marked by the one dominance rule, and an impossible concurrency said.
void TestSearchUnderLoad::frontFollowsTheConcurrency()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    SearchOptions o;
    o.algorithm = "anneal";
    o.budget = 800; // not scaled, as searchUnderLoad: at 400 calls anneal found no valid plan at 64 in flight
    const LoadFront f = computeLoadFront(s, {64, 4, 16, 512}, o);
    QVERIFY2(f.ok, f.message.c_str());
    QCOMPARE(int(f.points.size()), 4);
    QCOMPARE(f.points[0].concurrency, 4); // ascending
    QVERIFY(!f.points[3].found); // 512 in flight on 8 GPUs breaks the TPOT limit
    SearchOptions same = o;
    same.underLoad = true;
    const SearchOutcome direct = runSearch(llamaAt(16), same);
    QVERIFY(direct.found && f.points[1].found);
    QVERIFY(f.points[1].plan == direct.best);
    QCOMPARE(f.points[1].tokensPerSPerGpu, direct.bestTokensPerSPerGpu());
    for (int i = 0; i + 1 < 3; ++i) {
        QVERIFY(f.points[i + 1].tokensPerSPerGpu > f.points[i].tokensPerSPerGpu);
        QVERIFY(f.points[i + 1].tokensPerSPerUser < f.points[i].tokensPerSPerUser);
        QVERIFY(f.points[i].onFront); // nothing faster serves as much per GPU
    }
    QVERIFY(!f.points[3].onFront);
    QVERIFY(loadFrontCsv(f).find("512,0,0,") != std::string::npos);

    QVERIFY(!computeLoadFront(s, {}, o).ok);
    SearchOptions exact = o;
    exact.algorithm = "exact";
    const LoadFront refused = computeLoadFront(s, {8}, exact);
    QVERIFY(!refused.ok && refused.message.find("exact certifies the steady state only") != std::string::npos);
}

// The one reader of "1, 4,16" lists (sweep's GPU counts, the front's concurrencies, in the
// CLI and the window): blanks trimmed, empty items skipped, the first bad item named.
void TestSearchUnderLoad::countListsAreReadAsTyped()
{
    std::vector<long long> v;
    std::string bad;
    QVERIFY(parseCountList(" 1, 4 ,,16,", 1, 100, v, bad));
    QCOMPARE(v, (std::vector<long long>{1, 4, 16}));
    v.clear();
    QVERIFY(parseCountList(" , ", 1, 100, v, bad));
    QVERIFY(v.empty()); // nothing listed: the caller refuses it with its own field
    for (const char* text : {"4,x", "4,0", "4,101", "4,+5", "4,99999999999999999999", "4,3.5", "4,-2"}) {
        v.clear();
        QVERIFY2(!parseCountList(text, 1, 100, v, bad), text);
        QCOMPARE(v, (std::vector<long long>{4}));
        QCOMPARE(bad, std::string(text).substr(2));
    }
    std::vector<int> c;
    std::string why;
    QVERIFY(parseConcurrencies("8, 64", c, why));
    QCOMPARE(c, (std::vector<int>{8, 64}));
    QVERIFY(!parseConcurrencies("8,70000", c, why));
    QCOMPARE(why, std::string("'70000' is not a concurrency (1..65536)"));
}

QTEST_GUILESS_MAIN(TestSearchUnderLoad)
#include "tst_search_under_load.moc"
