// What the ppo search's mechanisms reach on the shipped and held-out scenarios: each one,
// turned off by its knob, leaves a seed worse (batch repair; replica, redundant-expert and
// operator moves), and the early exit ends a search only once its elite has stopped moving.
#include <QtTest>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "runner/run_search.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::budgeted;
using shardlab::testing::presetScenario;
using shardlab::testing::resourceScenario;

namespace {
// Exact's certified optimum (tokens/s per GPU) on the scenario; 0 when not proved.
double provedOptimum(const Scenario& s)
{
    SearchOptions x;
    x.algorithm = "exact";
    const SearchOutcome exact = runSearch(s, x);
    return exact.provedOptimal ? exact.bestResult.tokensPerSPerGpu : 0.0;
}

// ppo's best (tokens/s per GPU) at `budget` calls for each of `seeds`, with `knob` at its
// default and set to 0; empty when a search spends more than its budget.
struct OnOff {
    std::vector<int> seeds;
    std::vector<double> on, off;
};
OnOff withAndWithout(const Scenario& s, const char* knob, int budget, std::initializer_list<int> seeds)
{
    OnOff r;
    for (int seed : seeds) {
        SearchOptions o = budgeted("ppo", budget, seed);
        const SearchOutcome on = runSearch(s, o);
        if (on.calls > budget)
            return {};
        o.extra[knob] = 0;
        r.seeds.push_back(seed);
        r.on.push_back(on.bestResult.tokensPerSPerGpu);
        r.off.push_back(runSearch(s, o).bestResult.tokensPerSPerGpu);
    }
    return r;
}

// The seeds the knob lifts (best with it over best without), and the first one it leaves
// worse, described ("" when none).
int liftedSeeds(const OnOff& r, QString* worse)
{
    int lifted = 0;
    for (size_t i = 0; i < r.on.size(); ++i) {
        if (r.on[i] < r.off[i] && worse->isEmpty())
            *worse = QString("seed %1: %2 with it, %3 without").arg(r.seeds[i]).arg(r.on[i]).arg(r.off[i]);
        lifted += r.on[i] > r.off[i];
    }
    return lifted;
}

double median(std::vector<double> v)
{
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

// What a mechanism test asserts on: exact's proved optimum (0 when not proved), ppo's best
// for search seeds 1-5 at `budget` calls with `knob` on and off, the medians, and the
// first seed the knob leaves worse ("" when none).
struct KnobRun {
    double optimum = 0;
    OnOff r;
    double medianOn = 0, medianOff = 0;
    QString worse;
    bool ran() const { return optimum > 0 && !r.on.empty(); }
};
KnobRun knobRun(const Scenario& s, const char* knob, int budget)
{
    KnobRun k;
    k.optimum = provedOptimum(s);
    k.r = withAndWithout(s, knob, budget, {1, 2, 3, 4, 5});
    if (k.r.on.empty())
        return k;
    liftedSeeds(k.r, &k.worse);
    k.medianOn = median(k.r.on);
    k.medianOff = median(k.r.off);
    return k;
}

// A mechanism over several scenarios: the seeds its knob lifts in all, and the first problem
// found ("" when none): a scenario not run or not proved, a seed the knob leaves worse, or
// the first scenario's median seed below its optimum with the knob on; each scenario's run
// (those before the problem), in order.
struct Lifts {
    int lifted = 0;
    QString problem;
    std::vector<KnobRun> runs;
};
Lifts liftsOver(const std::vector<Scenario>& scenarios, const char* knob, int budget)
{
    Lifts out;
    for (size_t i = 0; i < scenarios.size() && out.problem.isEmpty(); ++i) {
        const QString name = QString::fromStdString(scenarios[i].name);
        const KnobRun k = knobRun(scenarios[i], knob, budget);
        if (!k.ran())
            out.problem = name + ": not run";
        else if (!k.worse.isEmpty())
            out.problem = name + ": " + k.worse;
        else if (i == 0 && k.medianOn < 0.999 * k.optimum)
            out.problem = name + QString(": median %1 of %2 with it").arg(k.medianOn).arg(k.optimum);
        QString ignored;
        out.lifted += liftedSeeds(k.r, &ignored);
        out.runs.push_back(k);
    }
    return out;
}
} // namespace

class TestPpoMechanisms : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // DeepSeek-V3 on 256 GPUs: at the batch scale's values the plan with 128 experts' ranks
    // and 2 instances ends every search without batch repair (436.6 tokens/s per GPU at
    // its largest valid batch, 1397), while the EP 64 family with 4 instances is better at
    // its own largest batch (441.6 at 1413, and 461.6 at 1477 with 64 redundant experts,
    // exact's optimum). Pricing the elite plans at their largest valid batch finds that
    // family: at 2000 calls the median seed ends above every seed without it, and no seed
    // ends worse.
    void eliteIsPricedAtItsLargestValidBatch()
    {
        const KnobRun k = knobRun(presetScenario("deepseek-v3-256gpu"), "ppo.batch_repair", 2000);
        QVERIFY(k.ran());
        QVERIFY2(k.worse.isEmpty(), qPrintable(k.worse));
        const double bestOff = *std::max_element(k.r.off.begin(), k.r.off.end());
        QVERIFY2(k.medianOn > bestOff, qPrintable(QString("median %1 with it, best %2 without").arg(k.medianOn).arg(bestOff)));
        QVERIFY2(bestOff < 0.99 * k.optimum, qPrintable(QString("%1 of %2 without it").arg(bestOff).arg(k.optimum)));
    }

