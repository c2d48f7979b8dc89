// The cost model's construction (cost_model.h): the hardware's rates and kernels, and the
// per-operator static costs of a model (one layer, one token, unsharded: FLOPs, weight and
// activation bytes, KV-cache traffic, precision); docs/simulator.md sections 1-4 explain
// every formula.
#include "sim/cost_model.h"

#include "io/profile_json.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace shardlab {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }

std::atomic<std::uint64_t> g_nextCostModelId{1};
} // namespace

CostModel::CostModel(const Scenario& s, const SimConstants& constants)
    : m_scenario(s), m_constants(constants), m_id(g_nextCostModelId.fetch_add(1, std::memory_order_relaxed))
{
    setHardware();
    const ModelSpec& m = m_scenario.model;
    // GEMM math by the stored format and the GPU (gemmMath): FP8's curves for FP8 and FP4.
    const GemmMath math = gemmMath(m.weightPrecision, m_scenario.cluster.gpu);
    const bool fp8 = math != GemmMath::Bf16;
    m_hiddenBytes = m.hiddenSize * kActBytes;
    setEmbeddingAndNorms();
    setAttentionOps(fp8);
    setFfnOps(fp8);
    if (m.isMoe())
        setMoeOps(fp8);
    setLmHead(fp8);
    if (m.attentionMix.any())
        setAttentionMix(m_ops[idx(OpId::QkvProj)], m_ops[idx(OpId::Attention)], m_ops[idx(OpId::OutProj)]);
    setGemmShapes(math);
    m_tokensPerStep = expectedTokensPerStep();
}

// The cluster's rates and the kernel profile: links, peaks, GEMM and decode-attention
// kernels, the engine's per-step host overhead and per-kernel floor.
void CostModel::setHardware()
{
    const ClusterSpec& c = m_scenario.cluster;
    m_link = linkModel(c, m_scenario.workload.engine);
    m_peakBf16 = c.gpu.peakTflopsBf16 * 1e12 * c.gpu.efficiency.compute;
    m_peakFp8 = c.gpu.peakTflopsFp8 * 1e12 * c.gpu.efficiency.compute;
    m_hbm = c.gpu.hbmTbps * 1e12 * c.gpu.efficiency.hbm;
    const KernelProfile& prof = profileOf(c);
    double kernelScale = 1; // the engine's per-kernel floor as a share of the GPU's
    switch (m_scenario.workload.engine) {
    case CollectiveEngine::TrtLlm:
        m_stepOverheadS = prof.trtllmStepOverheadS;
        kernelScale = prof.trtllmKernelOverheadScale;
        break;
    case CollectiveEngine::Vllm:
    case CollectiveEngine::Sglang:
        m_stepOverheadS = prof.vllmStepOverheadS;
        kernelScale = prof.vllmKernelOverheadScale;
        break;
    case CollectiveEngine::VllmEager: m_stepOverheadS = prof.vllmStepOverheadS; break; // no CUDA graphs
    case CollectiveEngine::Nccl: m_stepOverheadS = 0; break; // no engine named: none modelled
    }
    // Every kernel's fixed cost (the non-GEMM operators', the GEMMs' floors, the decode
    // attention's) is the GPU's floor as this engine runs its steps.
    GpuSpec gpu = c.gpu;
    gpu.kernelOverheadUs *= kernelScale;
    m_overheadS = gpu.kernelOverheadUs * 1e-6;
    m_gemm = gemmModel(gpu, engineGemmParams(prof, m_scenario.workload.engine));
    {
        const AttentionDecodeParams& a = prof.attentionDecode;
        const double hbmScale = prof.gemm.refHbm > 0 ? c.gpu.efficiency.hbm / prof.gemm.refHbm : 1.0;
        const double computeScale = prof.gemm.refCompute > 0 ? c.gpu.efficiency.compute / prof.gemm.refCompute : 1.0;
        m_attnFixedS = a.fixedS * (gpu.kernelOverheadUs > 0 && prof.kernelOverheadUs > 0
                                       ? gpu.kernelOverheadUs / prof.kernelOverheadUs
                                       : 1.0);
        m_attnStream = c.gpu.hbmTbps * 1e12 * std::min(1.0, a.stream * hbmScale);
        m_attnFlops = c.gpu.peakTflopsBf16 * 1e12 * std::min(1.0, a.compute * computeScale);
        m_attnPerHeadS = a.perQueryHeadS;
    }
}

void CostModel::setEmbeddingAndNorms()
{
    const ModelSpec& m = m_scenario.model;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), ab = kActBytes;
    auto& emb = m_ops[idx(OpId::Embedding)];
    emb.weightBytes = double(m.vocabSize) * h * wb;
    emb.actBytesPerToken = h * (wb + ab); // one row read, one hidden vector written
    emb.outBytesPerToken = h * ab;

    for (OpId n : {OpId::AttnNorm, OpId::FfnNorm}) {
        auto& o = m_ops[idx(n)];
        o.flopsPerToken = 4 * h;
        o.weightBytes = h * 2;
        o.actBytesPerToken = 2 * h * ab;
        o.outBytesPerToken = h * ab;
    }
}

