// The exact search's certificate: its answer equals brute force over whole small spaces
// (every plan at its best batches, every micro-batch count), no valid plan anyone can construct beats
// it on the shipped and generated scenarios, and the two properties the proof relies on
// (docs/search.md) hold on random plans.
#include <QDir>
#include <QtTest>

#include <cmath>
#include <random>

#include "report/result_json.h"
#include "runner/run_search.h"
#include "search/scenario_generator.h"
#include "sim/batch.h"
#include "sim/megatron.h"
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

// One plan's batches in increasing order against the batch property the certificate relies
// on (docs/search.md): validity is a prefix of the batches, and throughput never falls
// except where a collective crosses an engine's size limit (exact's batch segments). Each
// check returns why the property fails at batch `b`, or an empty string while it holds.
class BatchWalk {
public:
    QString validity(int b, bool fits)
    {
        if (m_seenInvalid && fits)
            return QString("valid again at batch %1: validity must be monotone in the batch").arg(b);
        m_seenInvalid = m_seenInvalid || !fits;
        return {};
    }
    QString throughput(int b, const SimResult& r)
    {
        const double thr = r.tokensPerSPerGpu;
        if (r.sizeCappedCollectives != m_capped) // a size limit crossed: the price may jump
            m_prev = 0;
        m_capped = r.sizeCappedCollectives;
        if (thr < m_prev * (1 - 1e-12))
            return QString("throughput fell from %1 to %2 at batch %3").arg(m_prev, 0, 'g', 17).arg(thr, 0, 'g', 17).arg(b);
        m_prev = thr;
        return {};
    }

private:
    double m_prev = 0;
    int m_capped = 0;
    bool m_seenInvalid = false;
};

} // namespace

Q_DECLARE_METATYPE(shardlab::Scenario)
Q_DECLARE_METATYPE(shardlab::SearchSpaceOptions)

class TestSearchExact : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void batchPropertyHolds_data();
    void batchPropertyHolds();
    void plansKeepTheBatchPropertyAtEveryBatch_data();
    void plansKeepTheBatchPropertyAtEveryBatch();
    void moreMicroBatchesThanStagesAreRefused();
    void exactEqualsBruteForce_data();
    void exactEqualsBruteForce();
    void exactEqualsBruteForceUnderRandomLimits_data();
    void exactEqualsBruteForceUnderRandomLimits();
    void exactBeatsEveryConstructedPlan_data();
    void exactBeatsEveryConstructedPlan();
    void noValidPlanIsProvedAndExplained();
    void exactHonoursStop();
};

