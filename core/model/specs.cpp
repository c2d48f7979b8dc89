#include "model/specs.h"

#include "model/disaggregated_plan.h"
#include "model/model_limits.h"
#include "model/names.h"

#include <cmath>

namespace shardlab {

namespace {
struct PrecisionInfo {
    Precision precision;
    const char* name;
    double bits; // per element, block scales included
};
// 4-bit formats: 4 bits per element plus the block's scale spread over its elements.
constexpr PrecisionInfo kPrecisions[] = {
    {Precision::BF16, "bf16", 16},
    {Precision::FP8, "fp8", 8},
    {Precision::MXFP4, "mxfp4", 4 + 8.0 / 32},     // E8M0 scale per 32 (OCP MX v1.0)
    {Precision::NVFP4, "nvfp4", 4 + 8.0 / 16},     // E4M3 scale per 16
    {Precision::INT4, "int4", 4 + 16.0 / 128},     // BF16 scale per 128 (symmetric)
    {Precision::INT4_G32, "int4_g32", 4 + 16.0 / 32}, // BF16 scale per 32 (symmetric)
};
const PrecisionInfo& infoOf(Precision p)
{
    for (const PrecisionInfo& i : kPrecisions)
        if (i.precision == p)
            return i;
    return kPrecisions[0];
}
} // namespace

const char* precisionName(Precision p)
{
    return infoOf(p).name;
}

bool precisionFromName(const std::string& name, Precision& out)
{
    if (name == "fp16") {
        out = Precision::BF16;
        return true;
    }
    for (const PrecisionInfo& i : kPrecisions)
        if (name == i.name) {
            out = i.precision;
            return true;
        }
    return false;
}

std::string knownPrecisions()
{
    std::string s;
    for (const PrecisionInfo& i : kPrecisions)
        s += (s.empty() ? "" : ", ") + std::string(i.name);
    return s;
}

double bytesPerElement(Precision p)
{
    return infoOf(p).bits / 8.0; // 16 / 8 and 8 / 8 are exact: BF16 2, FP8 1
}

bool isFourBit(Precision p)
{
    return p != Precision::BF16 && p != Precision::FP8;
}

GemmMath gemmMath(Precision weights, const GpuSpec& gpu)
{
    switch (weights) {
    case Precision::BF16: return GemmMath::Bf16;
    case Precision::FP8: return GemmMath::Fp8;
    case Precision::NVFP4: return gpu.peakTflopsFp4 > 0 ? GemmMath::Fp4 : GemmMath::Bf16;
    case Precision::MXFP4: return gpu.peakTflopsFp4 > 0 ? GemmMath::Fp8 : GemmMath::Bf16;
    case Precision::INT4:
    case Precision::INT4_G32: return GemmMath::Bf16;
    }
    return GemmMath::Bf16;
}

double linearAttentionParams(const ModelSpec& m)
{
    const LinearAttentionDims& d = m.attentionMix.linear;
    const double h = m.hiddenSize;
    const double keys = double(d.keyHeads) * d.keyHeadDim, values = double(d.valueHeads) * d.valueHeadDim;
    const double inProj = h * (2 * keys + 2 * values + 2.0 * d.valueHeads); // q, k, v, z; beta, alpha
    const double conv = (2 * keys + values) * d.convKernel;
    const double outProj = values * h;
    return h + inProj + conv + outProj + 2.0 * d.valueHeads + d.valueHeadDim; // + A, dt bias, gated norm
}

ParameterCounts countParameters(const ModelSpec& m)
{
    const double h = m.hiddenSize;
    ParameterCounts c;
    c.embedding = double(m.vocabSize) * h;
    const double lmHead = m.tieEmbeddings ? 0.0 : double(m.vocabSize) * h;

    double attn = h; // input RMSNorm
    if (m.attention == AttentionKind::MLA) {
        const MlaDims& d = m.mla;
        const double qHead = double(d.qkNopeHeadDim) + d.qkRopeHeadDim;
        if (d.qLoraRank > 0)
            attn += h * d.qLoraRank + d.qLoraRank + double(d.qLoraRank) * m.attentionHeads * qHead;
        else
            attn += h * m.attentionHeads * qHead;
        attn += h * (double(d.kvLoraRank) + d.qkRopeHeadDim) + d.kvLoraRank;
        attn += double(d.kvLoraRank) * m.attentionHeads * (double(d.qkNopeHeadDim) + d.vHeadDim);
        attn += double(m.attentionHeads) * d.vHeadDim * h;
    } else {
        const double q = double(m.attentionHeads) * m.headDim;
        const double kv = double(m.kvHeads) * m.headDim;
        attn += h * q + 2.0 * h * kv + q * h;
    }
    c.attentionPerLayer = attn;
    double layersAttn = m.layers * attn;
    if (m.attentionMix.linearLayers > 0) {
        // Linear-attention layers have their own projections instead (the per-layer figure
        // is then the mean over the layers).
        const int lin = m.attentionMix.linearLayers;
        layersAttn = (m.layers - lin) * attn + lin * linearAttentionParams(m);
        c.attentionPerLayer = layersAttn / m.layers;
    }
    c.denseFfnPerLayer = h + 3.0 * h * m.ffnHidden; // post-attention norm + SwiGLU

    if (m.isMoe()) {
        const MoeDims& e = m.moe;
        const double expert = 3.0 * h * e.expertFfnHidden;
        const double shared = double(e.sharedExperts) * 3.0 * h * e.sharedExpertFfnHidden;
        const double router = h * e.experts;
        c.moePerLayer = h + router + e.experts * expert + shared;
        c.moeActivePerLayer = h + router + e.expertsPerToken * expert + shared;
    }
    const double dense = m.denseLayerCount() * c.denseFfnPerLayer;
    const double fixed = c.embedding + lmHead + h; // + final norm
    c.total = fixed + layersAttn + dense + m.moeLayers() * c.moePerLayer;
    c.active = fixed + layersAttn + dense + m.moeLayers() * c.moeActivePerLayer;
    return c;
}

double weightBytes(const ModelSpec& m)
{
    const ParameterCounts pc = countParameters(m);
    if (!m.expertPrecision)
        return pc.total * bytesPerElement(m.weightPrecision);
    const double routed = double(m.moeLayers()) * m.moe.experts * 3.0 * m.hiddenSize * m.moe.expertFfnHidden;
    return (pc.total - routed) * bytesPerElement(m.weightPrecision) + routed * bytesPerElement(*m.expertPrecision);
}

namespace {

void checkRange(FieldErrors& out, const std::string& path, double v, double lo, double hi,
                const char* what = "")
{
    if (!std::isfinite(v) || v < lo || v > hi) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s must be between %g and %g (got %g)", what, lo, hi, v);
        std::string msg = buf;
        if (msg.front() == ' ')
            msg.erase(0, 1);
        out.push_back({{}, path, msg, true});
    }
}

// A model field against its range in the one table (model/model_limits.h).
void checkRange(FieldErrors& out, const std::string& path, double v, IntRange r)
{
    checkRange(out, path, v, double(r.lo), double(r.hi));
}

void checkPositive(FieldErrors& out, const std::string& path, double v, double hi)
{
    if (!std::isfinite(v) || v <= 0 || v > hi) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "must be greater than 0 and at most %g (got %g)", hi, v);
        out.push_back({{}, path, buf, true});
    }
}