// The attention block: projections and the core, MLA (latent KV) or grouped-query.
void CostModel::setAttentionOps(bool fp8)
{
    const ModelSpec& m = m_scenario.model;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), kvb = bytesPerElement(m.kvPrecision);
    const double ab = kActBytes, H = m.attentionHeads;
    auto& qkv = m_ops[idx(OpId::QkvProj)];
    auto& att = m_ops[idx(OpId::Attention)];
    auto& out = m_ops[idx(OpId::OutProj)];
    double attnOutWidth;
    if (m.attention == AttentionKind::MLA) {
        const MlaDims& d = m.mla;
        const double qHead = double(d.qkNopeHeadDim) + d.qkRopeHeadDim;
        const double qParams = d.qLoraRank > 0 ? h * d.qLoraRank + double(d.qLoraRank) * H * qHead : h * H * qHead;
        const double kvaParams = h * (double(d.kvLoraRank) + d.qkRopeHeadDim);
        qkv.weightBytes = (qParams + kvaParams) * wb;
        qkv.flopsPerToken = 2 * (qParams + kvaParams);
        qkv.outBytesPerToken = (H * qHead + d.kvLoraRank + d.qkRopeHeadDim) * ab;
        qkv.actBytesPerToken = h * ab + qkv.outBytesPerToken;
        // kv_b (latent -> per-head keys/values) lives with the attention core; in decode it
        // is absorbed into the query and output, in prefill it expands the latent.
        const double kvbParams = double(d.kvLoraRank) * H * (double(d.qkNopeHeadDim) + d.vHeadDim);
        att.weightBytes = kvbParams * wb;
        att.flopsPerToken = 2 * kvbParams;
        att.kvBytesPerCtx = (double(d.kvLoraRank) + d.qkRopeHeadDim) * kvb;
        att.attnFlopsDecodePerCtx = 2 * H * (double(d.kvLoraRank) + d.qkRopeHeadDim) + 2 * H * d.kvLoraRank;
        att.attnFlopsPrefillPerCtx = 2 * H * qHead + 2 * H * d.vHeadDim;
        att.kvFloor = 1.0; // one latent serves all heads: a head shard still needs all of it
        attnOutWidth = H * d.vHeadDim;
    } else {
        const double K = m.kvHeads, d = m.headDim;
        qkv.weightBytes = h * (H + 2 * K) * d * wb;
        qkv.flopsPerToken = 2 * h * (H + 2 * K) * d;
        qkv.outBytesPerToken = (H + 2 * K) * d * ab;
        qkv.actBytesPerToken = h * ab + qkv.outBytesPerToken;
        att.kvBytesPerCtx = 2 * K * d * kvb;
        att.attnFlopsDecodePerCtx = 4 * H * d;
        att.attnFlopsPrefillPerCtx = 4 * H * d;
        att.kvFloor = 1.0 / K; // beyond K ranks, KV heads are replicated
        att.queryHeads = H;    // decode: the profile's attention kernel (cost_model_ops.h)
        attnOutWidth = H * d;
    }
    qkv.fp8 = fp8;
    att.fp8 = false; // attention math runs in BF16 over the cache
    att.actBytesPerToken = qkv.outBytesPerToken + attnOutWidth * ab;
    att.outBytesPerToken = attnOutWidth * ab;
    m_kvPerTokenLayer = att.kvBytesPerCtx;

    out.weightBytes = attnOutWidth * h * wb;
    out.flopsPerToken = 2 * attnOutWidth * h;
    out.actBytesPerToken = (attnOutWidth + h) * ab;
    out.outBytesPerToken = h * ab;
    out.fp8 = fp8;
}

// The dense FFN (SwiGLU): gate and up, down.
void CostModel::setFfnOps(bool fp8)
{
    const ModelSpec& m = m_scenario.model;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), ab = kActBytes;
    const double F = m.ffnHidden;
    auto& gu = m_ops[idx(OpId::GateUp)];
    gu.weightBytes = 2 * h * F * wb;
    gu.flopsPerToken = 4 * h * F;
    gu.actBytesPerToken = (h + 3 * F) * ab; // reads x, writes gate and up, SwiGLU output
    gu.outBytesPerToken = F * ab;
    gu.fp8 = fp8;
    auto& dn = m_ops[idx(OpId::Down)];
    dn.weightBytes = F * h * wb;
    dn.flopsPerToken = 2 * F * h;
    dn.actBytesPerToken = (F + h) * ab;
    dn.outBytesPerToken = h * ab;
    dn.fp8 = fp8;
}