void TestSearchExact::exactEqualsBruteForce_data()
{
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<SearchSpaceOptions>("options");
    // Limits chosen so memory (KV cache), TTFT and TPOT all reject part of each space.
    // Brute force tries every plan at its best batches: options are restricted so the
    // spaces stay near a few hundred option combinations.
    const auto dense = restricted({1}, {1},
                                  {{OpId::Embedding, {1}}, {OpId::LmHead, {0, 1}}, {OpId::AttnNorm, {0}},
                                   {OpId::QkvProj, {0, 1}}, {OpId::Attention, {0, 1}}, {OpId::OutProj, {0, 1}},
                                   {OpId::GateUp, {0, 1}}, {OpId::Down, {0, 1}}});
    // TTFT limits in aggregated serving include the prompt's own prefill (~0.3-0.5 ms here,
    // mostly launch overheads): the limits below bind without emptying the space.
    QTest::newRow("dense, 2x2 GPUs, loose") << tinyScenario(TinyModel::Dense, 2, 2, 2, 1000, 1) << dense;
    QTest::newRow("dense, 2x2 GPUs, TTFT+TPOT") << tinyScenario(TinyModel::Dense, 2, 2, 1.5, 0.7, 0.6) << dense;
    QTest::newRow("dense, 2x2 GPUs, memory") << tinyScenario(TinyModel::Dense, 2, 2, 0.8, 0.7, 0.6) << dense;
    // One output token: no TPOT, so a TPOT limit below every step binds nothing.
    Scenario oneToken = tinyScenario(TinyModel::Dense, 2, 2, 0.8, 1000, 1e-6);
    oneToken.workload.outputTokens = 1;
    oneToken.workload.maxNumTokens = 8192;
    QTest::newRow("dense, 2x2 GPUs, one output token") << oneToken << dense;
    Scenario tightDecode = tinyScenario(TinyModel::Dense, 4, 1, 0.6, 0.2, 0.35); // decode mode, too
    tightDecode.workload.serving = ServingMode::Decode;
    QTest::newRow("dense, 4 GPUs in a node, tight, decode mode") << tightDecode << dense;
    // Embedding and LM head fixed (their couplings are covered by the dense rows) and the
    // router fixed, to keep brute force near a million plans.
    const auto moe = restricted({1}, {1},
                                {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::Router, {1}}, {OpId::AttnNorm, {0}},
                                 {OpId::FfnNorm, {0}}, {OpId::QkvProj, {0, 1}}, {OpId::Attention, {0}},
                                 {OpId::OutProj, {0}}, {OpId::SharedExpert, {0, 2}}, {OpId::GateUp, {0}},
                                 {OpId::Down, {0}}});
    QTest::newRow("moe shared+dense, 2 GPUs") << tinyScenario(TinyModel::MoeSharedDense, 2, 1, 0.7, 0.8, 0.6) << moe;
    const auto mla = restricted({1}, {1},
                                {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::AttnNorm, {0}}, {OpId::Router, {1}},
                                 {OpId::FfnNorm, {0}}, {OpId::QkvProj, {0, 1}}, {OpId::OutProj, {0}},
                                 {OpId::Attention, {0, 1}}});
    QTest::newRow("mla moe, 2x2 GPUs") << tinyScenario(TinyModel::MlaMoe, 2, 2, 1, 0.8, 0.6) << mla;
    QTest::newRow("mla moe, 2x2 GPUs, tight") << tinyScenario(TinyModel::MlaMoe, 2, 2, 0.6, 0.8, 0.4) << mla;
    // 8 experts on 3 GPUs: EP 3 needs a redundant expert (9 slots), every plan with and
    // without two-batch overlap (docs/search.md, "Redundant experts").
    // (A TTFT limit that two-batch overlap's doubled launches can meet on some plans.)
    QTest::newRow("mla moe, 3 GPUs, redundant experts and overlap") << tinyScenario(TinyModel::MlaMoe, 3, 1, 1, 1.2, 0.6)
                                                                     << mla;
}

void TestSearchExact::exactEqualsBruteForce()
{
    QFETCH(Scenario, scenario);
    QFETCH(SearchSpaceOptions, options);
    if (quickTests() && !QByteArray(QTest::currentDataTag()).startsWith("dense, 4 GPUs"))
        QSKIP("sanitizer run: the other rows cover the same code");
    const BruteForce b = bruteForceAllBatches(scenario, options);
    QVERIFY(b.valid > 0);
    QVERIFY2(b.valid < b.plans, "the limits should reject part of the space");
    if (QByteArray(QTest::currentDataTag()).contains("redundant")) {
        // The space has both new dimensions, and brute force saw valid plans of each kind.
        const SearchSpace sp(scenario, options);
        // Every count up to one per expert that some EP allows: EP 3 takes 1, 4 and 7.
        QCOMPARE(sp.slots()[sp.redundantSlot()].values, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
        QCOMPARE(sp.slots()[sp.overlapSlot()].values, (std::vector<int>{0, 1}));
        QVERIFY2(b.validRedundant > 0 && b.validOverlap > 0, "brute force should find valid plans using each");
    }
    SearchOptions o;
    o.algorithm = "exact";
    o.space = options;
    const SearchOutcome out = runSearch(scenario, o);
    QVERIFY2(out.found, out.message.c_str());
    QVERIFY2(out.provedOptimal, out.message.c_str());
    // The answer is valid under the simulator and as good as the best of brute force.
    const SimResult r = Simulator(scenario).evaluate(out.best);
    QVERIFY(r.valid);
    QCOMPARE(r.tokensPerSPerGpu, out.bestResult.tokensPerSPerGpu);
    QVERIFY2(close(out.bestResult.tokensPerSPerGpu, b.best, 1e-12),
             qPrintable(QString("exact %1, brute force %2 (batch %3, micro %4)")
                            .arg(out.bestResult.tokensPerSPerGpu, 0, 'g', 17)
                            .arg(b.best, 0, 'g', 17)
                            .arg(b.bestPlan.batch)
                            .arg(b.bestPlan.microBatches)));
    QVERIFY(out.calls >= 1);
}

void TestSearchExact::exactEqualsBruteForceUnderRandomLimits_data()
{
    QTest::addColumn<int>("model");
    QTest::addColumn<int>("trials");
    QTest::addColumn<SearchSpaceOptions>("options");
    QTest::newRow("dense, 2x2 GPUs")
        << int(TinyModel::Dense) << 8
        << restricted({1}, {1},
                      {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::AttnNorm, {0}}, {OpId::FfnNorm, {0}},
                       {OpId::QkvProj, {0, 1}}, {OpId::Attention, {0, 1}}, {OpId::OutProj, {0, 1}}});
    QTest::newRow("mla moe, 2x2 GPUs")
        << int(TinyModel::MlaMoe) << 4
        << restricted({1}, {1},
                      {{OpId::Embedding, {1}}, {OpId::LmHead, {0}}, {OpId::Router, {1}}, {OpId::AttnNorm, {0}},
                       {OpId::FfnNorm, {0}}, {OpId::QkvProj, {0, 1}}, {OpId::OutProj, {0}}, {OpId::Attention, {0}}});
}