    // The replica moves merge the best plan's data-parallel replicas pairwise or split them
    // (a move of several slots at once) at the end of a search: Mixtral-8x22B's optimum
    // merges replicas (TP 32 x DP 2 where a search can end on TP 16 x DP 4), and the 1.6 T
    // scenario's is one merge from plans searches end on. On the three MoE scenarios at
    // 1000 calls they lift one seed at least and the mean over seeds never falls. Their
    // reserve of calls is not sampled, so a seed they do not lift can end a little lower
    // (at most 2%) than it would have without them.
    void replicaMovesLiftASeed()
    {
        int lifted = 0;
        for (const char* preset : {"deepseek-v3-256gpu", "mixtral-8x22b-64gpu", "moe-1.6t-1024gpu"}) {
            const OnOff r = withAndWithout(presetScenario(preset), "ppo.replica_moves", 1000, {1, 2, 3, 4, 5});
            QVERIFY(!r.on.empty());
            QString worse;
            lifted += liftedSeeds(r, &worse);
            double sumOn = 0, sumOff = 0;
            for (size_t i = 0; i < r.on.size(); ++i) {
                sumOn += r.on[i];
                sumOff += r.off[i];
                QVERIFY2(r.on[i] >= 0.98 * r.off[i], qPrintable(QString("%1: seed %2: %3 with them, %4 without")
                                                                   .arg(preset).arg(r.seeds[i]).arg(r.on[i]).arg(r.off[i])));
            }
            QVERIFY2(sumOn >= sumOff, qPrintable(QString("%1: mean %2 with them, %3 without").arg(preset).arg(sumOn / r.on.size()).arg(sumOff / r.on.size())));
        }
        QVERIFY(lifted >= 1);
    }

    // The redundant-expert moves price the best plan with one expert copy more and fewer
    // per EP rank at the end of a search. DeepSeek-V3's optimum is the EP 64 family with 64
    // redundant experts (461.6 tokens/s per GPU at batch 1477). Which seeds the moves lift
    // depends on the weights and the costs: with the weights of 2026-12-07 every seed of
    // DeepSeek-V3 reaches the optimum at 1000 calls with or without them, and at 500 calls
    // they lift seed 8 of the held-out gen-20261127-13 (281 B MoE on 32 GPUs; 483.9 ->
    // 499.9) and no other seed of 1-8. So: DeepSeek-V3's median seed at its optimum with
    // them and none worse; on gen-20261127-13 at 500 calls a seed lifted, none worse.
    void redundantMovesLiftASeed()
    {
        const Lifts l = liftsOver({presetScenario("deepseek-v3-256gpu")}, "ppo.redundant_moves", 1000);
        QVERIFY2(l.problem.isEmpty(), qPrintable(l.problem));
        const OnOff r = withAndWithout(resourceScenario("benchmarks/held-out-2/gen-20261127-13.json"),
                                       "ppo.redundant_moves", 500, {1, 2, 3, 4, 5, 6, 7, 8});
        QVERIFY(!r.on.empty());
        QString worse;
        QVERIFY(liftedSeeds(r, &worse) >= 1);
        QVERIFY2(worse.isEmpty(), qPrintable(worse));
    }

    // The operator moves re-choose the best plan's operators one at a time at the end of a
    // search. Which seeds they lift depends on the weights and the costs: with the weights
    // of 2026-12-07 (vLLM's and SGLang's kernel floors as their CUDA graphs run them) at
    // 1000 calls they lift seeds 1 and 2 of the held-out gen-20261123-5 (126.9 -> 132.4,
    // 132.28 -> 132.44, the optimum), which raises its median seed to the optimum, and
    // seeds 1 and 3 of gen-20261127-4 (3133.0 -> 3158.0 each), and leave gen-20261127-7's
    // seeds where they were. Over the three: two seeds lifted at least, none worse,
    // gen-20261123-5's median seed at its optimum with them and higher than without.
    void operatorMovesLiftSeeds()
    {
        const Lifts l = liftsOver({resourceScenario("benchmarks/held-out/gen-20261123-5.json"),
                                   resourceScenario("benchmarks/held-out-2/gen-20261127-4.json"),
                                   resourceScenario("benchmarks/held-out-2/gen-20261127-7.json")},
                                  "ppo.operator_moves", 1000);
        QVERIFY2(l.problem.isEmpty(), qPrintable(l.problem));
        QVERIFY(l.lifted >= 2);
        const KnobRun& k = l.runs.front(); // gen-20261123-5's
        QVERIFY2(k.medianOn > k.medianOff, qPrintable(QString("median %1 with them, %2 without").arg(k.medianOn).arg(k.medianOff)));
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