void checkName(FieldErrors& e, const std::string& where, const std::string& name)
{
    if (auto why = nameProblem(name))
        e.push_back({{}, where, *why});
}

void validateAttentionMix(FieldErrors& e, const ModelSpec& m, const std::string& p)
{
    const AttentionMix& x = m.attentionMix;
    if (x.slidingLayers != 0 || x.slidingWindow != 0) {
        checkRange(e, p + ".sliding_window.layers", x.slidingLayers, 1, std::max(1, m.layers));
        checkRange(e, p + ".sliding_window.window", x.slidingWindow, modelLimits::kSlidingWindow);
    }
    if (x.linearLayers == 0)
        return;
    const std::string q = p + ".linear_attention";
    checkRange(e, q + ".layers", x.linearLayers, 1, std::max(1, m.layers - x.slidingLayers),
               "must leave room for the sliding-window layers:");
    if (m.attention != AttentionKind::GQA)
        e.push_back({{}, q, "is modelled beside GQA attention only (attention is mla)"});
    checkRange(e, q + ".key_heads", x.linear.keyHeads, modelLimits::kHeads);
    checkRange(e, q + ".value_heads", x.linear.valueHeads, modelLimits::kHeads);
    checkRange(e, q + ".key_head_dim", x.linear.keyHeadDim, modelLimits::kHeadDim);
    checkRange(e, q + ".value_head_dim", x.linear.valueHeadDim, modelLimits::kHeadDim);
    checkRange(e, q + ".conv_kernel", x.linear.convKernel, modelLimits::kConvKernel);
}

} // namespace

