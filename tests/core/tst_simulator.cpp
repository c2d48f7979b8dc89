// Simulator: operator FLOPs/bytes and collective formulas against hand computations,
// physical bounds, monotonic properties, the Megatron pattern, invalid plans.
#include <QtTest>

#include <algorithm>

#include <random>

#include "io/presets.h"
#include "io/profile_json.h"
#include "io/scenario_json.h"
#include "report/result_json.h"
#include "search/search_space.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {
Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

Plan megatron(int tp, int pp, int dp, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.pipelineParallel = pp;
    p.dataParallel = dp;
    p.batch = batch;
    return p;
}

bool finiteResult(const SimResult& r)
{
    return std::isfinite(r.tpotMs) && std::isfinite(r.ttftMs) && std::isfinite(r.tokensPerSPerGpu)
        && std::isfinite(r.memory.totalGb);
}

// The names of the fields in which two results differ (exact comparison), every field of
// SimResult: the summary, the memory breakdown and, with `arrays`, each operator's
// breakdown of both phases. A field added to SimResult must be added here; the size check
// in fastPathEqualsFullEvaluation fails until it is.
std::vector<std::string> differingFields(const SimResult& a, const SimResult& b, bool arrays)
{
    std::vector<std::string> out;
    auto field = [&](const std::string& name, auto x, auto y) {
        if (!(x == y))
            out.push_back(name);
    };
#define SL_FIELD(f) field(#f, a.f, b.f)
    SL_FIELD(valid); SL_FIELD(violations); SL_FIELD(structureChecks); SL_FIELD(serving);
    SL_FIELD(tpotMs); SL_FIELD(ttftMs); SL_FIELD(e2eMs); SL_FIELD(outputTokensPerS); SL_FIELD(stepTokens);
    SL_FIELD(passMs); SL_FIELD(kvTransferMs); SL_FIELD(cycleMs); SL_FIELD(tokensPerSPerGpu); SL_FIELD(sizeCappedCollectives);
    SL_FIELD(stageStepUs); SL_FIELD(pipelineBubble); SL_FIELD(p2pUs); SL_FIELD(p2pBytes); SL_FIELD(p2pCrossesNodes);
    SL_FIELD(expertTensorParallel); SL_FIELD(expertLoadImbalance); SL_FIELD(overlapHiddenUs);
    SL_FIELD(draftUs); SL_FIELD(tokensPerStep);
    SL_FIELD(memory.weightsGb); SL_FIELD(memory.kvCacheGb); SL_FIELD(memory.activationGb); SL_FIELD(memory.samplerWarmupGb);
    SL_FIELD(memory.reserveGb); SL_FIELD(memory.kvHeldBackGb); SL_FIELD(memory.totalGb); SL_FIELD(memory.capacityGb);
#undef SL_FIELD
    if (!arrays)
        return out;
    for (int phase = 0; phase < 2; ++phase) {
        const auto& x = phase ? a.prefill : a.decode;
        const auto& y = phase ? b.prefill : b.decode;
        for (int i = 0; i < kOpCount; ++i) {
            const std::string at = std::string(phase ? "prefill[" : "decode[") + opInfo(static_cast<OpId>(i)).name + "].";
#define SL_OP(f) field(at + #f, x[i].f, y[i].f)
            SL_OP(present); SL_OP(computeUs); SL_OP(memoryUs); SL_OP(timeUs); SL_OP(launchUs); SL_OP(bound); SL_OP(commUs);
            SL_OP(collective); SL_OP(commBytes); SL_OP(commInterBytes); SL_OP(collectivesPerLayer);
            SL_OP(flops); SL_OP(hbmBytes);
            for (int g = 0; g < kGroupRoleCount; ++g) {
                SL_OP(byGroup[g].us); SL_OP(byGroup[g].bytes); SL_OP(byGroup[g].interBytes); SL_OP(byGroup[g].kinds);
            }
#undef SL_OP
        }
    }
    return out;
}

