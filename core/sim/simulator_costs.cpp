// Per-operator static costs of a model (one layer, one token, unsharded): FLOPs, weight
// and activation bytes, KV-cache traffic. Computed once per scenario by the Simulator's
// constructor; docs/simulator.md section 1 and 3 explain them.
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

namespace shardlab {

namespace {
constexpr double kActBytes = 2.0; // activations in BF16
inline int idx(OpId id) { return static_cast<int>(id); }
} // namespace

Simulator::Simulator(const Scenario& s, SimConstants constants) : m_scenario(s), m_constants(constants)
{
    const ModelSpec& m = s.model;
    const ClusterSpec& c = s.cluster;
    m_link = linkModel(c);
    m_peakBf16 = c.gpu.peakTflopsBf16 * 1e12 * c.gpu.efficiency.compute;
    m_peakFp8 = c.gpu.peakTflopsFp8 * 1e12 * c.gpu.efficiency.compute;
    m_hbm = c.gpu.hbmTbps * 1e12 * c.gpu.efficiency.hbm;
    m_overheadS = c.gpu.kernelOverheadUs * 1e-6;

    const double h = m.hiddenSize, wb = bytesPerElement(m.weightPrecision), kvb = bytesPerElement(m.kvPrecision);
    const double ab = kActBytes, H = m.attentionHeads;
    const bool fp8 = m.weightPrecision == Precision::FP8;
    m_hiddenBytes = h * ab;

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

    if (m.isMoe()) {
        const MoeDims& e = m.moe;
        const double Fe = e.expertFfnHidden, k = e.expertsPerToken;
        m_logExpertIdle = std::log1p(-std::min(k / e.experts, 0.999999));
        m_hasShared = e.sharedExperts > 0;
        auto& r = m_ops[idx(OpId::Router)];
        r.weightBytes = h * e.experts * 2; // routers stay in BF16
        r.flopsPerToken = 2 * h * e.experts;
        r.actBytesPerToken = (h + e.experts) * ab;
        r.outBytesPerToken = h * ab; // carries the hidden states on to dispatch
        for (OpId n : {OpId::Dispatch, OpId::Combine}) {
            auto& o = m_ops[idx(n)];
            o.actBytesPerToken = 2 * k * h * ab; // permute / unpermute the top-k copies
            o.outBytesPerToken = h * ab;
        }
        // Expert ops: weightBytes is ONE expert's; per routed token-expert pair.
        auto& eu = m_ops[idx(OpId::ExpertUp)];
        eu.weightBytes = 2 * h * Fe * wb;
        eu.flopsPerToken = 4 * h * Fe;
        eu.actBytesPerToken = (h + 3 * Fe) * ab;
        eu.outBytesPerToken = Fe * ab;
        eu.fp8 = fp8;
        auto& ed = m_ops[idx(OpId::ExpertDown)];
        ed.weightBytes = Fe * h * wb;
        ed.flopsPerToken = 2 * Fe * h;
        ed.actBytesPerToken = (Fe + h) * ab;
        ed.outBytesPerToken = h * ab;
        ed.fp8 = fp8;
        auto& se = m_ops[idx(OpId::SharedExpert)];
        const double Fs = double(e.sharedExperts) * e.sharedExpertFfnHidden;
        se.weightBytes = 3 * h * Fs * wb;
        se.flopsPerToken = 6 * h * Fs;
        se.actBytesPerToken = (2 * h + 4 * Fs) * ab;
        se.outBytesPerToken = h * ab;
        se.fp8 = fp8;
    }

    auto& head = m_ops[idx(OpId::LmHead)];
    head.weightBytes = double(m.vocabSize) * h * wb + h * 2;
    head.flopsPerToken = 2 * h * m.vocabSize;
    head.actBytesPerToken = (h + m.vocabSize) * ab;
    head.outBytesPerToken = double(m.vocabSize) * ab;
    head.fp8 = fp8;
}

} // namespace shardlab
