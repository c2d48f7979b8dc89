// Redundant experts and two-batch overlap (docs/simulator.md §2-§3, docs/search.md
// "Redundant experts"): the one expert-placement rule, the expert load imbalance function's
// properties, the plan file fields, the search space's values, the engines' flags, and
// DeepSeek-V3 on 72 GPUs with 256 + 32 experts. The overlap's own bounds are
// tst_batch_overlap's.
#include <QtTest>

#include <cmath>
#include <random>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "model/plan_checks.h"
#include "report/launch_config.h"
#include "runner/run_search.h"
#include "search/search_space.h"
#include "sim/batch.h"
#include "sim/megatron.h"
#include "sim/simulator.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

bool hasCheck(const SimResult& r, PlanCheck c) { return r.structureChecks & (1u << static_cast<int>(c)); }

QString fieldErrors(const FieldErrors& e)
{
    QString s;
    for (const FieldError& x : e)
        s += QString::fromStdString(x.toString()) + "\n";
    return s;
}

} // namespace

class TestMoeBalance : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void divisibilityIsOneRule();
    void oneEpRankGainsNothingFromRedundantSlots();
    void exactCoversEveryRedundantCount_data();
    void exactCoversEveryRedundantCount();
    void imbalanceFloorIsBelowEveryCountOfItsRange();
    void deepseekOn72GpusNeedsRedundantExperts();
    void memoryHoldsTheRedundantSlots();
    void imbalanceProperties();
    void imbalanceKeepsTheCalibratedValue();
    void imbalanceKeepsTheBatchProperty();
    void planFileRoundTrip();
    void badValuesNameTheirJsonPath();
    void searchSpaceOffersRedundancyAndOverlap();
    void exactCertifiesWithTheNewDimensions();
    void enginesGetTheirFlags();
};

// Plan checks, the search-space masks and the recipe ask one rule: EP divides experts +
// With one EP rank the slots all sit on it: redundant slots balance nothing and add weights
// to hold and read. So a plan with them never beats, nor fits where it does not, the same
// plan without (exact and the brute-force enumerators rely on it).
void TestMoeBalance::oneEpRankGainsNothingFromRedundantSlots()
{
    for (const char* name : {"deepseek-v3-256gpu", "mixtral-8x22b-64gpu"}) {
        const Scenario s = presetScenario(name);
        const Simulator sim(s);
        const SearchSpace space(s);
        std::mt19937_64 rng(7);
        int compared = 0;
        for (int i = 0; i < 400; ++i) {
            Plan p = space.randomPlan(rng);
            p.expertParallel = 1;
            p.redundantExperts = 0;
            const SimResult base = sim.evaluate(p);
            if (base.structureChecks != 0)
                continue;
            for (int r : {1, 7, s.model.moe.experts / 2, s.model.moe.experts}) {
                Plan q = p;
                q.redundantExperts = r;
                const SimResult with = sim.evaluate(q);
                QVERIFY(!with.valid || base.valid);
                QVERIFY(with.tokensPerSPerGpu <= base.tokensPerSPerGpu * (1 + 1e-12));
                QVERIFY(with.memory.totalGb >= base.memory.totalGb);
                ++compared;
            }
        }
        QVERIFY(compared > 100);
    }
}

// The cost model's floor over a range of redundant counts is at most the imbalance of
// every count in the range (exact bounds whole ranges with it).
void TestMoeBalance::imbalanceFloorIsBelowEveryCountOfItsRange()
{
    for (const char* name : {"deepseek-v3-256gpu", "mixtral-8x22b-64gpu"}) {
        const Scenario s = presetScenario(name);
        const CostModel cm(s, SimConstants{});
        const int E = s.model.moe.experts;
        int checked = 0;
        for (int ep : {2, 3, 8, 16, 64, 72, 128, 256})
            for (double tokens : {1.0, 7.0, 64.0, 1000.0, 65536.0}) {
                const std::vector<int> counts = redundantExpertCounts(E, ep);
                for (size_t a = 0; a < counts.size(); ++a)
                    for (size_t b : {a, a + 1, a + 3, counts.size() - 1}) {
                        if (b >= counts.size() || b < a)
                            continue;
                        const double floor = cm.expertLoadImbalanceFloor(ep, counts[a], counts[b], tokens);
                        for (size_t k = a; k <= b; ++k)
                            QVERIFY(floor <= cm.expertLoadImbalance(ep, counts[k], tokens) * (1 + 1e-12));
                        ++checked;
                    }
            }
        QVERIFY(checked > 100);
    }
}