FieldErrors validateModel(const ModelSpec& m, const std::string& p)
{
    FieldErrors e;
    checkName(e, p + ".name", m.name);
    checkRange(e, p + ".layers", m.layers, modelLimits::kLayers);
    checkRange(e, p + ".hidden_size", m.hiddenSize, modelLimits::kHiddenSize);
    checkRange(e, p + ".attention_heads", m.attentionHeads, modelLimits::kHeads);
    checkRange(e, p + ".vocab_size", m.vocabSize, modelLimits::kVocabSize);
    if (m.attention == AttentionKind::GQA) {
        checkRange(e, p + ".kv_heads", m.kvHeads, modelLimits::kHeads);
        checkRange(e, p + ".head_dim", m.headDim, modelLimits::kHeadDim);
        if (m.kvHeads >= 1 && m.attentionHeads >= 1 && m.attentionHeads % m.kvHeads != 0)
            e.push_back({{}, p + ".kv_heads",
                         "attention_heads (" + std::to_string(m.attentionHeads)
                             + ") must be divisible by kv_heads (" + std::to_string(m.kvHeads) + ")"});
    } else {
        checkRange(e, p + ".mla.q_lora_rank", m.mla.qLoraRank, modelLimits::kQLoraRank);
        checkRange(e, p + ".mla.kv_lora_rank", m.mla.kvLoraRank, modelLimits::kKvLoraRank);
        checkRange(e, p + ".mla.qk_nope_head_dim", m.mla.qkNopeHeadDim, modelLimits::kHeadDim);
        checkRange(e, p + ".mla.qk_rope_head_dim", m.mla.qkRopeHeadDim, modelLimits::kRopeHeadDim);
        checkRange(e, p + ".mla.v_head_dim", m.mla.vHeadDim, modelLimits::kHeadDim);
    }
    if (m.denseLayerCount() > 0)
        checkRange(e, p + ".ffn_hidden", m.ffnHidden, modelLimits::kFfnHidden);
    if (m.isMoe()) {
        const MoeDims& d = m.moe;
        checkRange(e, p + ".moe.experts", d.experts, modelLimits::kExperts);
        checkRange(e, p + ".moe.experts_per_token", d.expertsPerToken, 1, std::max(1, d.experts));
        checkRange(e, p + ".moe.expert_ffn_hidden", d.expertFfnHidden, modelLimits::kFfnHidden);
        checkRange(e, p + ".moe.shared_experts", d.sharedExperts, modelLimits::kSharedExperts);
        if (d.sharedExperts > 0)
            checkRange(e, p + ".moe.shared_expert_ffn_hidden", d.sharedExpertFfnHidden, modelLimits::kFfnHidden);
        checkRange(e, p + ".moe.dense_layers", d.denseLayers, 0, std::max(0, m.layers - 1),
                   "must leave at least one MoE layer:");
    } else if (m.moe.experts < 0) {
        e.push_back({{}, p + ".moe.experts", "must not be negative"});
    }
    if (isFourBit(m.kvPrecision))
        e.push_back({{}, p + ".kv_precision", "must be bf16 or fp8 (a 4-bit KV cache is not modelled), got "
                                                  + std::string(precisionName(m.kvPrecision))});
    if (m.expertPrecision && !m.isMoe())
        e.push_back({{}, p + ".expert_precision", "is for the routed experts of an MoE model; this model has none"});
    validateAttentionMix(e, m, p);
    return e;
}