std::string joined(const std::vector<std::string>& names)
{
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}
} // namespace

class TestSimulator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void denseOperatorCosts();
    void mlaAndExpertCosts();
    void collectiveFormulas_data();
    void collectiveFormulas();
    void hierarchicalAllReduce();
    void conversions();
    void batchOneDecodeIsWeightBytesOverBandwidth();
    void neverFasterThanPhysics();
    void moreBandwidthNeverSlowsDecode();
    void moreTensorParallelNeverRaisesWeightMemory();
    void megatronLlamaHasTwoAllReducesPerLayer();
    void aVocabularySplitHeadGathersItsLogits();
    void megatronPlansOfBenchmarksAreValid();
    void invalidPlansSayWhy_data();
    void invalidPlansSayWhy();
    void fastPathEqualsFullEvaluation();
    void absurdInputsStayFinite();
    void canonicalPlansEvaluateIdentically();
    void decodeModeBoundsAggregated();
    void servingModeRoundTripsAndDefaults();
};

void TestSimulator::denseOperatorCosts()
{
    // Llama-3-70B, BF16 (2 bytes), hidden 8192, 64 heads / 8 KV heads x 128, FFN 28672.
    const Simulator sim(preset("llama3-70b-8gpu"));
    const auto& qkv = sim.opStatic(OpId::QkvProj);
    // Q + K + V width = (64 + 2*8) * 128 = 10240; FLOPs = 2 * 8192 * 10240 = 167,772,160;
    // weights = 8192 * 10240 * 2 B = 167,772,160 B.
    QCOMPARE(qkv.flopsPerToken, 167772160.0);
    QCOMPARE(qkv.weightBytes, 167772160.0);
    const auto& gu = sim.opStatic(OpId::GateUp);
    // gate + up: 2 GEMMs of 8192 x 28672: FLOPs 4 * 8192 * 28672 = 939,524,096;
    // weights 2 * 8192 * 28672 * 2 B = 939,524,096 B.
    QCOMPARE(gu.flopsPerToken, 939524096.0);
    QCOMPARE(gu.weightBytes, 939524096.0);
    const auto& down = sim.opStatic(OpId::Down);
    QCOMPARE(down.flopsPerToken, 2.0 * 28672 * 8192);
    QCOMPARE(down.weightBytes, 28672.0 * 8192 * 2);
    const auto& att = sim.opStatic(OpId::Attention);
    // KV per cached token and layer: K and V, 8 heads x 128 x 2 B = 4096 B; decode math
    // per cached token: QK^T and PV, 2 * 2 * 64 heads * 128 = 32768 FLOPs.
    QCOMPARE(att.kvBytesPerCtx, 4096.0);
    QCOMPARE(att.attnFlopsDecodePerCtx, 32768.0);
    QCOMPARE(att.kvFloor, 1.0 / 8);
    const auto& head = sim.opStatic(OpId::LmHead);
    QCOMPARE(head.flopsPerToken, 2.0 * 8192 * 128256);
}

void TestSimulator::mlaAndExpertCosts()
{
    // DeepSeek-V3: FP8 weights (1 B), KV cache BF16; latent 512 + RoPE 64 per token.
    const Simulator sim(preset("deepseek-v3-256gpu"));
    QCOMPARE(sim.opStatic(OpId::Attention).kvBytesPerCtx, (512.0 + 64) * 2);
    QCOMPARE(sim.opStatic(OpId::Attention).kvFloor, 1.0); // the latent is shared by all heads
    // kv_b: 512 x 128 heads x (128 nope + 128 v) = 16,777,216 params at 1 B.
    QCOMPARE(sim.opStatic(OpId::Attention).weightBytes, 16777216.0);
    // One expert's gate+up: 2 x 7168 x 2048 = 29,360,128 params at 1 B; per routed token
    // 4 x 7168 x 2048 = 58,720,256 FLOPs.
    QCOMPARE(sim.opStatic(OpId::ExpertUp).weightBytes, 29360128.0);
    QCOMPARE(sim.opStatic(OpId::ExpertUp).flopsPerToken, 58720256.0);
    QVERIFY(sim.opStatic(OpId::ExpertUp).fp8);
    QVERIFY(!sim.opStatic(OpId::Attention).fp8);
}