// Plans the simulator accepts that exact missed while it tried only a few redundant counts
// (up to experts / 8): Mixtral-8x22B with one redundant slot per expert, the 1.6 T MoE with
// 256 on EP 256 and two-batch overlap. Each is priced here at its largest valid batch, and
// exact certifies a plan at least as good.
void TestMoeBalance::exactCoversEveryRedundantCount_data()
{
    // tp, ep, pp, dp, redundant, two-batch overlap, instances
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QVector<int>>("degrees");
    QTest::newRow("mixtral-8x22b TP4 EP8 +8 redundant") << QStringLiteral("mixtral-8x22b-64gpu")
                                                        << QVector<int>{4, 8, 8, 2, 8, 0, 1};
    QTest::newRow("moe-1.6t EP256 +256 redundant, overlap") << QStringLiteral("moe-1.6t-1024gpu")
                                                             << QVector<int>{2, 256, 2, 256, 256, 1, 2};
}

void TestMoeBalance::exactCoversEveryRedundantCount()
{
    QFETCH(QString, scenario);
    QFETCH(QVector<int>, degrees);
    const Scenario s = presetScenario(scenario.toUtf8().constData());
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = degrees[0], p.expertParallel = degrees[1], p.pipelineParallel = degrees[2];
    p.dataParallel = degrees[3], p.redundantExperts = degrees[4], p.twoBatchOverlap = degrees[5] != 0;
    p.instances = degrees[6];
    SimResult r;
    int evaluations = 0;
    QVERIFY(largestValidBatch(Simulator(s), p, 1, r, evaluations) > 0);
    const double beaten = r.tokensPerSPerGpu;
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome out = runSearch(s, o);
    QVERIFY2(out.provedOptimal, out.message.c_str());
    QVERIFY2(out.bestResult.tokensPerSPerGpu >= beaten * (1 - 1e-4),
             qPrintable(QString("exact %1 < %2").arg(out.bestResult.tokensPerSPerGpu).arg(beaten)));
    QVERIFY(out.best.redundantExperts > 0);
}

// redundant. A count the space offers always satisfies it.
void TestMoeBalance::divisibilityIsOneRule()
{
    Scenario s = presetScenario("deepseek-v3-256gpu");
    const int E = s.model.moe.experts;
    const Simulator sim(s);
    for (int ep : {1, 2, 4, 8, 16, 32, 64, 128, 256})
        for (int r : {0, 1, 2, 8, 16, 32, 33, 64, 256, 257}) {
            Plan p;
            applyMegatronSharding(p);
            p.tensorParallel = 1;
            p.dataParallel = 256;
            p.expertParallel = ep;
            p.redundantExperts = r;
            const SimResult res = sim.evaluate(p);
            QCOMPARE(hasCheck(res, PlanCheck::ExpertsEp), !expertSlotsFit(E, r, ep));
            QCOMPARE(hasCheck(res, PlanCheck::RedundantLimit), r > E);
            QCOMPARE(isRedundantExpertCount(E, ep, r), expertSlotsFit(E, r, ep) && r <= E);
        }
    for (int E2 : {8, 128, 160, 256})
        for (int ep = 1; ep <= 80; ++ep)
            for (int r : redundantExpertCounts(E2, ep)) {
                QVERIFY(expertSlotsFit(E2, r, ep));
                QVERIFY(r <= E2); // the plan rule's limit: one redundant slot per expert
                QVERIFY(isRedundantExpertCount(E2, ep, r));
            }
    // The search space: every (EP, redundant) its masks allow fits the rule.
    const SearchSpace space(s);
    std::vector<std::uint8_t> ok(space.widestSlot());
    int choice[SearchSpace::kMaxSlots] = {};
    const auto& eps = space.slots()[space.epSlot()].values;
    const auto& rs = space.slots()[space.redundantSlot()].values;
    int pairs = 0;
    for (size_t e = 0; e < eps.size(); ++e) {
        choice[space.epSlot()] = static_cast<int>(e);
        space.mask(space.redundantSlot(), choice, ok.data());
        for (size_t i = 0; i < rs.size(); ++i)
            if (ok[i]) {
                QVERIFY(expertSlotsFit(E, rs[i], eps[e]));
                ++pairs;
            }
    }
    QVERIFY(pairs > static_cast<int>(eps.size()));
    // A dense model: no redundant experts, no overlap.
    Scenario dense = presetScenario("llama3-70b-8gpu");
    Plan d;
    applyMegatronSharding(d);
    d.tensorParallel = 8;
    d.redundantExperts = 4;
    d.twoBatchOverlap = true;
    const SimResult dr = Simulator(dense).evaluate(d);
    QVERIFY(hasCheck(dr, PlanCheck::RedundantDense));
    QVERIFY(hasCheck(dr, PlanCheck::OverlapDense));
    const FieldErrors why = validatePlan(d, dense);
    bool r = false, o = false;
    for (const FieldError& e : why) {
        r = r || e.where == "redundant_experts";
        o = o || e.where == "two_batch_overlap";
    }
    QVERIFY2(r && o, qPrintable(fieldErrors(why)));
}

