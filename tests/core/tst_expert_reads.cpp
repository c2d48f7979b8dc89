// The experts a decode step reads (docs/simulator.md §2, "Experts a step reads"): with the
// experts' popularity skewed as the load imbalance assumes, fewer distinct experts receive a
// token than under uniform routing; the busiest EP rank reads more than the mean rank; and
// the figures keep the properties exact's bounds rest on (non-decreasing in the redundant
// slots and in the tokens, a floor over a range of redundant counts). With the busiest
// attention-DP rank's context too, exact chooses attention DP with expert parallelism at
// high concurrency and head-split attention with expert TP at low, as engines' recipes do.
#include <QtTest>

#include <cmath>

#include "io/presets.h"
#include "runner/run_search.h"
#include "sim/cost_model.h"
#include "sim/megatron.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::presetScenario;
using shardlab::testing::qwen3Fp8OnH100x8;

namespace {

Scenario preset(const char* name) { return presetScenario(name); }

// The recipe's operator options at these degrees.
Plan recipePlan(int tp, int ep, int dp)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.expertParallel = ep;
    p.dataParallel = dp;
    return p;
}

// E (1 - (1 - k/E)^T): every expert equally popular.
double uniformActive(double E, double k, double T) { return E * (1 - std::pow(1 - k / E, T)); }

} // namespace

class TestExpertReads : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void oneTokenReadsTopK();
    void skewReadsFewerExpertsThanUniform();
    void noSkewIsUniform();
    void nonDecreasingInTokensAndSlots();
    void busiestRankReadsMoreThanTheMean();
    void readsNeverExceedRoutedPairs();
    void floorHoldsOverRedundantRanges();
    void attentionDpByConcurrency();
};

void TestExpertReads::oneTokenReadsTopK()
{
    const Scenario s = preset("mixtral-8x22b-64gpu");
    const CostModel cm(s, SimConstants{});
    // One token picks exactly top-k distinct experts, whatever their popularity.
    QVERIFY(std::abs(cm.expectedActiveSlots(0, 1) - s.model.moe.expertsPerToken) < 1e-9);
}

void TestExpertReads::skewReadsFewerExpertsThanUniform()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    const CostModel cm(s, SimConstants{});
    const double E = s.model.moe.experts, k = s.model.moe.expertsPerToken;
    for (double T : {4.0, 16.0, 64.0, 256.0}) {
        const double skewed = cm.expectedActiveSlots(0, T), uniform = uniformActive(E, k, T);
        QVERIFY2(skewed < uniform, qPrintable(QStringLiteral("T %1: %2 vs %3").arg(T).arg(skewed).arg(uniform)));
        QVERIFY(skewed > 0.5 * uniform);
    }
    // Enough tokens reach every expert either way.
    QVERIFY(cm.expectedActiveSlots(0, 1e6) > E - 1e-6);
}

void TestExpertReads::noSkewIsUniform()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    SimConstants flat;
    flat.expertPopularityCv2 = 0;
    const CostModel cm(s, flat);
    const double E = s.model.moe.experts, k = s.model.moe.expertsPerToken;
    for (double T : {1.0, 7.0, 100.0})
        QVERIFY(std::abs(cm.expectedActiveSlots(0, T) - uniformActive(E, k, T)) < 1e-9 * E);
}

void TestExpertReads::nonDecreasingInTokensAndSlots()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    const CostModel cm(s, SimConstants{});
    for (int ep : {1, 8, 64, 256}) {
        double prevT = 0;
        for (double T = 1; T < 1e5; T *= 1.3) {
            const double a = cm.busiestRankActiveSlots(ep, 0, T);
            QVERIFY2(a >= prevT - 1e-12, qPrintable(QStringLiteral("EP %1 T %2").arg(ep).arg(T)));
            prevT = a;
        }
        for (double T : {1.0, 20.0, 500.0}) {
            double prevR = 0;
            for (int r = 0; r <= 256; r += ep) {
                const double a = cm.busiestRankActiveSlots(ep, r, T);
                QVERIFY2(a >= prevR - 1e-12, qPrintable(QStringLiteral("EP %1 T %2 r %3").arg(ep).arg(T).arg(r)));
                prevR = a;
            }
        }
    }
}

void TestExpertReads::busiestRankReadsMoreThanTheMean()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    const CostModel cm(s, SimConstants{});
    const double E = s.model.moe.experts;
    QCOMPARE(cm.busiestRankActiveSlots(1, 0, 32), cm.expectedActiveSlots(0, 32));
    for (int ep : {8, 32}) {
        const double mean = cm.expectedActiveSlots(0, 32) / ep, busiest = cm.busiestRankActiveSlots(ep, 0, 32);
        QVERIFY(busiest > mean);
        QVERIFY(busiest <= E / ep + 1e-12);
    }
}

void TestExpertReads::readsNeverExceedRoutedPairs()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    const CostModel cm(s, SimConstants{});
    Plan p = recipePlan(8, 64, 8);
    for (int batch : {1, 2, 8, 64, 512}) {
        p.batch = batch;
        PhaseContext ph;
        cm.phase(p, false, ph);
        QVERIFY(ph.activeLocalExperts <= ph.routedPerEpRank + 1e-12);
        QVERIFY(ph.activeLocalExperts <= ph.localExperts + 1e-12);
        QVERIFY(ph.activeLocalExperts > 0);
    }
}

void TestExpertReads::floorHoldsOverRedundantRanges()
{
    const Scenario s = preset("moe-1.6t-1024gpu");
    const CostModel cm(s, SimConstants{});
    Plan p = recipePlan(8, 32, 4);
    for (int batch : {1, 16, 256}) {
        p.batch = batch;
        for (int low : {0, 32}) {
            p.redundantExperts = low;
            PhaseContext floor;
            cm.phaseFloor(p, low + 96, false, floor);
            for (int r = low; r <= low + 96; r += 32) {
                Plan q = p;
                q.redundantExperts = r;
                PhaseContext ph;
                cm.phase(q, false, ph);
                QVERIFY(floor.activeLocalExperts <= ph.activeLocalExperts + 1e-12);
                QVERIFY(floor.routedPerEpRank <= ph.routedPerEpRank + 1e-12);
            }
        }
    }
}

void TestExpertReads::attentionDpByConcurrency()
{
    Scenario s = qwen3Fp8OnH100x8({1000, 1000, 10000, 50});
    SearchOptions o;
    o.algorithm = "exact";
    auto attention = [&](double tpotMs) {
        s.workload.tpotSloMs = tpotMs;
        const SearchOutcome r = runSearch(s, o);
        if (!r.found || !r.provedOptimal)
            qFatal("exact: %s", r.message.c_str());
        return std::string(opOption(OpId::Attention, r.best.option(OpId::Attention)).name);
    };
    QCOMPARE(attention(50), std::string("token")); // many sequences in flight: attention DP
    QCOMPARE(attention(20), std::string("head"));  // a few: heads split over TP
}

QTEST_GUILESS_MAIN(TestExpertReads)
#include "tst_expert_reads.moc"
