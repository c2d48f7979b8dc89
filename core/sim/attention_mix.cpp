// The attention layer mix's mean layer (cost_model.h, ModelSpec::attentionMix): the shares
// of sliding-window and linear-attention layers, linear layers' projections and state, and
// the context a sliding-window layer attends to. docs/simulator.md §1, "Attention layer mix".
#include "sim/cost_model.h"

#include <algorithm>

namespace shardlab {

// Constants of the gated delta rule's operation counts (docs/simulator.md §1, "Attention
// layer mix"): per value head and token, the recurrent form's decay, S k, rank-one update
// and S q over the dk x dv state; the chunked form's state terms and its intra-chunk
// products over chunks of 64 tokens (flash-linear-attention's chunk size).
namespace {
constexpr double kDeltaRuleDecodeFlops = 8;   // x dk dv
constexpr double kDeltaRulePrefillFlops = 6;  // x dk dv, plus the intra-chunk terms
constexpr double kDeltaRuleChunk = 64;
} // namespace

void CostModel::setAttentionMix(OpStatic& qkv, OpStatic& att, OpStatic& out)
{
    const ModelSpec& m = m_scenario.model;
    const AttentionMix& x = m.attentionMix;
    const double L = m.layers, wb = bytesPerElement(m.weightPrecision), ab = kActBytes, h = m.hiddenSize;
    att.mixed = true;
    att.slidingShare = x.slidingLayers / L;
    att.linearShare = x.linearLayers / L;
    att.fullShare = 1 - att.slidingShare - att.linearShare;
    att.window = x.slidingWindow;
    if (x.linearLayers == 0)
        return; // sliding-window layers have full attention's weights and kernel
    // Linear layers: their own projections (in: q, k, v, z, beta, alpha; out: the value
    // heads back to the hidden size); the layer mix's mean is priced.
    const LinearAttentionDims& d = x.linear;
    const double keys = double(d.keyHeads) * d.keyHeadDim, values = double(d.valueHeads) * d.valueHeadDim;
    const double inWidth = 2 * keys + 2 * values + 2.0 * d.valueHeads, convWidth = 2 * keys + values;
    const double a = 1 - att.linearShare, l = att.linearShare;
    const double qkvWidth = qkv.outBytesPerToken / ab, outWidth = out.flopsPerToken / (2 * h);
    qkv.weightBytes = a * qkv.weightBytes + l * h * inWidth * wb;
    qkv.flopsPerToken = a * qkv.flopsPerToken + l * 2 * h * inWidth;
    qkv.outBytesPerToken = (a * qkvWidth + l * inWidth) * ab;
    qkv.actBytesPerToken = h * ab + qkv.outBytesPerToken;
    out.weightBytes = a * out.weightBytes + l * values * h * wb;
    out.flopsPerToken = a * out.flopsPerToken + l * 2 * values * h;
    out.actBytesPerToken = (a * outWidth + l * values + h) * ab;
    att.weightBytes = l * convWidth * d.convKernel * wb;
    att.actBytesPerToken = qkv.outBytesPerToken + (a * outWidth + l * values) * ab;
    att.outBytesPerToken = (a * outWidth + l * values) * ab;
    // The state (BF16): value heads x dk x dv, and the convolution's last kernel - 1 inputs.
    const double state = double(d.valueHeads) * d.keyHeadDim * d.valueHeadDim + (d.convKernel - 1) * convWidth;
    att.stateBytes = l * state * ab;
    att.stateFlopsDecode = l * d.valueHeads * kDeltaRuleDecodeFlops * d.keyHeadDim * d.valueHeadDim;
    att.stateFlopsPrefill = l * d.valueHeads
        * (kDeltaRulePrefillFlops * d.keyHeadDim * d.valueHeadDim
           + kDeltaRuleChunk * (6.0 * d.keyHeadDim + 4.0 * d.valueHeadDim));
    att.stateFloor = 1.0 / d.valueHeads;
}

double windowedContext(double meanCtx, double window, bool causalPrompt)
{
    if (!causalPrompt)
        return std::min(meanCtx, window);
    const double prompt = 2 * meanCtx;
    return prompt <= window ? meanCtx : window - window * window / (2 * prompt);
}

double attendedContext(const OpStatic& a, double meanCtx, bool causalPrompt)
{
    return a.fullShare * meanCtx + a.slidingShare * windowedContext(meanCtx, a.window, causalPrompt);
}

} // namespace shardlab