// 256 routed experts on 72 EP ranks: invalid alone, valid with 32 redundant (288 = 72 x 4),
// as SGLang's and vLLM's documentation describe.
void TestMoeBalance::deepseekOn72GpusNeedsRedundantExperts()
{
    const Scenario s = deepseek72();
    Plan p = deepseek72Plan();
    QCOMPARE(p.expertParallel, 72);
    QCOMPARE(p.redundantExperts, 32);
    QVERIFY2(validatePlan(p, s).empty(), qPrintable(fieldErrors(validatePlan(p, s))));
    const SimResult r = Simulator(s).evaluate(p);
    QVERIFY(r.valid);
    for (double v : {r.tpotMs, r.ttftMs, r.tokensPerSPerGpu, r.memory.totalGb, r.expertLoadImbalance, r.overlapHiddenUs})
        QVERIFY(std::isfinite(v) && v > 0);
    Plan bare = p;
    bare.redundantExperts = 0;
    const FieldErrors e = validatePlan(bare, s);
    QVERIFY(!e.empty());
    QCOMPARE(QString::fromStdString(e.front().where), QStringLiteral("expert_parallel"));
    QVERIFY(QString::fromStdString(e.front().reason).contains("256 experts"));
    bare.redundantExperts = 31;
    QVERIFY(!validatePlan(bare, s).empty());
}

// Each EP rank holds (experts + redundant) / EP experts' weights (vLLM's formula).
void TestMoeBalance::memoryHoldsTheRedundantSlots()
{
    const Scenario s = deepseek72();
    Plan p = deepseek72Plan();
    p.twoBatchOverlap = false;
    const SimResult with = Simulator(s).evaluate(p);
    // The same layout on 64 GPUs' worth of slots: 256 / 64 = 4 slots too, so the expert
    // weights per GPU agree; 288 / 72 = 4.
    const Simulator sim(s);
    const CostModel& cm = sim.costs();
    PhaseContext ph;
    cm.phase(p, false, ph);
    QCOMPARE(ph.localExperts, 4.0);
    Plan more = p;
    more.expertParallel = 8;
    more.redundantExperts = 0;
    cm.phase(more, false, ph);
    QCOMPARE(ph.localExperts, 32.0);
    more.redundantExperts = 32;
    cm.phase(more, false, ph);
    QCOMPARE(ph.localExperts, 36.0);
    const SimResult r0 = Simulator(s).evaluate([&] { Plan q = more; q.redundantExperts = 0; return q; }());
    const SimResult r32 = Simulator(s).evaluate(more);
    // 4 more experts per GPU on each of the 58 MoE layers: 3 x 7168 x 2048 bytes each (FP8).
    const double extraGb = 4.0 * 58 * 3 * 7168.0 * 2048 * 1e-9;
    QVERIFY2(std::abs((r32.memory.weightsGb - r0.memory.weightsGb) - extraGb) < 1e-6,
             qPrintable(QString("%1 vs %2").arg(r32.memory.weightsGb - r0.memory.weightsGb).arg(extraGb)));
    QVERIFY(with.memory.weightsGb > 0);
}