// Random memory sizes and SLOs make different constraints bind at the optimum (and
// sometimes leave no valid plan at all): exact must match brute force every time.
void TestSearchExact::exactEqualsBruteForceUnderRandomLimits()
{
    QFETCH(int, model);
    QFETCH(int, trials);
    QFETCH(SearchSpaceOptions, options);
    if (quickTests() && model != int(TinyModel::Dense))
        QSKIP("sanitizer run: the dense rows cover the same code");
    trials = quickTests() ? 1 : trials;
    std::mt19937_64 rng(11);
    auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53; };
    int infeasible = 0;
    for (int t = 0; t < trials; ++t) {
        const Scenario s = tinyScenario(static_cast<TinyModel>(model), 2, 2, uniform(0.35, 2.0), uniform(0.3, 1.2),
                                        uniform(0.15, 1.0));
        const BruteForce b = bruteForceAllBatches(s, options);
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
        QVERIFY2(close(out.bestResult.tokensPerSPerGpu, b.best, 1e-12), where + " brute force " + QByteArray::number(b.best, 'g', 17)
                                                               + " exact "
                                                               + QByteArray::number(out.bestResult.tokensPerSPerGpu, 'g', 17));
    }
    QVERIFY(infeasible < trials);
}

void TestSearchExact::exactBeatsEveryConstructedPlan_data()
{
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<bool>("feasible");
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(name) << presetScenario(name) << true;
    QTest::newRow("small dense, 8 GPUs") << tinyScenario(TinyModel::Dense, 8, 1, 2, 1000, 1000) << true;
    QTest::newRow("moe with shared experts, 2x4 GPUs") << tinyScenario(TinyModel::MoeSharedDense, 4, 2, 1, 1000, 1000)
                                                       << true;
    QTest::newRow("mla moe, 2x4 GPUs") << tinyScenario(TinyModel::MlaMoe, 4, 2, 1, 1000, 1000) << true;
    Scenario uneven = presetScenario("llama3-70b-8gpu"); // 80 layers over 3 or 6 stages
    uneven.cluster.gpusPerNode = 6;
    uneven.cluster.nodes = 2;
    QTest::newRow("pipeline with uneven layers, 12 GPUs") << uneven << true;
    Scenario slo = presetScenario("mixtral-8x22b-64gpu");
    slo.workload.tpotSloMs = 20;
    slo.workload.ttftSloMs = 300;
    QTest::newRow("SLO-bound mixtral") << slo << true;
    Scenario one = presetScenario("llama3-70b-8gpu");
    one.model.weightPrecision = Precision::FP8;
    one.model.kvPrecision = Precision::FP8;
    one.cluster.gpusPerNode = 1;
    one.cluster.nodes = 1;
    one.cluster.gpu.hbmGb = 141;
    QTest::newRow("one GPU (141 GB, FP8 70B)") << one << true;
    Scenario two = presetScenario("llama3-70b-8gpu"); // the report that opened the one-cost-model issue
    two.model.weightPrecision = Precision::FP8;
    two.model.kvPrecision = Precision::FP8;
    two.cluster.gpusPerNode = 2;
    two.workload = {1000, 1000, 1e9, 1e9};
    QTest::newRow("FP8 70B on 2 GPUs, no SLOs") << two << true;
    Scenario none = presetScenario("llama3-70b-8gpu");
    none.cluster.gpusPerNode = 1;
    QTest::newRow("infeasible: 70B BF16 on one 80 GB GPU") << none << false;
}