void TestSimulator::collectiveFormulas_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("n");
    QTest::addColumn<double>("expectedBytes");
    QTest::addColumn<double>("expectedSeconds");
    // One node, S = 8 MB, NVLink 400 GB/s effective, 3 us per ring step; NCCL picks the
    // fastest of ring LL128, ring Simple and (all-reduce, > 2 ranks) NVLS (docs/simulator.md §2).
    const NcclParams& p = ncclParams();
    const double S = 8e6, B = 400e9, L = 3e-6;
    auto ring = [&](double bytes, double steps) {
        return std::min(p.launchS + steps * L + bytes / B / p.ll128, p.simpleLaunchS + steps * L + bytes / B / p.simple);
    };
    const double ar = 2.0 * 7 / 8 * S;
    QTest::newRow("all-reduce n=8") << int(Collective::AllReduce) << 8 << ar
                                    << std::min(ring(ar, 14), p.nvlsLaunchS + ar / B / p.nvls);
    QTest::newRow("all-reduce n=2") << int(Collective::AllReduce) << 2 << S << ring(S, 2); // no NVLS for 2
    QTest::newRow("reduce-scatter n=8") << int(Collective::ReduceScatter) << 8 << 7.0 / 8 * S << ring(7.0 / 8 * S, 7);
    QTest::newRow("all-gather n=4") << int(Collective::AllGather) << 4 << 3.0 / 4 * S << ring(3.0 / 4 * S, 3);
    // all-to-all: (n-1)/n of each rank's S/n buffer, all peers at once (no ring steps).
    const double a2a = 7.0 / 8 * S / 8;
    QTest::newRow("all-to-all n=8") << int(Collective::AllToAll) << 8 << a2a
                                    << std::min(p.a2aLaunchS + a2a / B / p.ll128, p.simpleLaunchS + a2a / B / p.a2aSimple);
    QTest::newRow("group of one") << int(Collective::AllReduce) << 1 << 0.0 << 0.0;
}

void TestSimulator::collectiveFormulas()
{
    QFETCH(int, kind);
    QFETCH(int, n);
    QFETCH(double, expectedBytes);
    QFETCH(double, expectedSeconds);
    LinkModel link;
    link.intraBytesPerS = 400e9;
    link.invIntra = 1 / 400e9;
    link.intraLatencyS = 3e-6;
    link.interBytesPerS = 40e9;
    link.invInter = 1 / 40e9;
    link.interLatencyS = 8e-6;
    link.gpusPerNode = 8;
    const CollectiveCost c = collectiveCost(Collective(kind), 8e6, placeGroup(n, 1, 8), link);
    QVERIFY(qFuzzyCompare(1 + c.bytesPerRank, 1 + expectedBytes));
    QVERIFY2(qFuzzyCompare(1 + c.seconds, 1 + expectedSeconds),
             qPrintable(QString("%1 vs %2").arg(c.seconds).arg(expectedSeconds)));
}