// docs/simulator.md §2: 1 at EP 1, grows with EP, falls with redundancy and with tokens,
// never below 1, finite.
void TestMoeBalance::imbalanceProperties()
{
    const Scenario s = presetScenario("deepseek-v3-256gpu");
    const CostModel cm(s, SimConstants{});
    for (double t : {0.5, 1.0, 16.0, 1024.0, 1e6})
        for (int r : {0, 8, 32}) {
            QCOMPARE(cm.expertLoadImbalance(1, r, t), 1.0);
            double prev = 1;
            for (int ep : {2, 4, 8, 16, 32, 64, 128, 256}) {
                const double v = cm.expertLoadImbalance(ep, r, t);
                QVERIFY(std::isfinite(v) && v >= 1);
                QVERIFY2(v >= prev - 1e-12, qPrintable(QString("EP %1 r %2 T %3: %4 < %5").arg(ep).arg(r).arg(t).arg(v).arg(prev)));
                prev = v;
            }
        }
    for (int ep : {8, 32, 72, 144}) {
        for (double t : {64.0, 1024.0, 65536.0}) {
            double prev = 1e300;
            for (int r : {0, 8, 16, 32, 64, 256, 512}) {
                const double v = cm.expertLoadImbalance(ep, r, t);
                QVERIFY2(v <= prev + 1e-12, qPrintable(QString("EP %1 T %2 r %3: %4 > %5").arg(ep).arg(t).arg(r).arg(v).arg(prev)));
                prev = v;
            }
            QVERIFY(cm.expertLoadImbalance(ep, 32, t) < cm.expertLoadImbalance(ep, 0, t));
        }
        double prev = 1e300;
        for (double t = 1; t < 1e7; t *= 3) {
            const double v = cm.expertLoadImbalance(ep, 0, t);
            QVERIFY(v <= prev + 1e-12);
            prev = v;
        }
    }
    // The hottest slot: the hottest expert without redundancy, never below the mean slot's
    // share, falls as replicas are added.
    double prev = cm.hottestSlotLoad(0);
    QVERIFY(prev > 2 && prev < 20);
    for (int r : {1, 4, 16, 32, 64, 256, 1024}) {
        const double h = cm.hottestSlotLoad(r);
        QVERIFY(h <= prev + 1e-12);
        QVERIFY(h >= 256.0 / (256 + r) * 0.5);
        prev = h;
    }
}

// Where the calibration's MoE rows were fitted (Qwen3-235B, 128 experts, EP 8, batches of
// hundreds): close to the constant 1.25 they were fitted with.
void TestMoeBalance::imbalanceKeepsTheCalibratedValue()
{
    const Scenario s = presetScenario("llama3-70b-8gpu");
    Scenario q = s;
    auto m = modelPreset("qwen3-235b-a22b");
    QVERIFY(m.ok());
    q.model = m.value;
    const CostModel cm(q, SimConstants{});
    for (double tokens : {1000.0, 1840.0, 4096.0}) {
        const double v = cm.expertLoadImbalance(8, 0, tokens);
        QVERIFY2(std::abs(v - 1.25) < 0.01, qPrintable(QString("%1 at %2 tokens").arg(v).arg(tokens)));
    }
}

// The exact search's certificate needs every routed-token count T * I(T) non-decreasing and
// I(T) non-increasing in the tokens (docs/search.md, the batch property).
void TestMoeBalance::imbalanceKeepsTheBatchProperty()
{
    const Scenario s = presetScenario("deepseek-v3-256gpu");
    const CostModel cm(s, SimConstants{});
    for (int ep : {2, 8, 72, 256})
        for (int r : {0, 32}) {
            double prevLoad = 0, prevI = 1e300;
            for (double t = 0.25; t < 1e6; t *= 1.1) {
                const double i = cm.expertLoadImbalance(ep, r, t);
                QVERIFY(t * i >= prevLoad * (1 - 1e-12));
                QVERIFY(i <= prevI * (1 + 1e-12));
                prevLoad = t * i;
                prevI = i;
            }
        }
}