// Issue "one cost model": no valid plan that can be constructed beats exact's "proved
// optimal". Tried: thousands of random plans with integer batches (and micro-batch counts
// up to the batch), perturbations of exact's own plan (batch +-1..5, +-10..100%, every
// micro-batch count, every single option flipped), the Megatron recipe, and the other
// algorithms' bests.
void TestSearchExact::exactBeatsEveryConstructedPlan()
{
    QFETCH(Scenario, scenario);
    QFETCH(bool, feasible);
    const QByteArray tag(QTest::currentDataTag());
    if (quickTests() && (tag.startsWith("deepseek") || tag.startsWith("moe-1.6t") || tag.startsWith("mixtral")))
        QSKIP("sanitizer run: the smaller scenarios cover the same code");
    QVERIFY(validateScenario(scenario).empty());
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome ex = runSearch(scenario, o);
    if (!feasible) {
        QVERIFY2(!ex.found && ex.provedInfeasible, ex.message.c_str());
    } else {
        QVERIFY2(ex.found && ex.provedOptimal, ex.message.c_str());
        QVERIFY(ex.bestResult.valid);
    }
    const double best = ex.found ? ex.bestResult.tokensPerSPerGpu : 0;
    const Simulator sim(scenario);
    SimResult r;
    int beaten = 0, tried = 0;
    QString example;
    auto check = [&](const Plan& p) {
        ++tried;
        sim.evaluate(p, r, false);
        if (r.valid && r.tokensPerSPerGpu > best * (1 + 1e-12)) {
            if (beaten++ == 0)
                example = QString("TP %1 PP %2 EP %3 batch %4 micro %5: %6 > %7")
                              .arg(p.tensorParallel)
                              .arg(p.pipelineParallel)
                              .arg(p.expertParallel)
                              .arg(p.batch)
                              .arg(p.microBatches)
                              .arg(r.tokensPerSPerGpu, 0, 'g', 12)
                              .arg(best, 0, 'g', 12);
        }
    };

    // Random plans of the space with integer batches on a log scale and any micro count.
    const SearchSpace space(scenario);
    std::mt19937_64 rng(3);
    for (int i = 0; i < scaled(4000); ++i) {
        Plan p = space.randomPlan(rng);
        p.batch = std::max(1, int(std::exp(double(rng() % 10000) / 10000 * std::log(8192.0))));
        p.microBatches = 1 + int(rng() % std::min<std::uint64_t>(p.batch, p.pipelineParallel));
        check(p);
        // ... and the same plan at its largest valid batch.
        int evals = 0;
        SimResult rr;
        if (largestValidBatch(sim, p, p.microBatches, rr, evals) > 0) {
            Plan q = p;
            q.batch = largestValidBatch(sim, p, p.microBatches, rr, evals);
            check(q);
        }
    }
    // Perturbations of exact's plan.
    if (ex.found) {
        const Plan e = ex.best;
        for (int d : {-5, -3, -2, -1, 1, 2, 3, 5}) {
            Plan p = e;
            p.batch = std::max(1, e.batch + d);
            p.microBatches = std::min(p.microBatches, p.batch);
            check(p);
        }
        for (double f : {0.5, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0}) {
            Plan p = e;
            p.batch = std::max(1, int(e.batch * f));
            p.microBatches = std::min(p.microBatches, p.batch);
            check(p);
        }
        for (int m = 1; m <= std::min(e.batch, e.pipelineParallel); ++m) {
            Plan p = e;
            p.microBatches = m;
            check(p);
        }
        for (int i = 0; i < kOpCount; ++i)
            for (int opt = 0; opt < opInfo(static_cast<OpId>(i)).optionCount; ++opt) {
                Plan p = e;
                p.setOption(static_cast<OpId>(i), opt);
                check(p);
            }
    }
    // The recipe and every other algorithm.
    check(megatronPlan(sim).plan);
    for (const char* algo : {"megatron", "random", "anneal", "genetic"}) {
        SearchOptions a;
        a.algorithm = algo;
        a.budget = 1500;
        a.seed = 7;
        const SearchOutcome m = runSearch(scenario, a);
        if (m.found)
            check(m.best);
    }
    QVERIFY2(beaten == 0, qPrintable(QString("%1 of %2 constructed plans beat exact, e.g. %3").arg(beaten).arg(tried).arg(example)));
}