void TestSimulator::hierarchicalAllReduce()
{
    // 16 ranks over 2 nodes of 8: NCCL's all-reduce inside each node (its reduce-scatter and
    // all-gather), then an all-reduce of the 1/8 shard over the 2 nodes' 40 GB/s links.
    LinkModel link;
    link.intraBytesPerS = 400e9;
    link.invIntra = 1 / 400e9;
    link.intraLatencyS = 3e-6;
    link.interBytesPerS = 40e9;
    link.invInter = 1 / 40e9;
    link.interLatencyS = 8e-6;
    link.gpusPerNode = 8;
    const double S = 16e6;
    const Group g = placeGroup(16, 1, 8);
    QCOMPARE(g.ranksPerNode, 8);
    const CollectiveCost c = collectiveCost(Collective::AllReduce, S, g, link);
    const double inside = collectiveCost(Collective::AllReduce, S, placeGroup(8, 1, 8), link).seconds;
    const double expected = inside + 2.0 * 1 / 2 * (S / 8) / 40e9 + 2 * 8e-6;
    QVERIFY(qFuzzyCompare(c.seconds, expected));
    QCOMPARE(c.algo, CollectiveAlgo::Hierarchical);
    // A strided group (stride 8) has one rank per node: everything goes inter-node.
    QCOMPARE(placeGroup(4, 8, 8).ranksPerNode, 1);
}

void TestSimulator::conversions()
{
    QCOMPARE(conversionFor(Layout::P, Layout::R), Collective::AllReduce);
    QCOMPARE(conversionFor(Layout::P, Layout::T), Collective::ReduceScatter);
    QCOMPARE(conversionFor(Layout::T, Layout::R), Collective::AllGather);
    QCOMPARE(conversionFor(Layout::T, Layout::F), Collective::AllToAll);
    QCOMPARE(conversionFor(Layout::R, Layout::F), Collective::LocalSlice);
    QCOMPARE(conversionFor(Layout::XP, Layout::XT), Collective::ReduceScatter);
    QCOMPARE(conversionFor(Layout::F, Layout::F), Collective::None);
}

void TestSimulator::batchOneDecodeIsWeightBytesOverBandwidth()
{
    // Llama-3-8B BF16 on one H100, batch 1, a 16-token prompt: a decode step reads every
    // weight once (plus a negligible KV cache), so TPOT ~= weight bytes / (3.35 TB/s x the
    // BF16 GEMMs' streaming efficiency, gemm_model.h) + one launch overhead per operator.
    Scenario s = preset("llama3-70b-8gpu");
    s.model = modelPreset("llama3-8b").value;
    s.cluster.nodes = 1;
    s.cluster.gpusPerNode = 1;
    s.workload = {16, 16, 1e9, 1e9};
    const Simulator sim(s);
    const SimResult r = sim.evaluate(megatron(1, 1, 1, 1));
    QVERIFY(r.valid);
    const ParameterCounts pc = countParameters(s.model);
    const double embedding = double(s.model.vocabSize) * s.model.hiddenSize; // looked up, not streamed
    const double bytes = (pc.total - embedding) * 2;
    const double hbm = gemmModel(s.cluster.gpu).streamBf16;
    const double ops = 6.0 * s.model.layers + 2; // operators launched per step, attention apart
    // The attention kernel's own fixed cost and per-(sequence, head) cost (profile: attention_decode).
    const AttentionDecodeParams& att = builtinProfile().attentionDecode;
    const double attention = s.model.layers * (att.fixedS + s.model.attentionHeads * att.perQueryHeadS);
    const double expectedMs = (bytes / hbm + ops * s.cluster.gpu.kernelOverheadUs * 1e-6 + attention) * 1e3;
    QVERIFY2(std::abs(r.tpotMs / expectedMs - 1) < 0.02,
             qPrintable(QStringLiteral("%1 vs %2 ms").arg(r.tpotMs).arg(expectedMs)));
}