FieldErrors validateCluster(const ClusterSpec& c, const std::string& p)
{
    FieldErrors e;
    const std::string g = p + ".gpu";
    checkName(e, p + ".name", c.name);
    checkName(e, g + ".name", c.gpu.name);
    checkPositive(e, g + ".peak_tflops_bf16", c.gpu.peakTflopsBf16, 1e6);
    checkPositive(e, g + ".peak_tflops_fp8", c.gpu.peakTflopsFp8, 1e6);
    checkRange(e, g + ".peak_tflops_fp4", c.gpu.peakTflopsFp4, 0, 1e6, "must be 0 (no FP4 tensor cores) or");
    checkPositive(e, g + ".hbm_gb", c.gpu.hbmGb, 1e5);
    checkPositive(e, g + ".hbm_tb_per_s", c.gpu.hbmTbps, 1e4);
    checkRange(e, g + ".memory_reserve_gb", c.gpu.memoryReserveGb, 0,
               std::max(0.0, c.gpu.hbmGb * 0.9), "must leave 10% of hbm_gb:");
    checkRange(e, g + ".kernel_overhead_us", c.gpu.kernelOverheadUs, 0, 1e4);
    checkPositive(e, g + ".efficiency.compute", c.gpu.efficiency.compute, 1.0);
    checkPositive(e, g + ".efficiency.hbm", c.gpu.efficiency.hbm, 1.0);
    checkPositive(e, g + ".efficiency.nvlink", c.gpu.efficiency.nvlink, 1.0);
    checkPositive(e, g + ".efficiency.inter_node", c.gpu.efficiency.interNode, 1.0);
    checkRange(e, p + ".gpus_per_node", c.gpusPerNode, 1, 1024);
    checkRange(e, p + ".nodes", c.nodes, 1, 131072);
    if (c.gpusPerNode >= 1 && c.nodes >= 1 && c.totalGpus() > (1 << 20))
        e.push_back({{}, p + ".nodes",
                     "gpus_per_node x nodes must be at most 1048576 (got "
                         + std::to_string(c.totalGpus()) + ")"});
    checkPositive(e, p + ".nvlink_gb_per_s", c.nvlinkGBps, 1e6);
    checkRange(e, p + ".nvlink_latency_us", c.nvlinkLatencyUs, 0, 1e6);
    checkPositive(e, p + ".inter_node_gb_per_s", c.interNodeGBps, 1e6);
    checkRange(e, p + ".inter_node_latency_us", c.interNodeLatencyUs, 0, 1e6);
    return e;
}

FieldErrors validateWorkload(const WorkloadSpec& w, const std::string& p)
{
    FieldErrors e;
    checkRange(e, p + ".prompt_tokens", w.promptTokens, 1, 10'000'000);
    checkRange(e, p + ".output_tokens", w.outputTokens, 1, 10'000'000);
    // Disaggregated, the prefill pool computes the first token: with one output token the
    // decode pool would have nothing to decode, and its rate no meaning.
    if (w.serving == ServingMode::Disaggregated && w.outputTokens == 1)
        e.push_back({{}, p + ".output_tokens", "at least 2 under disaggregated serving (the prefill pool computes the "
                                               "first token; with 1 the decode pool has nothing to decode): serve it "
                                               "aggregated, or as a prefill pool"});
    checkPositive(e, p + ".ttft_slo_ms", w.ttftSloMs, kUnlimitedSloMs);
    checkPositive(e, p + ".tpot_slo_ms", w.tpotSloMs, kUnlimitedSloMs);
    checkRange(e, p + ".max_num_tokens", w.maxNumTokens, 1, kMaxNumTokensLimit);
    checkRange(e, p + ".kv_cache_memory_fraction", w.kvCacheMemoryFraction, 0.01, 1);
    const LoadSpec& l = w.load;
    const std::string at = p + ".load";
    if (l.protocol == LoadProtocol::Concurrency)
        checkRange(e, at + ".concurrency", l.concurrency, 1, kMaxLoadConcurrency);
    if (l.protocol == LoadProtocol::RequestRate && !(l.requestRate > 0)) // +inf: all at once
        e.push_back({{}, at + ".request_rate", "must be above 0 requests/s (or \"inf\": all at once)"});
    checkRange(e, at + ".requests", l.requests, 0, kMaxLoadRequests);
    if (const std::string why = loadRequestsProblem(l); !why.empty())
        e.push_back({{}, at + ".requests", why});
    checkRange(e, at + ".warmup_requests", l.warmupRequests, -1, kMaxLoadRequests);
    for (auto& err : validateSpeculative(w.speculative, nullptr, p + ".speculative"))
        e.push_back(std::move(err));
    if (w.runnable && w.engine == CollectiveEngine::Nccl)
        e.push_back({{}, p + ".runnable", "restricts plans to what the serving engine runs: name the engine in "
                                          "workload.engine (vllm, sglang or trtllm)"});
    // (A protocol under another serving mode is kept, not refused: the request-level run
    // then says it does not model that mode, and switching back to aggregated serving in
    // the window finds it again.)
    return e;
}

