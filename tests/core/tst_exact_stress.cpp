// Nothing beats exact: on generated scenarios from the pretraining distribution (up to 128
// GPUs), every budgeted search at 1500 simulator calls and the scans that found exact's
// past blind spots stay at or below its proved optimum:
//  - a batch scan around exact's plan: every batch within 256 of its own, and each
//    micro-batch count's best batches (bisection and every all-reduce size-limit crossing);
//  - single-slot flips of exact's plan: every other option of each operator, every other
//    TP, PP and EP with the replicas that tile the GPUs, overlap toggled, every other engine
//    instance count, each at its best batches;
//  - every redundant-expert count 0..experts at exact's degrees, at its best batches.
// Exact runs under a time limit (SHARDLAB_STRESS_EXACT_S, 5 s); scenarios it does not finish
// in time are counted, not compared. ppo runs on every tenth scenario (its network makes a
// 1500-call search ~50x dearer than the others'). SHARDLAB_STRESS_SCENARIOS sets the count
// (40 under SHARDLAB_QUICK_TESTS, the sanitizer runs).
#include <QtTest>

#include <chrono>

#include "runner/timed_search.h"
#include "search/scenario_generator.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

int envInt(const char* name, int fallback)
{
    bool ok = false;
    const int v = qEnvironmentVariableIntValue(name, &ok);
    return ok && v > 0 ? v : fallback;
}

// Exact, stopped after `limitS` seconds.
SearchOutcome exactWithin(const Scenario& s, double limitS)
{
    SearchOptions o;
    o.algorithm = "exact";
    return runSearchFor(s, o, limitS);
}

struct Scan {
    double best = 0;
    Plan plan;
    long long evaluations = 0;
    void see(const Plan& p, const SimResult& r)
    {
        ++evaluations;
        if (r.valid && r.tokensPerSPerGpu > best) {
            best = r.tokensPerSPerGpu;
            plan = p;
        }
    }
};

void bestBatchesOf(const Simulator& sim, const Plan& p, Scan& scan)
{
    for (int micro = 1; micro <= std::max(1, p.pipelineParallel); ++micro) {
        Plan q = p;
        q.microBatches = micro;
        forBestBatches(sim, q, micro, kMaxBatch, [&](const Plan& x, const SimResult& r) { scan.see(x, r); });
    }
}

void batchScan(const Simulator& sim, const Plan& best, Scan& scan)
{
    SimResult r;
    Plan p = best;
    for (int b = std::max(1, best.batch - 256); b <= std::min(kMaxBatch, best.batch + 256); ++b) {
        p.batch = b;
        sim.evaluate(p, r, false);
        scan.see(p, r);
    }
    bestBatchesOf(sim, best, scan);
}

void slotFlips(const Simulator& sim, const Scenario& s, const Plan& best, Scan& scan)
{
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o)
            if (o != best.option(id)) {
                Plan p = best;
                p.setOption(id, o);
                bestBatchesOf(sim, p, scan);
            }
    }
    const long long N = s.cluster.totalGpus();
    auto tiled = [&](Plan p) {
        const long long side = static_cast<long long>(p.tensorParallel) * p.pipelineParallel;
        if (side <= 0 || N % side != 0)
            return;
        p.dataParallel = static_cast<int>(N / side);
        bestBatchesOf(sim, p, scan);
    };
    for (long long d = 1; d <= N; ++d) {
        if (N % d != 0)
            continue;
        Plan tp = best;
        tp.tensorParallel = static_cast<int>(d);
        tiled(tp);
        Plan pp = best;
        pp.pipelineParallel = static_cast<int>(d);
        tiled(pp);
        if (s.model.isMoe()) {
            Plan ep = best;
            ep.expertParallel = static_cast<int>(d);
            bestBatchesOf(sim, ep, scan);
        }
    }
    if (s.model.isMoe()) {
        Plan t = best;
        t.twoBatchOverlap = !t.twoBatchOverlap;
        bestBatchesOf(sim, t, scan);
        for (int i = 1; i <= best.dataParallel; ++i)
            if (best.dataParallel % i == 0 && i != best.instances) {
                Plan q = best;
                q.instances = i;
                bestBatchesOf(sim, q, scan);
            }
    }
}