void TestMoeBalance::planFileRoundTrip()
{
    const Scenario s = deepseek72();
    const Plan p = deepseek72Plan();
    const std::string text = planToJson(p, &s);
    QVERIFY(QString::fromStdString(text).contains("\"redundant_experts\": 32"));
    QVERIFY(QString::fromStdString(text).contains("\"two_batch_overlap\": true"));
    auto back = parsePlanDocument(text, "mem");
    QVERIFY2(back.ok(), back.ok() ? "" : back.firstError().c_str());
    QVERIFY(back.value.plan == p);
    // Defaults when absent; a dense plan is written without them.
    Plan d;
    applyMegatronSharding(d);
    d.tensorParallel = 8;
    const Scenario dense = presetScenario("llama3-70b-8gpu");
    const std::string dt = planToJson(d, &dense);
    QVERIFY(!QString::fromStdString(dt).contains("redundant_experts"));
    auto db = parsePlanDocument(dt, "mem");
    QVERIFY(db.ok());
    QCOMPARE(db.value.plan.redundantExperts, 0);
    QCOMPARE(db.value.plan.twoBatchOverlap, false);
}

void TestMoeBalance::badValuesNameTheirJsonPath()
{
    const std::string base = R"({"format": "shardlab-plan", "version": 1, "tensor_parallel": 1, "pipeline_parallel": 1,
        "data_parallel": 72, "expert_parallel": 72, "batch": 8, )";
    struct Case {
        const char* fields;
        const char* where;
    };
    for (const Case& c : {Case{R"("redundant_experts": -1})", "redundant_experts"},
                          Case{R"("redundant_experts": 1.5})", "redundant_experts"},
                          Case{R"("redundant_experts": "32"})", "redundant_experts"},
                          Case{R"("redundant_experts": 100000000})", "redundant_experts"},
                          Case{R"("two_batch_overlap": "yes"})", "two_batch_overlap"},
                          Case{R"("two_batch_overlap": 1})", "two_batch_overlap"}}) {
        auto r = parsePlan(base + c.fields, "bad.json");
        QVERIFY2(!r.ok(), c.fields);
        QCOMPARE(QString::fromStdString(r.errors.front().where), QString::fromLatin1(c.where));
    }
    const std::string pools = R"({"format": "shardlab-plan", "version": 1, "serving": "disaggregated",
        "prefill": {"tensor_parallel": 8, "pipeline_parallel": 1, "data_parallel": 1, "batch": 1},
        "decode": {"tensor_parallel": 8, "pipeline_parallel": 1, "data_parallel": 1, "batch": 1, "redundant_experts": -3}})";
    auto d = parseDisaggregatedPlan(pools, "bad.json");
    QVERIFY(!d.ok());
    QCOMPARE(QString::fromStdString(d.errors.front().where), QStringLiteral("decode.redundant_experts"));
}