void TestSimulator::neverFasterThanPhysics()
{
    // For random plans of every benchmark scenario: a decode step can never beat reading
    // the weights a GPU holds at the datasheet HBM bandwidth, nor its FLOPs at peak.
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"}) {
        const Scenario s = preset(name);
        const Simulator sim(s);
        const SearchSpace space(s);
        std::mt19937_64 rng(7);
        for (int i = 0; i < 300; ++i) {
            const Plan p = space.randomPlan(rng);
            const SimResult r = sim.evaluate(p);
            if (r.structureChecks)
                continue;
            double flops = 0, bytes = 0;
            for (const auto& o : r.decode) {
                flops += o.flops;
                bytes += o.hbmBytes;
            }
            const double floorS = std::max(bytes / (s.cluster.gpu.hbmTbps * 1e12), flops / (s.cluster.gpu.peakTflopsFp8 * 1e12));
            QVERIFY2(r.stageStepUs * 1e-6 >= floorS * 0.999, name);
            // Expert weights can stay unread when no token is routed to them; every other
            // weight byte on the stage is read each step.
            if (!s.model.isMoe())
                QVERIFY2(bytes >= r.memory.weightsGb * 1e9 * 0.99 - s.model.vocabSize * double(s.model.hiddenSize) * 2, name);
        }
    }
}

void TestSimulator::moreBandwidthNeverSlowsDecode()
{
    for (const char* name : {"llama3-70b-8gpu", "deepseek-v3-256gpu"}) {
        Scenario s = preset(name);
        Scenario fast = s;
        fast.cluster.gpu.hbmTbps *= 1.5;
        const Simulator a(s), b(fast);
        const SearchSpace space(s);
        std::mt19937_64 rng(3);
        for (int i = 0; i < 300; ++i) {
            const Plan p = space.randomPlan(rng);
            const SimResult ra = a.evaluate(p), rb = b.evaluate(p);
            QVERIFY(rb.tpotMs <= ra.tpotMs + 1e-12);
            QVERIFY(rb.ttftMs <= ra.ttftMs + 1e-12);
        }
    }
}

void TestSimulator::moreTensorParallelNeverRaisesWeightMemory()
{
    const Scenario s = preset("llama3-70b-8gpu");
    const Simulator sim(s);
    double previous = 1e300;
    for (int tp : {1, 2, 4, 8}) {
        const SimResult r = sim.evaluate(megatron(tp, 1, 8 / tp, 8));
        QVERIFY(r.structureChecks == 0);
        QVERIFY2(r.memory.weightsGb <= previous, qPrintable(QString::number(tp)));
        previous = r.memory.weightsGb;
    }
    // 70.55 B params x 2 B / 8 = 17.6 GB per GPU at TP 8.
    QVERIFY(std::abs(previous - 70.55 * 2 / 8) < 0.2);
}

void TestSimulator::aVocabularySplitHeadGathersItsLogits()
{
    // The column (vocabulary-split) LM head leaves each of the 8 ranks 1/8 of every logit row;
    // the sampler needs them whole: 7/8 of 64 positions x 128,256 logits x 2 B sent per GPU per
    // step, on top of what the replicated head (same input edge, no gather) sends.
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Decode;
    const Simulator sim(s);
    const Plan column = megatron(8, 1, 1, 64);
    Plan replicated = column;
    replicated.setOption(OpId::LmHead, optionFromName(OpId::LmHead, "replicated"));
    const SimResult rc = sim.evaluate(column), rr = sim.evaluate(replicated);
    const double gathered = 7.0 / 8 * 64 * double(s.model.vocabSize) * 2;
    const double extra = rc.decode[int(OpId::LmHead)].commBytes - rr.decode[int(OpId::LmHead)].commBytes;
    QVERIFY2(std::abs(extra - gathered) <= 1e-9 * gathered,
             qPrintable(QString("the column head sends %1 B more, expected %2 B").arg(extra).arg(gathered)));
    QVERIFY(rc.decode[int(OpId::LmHead)].commUs > rr.decode[int(OpId::LmHead)].commUs);
    // explain lists it among the head's conversions.
    bool listed = false;
    for (const OpConversion& c : opConversions(s.model, column, OpId::LmHead))
        listed = listed || (c.kind == Collective::AllGather && std::string(c.where) == "logits to every rank for sampling");
    QVERIFY(listed);
    // At TP 1 there is nothing to gather.
    const SimResult one = Simulator(s).evaluate(megatron(1, 1, 8, 64));
    QCOMPARE(one.decode[int(OpId::LmHead)].commBytes, 0.0);
}

