// GEMMs by size and precision, grouped expert GEMMs and decode attention (docs/simulator.md
// §3, docs/kernels.md): the models against the measured H100 figures they were fitted to
// (every row within ±25%, held-out rows too), and the properties the searches rely on: time
// never falls as the tokens grow and never grows faster than them (the exact search's batch
// property), the per-kernel floor, and finite figures for extreme inputs. MoE dispatch and
// combine: tst_moe_dispatch_kernels.
#include <QtTest>

#include <cmath>

#include "isolated_profile.h"
#include "sim/cost_model.h"
#include "sim/gemm_model.h"
#include "sim/simulator.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

GemmModel isolatedGemm(const GpuSpec& gpu) { return gemmModel(gpu, isolatedProfile().gemm); }

double gemmUs(const GemmModel& g, double m, double n, double k, bool fp8)
{
    return gemmTimeS(g, {m, n, k, fp8}) * 1e6;
}

// TensorRT-LLM's measured H100 SXM GEMM database (through NVIDIA aiconfigurator,
// ai-dynamo/aiconfigurator systems/data/h100_sxm); figures as published (ranges: the middle).
// kind: 0 = time in us, 1 = weight-streaming TB/s (weight bytes / time), 2 = TFLOP/s.
struct GemmRow {
    const char* what;
    double n, k;
    bool fp8;
    double mLo, mHi; // every m of this range (powers of two) must match
    int kind;
    double measured;
};
const GemmRow kGemmRows[] = {
    {"BF16 8192x8192, m 1-256: 49-56 us", 8192, 8192, false, 1, 256, 0, 52.5},
    {"BF16 8192x8192, m 1-256: 2.5-2.7 TB/s", 8192, 8192, false, 1, 256, 1, 2.6},
    {"BF16 16384x16384, m <= 256: 2.6-2.9 TB/s", 16384, 16384, false, 1, 256, 1, 2.75},
    {"BF16 8192x8192, m >= 1024: 680-820 TFLOP/s", 8192, 8192, false, 1024, 16384, 2, 750},
    {"BF16 16384x16384, m >= 1024: 680-820 TFLOP/s", 16384, 16384, false, 1024, 16384, 2, 750},
    {"FP8 8192x8192, large m: 1.17-1.24 PFLOP/s", 8192, 8192, true, 2048, 16384, 2, 1205},
    {"FP8 16384x16384, large m: up to 1.33 PFLOP/s", 16384, 16384, true, 8192, 16384, 2, 1330},
    {"FP8 8192x8192, m <= 256: 1.6-1.8 TB/s", 8192, 8192, true, 1, 256, 1, 1.7},
    {"BF16 7168x2048, small m: ~14 us floor", 7168, 2048, false, 1, 64, 0, 14},
    {"FP8 7168x2048, small m: ~17 us floor", 7168, 2048, true, 1, 64, 0, 17},
};

} // namespace

