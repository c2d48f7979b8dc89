// What the ppo search's mechanisms reach on the shipped scenarios: each one, turned off by
// its knob, costs a seed the optimum (batch repair, replica moves), and the early exit
// ends a search only once its elite has stopped moving.
#include <QtTest>

#include <algorithm>
#include <vector>

#include "runner/run_search.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::budgeted;
using shardlab::testing::presetScenario;

namespace {
// Exact's certified optimum (tokens/s per GPU) on the scenario; 0 when not proved.
double provedOptimum(const Scenario& s)
{
    SearchOptions x;
    x.algorithm = "exact";
    const SearchOutcome exact = runSearch(s, x);
    return exact.provedOptimal ? exact.bestResult.tokensPerSPerGpu : 0.0;
}

// ppo at 1000 calls reaches 0.99 of exact's optimum on `preset` at every one of `seeds`,
// and with `knob` set to 0 it falls short at one of them at least: the mechanism the
// knob turns on is what makes the search reach it every time.
void reachesTheOptimumOnlyWith(const char* preset, const char* knob, std::initializer_list<int> seeds)
{
    const Scenario s = presetScenario(preset);
    const double optimum = provedOptimum(s);
    QVERIFY(optimum > 0);
    double worstOff = optimum;
    for (int seed : seeds) {
        SearchOptions o = budgeted("ppo", 1000, seed);
        const SearchOutcome on = runSearch(s, o);
        QVERIFY(on.calls <= 1000);
        QVERIFY2(on.bestResult.tokensPerSPerGpu >= 0.99 * optimum,
                 qPrintable(QString("seed %1: %2 of %3").arg(seed).arg(on.bestResult.tokensPerSPerGpu).arg(optimum)));
        o.extra[knob] = 0;
        worstOff = std::min(worstOff, runSearch(s, o).bestResult.tokensPerSPerGpu);
    }
    QVERIFY2(worstOff < 0.99 * optimum, qPrintable(QString("%1 of %2").arg(worstOff).arg(optimum)));
}
} // namespace

class TestPpoMechanisms : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // DeepSeek-V3 on 256 GPUs: at the batch scale's 1024 the plan with 128 experts' ranks
    // and 2 instances (345.0 tokens/s per GPU) beats exact's optimum family (EP 64, 4
    // instances: 343.2), while at each one's largest valid batch the order reverses (401.3
    // against 424.4). Pricing the elite plans at their largest valid batch finds the
    // optimum within the same budget; without it the search settles on the other plan.
    void eliteIsPricedAtItsLargestValidBatch()
    {
        reachesTheOptimumOnlyWith("deepseek-v3-256gpu", "ppo.batch_repair", {1, 2, 4});
    }

    // Mixtral-8x22B on 64 GPUs: a search can end on TP 32 x DP 1 or TP 16 x DP 4, where the
    // optimum merges or splits the replicas (TP 32 x DP 2, 2 instances, expert TP 2): a move
    // of several slots at once. At 2000 calls the replica moves never leave a seed worse, lift
    // at least one, and the median seed reaches the optimum. (At 1000 calls the weights
    // retrained for the grouped expert GEMMs end two seeds of five short with the moves or
    // without them: docs/ppo.md.)
    void replicaMovesReachAMergedOptimum()
    {
        const Scenario s = presetScenario("mixtral-8x22b-64gpu");
        const double optimum = provedOptimum(s);
        QVERIFY(optimum > 0);
        std::vector<double> withMoves;
        int lifted = 0;
        for (int seed : {1, 2, 3, 4, 5}) {
            SearchOptions o = budgeted("ppo", 2000, seed);
            const double on = runSearch(s, o).bestResult.tokensPerSPerGpu;
            o.extra["ppo.replica_moves"] = 0;
            const double off = runSearch(s, o).bestResult.tokensPerSPerGpu;
            QVERIFY2(on >= off, qPrintable(QString("seed %1: %2 with the moves, %3 without").arg(seed).arg(on).arg(off)));
            lifted += on > off;
            withMoves.push_back(on);
        }
        QVERIFY(lifted >= 1);
        std::nth_element(withMoves.begin(), withMoves.begin() + 2, withMoves.end());
        QVERIFY2(withMoves[2] >= 0.99 * optimum, qPrintable(QString("median %1 of %2").arg(withMoves[2]).arg(optimum)));
    }

    void earlyExitOnConfidence()
    {
        const Scenario s = presetScenario("llama3-70b-8gpu");
        SearchOptions o = budgeted("ppo", 4000, 3);
        o.extra["ppo.tau"] = 0.01; // any trained policy is more confident than that
        o.extra["ppo.patience"] = 2;
        const SearchOutcome r = runSearch(s, o);
        QVERIFY2(r.message.find("early exit") != std::string::npos, r.message.c_str());
        QVERIFY(r.calls < 4000);
        // Only once the elite history had stopped moving for `patience` updates.
        const auto at = r.message.find("unchanged for ");
        QVERIFY2(at != std::string::npos, r.message.c_str());
        QVERIFY2(std::stoi(r.message.substr(at + 14)) >= 2, r.message.c_str());
    }

    // Confidence alone never ends the search while the elite is still moving: with a
    // patience longer than the run, the same confident policy spends its budget.
    void noEarlyExitWhileTheEliteMoves()
    {
        const Scenario s = presetScenario("llama3-70b-8gpu");
        SearchOptions o = budgeted("ppo", 2000, 3);
        o.extra["ppo.tau"] = 0.01;
        o.extra["ppo.patience"] = 64;
        const SearchOutcome r = runSearch(s, o);
        QVERIFY2(r.message.find("early exit") == std::string::npos, r.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPpoMechanisms)
#include "tst_ppo_mechanisms.moc"