void TestSimulator::megatronLlamaHasTwoAllReducesPerLayer()
{
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Decode; // the steady decode step alone
    const Simulator sim(s);
    const SimResult r = sim.evaluate(megatron(8, 1, 1, 64));
    int allReduces = 0;
    for (OpId id : {OpId::AttnNorm, OpId::QkvProj, OpId::Attention, OpId::OutProj, OpId::FfnNorm, OpId::GateUp,
                    OpId::Down}) {
        const OpBreakdown& o = r.decode[int(id)];
        if (o.collective == Collective::AllReduce)
            allReduces += o.collectivesPerLayer;
        else
            QCOMPARE(o.collectivesPerLayer, 0);
    }
    QCOMPARE(allReduces, 2);
    QCOMPARE(r.decode[int(OpId::AttnNorm)].collective, Collective::AllReduce); // after down
    QCOMPARE(r.decode[int(OpId::FfnNorm)].collective, Collective::AllReduce);  // after out_proj
    // Each moves 2 x 7/8 x (64 tokens x 8192 x 2 B) per GPU per layer, x 80 layers.
    const double perLayer = 2.0 * 7 / 8 * 64 * 8192 * 2;
    QVERIFY(qFuzzyCompare(r.decode[int(OpId::FfnNorm)].commBytes, perLayer * 80));
    // Aggregated serving: each step also carries 64 x 2048 / 512 = 256 prompt tokens.
    Scenario agg = s;
    agg.workload.serving = ServingMode::Aggregated;
    const SimResult ra = Simulator(agg).evaluate(megatron(8, 1, 1, 64));
    QVERIFY(qFuzzyCompare(ra.decode[int(OpId::FfnNorm)].commBytes, perLayer * 5 * 80));
    QCOMPARE(ra.stepTokens, 320.0);
    QVERIFY(ra.tokensPerSPerGpu < r.tokensPerSPerGpu); // the prompt chunks cost decode time

    // Sequence parallelism: reduce-scatter then all-gather instead, same bytes.
    Plan sp = megatron(8, 1, 1, 64);
    sp.setOption(OpId::AttnNorm, optionFromName(OpId::AttnNorm, "sequence"));
    sp.setOption(OpId::FfnNorm, optionFromName(OpId::FfnNorm, "sequence"));
    const SimResult q = sim.evaluate(sp);
    QCOMPARE(q.decode[int(OpId::FfnNorm)].collective, Collective::ReduceScatter);
    QCOMPARE(q.decode[int(OpId::GateUp)].collective, Collective::AllGather);
}

void TestSimulator::megatronPlansOfBenchmarksAreValid()
{
    for (const PresetFile& f : scenarioPresetFiles()) {
        const Simulator sim(preset(f.name.c_str()));
        const RecipePlan rp = megatronPlan(sim);
        QVERIFY2(rp.found && rp.result.valid, f.name.c_str());
        QVERIFY(rp.result.tokensPerSPerGpu > 0);
    }
}

void TestSimulator::invalidPlansSayWhy_data()
{
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("dp");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("violation");
    QTest::addColumn<QString>("reason");
    QTest::newRow("does not tile") << 4 << 1 << 1 << 8 << int(Violation::Tiling) << "does not tile";
    QTest::newRow("TP 3 on 8 GPUs") << 3 << 1 << 1 << 8 << int(Violation::Tiling) << "does not tile";
    QTest::newRow("70B BF16 on one GPU's share") << 1 << 1 << 8 << 8 << int(Violation::Memory) << "memory";
    QTest::newRow("KV cache of batch 4096") << 8 << 1 << 1 << 4096 << int(Violation::Memory) << "memory";
}