void everyRedundantCount(const Simulator& sim, const Scenario& s, const Plan& best, Scan& scan)
{
    if (!s.model.isMoe())
        return;
    for (int r = 0; r <= s.model.moe.experts; ++r) {
        Plan p = best;
        p.redundantExperts = r;
        bestBatchesOf(sim, p, scan);
    }
}

} // namespace

class TestExactStress : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nothingBeatsExact();
};

void TestExactStress::nothingBeatsExact()
{
    // Sanitizer runs (SHARDLAB_QUICK_TESTS) take 40: instrumented code is 5-20x slower.
    const int scenarios = envInt("SHARDLAB_STRESS_SCENARIOS", quickTests() ? 40 : 1000);
    const double limitS = envInt("SHARDLAB_STRESS_EXACT_S", 5);
    const bool havePpo = [] {
        for (const SearchAlgorithmInfo& a : searchAlgorithms())
            if (a.name == "ppo")
                return true;
        return false;
    }();
    ScenarioGeneratorOptions gen;
    gen.maxGpus = 128;
    int compared = 0, timedOut = 0, infeasible = 0, moe = 0, ppoRuns = 0;
    long long scanEvaluations = 0;
    double exactSeconds = 0;
    for (int i = 0; i < scenarios; ++i) {
        const Scenario s = generateScenario(2026, i, gen);
        const auto t0 = std::chrono::steady_clock::now();
        const SearchOutcome e = exactWithin(s, limitS);
        exactSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const QString where = QString("scenario %1 (%2, %3 GPUs)").arg(i).arg(QString::fromStdString(s.model.name)).arg(
            s.cluster.totalGpus());
        if (!e.provedOptimal && !e.provedInfeasible) {
            ++timedOut;
            continue;
        }
        ++compared;
        moe += s.model.isMoe();
        const double ceiling = e.found ? e.bestResult.tokensPerSPerGpu * (1 + 1e-9) : 0;
        std::vector<std::string> algorithms{"megatron", "random", "anneal", "genetic"};
        if (havePpo && i % 10 == 0) {
            algorithms.push_back("ppo");
            ++ppoRuns;
        }
        for (const std::string& a : algorithms) {
            SearchOptions o;
            o.algorithm = a;
            o.budget = 1500;
            o.seed = static_cast<std::uint64_t>(i);
            const SearchOutcome r = runSearch(s, o);
            if (r.found)
                QVERIFY2(r.bestResult.tokensPerSPerGpu <= ceiling,
                         qPrintable(where + QString(": %1 found %2, exact %3 (%4)")
                                               .arg(QString::fromStdString(a))
                                               .arg(r.bestResult.tokensPerSPerGpu, 0, 'g', 12)
                                               .arg(e.found ? e.bestResult.tokensPerSPerGpu : 0.0, 0, 'g', 12)
                                               .arg(e.found ? "proved optimal" : "proved infeasible")));
        }
        if (!e.found) {
            ++infeasible;
            continue;
        }
        const Simulator sim(s);
        Scan scan;
        batchScan(sim, e.best, scan);
        slotFlips(sim, s, e.best, scan);
        everyRedundantCount(sim, s, e.best, scan);
        scanEvaluations += scan.evaluations;
        QVERIFY2(scan.best <= ceiling, qPrintable(where + QString(": a scan around exact's plan found %1 > exact %2")
                                                          .arg(scan.best, 0, 'g', 12)
                                                          .arg(e.bestResult.tokensPerSPerGpu, 0, 'g', 12)));
    }
    qInfo("%d of %d scenarios compared (%d MoE, %d proved infeasible), %d not finished by exact within %.0f s; "
          "exact %.1f s in all; ppo on %d; %lld scan evaluations",
          compared, scenarios, moe, infeasible, timedOut, limitS, exactSeconds, ppoRuns, scanEvaluations);
    QVERIFY(compared >= scenarios * 9 / 10);
}

QTEST_APPLESS_MAIN(TestExactStress)
#include "tst_exact_stress.moc"