void TestSearchExact::batchPropertyHolds_data()
{
    QTest::addColumn<Scenario>("scenario");
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(name) << presetScenario(name);
    QTest::newRow("mla moe, 2x4 GPUs") << tinyScenario(TinyModel::MlaMoe, 4, 2, 1, 1000, 1000);
    // Every generated scenario of the held-out sets: engines' collectives with their size
    // limits, long prompts (prefill as events, docs/simulator.md §4), MoE across up to 128
    // nodes, decode mode.
    int generated = 0;
    for (const char* set : {"held-out", "held-out-2"}) {
        const QDir dir(QString(SHARDLAB_RESOURCES "/benchmarks/") + set);
        for (const QString& f : dir.entryList({"gen-*.json"}, QDir::Files, QDir::Name)) {
            const std::string rel = std::string("benchmarks/") + set + "/" + f.toStdString();
            QTest::newRow((std::string(set) + "/" + f.chopped(5).toStdString()).c_str())
                << resourceScenario(rel.c_str());
            ++generated;
        }
    }
    if (generated < 39)
        qFatal("%d generated held-out scenarios found, 39 expected", generated);
    // Scenarios of the pretraining generator, drawn with a training seed: among them
    // gen-4-407, a dense model served aggregated with 14,752-token prompts, where the busiest
    // token-split rank's prompt chunk stops growing with the batch at its budget.
    for (int i = 400; i < 424; ++i)
        QTest::newRow(("gen-4-" + std::to_string(i)).c_str()) << generateScenario(4, i);
}

// The property the certificate relies on (docs/search.md): for fixed degrees, micro-batches
// and options, validity is monotone in the batch and throughput never falls as it grows,
// except where a collective crosses an engine's size limit (exact's batch segments).
void TestSearchExact::batchPropertyHolds()
{
    QFETCH(Scenario, scenario);
    const Simulator sim(scenario);
    const SearchSpace space(scenario);
    std::mt19937_64 rng(5);
    SimResult r;
    int checked = 0;
    for (int i = 0; i < scaled(300); ++i) {
        Plan p = space.randomPlan(rng);
        p.microBatches = 1 + int(rng() % p.pipelineParallel);
        BatchWalk walk;
        for (int b = p.microBatches; b <= 4096; b += 1 + b / 16) {
            p.batch = b;
            sim.evaluate(p, r, false);
            const bool fits = !r.violates(Violation::Memory) && !r.violates(Violation::TpotSlo)
                && !r.violates(Violation::TtftSlo) && !r.violates(Violation::TokenBudget);
            const QString invalid = walk.validity(b, fits);
            QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
            if (r.structureChecks)
                break;
            const QString fell = walk.throughput(b, r);
            QVERIFY2(fell.isEmpty(), qPrintable(fell));
            ++checked;
        }
    }
    QVERIFY(checked > scaled(1000));
}