void TestMoeBalance::searchSpaceOffersRedundancyAndOverlap()
{
    const Scenario s = deepseek72();
    const SearchSpace space(s);
    const auto& eps = space.slots()[space.epSlot()].values;
    const auto& rs = space.slots()[space.redundantSlot()].values;
    QCOMPARE(QString::fromStdString(space.slots()[space.redundantSlot()].name), QStringLiteral("redundant_experts"));
    QCOMPARE(QString::fromStdString(space.slots()[space.overlapSlot()].name), QStringLiteral("two_batch_overlap"));
    QVERIFY(std::find(eps.begin(), eps.end(), 72) != eps.end());
    QVERIFY(std::find(rs.begin(), rs.end(), 32) != rs.end());
    QCOMPARE(space.slots()[space.overlapSlot()].values, (std::vector<int>{0, 1}));
    int choice[SearchSpace::kMaxSlots];
    QVERIFY(space.encode(deepseek72Plan(), choice));
    QVERIFY(space.isValid(choice));
    QVERIFY(space.decode(choice) == deepseek72Plan());
    // Every count that fills the EP ranks evenly, up to one redundant slot per expert.
    QCOMPARE(redundantExpertCounts(256, 72), (std::vector<int>{32, 104, 176, 248}));
    QCOMPARE(redundantExpertCounts(256, 128), (std::vector<int>{0, 128, 256}));
    QCOMPARE(redundantExpertCounts(8, 1), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
    QCOMPARE(redundantExpertCounts(256, 320), (std::vector<int>{64}));
    QCOMPARE(redundantExpertCounts(256, 512), (std::vector<int>{256}));
    QVERIFY(redundantExpertCounts(256, 513).empty());
    const SearchSpace dense(presetScenario("llama3-70b-8gpu"));
    QCOMPARE(dense.redundantSlot(), -1);
    QCOMPARE(dense.overlapSlot(), -1);
    QCOMPARE(dense.firstOpSlot(), dense.microSlot() + 1);
}

// exact on the DeepSeek-V3 72-GPU scenario: certified, and no plan of the space with other
// redundant-expert counts or overlap beats it among random ones.
void TestMoeBalance::exactCertifiesWithTheNewDimensions()
{
    const Scenario s = deepseek72();
    SearchOptions o;
    o.algorithm = "exact";
    const SearchOutcome out = runSearch(s, o);
    QVERIFY2(out.found && out.provedOptimal, out.message.c_str());
    QVERIFY(out.bestResult.valid);
    const Simulator sim(s);
    const SearchSpace space(s);
    std::mt19937_64 rng(13);
    SimResult r;
    for (int i = 0; i < 3000; ++i) {
        Plan p = space.randomPlan(rng);
        sim.evaluate(p, r, false);
        if (r.valid)
            QVERIFY(r.tokensPerSPerGpu <= out.bestResult.tokensPerSPerGpu * (1 + 1e-9));
    }
    const SimResult given = sim.evaluate(deepseek72Plan());
    QVERIFY(given.tokensPerSPerGpu <= out.bestResult.tokensPerSPerGpu * (1 + 1e-9));
}

void TestMoeBalance::enginesGetTheirFlags()
{
    const Scenario s = deepseek72();
    const Plan p = deepseek72Plan();
    auto text = [&](Engine e) {
        LaunchOptions o;
        o.engine = e;
        auto c = exportLaunchConfig(s, p, o);
        if (!c.ok())
            qFatal("%s", c.error().toString().c_str());
        QString t = QString::fromStdString(c.value().command);
        for (const LaunchFile& f : c.value().files)
            t += QString::fromStdString(f.contents);
        for (const std::string& w : c.value().warnings)
            t += "\nwarning: " + QString::fromStdString(w);
        return t;
    };
    const QString vllm = text(Engine::Vllm);
    QVERIFY2(vllm.contains("--enable-eplb") && vllm.contains(R"('{"num_redundant_experts":32}')")
                 && vllm.contains("--enable-dbo"),
             qPrintable(vllm));
    // Every step split, as priced: vLLM's own thresholds (32 decode, 512 prompt tokens)
    // would run smaller steps whole.
    QVERIFY2(vllm.contains("--dbo-decode-token-threshold 2") && vllm.contains("--dbo-prefill-token-threshold 2"),
             qPrintable(vllm));
    const QString sglang = text(Engine::Sglang);
    QVERIFY2(sglang.contains("--ep-num-redundant-experts 32") && sglang.contains("--enable-eplb")
                 && sglang.contains("--enable-two-batch-overlap"),
             qPrintable(sglang));
    // TensorRT-LLM 1.0 runs neither the overlap nor the all-to-all exchange: the plan is
    // refused (export never changes a plan); gathered and without overlap it runs, with
    // its load balancer.
    LaunchOptions to;
    to.engine = Engine::TrtLlm;
    const auto refused = exportLaunchConfig(s, p, to);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().reason.find("does not run this plan as planned") != std::string::npos,
             refused.error().reason.c_str());
    Plan gathered = p;
    gathered.twoBatchOverlap = false;
    gathered.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_gather"));
    gathered.setOption(OpId::Combine, optionFromName(OpId::Combine, "reduce_scatter"));
    const auto trt = exportLaunchConfig(s, gathered, to);
    QVERIFY2(trt.ok(), trt.ok() ? "" : trt.error().toString().c_str());
    QVERIFY(trt.value().files.front().contents.find("num_slots: 288") != std::string::npos);
    // Nothing of the kind for a plan without them: the recipe vLLM runs on Mixtral-8x22B.
    Scenario mixtral = presetScenario("mixtral-8x22b-64gpu");
    mixtral.workload.engine = CollectiveEngine::Vllm;
    mixtral.workload.runnable = true;
    const Plan plain = megatronPlan(Simulator(mixtral)).plan;
    QVERIFY(plain.redundantExperts == 0 && !plain.twoBatchOverlap);
    LaunchOptions o;
    auto c = exportLaunchConfig(mixtral, plain, o);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    QVERIFY(!QString::fromStdString(c.value().command).contains("eplb"));
    QVERIFY(!QString::fromStdString(c.value().command).contains("dbo"));
}

QTEST_GUILESS_MAIN(TestMoeBalance)
#include "tst_moe_balance.moc"