void TestSimulator::invalidPlansSayWhy()
{
    QFETCH(int, tp);
    QFETCH(int, pp);
    QFETCH(int, dp);
    QFETCH(int, batch);
    QFETCH(int, violation);
    QFETCH(QString, reason);
    const Scenario s = preset("llama3-70b-8gpu");
    const Simulator sim(s);
    const Plan p = megatron(tp, pp, dp, batch);
    const SimResult r = sim.evaluate(p);
    QVERIFY(!r.valid);
    QVERIFY(r.violates(Violation(violation)));
    QVERIFY(finiteResult(r));
    const auto reasons = violationReasons(s, p, r);
    QVERIFY(!reasons.empty());
    QVERIFY2(QString::fromStdString(reasons.front()).contains(reason), reasons.front().c_str());
    // And the JSON never carries NaN/Inf.
    QVERIFY(!QString::fromStdString(evaluationToJson(s, p, r)).contains(QStringLiteral("nan")));
}

void TestSimulator::fastPathEqualsFullEvaluation()
{
    // One SimResult reused on the fast path, as the searches do: every summary field must
    // equal a fresh full evaluation's exactly, whatever the plan before it left there
    // (structurally invalid plans return early), and the per-operator arrays, which the fast
    // path does not compute, must all be marked absent so that no stale entry is read.
    // A full evaluation into a reused result equals a fresh one in every field, arrays too.
    // Aggregated, a prefill pool and a decode pool, dense and MoE.
#if defined(__x86_64__) && defined(__LP64__)
    // differingFields lists every field: a field added to these structs must be added there.
    static_assert(sizeof(OpBreakdown) == 104 + kGroupRoleCount * sizeof(OpBreakdown::GroupComm) && sizeof(MemoryBreakdown) == 64,
                  "a breakdown field was added: compare it in differingFields");
    static_assert(sizeof(SimResult) == 168 + 64 + 2 * kOpCount * sizeof(OpBreakdown),
                  "a SimResult field was added: compare it in differingFields");
#endif
    Scenario dis = preset("deepseek-v3-256gpu");
    dis.workload.serving = ServingMode::Disaggregated;
    Scenario mtp = preset("deepseek-v3-256gpu"); // speculative decoding: draftUs and tokensPerStep
    mtp.workload.speculative = {SpeculativeMethod::Mtp, 2, 0.7};
    const std::vector<Scenario> scenarios = {preset("deepseek-v3-256gpu"), preset("llama3-70b-8gpu"), mtp,
                                             poolScenario(dis, PoolRole::Prefill, 64),
                                             poolScenario(dis, PoolRole::Decode, 192)};
    for (const Scenario& s : scenarios) {
        const Simulator sim(s);
        const SearchSpace space(s);
        std::mt19937_64 rng(11);
        SimResult fast, reused;
        int valid = 0;
        bool drafted = false;
        for (int i = 0; i < 400; ++i) {
            Plan p = space.randomPlan(rng);
            if (i % 7 == 3)
                p.tensorParallel = 3; // structurally invalid: the early return
            sim.evaluate(p, fast, false);
            sim.evaluate(p, reused, true);
            const SimResult full = sim.evaluate(p);
            valid += full.valid;
            drafted = drafted || full.draftUs > 0;
            const std::string at = s.name + " plan " + std::to_string(i) + ": ";
            const auto summary = differingFields(fast, full, false);
            QVERIFY2(summary.empty(), (at + "the fast path differs in " + joined(summary)).c_str());
            for (int k = 0; k < kOpCount; ++k)
                QVERIFY2(!fast.decode[k].present && !fast.prefill[k].present,
                         (at + "the fast path left operator " + opInfo(static_cast<OpId>(k)).name + " present").c_str());
            const auto all = differingFields(reused, full, true);
            QVERIFY2(all.empty(), (at + "a reused full evaluation differs in " + joined(all)).c_str());
        }
        QVERIFY2(valid > 0, (s.name + ": no valid plan among the 400: the comparison saw only invalid ones").c_str());
        QVERIFY2(drafted == s.workload.speculative.on(),
                 (s.name + ": the speculative-decoding fields were not exercised as meant").c_str());
    }
}