class TestKernels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gemmRowsWithin25Percent_data()
    {
        QTest::addColumn<int>("row");
        for (int i = 0; i < int(std::size(kGemmRows)); ++i)
            QTest::newRow(kGemmRows[i].what) << i;
    }
    void gemmRowsWithin25Percent()
    {
        QFETCH(int, row);
        const GemmRow& r = kGemmRows[row];
        const GemmModel g = isolatedGemm(h100().gpu);
        for (double m = r.mLo; m <= r.mHi; m *= 2) {
            const double us = gemmUs(g, m, r.n, r.k, r.fp8);
            const double weightBytes = r.n * r.k * (r.fp8 ? 1 : 2);
            const double figure = r.kind == 0 ? us
                : r.kind == 1                 ? weightBytes / (us * 1e-6) / 1e12
                                              : 2 * m * r.n * r.k / (us * 1e-6) / 1e12;
            const double ratio = figure / r.measured;
            QVERIFY2(ratio >= 0.75 && ratio <= 1.25,
                     qPrintable(QStringLiteral("m=%1: model %2, measured %3 (ratio %4)")
                                    .arg(m).arg(figure).arg(r.measured).arg(ratio)));
        }
    }

    // FP8 weight streaming across sizes, as the same database timed it at m = 1 and 64: one
    // share and one floor for a 15 M-element projection and a 537 M-element one (the large
    // ones stream at 2.5-2.8 TB/s; a share fitted to 8192^2 alone, 1.6-1.8 TB/s, made them
    // 1.2x slow). Within 10%.
    void fp8StreamingAcrossSizes()
    {
        const struct {
            double n, k, us1, us64;
        } rows[] = {{2048, 7168, 19, 21},    {8192, 8192, 37, 39},     {16384, 16384, 105, 115},
                    {65536, 8192, 200, 214}, {8192, 65536, 198, 217}, {16384, 51200, 300, 321}};
        const GemmModel g = isolatedGemm(h100().gpu);
        for (const auto& r : rows)
            for (const auto& [m, measured] : {std::pair{1.0, r.us1}, std::pair{64.0, r.us64}}) {
                const double ratio = gemmUs(g, m, r.n, r.k, true) / measured;
                QVERIFY2(ratio >= 0.9 && ratio <= 1.1,
                         qPrintable(QStringLiteral("%1x%2 m=%3: ratio %4").arg(r.n).arg(r.k).arg(m).arg(ratio)));
            }
    }

    // FP8 grouped expert GEMMs stream at their own share (the MoE table's memory-bound rows,
    // 0.70) below a dense FP8 GEMM's (0.822); BF16 ones at the dense share; a profile without
    // the grouped share streams them as dense.
    void groupedExpertsStreamAtTheirOwnShare()
    {
        const GemmModel g = isolatedGemm(h100().gpu);
        const double hbm = h100().gpu.hbmTbps * 1e12;
        QVERIFY(std::abs(g.groupedMemoryS(true, 1e9) * 0.70 * hbm - 1e9) < 1e-3 * 1e9);
        QVERIFY(g.groupedMemoryS(true, 1e9) > 1.15 * g.memoryS(true, 1e9));
        QCOMPARE(g.groupedMemoryS(false, 1e9), g.memoryS(false, 1e9));
        GemmParams none = isolatedProfile().gemm;
        none.groupedStreamFp8 = 0;
        const GemmModel d = gemmModel(h100().gpu, none);
        QCOMPARE(d.groupedMemoryS(true, 1e9), d.memoryS(true, 1e9));
    }

    void gemmKneeBetween256And512()
    {
        // measurements: the compute knee of 8192x8192 is at m ~ 256-512 (both precisions).
        const GemmModel g = isolatedGemm(h100().gpu);
        for (bool fp8 : {false, true}) {
            const double n = 8192, k = 8192;
            auto computeBound = [&](double m) {
                const GemmShape s{m, n, k, fp8};
                return g.computeS(fp8, s.flops(), n * k) >= g.memoryS(fp8, s.bytes());
            };
            QVERIFY2(!computeBound(256 / 1.25), fp8 ? "FP8" : "BF16");
            QVERIFY2(computeBound(512 * 1.25), fp8 ? "FP8" : "BF16");
        }
    }

    void gemmMonotoneFloorAndBatchProperty()
    {
        const GemmModel g = isolatedGemm(h100().gpu);
        for (bool fp8 : {false, true})
            for (double n : {128.0, 2048.0, 8192.0, 57344.0})
                for (double k : {128.0, 4096.0, 16384.0}) {
                    double previous = 0, previousPerToken = 1e300;
                    for (double m = 1; m <= 1 << 16; m *= 2) {
                        const double t = gemmTimeS(g, {m, n, k, fp8});
                        QVERIFY(std::isfinite(t));
                        QVERIFY2(t >= previous, qPrintable(QStringLiteral("m=%1 n=%2 k=%3").arg(m).arg(n).arg(k)));
                        QVERIFY2(t / m <= previousPerToken * (1 + 1e-12),
                                 qPrintable(QStringLiteral("time/m rose at m=%1 n=%2 k=%3").arg(m).arg(n).arg(k)));
                        QVERIFY(t >= g.fixedS(fp8)); // the per-kernel floor
                        previous = t;
                        previousPerToken = t / m;
                    }
                    // A larger matrix never costs less at the same m.
                    QVERIFY(gemmTimeS(g, {64, 2 * n, k, fp8}) >= gemmTimeS(g, {64, n, k, fp8}));
                }
        // The floors: kernel overhead (BF16), 3.35x it (FP8); FP8 never streams faster than
        // its datasheet bandwidth; absurd inputs stay finite.
        QVERIFY(g.fixedS(true) > g.fixedS(false));
        QCOMPARE(g.fixedS(false), h100().gpu.kernelOverheadUs * 1e-6);
        QVERIFY(std::isfinite(gemmTimeS(g, {1e12, 1e6, 1e6, true})));
        QVERIFY(std::isfinite(gemmTimeS(g, {1, 0, 0, false})));
        GpuSpec fast = h100().gpu;
        fast.efficiency = {1.0, 1.0, 1.0, 1.0};
        const GemmModel gf = isolatedGemm(fast);
        QVERIFY(gf.computeEfficiency(false, 1e12) <= 1.0);
        QVERIFY(gf.streamBf16 <= fast.hbmTbps * 1e12);
    }

    void knobsScaleGemms()
    {
        // efficiency.compute / .hbm are multipliers: 10% lower knob, GEMMs 10% slower on that side.
        GpuSpec gpu = h100().gpu;
        const GemmModel base = isolatedGemm(gpu);
        gpu.efficiency.hbm *= 0.9;
        gpu.efficiency.compute *= 0.9;
        const GemmModel lower = isolatedGemm(gpu);
        QVERIFY(std::abs(lower.memoryS(false, 1e9) / base.memoryS(false, 1e9) - 1 / 0.9) < 1e-9);
        QVERIFY(std::abs(lower.computeS(true, 1e15, 1e8) / base.computeS(true, 1e15, 1e8) - 1 / 0.9) < 1e-9);
    }

    // Decode attention (GQA, head_dim 128) against TensorRT-LLM's H100 generation-attention
    // table (aiconfigurator, trtllm 1.3.0rc20): the profile's kernel was fitted to the rows
    // with 8 query heads per KV head; 4, 5 and 16 are held out. Every row within ±30%, and at
    // least 52 of the 56 within ±25% (docs/kernels.md, "Decode attention").
    void decodeAttentionRows()
    {
        const struct {
            int heads, kvHeads;
            bool fp8;
            int batch, cached;
            double us;
        } rows[] = {
            {8, 1, true, 8, 1024, 8.6},
            {8, 1, true, 8, 4096, 11.2},
            {8, 1, true, 64, 1024, 15.5},
            {8, 1, true, 64, 4096, 38.8},
            {8, 1, true, 256, 1024, 37.5},
            {8, 1, true, 256, 4096, 100.9},
            {8, 1, false, 8, 1024, 12.9},
            {8, 1, false, 8, 4096, 15.0},
            {8, 1, false, 64, 1024, 28.1},
            {8, 1, false, 64, 4096, 70.4},
            {8, 1, false, 256, 1024, 71.5},
            {8, 1, false, 256, 4096, 195.6},
            {32, 8, true, 8, 1024, 13.9},
            {32, 8, true, 8, 4096, 35.7},
            {32, 8, true, 64, 1024, 55.9},
            {32, 8, true, 64, 4096, 183.1},
            {32, 8, true, 256, 1024, 187.9},
            {32, 8, false, 8, 1024, 28.1},
            {32, 8, false, 8, 4096, 68.5},
            {32, 8, false, 64, 1024, 107.6},
            {32, 8, false, 64, 4096, 365.3},
            {32, 8, false, 256, 1024, 369.2},
            {64, 8, true, 8, 1024, 15.5},
            {64, 8, true, 8, 4096, 39.0},
            {64, 8, true, 64, 1024, 58.7},
            {64, 8, true, 64, 4096, 186.4},
            {64, 8, false, 8, 1024, 27.9},
            {64, 8, false, 8, 4096, 70.0},
            {64, 8, false, 64, 1024, 109.2},
            {64, 8, false, 64, 4096, 369.2},
            {64, 4, true, 8, 1024, 11.9},
            {64, 4, true, 8, 4096, 25.7},
            {64, 4, true, 64, 1024, 44.1},
            {64, 4, true, 64, 4096, 107.3},
            {64, 4, false, 8, 1024, 18.7},
            {64, 4, false, 8, 4096, 44.1},
            {64, 4, false, 64, 1024, 70.3},
            {64, 4, false, 64, 4096, 195.9},
            {16, 2, true, 8, 1024, 8.7},
            {16, 2, true, 8, 4096, 12.8},
            {16, 2, true, 64, 1024, 23.6},
            {16, 2, true, 64, 4096, 58.2},
            {16, 2, true, 256, 1024, 58.3},
            {16, 2, false, 8, 1024, 12.8},
            {16, 2, false, 8, 4096, 22.3},
            {16, 2, false, 64, 1024, 48.6},
            {16, 2, false, 64, 4096, 105.8},
            {16, 2, false, 256, 1024, 109.3},
            {40, 8, true, 8, 1024, 15.9},
            {40, 8, true, 8, 4096, 36.5},
            {40, 8, true, 64, 1024, 56.5},
            {40, 8, true, 64, 4096, 184.5},
            {40, 8, false, 8, 1024, 28.1},
            {40, 8, false, 8, 4096, 70.5},
            {40, 8, false, 64, 1024, 108.4},
            {40, 8, false, 64, 4096, 366.8},
        };
        int within25 = 0;
        for (const auto& r : rows) {
            Scenario s;
            s.model = modelPreset("llama3-8b").value;
            s.model.attentionHeads = r.heads;
            s.model.kvHeads = r.kvHeads;
            s.model.headDim = 128;
            s.model.kvPrecision = r.fp8 ? Precision::FP8 : Precision::BF16;
            s.cluster = h100();
            s.cluster.gpusPerNode = 1;
            s.workload = {1024, 128, 1e9, 1e9};
            s.workload.serving = ServingMode::Decode;
            const CostModel cm(s, SimConstants{});
            Plan p;
            applyMegatronSharding(p);
            p.batch = r.batch;
            PhaseContext ph;
            cm.phase(p, false, ph);
            ph.seqs = r.batch;
            ph.tokens = ph.tokensReplica = r.batch;
            ph.ctx = ph.ctxReplica = r.cached;
            ph.chunkTokens = ph.chunkReplica = 0;
            const double us = cm.op(OpId::Attention, p.option(OpId::Attention), ph).timeS * 1e6;
            const double ratio = us / r.us;
            QVERIFY2(ratio >= 0.7 && ratio <= 1.3,
                     qPrintable(QStringLiteral("%1/%2 heads, %3, batch %4, %5 cached: model %6 us, measured %7")
                                    .arg(r.heads).arg(r.kvHeads).arg(r.fp8 ? "FP8" : "BF16")
                                    .arg(r.batch).arg(r.cached).arg(us).arg(r.us)));
            within25 += std::abs(ratio - 1) <= 0.25;
        }
        QVERIFY2(within25 >= 52, qPrintable(QString::number(within25)));
    }

    // One MoE layer's up and down projections and its permutation on one GPU of a TP `tp` x EP
    // `ep` plan (expert TP tp / ep), tokens spread evenly over the experts, as `engine` prices
    // them; no communication.
    static double expertLayerMs(const ModelSpec& m, CollectiveEngine engine, double tokens, int tp = 1, int ep = 1)
    {
        Scenario s;
        s.model = m;
        s.cluster = h100();
        s.workload = {1024, 128, 1e9, 1e9};
        s.workload.serving = ServingMode::Decode;
        s.workload.engine = engine;
        const CostModel cm(s, SimConstants{});
        Plan p;
        applyMegatronSharding(p);
        p.tensorParallel = tp;
        p.expertParallel = ep;
        p.batch = 64;
        PhaseContext ph;
        cm.phase(p, false, ph);
        const double E = m.moe.experts, k = m.moe.expertsPerToken;
        ph.routedPerEpRank = tokens * k / ep; // balanced: every rank its mean
        ph.routedPerEtpRank = ph.routedPerEpRank / ph.etp;
        ph.activeLocalExperts = ph.localExperts * (1 - std::pow(1 - k / E, tokens));
        ph.tokensPerRank = tokens / tp;
        // The table times the layer with its permutation and inverse (dispatch's and
        // combine's local copies, at their bandwidth; their collectives are not in it).
        return (cm.op(OpId::ExpertUp, p.option(OpId::ExpertUp), ph).timeS
                + cm.op(OpId::ExpertDown, p.option(OpId::ExpertDown), ph).timeS
                + cm.op(OpId::Dispatch, p.option(OpId::Dispatch), ph).memoryS
                + cm.op(OpId::Combine, p.option(OpId::Combine), ph).memoryS) * 1e3;
    }

    // Grouped expert GEMMs (one MoE layer's up and down and its permutation on one GPU, no
    // communication) against TensorRT-LLM's H100 MoE table (aiconfigurator trtllm 1.3.0rc20,
    // Qwen3-235B-A22B's shape: hidden 4096, expert width 1536, top-8 of 128, FP8, tokens spread
    // evenly: "balanced").
    // The profile's grouped-GEMM curve was fitted to the same table's EP 1 rows (scripts/
    // fit_grouped_gemm.py), not to these EP 2-8 rows. Expert parallel (expert TP 1) rows within
    // ±25%; with expert TP > 1 every row within 0.6-1.25 (the dense curve, held at 7168 x 2048
    // for small shards, priced TP 8 at 4,096+ tokens at 0.30 of the measured time).
    void groupedExpertGemms()
    {
        const int tokens[] = {16, 64, 256, 1024, 4096, 16384};
        const struct {
            int etp, ep;
            double ms[6];
        } rows[] = {
            {1, 8, {0.1258, 0.1297, 0.1401, 0.1622, 0.2564, 0.7663}},
            {2, 4, {0.1301, 0.1337, 0.1458, 0.1832, 0.3204, 1.0113}},
            {4, 2, {0.1286, 0.1325, 0.1473, 0.2004, 0.4330, 1.4535}},
            {8, 1, {0.1454, 0.1488, 0.1702, 0.2677, 0.6761, 2.3660}},
        };
        ModelSpec qwen = modelPreset("qwen3-235b-a22b").value;
        qwen.weightPrecision = Precision::FP8;
        for (const auto& r : rows) {
            QString line = QStringLiteral("expert TP %1 x EP %2:").arg(r.etp).arg(r.ep);
            for (int i = 0; i < 6; ++i) {
                const double T = tokens[i];
                const double ms = expertLayerMs(qwen, CollectiveEngine::Nccl, T, 8, r.ep);
                const double ratio = ms / r.ms[i];
                line += QStringLiteral(" %1").arg(ratio, 0, 'f', 2);
                if (r.etp == 1)
                    QVERIFY2(ratio >= 0.75 && ratio <= 1.25,
                             qPrintable(QStringLiteral("EP %1, %2 tokens: model %3 ms, measured %4").arg(r.ep).arg(T).arg(ms).arg(r.ms[i])));
                QVERIFY2(ratio >= 0.6 && ratio <= 1.25,
                         qPrintable(QStringLiteral("expert TP %1, %2 tokens: model %3 ms, measured %4").arg(r.etp).arg(T).arg(ms).arg(r.ms[i])));
            }
            qInfo("%s", qPrintable(line));
        }
    }

    // 4-bit weight-only expert kernels (4-bit experts dequantized to BF16 on a GPU without FP4
    // tensor cores), by engine, against aiconfigurator's H100 MoE tables (balanced, EP 1):
    // vLLM's Marlin and TensorRT-LLM's W4A16 MXFP4 kernel. The Qwen3 INT4 and the 32-expert
    // MXFP4 rows were in the fits (scripts/weight_only_4bit_moe.py); vLLM's MXFP4 Marlin rows
    // of a 896-expert top-16 layer (vLLM 0.24.0) were not: 0.82 0.56 0.86 at 1,024-16,384
    // tokens, where BF16's grouped curve (the price before) gave 0.25-0.39 from 4,096 tokens.
    void weightOnlyFourBitExperts()
    {
        const int tokens[] = {64, 256, 1024, 4096, 16384};
        ModelSpec qwen = modelPreset("qwen3-235b-a22b").value;
        qwen.expertPrecision = Precision::INT4;
        ModelSpec small = qwen; // gpt-oss-20b's layer: hidden 2880, 32 experts of 2880, top-4
        small.hiddenSize = 2880;
        small.moe.experts = 32;
        small.moe.expertsPerToken = 4;
        small.moe.expertFfnHidden = 2880;
        small.expertPrecision = Precision::MXFP4;
        ModelSpec wide = qwen; // hidden 3584, 896 experts of 3072, top-16
        wide.hiddenSize = 3584;
        wide.moe.experts = 896;
        wide.moe.expertsPerToken = 16;
        wide.moe.expertFfnHidden = 3072;
        wide.expertPrecision = Precision::MXFP4;
        const struct {
            const char* what;
            const ModelSpec* model;
            CollectiveEngine engine;
            double ms[5];
            double lo, hi;
        } rows[] = {
            {"vLLM Marlin INT4, Qwen3 layer (fit)", &qwen, CollectiveEngine::Vllm,
             {0.4609, 0.672, 1.2474, 4.7028, 18.1795}, 0.8, 1.25},
            {"TensorRT-LLM W4A16 MXFP4, 32 experts (fit)", &small, CollectiveEngine::TrtLlm,
             {0.2257, 0.2912, 0.5953, 2.22, 8.5768}, 0.8, 1.25},
            {"vLLM Marlin MXFP4, 896 experts (held out)", &wide, CollectiveEngine::Vllm,
             {5.8089, 5.8215, 8.8212, 28.943, 75.4128}, 0.5, 1.25},
        };
        for (const auto& r : rows) {
            QString line = QString::fromLatin1(r.what) + QLatin1Char(':');
            for (int i = 0; i < 5; ++i) {
                const double ratio = expertLayerMs(*r.model, r.engine, tokens[i]) / r.ms[i];
                line += QStringLiteral(" %1").arg(ratio, 0, 'f', 2);
                QVERIFY2(ratio >= r.lo && ratio <= r.hi, qPrintable(line));
            }
            qInfo("%s", qPrintable(line));
        }
        // The engine chooses the kernel: vLLM eager runs vLLM's, and Marlin's compute at
        // Qwen3's expert shape is at least 1.5x slower than the BF16 grouped curve the 4-bit
        // experts were priced on before.
        const double marlin = expertLayerMs(qwen, CollectiveEngine::Vllm, 16384);
        QCOMPARE(expertLayerMs(qwen, CollectiveEngine::VllmEager, 16384), marlin);
        KernelProfile noW4 = builtinProfile();
        noW4.gemm.groupedW4a16 = {};
        noW4.vllmGroupedW4a16 = {};
        const GemmModel before = gemmModel(h100().gpu, engineGemmParams(noW4, CollectiveEngine::Vllm));
        const GemmModel after = gemmModel(h100().gpu, engineGemmParams(builtinProfile(), CollectiveEngine::Vllm));
        const double S = 4096.0 * 1536, flops = 2.0 * 16384 * 8 * 3 * S;
        QVERIFY(after.groupedW4ComputeS(flops, S, S) > 1.5 * before.groupedW4ComputeS(flops, S, S));
    }

    // vLLM's Marlin stores each expert matrix padded to its tiles (hidden to a multiple of 256,
    // a shard's expert width to one of 128): gpt-oss-120b's 2880 x 2880 experts as 3072 x 2944.
    // On one H100 that is what vLLM 0.10.1 logs loading the model ("Model loading took
    // 65.9651 GiB"); TensorRT-LLM's kernel keeps the checkpoint's shapes.
    void marlinStoresPaddedExperts()
    {
        auto c = clusterPreset("h100-8");
        QVERIFY(c.ok());
        c.value.gpusPerNode = 1;
        Scenario s;
        s.model = modelPreset("gpt-oss-120b").value;
        s.cluster = c.value;
        s.workload = {1024, 128, 1e9, 1e9};
        Plan p;
        applyMegatronSharding(p);
        p.batch = 1;
        const auto weightsGb = [&](CollectiveEngine e) {
            s.workload.engine = e;
            SimResult r;
            Simulator(s).evaluate(p, r, false);
            return r.memory.weightsGb;
        };
        const double vllm = weightsGb(CollectiveEngine::Vllm), trt = weightsGb(CollectiveEngine::TrtLlm);
        QCOMPARE(weightsGb(CollectiveEngine::Sglang), trt); // SGLang: TensorRT-LLM's kernel, unpadded
        const double experts = 36.0 * 128 * 3 * 2880 * 2880 * 4.25 / 8 / 1e9;
        QVERIFY2(std::abs((vllm - trt) / (experts * (3072.0 * 2944 / (2880.0 * 2880) - 1)) - 1) < 0.01,
                 qPrintable(QStringLiteral("%1 vs %2 GB").arg(vllm).arg(trt)));
        const double logged = 65.9651 * 1.073741824;
        qInfo("gpt-oss-120b weights per H100: vLLM %.2f GB, TensorRT-LLM %.2f GB, vLLM logs %.2f GB", vllm, trt, logged);
        QVERIFY2(std::abs(vllm / logged - 1) < 0.02, qPrintable(QStringLiteral("%1 GB, vLLM logs %2").arg(vllm).arg(logged)));
        // INT4 experts are taken unpadded on vLLM too.
        s.model.expertPrecision = Precision::INT4;
        QCOMPARE(weightsGb(CollectiveEngine::Vllm), weightsGb(CollectiveEngine::TrtLlm));
        // With TP 2 each shard's width, 1440, is padded to 1536.
        const GemmModel g = gemmModel(c.value.gpu, engineGemmParams(builtinProfile(), CollectiveEngine::Vllm));
        QCOMPARE(g.storedShareW4(2880, 1440), 3072.0 * 1536 / (2880.0 * 1440));
        QCOMPARE(gemmModel(c.value.gpu, builtinProfile().gemm).storedShareW4(2880, 1440), 1.0);
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