// The MoE block: expert popularity, router, dispatch and combine, the routed experts (in
// their own precision) and the shared experts.
void CostModel::setMoeOps(bool fp8)
{
    const ModelSpec& m = m_scenario.model;
    const ClusterSpec& c = m_scenario.cluster;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), ab = kActBytes;
    const MoeDims& e = m.moe;
    const double Fe = e.expertFfnHidden;
    // Expert popularity: lognormal with mean 1 and the constant's squared CV; the
    // busiest of E experts at Blom's plotting position (docs/simulator.md §2).
    m_popularitySigma = std::sqrt(std::log1p(std::max(0.0, m_constants.expertPopularityCv2)));
    m_hottestExpert = std::exp(-0.5 * m_popularitySigma * m_popularitySigma
                               + m_popularitySigma * expectedMaxOfNormals(e.experts));
    setPopularityStrata();
    auto& r = m_ops[idx(OpId::Router)];
    r.weightBytes = h * e.experts * 2; // routers stay in BF16
    r.flopsPerToken = 2 * h * e.experts;
    r.actBytesPerToken = (h + e.experts) * ab;
    r.outBytesPerToken = h * ab; // carries the hidden states on to dispatch
    for (OpId n : {OpId::Dispatch, OpId::Combine}) {
        auto& o = m_ops[idx(n)];
        // Per routed (token, expert) pair, as the experts': its copy in the permutation (or
        // its inverse), read and written.
        o.actBytesPerToken = 2 * h * ab;
        o.outBytesPerToken = h * ab;
    }
    // Expert ops: weightBytes is ONE expert's; per routed token-expert pair. The routed
    // experts may be stored in their own precision (ModelSpec::expertPrecision).
    const double we = bytesPerElement(m.routedExpertPrecision());
    const GemmMath expertMath = gemmMath(m.routedExpertPrecision(), c.gpu);
    auto& eu = m_ops[idx(OpId::ExpertUp)];
    eu.weightBytes = 2 * h * Fe * we;
    eu.flopsPerToken = 4 * h * Fe;
    eu.actBytesPerToken = (h + 3 * Fe) * ab;
    eu.outBytesPerToken = Fe * ab;
    eu.fp8 = expertMath != GemmMath::Bf16;
    eu.fp4 = expertMath == GemmMath::Fp4;
    eu.w4a16 = expertMath == GemmMath::Bf16 && isFourBit(m.routedExpertPrecision());
    eu.paddedMxfp4 = eu.w4a16 && m.routedExpertPrecision() == Precision::MXFP4;
    auto& ed = m_ops[idx(OpId::ExpertDown)];
    ed.weightBytes = Fe * h * we;
    ed.flopsPerToken = 2 * Fe * h;
    ed.actBytesPerToken = (Fe + h) * ab;
    ed.outBytesPerToken = h * ab;
    ed.fp8 = eu.fp8;
    ed.fp4 = eu.fp4;
    ed.w4a16 = eu.w4a16;
    ed.paddedMxfp4 = eu.paddedMxfp4;
    auto& se = m_ops[idx(OpId::SharedExpert)];
    const double Fs = double(e.sharedExperts) * e.sharedExpertFfnHidden;
    se.weightBytes = 3 * h * Fs * wb;
    se.flopsPerToken = 6 * h * Fs;
    se.actBytesPerToken = (2 * h + 4 * Fs) * ab;
    se.outBytesPerToken = h * ab;
    se.fp8 = fp8;
}

void CostModel::setLmHead(bool fp8)
{
    const ModelSpec& m = m_scenario.model;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), ab = kActBytes;
    auto& head = m_ops[idx(OpId::LmHead)];
    head.weightBytes = double(m.vocabSize) * h * wb + h * 2;
    head.flopsPerToken = 2 * h * m.vocabSize;
    head.actBytesPerToken = (h + m.vocabSize) * ab;
    head.outBytesPerToken = double(m.vocabSize) * ab;
    head.fp8 = fp8;
}

// GEMM operators: priced by size and precision (gemm_model.h); n x k from the weights.
void CostModel::setGemmShapes(GemmMath math)
{
    const ModelSpec& m = m_scenario.model;
    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision);
    const bool fp8 = math != GemmMath::Bf16;
    const double expertBytes = bytesPerElement(m.routedExpertPrecision());
    for (OpId id : {OpId::QkvProj, OpId::OutProj, OpId::GateUp, OpId::Down, OpId::ExpertUp, OpId::ExpertDown,
                    OpId::SharedExpert, OpId::LmHead}) {
        auto& o = m_ops[idx(id)];
        o.gemm = true;
        if (id != OpId::ExpertUp && id != OpId::ExpertDown)
            o.fp4 = fp8 && math == GemmMath::Fp4;
        const double elementBytes = id == OpId::ExpertUp || id == OpId::ExpertDown ? expertBytes : wb;
        o.weightElems = (id == OpId::LmHead ? double(m.vocabSize) * h : o.weightBytes / elementBytes);
        if (id == OpId::ExpertUp || id == OpId::ExpertDown) // gate and up are two such matrices
            o.matrixElems = h * m.moe.expertFfnHidden;
    }
}

} // namespace shardlab