void TestSimulator::absurdInputsStayFinite()
{
    Scenario s = preset("moe-1.6t-1024gpu");
    s.cluster.interNodeGBps = 1e-9;
    s.cluster.nvlinkGBps = 1e-9;
    s.workload.promptTokens = 1'000'000;
    const Simulator sim(s);
    const SearchSpace space(s);
    std::mt19937_64 rng(5);
    for (int i = 0; i < 200; ++i) {
        const Plan p = space.randomPlan(rng);
        const SimResult r = sim.evaluate(p);
        QVERIFY(finiteResult(r));
        QVERIFY(!r.valid);
    }
}

void TestSimulator::canonicalPlansEvaluateIdentically()
{
    // Choices inside one-rank groups cannot matter: the canonical form scores the same.
    for (const char* name : {"llama3-70b-8gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"}) {
        const Scenario s = preset(name);
        const Simulator sim(s);
        const SearchSpace space(s);
        std::mt19937_64 rng(13);
        int changed = 0;
        for (int i = 0; i < 400; ++i) {
            const Plan p = space.randomPlan(rng);
            const Plan c = canonicalPlan(p);
            changed += !(c == p);
            const SimResult a = sim.evaluate(p), b = sim.evaluate(c);
            QCOMPARE(a.valid, b.valid);
            QCOMPARE(a.tokensPerSPerGpu, b.tokensPerSPerGpu);
            QCOMPARE(a.ttftMs, b.ttftMs);
            QCOMPARE(a.memory.totalGb, b.memory.totalGb);
        }
        QVERIFY2(changed > 0, name); // the property was exercised
    }
}

// The decode-only figure is an upper bound of the aggregated one for the same plan: the
// aggregated step carries the decode step's tokens plus a prompt chunk (issue "serving").
void TestSimulator::decodeModeBoundsAggregated()
{
    int compared = 0;
    for (const char* name : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"}) {
        Scenario agg = preset(name);
        agg.workload.serving = ServingMode::Aggregated;
        Scenario dec = agg;
        dec.workload.serving = ServingMode::Decode;
        const Simulator sa(agg), sd(dec);
        const SearchSpace space(agg);
        std::mt19937_64 rng(17);
        for (int i = 0; i < 500; ++i) {
            const Plan p = space.randomPlan(rng);
            const SimResult a = sa.evaluate(p), d = sd.evaluate(p);
            if (a.structureChecks)
                continue;
            QVERIFY(d.tokensPerSPerGpu >= a.tokensPerSPerGpu);
            QVERIFY(d.tpotMs <= a.tpotMs);
            QVERIFY(std::isfinite(a.ttftMs) && std::isfinite(a.e2eMs) && std::isfinite(a.tokensPerSPerGpu));
            QCOMPARE(a.serving, ServingMode::Aggregated);
            ++compared;
        }
    }
    QVERIFY(compared > 1000);
}

// Files written before serving modes existed read as aggregated with an 8192-token budget;
// both fields are written back.
void TestSimulator::servingModeRoundTripsAndDefaults()
{
    Scenario s = preset("llama3-70b-8gpu");
    QCOMPARE(s.workload.serving, ServingMode::Aggregated);
    QCOMPARE(s.workload.maxNumTokens, 8192);
    s.workload.serving = ServingMode::Decode;
    s.workload.maxNumTokens = 4096;
    const auto back = parseScenario(scenarioToJson(s), "round-trip.json");
    QVERIFY2(back.ok(), back.ok() ? "" : back.firstError().c_str());
    QCOMPARE(back.value.workload.serving, ServingMode::Decode);
    QCOMPARE(back.value.workload.maxNumTokens, 4096);
}

QTEST_APPLESS_MAIN(TestSimulator)
#include "tst_simulator.moc"