// Every batch of one plan, one by one, where the step's composition depends on the batch:
// long prompts beside the decode tokens, token-split layers. The batch property at every
// batch, and exact's optimum is at least the plan's best batch.
void TestSearchExact::plansKeepTheBatchPropertyAtEveryBatch_data()
{
    QTest::addColumn<Scenario>("scenario");
    QTest::addColumn<QString>("planFile");
    QTest::addColumn<int>("maxBatch");
    // The token-split plans' ranks prefill a prompt alone, a piece of their share of the
    // budget per step: their TTFT is over these scenarios' limits at every batch, so the
    // limit is lifted to keep some batch valid (the batch property is the point here).
    auto looseTtft = [](Scenario s) {
        s.workload.ttftSloMs = 1e8;
        return s;
    };
    // An MoE plan whose two replicas run in lock step over 32 nodes (the MoE kernel and the
    // busiest replica's prompt chunk depend on the batch).
    QTest::newRow("lock-step MoE replicas across 32 nodes")
        << looseTtft(resourceScenario("benchmarks/held-out/gen-20261123-3.json")) << "gen-20261123-3-token-split" << 600;
    // A dense model, 14,752-token prompts, TP 4 with token-split layers near its TPOT limit
    // (the busiest rank's prompt chunk saturates at its budget as the batch grows).
    QTest::newRow("dense token-split ranks at their prompt budget")
        << looseTtft(generateScenario(4, 407)) << "gen-4-407-token-split" << 200;
}

void TestSearchExact::plansKeepTheBatchPropertyAtEveryBatch()
{
    QFETCH(Scenario, scenario);
    QFETCH(QString, planFile);
    QFETCH(int, maxBatch);
    const auto loaded = loadPlanFile(std::string(SHARDLAB_TEST_DATA "/plans/") + planFile.toStdString() + ".plan.json");
    QVERIFY2(loaded.ok(), loaded.firstError().c_str());
    Plan p = loaded.value;
    const Simulator sim(scenario);
    p.batch = 2;
    QVERIFY(sim.costs().chunkStepShare(p) < 1); // prefill as events: a step carries a piece or none
    SimResult r;
    BatchWalk walk;
    double bestValid = 0;
    for (int b = 1; b <= maxBatch; ++b) {
        p.batch = b;
        sim.evaluate(p, r, false);
        QVERIFY(!r.structureChecks);
        const QString invalid = walk.validity(b, r.valid);
        QVERIFY2(invalid.isEmpty(), qPrintable(invalid));
        const QString fell = walk.throughput(b, r);
        QVERIFY2(fell.isEmpty(), qPrintable(fell));
        if (r.valid)
            bestValid = r.tokensPerSPerGpu;
    }
    QVERIFY(bestValid > 0);
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome ex = runSearch(scenario, o);
    QVERIFY(ex.provedOptimal);
    QVERIFY2(ex.bestResult.tokensPerSPerGpu >= bestValid * (1 - 1e-9),
             qPrintable(QString("exact %1, the plan %2").arg(ex.bestResult.tokensPerSPerGpu).arg(bestValid)));
}

// The simulator refuses more micro-batches than pipeline stages (each stage runs one
// micro-batch at a time): exact's enumeration of 1..PP covers every plan it accepts.
void TestSearchExact::moreMicroBatchesThanStagesAreRefused()
{
    const Scenario s = presetScenario("moe-1.6t-1024gpu");
    Plan p = megatronPlan(Simulator(s)).plan;
    p.microBatches = p.pipelineParallel + 1;
    p.batch = std::max(p.batch, p.microBatches);
    const SimResult r = Simulator(s).evaluate(p);
    QVERIFY(!r.valid);
    QVERIFY(r.violates(Violation::Divisibility));
    const auto reasons = violationReasons(s, p, r);
    QVERIFY(!reasons.empty());
    QVERIFY2(QString::fromStdString(reasons.front()).contains("micro_batches"), reasons.front().c_str());
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

    // A prompt longer than the token budget times the output: no batch keeps the budget.
    Scenario rag = presetScenario("llama3-70b-8gpu");
    rag.workload.promptTokens = 100000;
    rag.workload.outputTokens = 12;
    rag.workload.ttftSloMs = rag.workload.tpotSloMs = 1e9;
    const SearchOutcome out3 = runSearch(rag, o);
    QVERIFY(!out3.found && out3.provedInfeasible);
    QVERIFY2(QString::fromStdString(out3.message).contains("above workload.max_num_tokens 8192"), out3.message.c_str());
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