LoadSpec withProtocol(const LoadSpec& given, LoadProtocol protocol, int concurrency, double requestRate)
{
    LoadSpec l;
    l.protocol = protocol;
    l.concurrency = protocol == LoadProtocol::Concurrency ? concurrency : 0;
    l.requestRate = protocol == LoadProtocol::RequestRate ? requestRate : 0;
    l.uniformLengths = given.uniformLengths;
    l.seed = given.seed;
    const bool counts = given.protocol == protocol
        && (protocol == LoadProtocol::RequestRate || given.concurrency == l.concurrency);
    if (counts) {
        l.requests = given.requests;
        l.warmupRequests = given.warmupRequests;
    }
    return l;
}

std::string loadRequestsProblem(const LoadSpec& l)
{
    if (l.protocol != LoadProtocol::Concurrency || l.requests <= 0 || l.requests >= l.concurrency)
        return "";
    return "measures " + std::to_string(l.requests) + " requests, fewer than the " + std::to_string(l.concurrency)
        + " the closed loop keeps in flight: give at least " + std::to_string(l.concurrency) + " (default 10 x "
        + "concurrency)";
}

const char* servingModeName(ServingMode m)
{
    switch (m) {
    case ServingMode::Aggregated: return "aggregated";
    case ServingMode::Decode: return "decode";
    case ServingMode::Disaggregated: return "disaggregated";
    case ServingMode::Prefill: return "prefill";
    }
    return "?";
}

bool servingModeFromName(const std::string& name, ServingMode& out)
{
    for (ServingMode m : {ServingMode::Aggregated, ServingMode::Decode, ServingMode::Disaggregated})
        if (name == servingModeName(m)) {
            out = m;
            return true;
        }
    return false;
}

const char* loadProtocolName(LoadProtocol p)
{
    switch (p) {
    case LoadProtocol::Steady: return "steady";
    case LoadProtocol::Concurrency: return "concurrency";
    case LoadProtocol::RequestRate: return "request_rate";
    }
    return "?";
}

bool loadProtocolFromName(const std::string& name, LoadProtocol& out)
{
    for (LoadProtocol p : {LoadProtocol::Steady, LoadProtocol::Concurrency, LoadProtocol::RequestRate})
        if (name == loadProtocolName(p)) {
            out = p;
            return true;
        }
    return false;
}

const char* kvLinkName(KvLink l) { return l == KvLink::NvLink ? "nvlink" : "inter_node"; }

bool kvLinkFromName(const std::string& name, KvLink& out)
{
    for (KvLink l : {KvLink::InterNode, KvLink::NvLink})
        if (name == kvLinkName(l)) {
            out = l;
            return true;
        }
    return false;
}

const char* collectiveEngineName(CollectiveEngine e)
{
    switch (e) {
    case CollectiveEngine::TrtLlm: return "trtllm";
    case CollectiveEngine::Vllm: return "vllm";
    case CollectiveEngine::VllmEager: return "vllm_eager";
    case CollectiveEngine::Sglang: return "sglang";
    default: return "nccl";
    }
}

bool collectiveEngineFromName(const std::string& name, CollectiveEngine& out)
{
    for (CollectiveEngine e : {CollectiveEngine::Nccl, CollectiveEngine::TrtLlm, CollectiveEngine::Vllm,
                               CollectiveEngine::VllmEager, CollectiveEngine::Sglang})
        if (name == collectiveEngineName(e)) {
            out = e;
            return true;
        }
    return false;
}

std::string knownCollectiveEngines() { return "nccl, trtllm, vllm, vllm_eager, sglang"; }

FieldErrors validateScenario(const Scenario& s)
{
    FieldErrors all;
    checkName(all, "name", s.name);
    for (auto& e : validateModel(s.model, "model"))
        all.push_back(std::move(e));
    for (auto& e : validateCluster(s.cluster, "cluster"))
        all.push_back(std::move(e));
    for (auto& e : validateWorkload(s.workload, "workload"))
        all.push_back(std::move(e));
    if (s.workload.serving == ServingMode::Disaggregated && all.empty() && disaggregatedSplits(s).empty())
        all.push_back({{}, "workload.serving",
                       "\"disaggregated\" splits the cluster into a prefill and a decode pool, and a cluster of one "
                       "GPU cannot be split (use \"aggregated\")"});
    // The acceptance rate's default depends on the model (the range errors are above).
    if (s.workload.speculative.on())
        for (auto& e : validateSpeculative(s.workload.speculative, &s.model, "workload.speculative"))
            all.push_back(std::move(e));
    return all;
}

} // namespace shardlab
