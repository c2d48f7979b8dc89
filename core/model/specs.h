// The scenario a user describes: model, cluster, workload. Plain value types, no Qt.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/error.h"

namespace shardlab {

// How weights (or the KV cache) are stored (docs/simulator.md §3, "Weight formats"). The
// 4-bit formats' bytes include their block scales: MXFP4 (OCP Microscaling: 32 E2M1 values
// share one E8M0 scale, 4.25 bits), NVFP4 (16 E2M1 values share one E4M3 scale, 4.5 bits;
// the per-tensor FP32 scale is negligible), INT4 (weight-only, symmetric, a BF16 scale per
// group of 128: 4.125 bits) and INT4_G32 (the same with groups of 32, as Kimi-K2-Thinking:
// 4.5 bits). The KV cache is BF16 or FP8.
enum class Precision : std::uint8_t { BF16, FP8, MXFP4, NVFP4, INT4, INT4_G32 };

const char* precisionName(Precision p); // "bf16", "fp8", "mxfp4", "nvfp4", "int4", "int4_g32"
// A precision by its name ("fp16" reads as bf16: the same bytes); false if unknown.
bool precisionFromName(const std::string& name, Precision& out);
std::string knownPrecisions(); // "bf16, fp8, mxfp4, nvfp4, int4, int4_g32"
double bytesPerElement(Precision p);
bool isFourBit(Precision p);

enum class AttentionKind : std::uint8_t { GQA, MLA };

// DeepSeek multi-head latent attention dimensions (only when attention == MLA).
struct MlaDims {
    int qLoraRank = 0;      // 0 = queries projected directly from the hidden state
    int kvLoraRank = 0;     // compressed KV latent cached per token
    int qkNopeHeadDim = 0;
    int qkRopeHeadDim = 0;  // decoupled RoPE key, cached per token beside the latent
    int vHeadDim = 0;
};

// Mixture-of-experts block (only when experts > 0).
struct MoeDims {
    int experts = 0;            // routed experts per MoE layer
    int expertsPerToken = 0;    // top-k
    int expertFfnHidden = 0;    // intermediate width of one routed expert
    int sharedExperts = 0;      // always-active experts of width sharedExpertFfnHidden
    int sharedExpertFfnHidden = 0;
    int denseLayers = 0;        // leading layers with a dense FFN instead of MoE
};

// Gated DeltaNet linear attention (Qwen3-Next): per sequence and layer a fixed-size state
// of valueHeads x keyHeadDim x valueHeadDim and a short convolution's last convKernel - 1
// inputs, whatever the context.
struct LinearAttentionDims {
    int keyHeads = 0;
    int valueHeads = 0;
    int keyHeadDim = 0;
    int valueHeadDim = 0;
    int convKernel = 0;
};

// Layers whose attention is not full attention over the whole context; the other layers
// are (docs/simulator.md §1, "Attention layer mix"). Sliding-window layers attend to, and
// cache, the last slidingWindow tokens (gpt-oss); linear-attention layers (GQA models only)
// replace attention by a recurrent state (Qwen3-Next). Priced as the layers' mean.
struct AttentionMix {
    int slidingLayers = 0;
    int slidingWindow = 0;
    int linearLayers = 0;
    LinearAttentionDims linear;

    bool any() const { return slidingLayers > 0 || linearLayers > 0; }
    int fullLayers(int layers) const { return layers - slidingLayers - linearLayers; }
};

// A decoder-only transformer. Dense when moe.experts == 0.
struct ModelSpec {
    std::string name;
    int layers = 0;
    int hiddenSize = 0;
    int attentionHeads = 0;
    int kvHeads = 0;      // GQA key/value heads; equals attentionHeads for MHA; ignored by MLA
    int headDim = 0;      // GQA head dim; MLA uses mla.* instead
    int ffnHidden = 0;    // dense FFN intermediate width (dense model, or MoE dense layers)
    int vocabSize = 0;
    bool tieEmbeddings = false;
    AttentionKind attention = AttentionKind::GQA;
    MlaDims mla;
    MoeDims moe;
    AttentionMix attentionMix;
    Precision weightPrecision = Precision::BF16;
    Precision kvPrecision = Precision::BF16;
    // The routed experts' weights, when they differ from weightPrecision (gpt-oss: MXFP4
    // experts beside BF16 attention; Kimi-K2-Thinking: INT4 experts). Unset: weightPrecision.
    std::optional<Precision> expertPrecision;

    Precision routedExpertPrecision() const { return expertPrecision.value_or(weightPrecision); }
    bool isMoe() const { return moe.experts > 0; }
    int moeLayers() const { return isMoe() ? layers - moe.denseLayers : 0; }
    int denseLayerCount() const { return layers - moeLayers(); }
};

// Parameter counts of a model, from its dimensions (norm weights included).
struct ParameterCounts {
    double total = 0;   // every weight
    double active = 0;  // weights touched by one token (top-k routed + shared experts)
    double embedding = 0;
    double attentionPerLayer = 0;
    double denseFfnPerLayer = 0;
    double moePerLayer = 0;        // all experts + router + shared
    double moeActivePerLayer = 0;
};
ParameterCounts countParameters(const ModelSpec& m);
// One linear-attention layer's weights (input projections q, k, v, z, beta, alpha; the
// convolution; output projection; norms and per-head decay).
double linearAttentionParams(const ModelSpec& m);
// Bytes of every weight as stored: the routed experts in routedExpertPrecision(), the rest
// in weightPrecision (norms and routers counted at that precision too, as the counts are).
double weightBytes(const ModelSpec& m);

// Per-GPU calibration knobs: achieved fraction of the datasheet peaks. See docs/simulator.md.
struct KernelProfile; // model/profile.h

struct Efficiency {
    double compute = 0.0;     // of peak dense tensor FLOP/s, large GEMMs
    double hbm = 0.0;         // of HBM bandwidth, streaming reads
    double nvlink = 0.0;      // of NVLink per-direction bandwidth, large collectives
    double interNode = 0.0;   // of the inter-node link's bandwidth
};

struct GpuSpec {
    std::string name;
    double peakTflopsBf16 = 0;   // dense, no sparsity
    double peakTflopsFp8 = 0;    // dense, no sparsity
    double peakTflopsFp4 = 0;    // dense, no sparsity; 0: no FP4 tensor cores (Hopper, Ampere)
    double hbmGb = 0;            // capacity, GB (1e9 bytes)
    double hbmTbps = 0;          // bandwidth, TB/s (1e12 bytes/s)
    double memoryReserveGb = 0;  // CUDA context, NCCL buffers, fragmentation
    double kernelOverheadUs = 0; // fixed cost per fused operator inside a step (engines scale it: KernelProfile)
    Efficiency efficiency;
};

// The tensor-core math of a GEMM whose weights are stored in `weights`, on `gpu`
// (docs/simulator.md §3, "Weight formats"): BF16 and FP8 as stored; NVFP4 at the FP4 peak
// where the GPU has one (W4A4), MXFP4 at the FP8 peak there (MXFP4 x MXFP8); every 4-bit
// format elsewhere, and INT4 everywhere, dequantized to BF16 (weight-only kernels).
enum class GemmMath : std::uint8_t { Bf16, Fp8, Fp4 };
GemmMath gemmMath(Precision weights, const GpuSpec& gpu);

// A homogeneous cluster: nodes of gpusPerNode GPUs joined by NVLink inside the node
// (one NVLink domain per node) and one inter-node port per GPU.
struct ClusterSpec {
    std::string name;
    GpuSpec gpu;
    int gpusPerNode = 0;
    int nodes = 0;
    double nvlinkGBps = 0;          // per GPU, per direction, GB/s
    double nvlinkLatencyUs = 0;     // per collective step inside a node
    double interNodeGBps = 0;       // per GPU, per direction, GB/s
    double interNodeLatencyUs = 0;  // per collective step across nodes
    // The kernel profile its costs use (model/profile.h, docs/profiles.md); null: the
    // built-in one (resources/profiles/h100-sxm.json).
    std::shared_ptr<const KernelProfile> profile;

    long long totalGpus() const { return static_cast<long long>(gpusPerNode) * nodes; }
};

// How the engine serves the workload (docs/simulator.md §4, "Serving modes").
//   Aggregated: in-flight batching with chunked prefill: every engine step carries the
//               decode tokens of the running sequences plus prompt tokens, up to a token
//               budget; prefill time is inside the measured throughput (what trtllm-bench,
//               MLPerf, vLLM/SGLang benchmarks and aiperf report).
//   Decode:     a steady decode step with prefill left out (an upper bound no benchmark
//               measures; ShardLab v1's figure).
//   Disaggregated: a prefill pool and a decode pool, each with its own plan on its own
//               GPUs; the prompt's KV cache crosses `kv_transfer` links between them
//               (sim/disaggregated.h). A plain Plan is not a disaggregated plan.
//   Prefill:    internal: the prefill pool's role inside Disaggregated. A plan's batch is
//               the prompts one replica prefills per pass; never read from a file.
enum class ServingMode : std::uint8_t { Aggregated, Decode, Disaggregated, Prefill };
const char* servingModeName(ServingMode m);
// Only the modes a workload may name (aggregated, decode, disaggregated).
bool servingModeFromName(const std::string& name, ServingMode& out);
// Where a disaggregated deployment's KV cache travels from the prefill to the decode pool.
enum class KvLink : std::uint8_t { InterNode, NvLink };
const char* kvLinkName(KvLink l);
bool kvLinkFromName(const std::string& name, KvLink& out);
// The KV link prices only disaggregated serving (and its prefill pool); under the other
// modes a workload keeps it, not in effect, so that switching the mode back loses nothing.
inline bool kvLinkInEffect(ServingMode m) { return m == ServingMode::Disaggregated || m == ServingMode::Prefill; }
// The collective library the serving engine runs (docs/simulator.md §2, "Collectives by
// algorithm and size"): NCCL alone, or an engine's custom all-reduce inside a node beside it.
enum class CollectiveEngine : std::uint8_t { Nccl, TrtLlm, Vllm, VllmEager, Sglang };
const char* collectiveEngineName(CollectiveEngine e); // "nccl", "trtllm", "vllm", "vllm_eager", "sglang"
bool collectiveEngineFromName(const std::string& name, CollectiveEngine& out);
std::string knownCollectiveEngines();
constexpr int kMaxNumTokensLimit = 1 << 22; // token budget per step: 4 M tokens is no engine

// How a benchmark drives the engine (docs/simulator.md §4, "Serving under load").
//   Steady:      every request in flight all the time (the plan's batch): the steady state
//                that searches optimise, as trtllm-bench's max-throughput runs measure it.
//   Concurrency: a closed loop: `concurrency` requests in flight, a new one sent as one
//                finishes, all started at once (InferenceX, vLLM bench serve
//                --max-concurrency C --request-rate inf).
//   RequestRate: an open loop: requests arrive as a Poisson process at `requestRate` per
//                second (aiperf / vLLM bench serve --request-rate); infinite: all at once.
enum class LoadProtocol : std::uint8_t { Steady, Concurrency, RequestRate };
const char* loadProtocolName(LoadProtocol p); // "steady", "concurrency", "request_rate"
bool loadProtocolFromName(const std::string& name, LoadProtocol& out);
constexpr int kMaxLoadRequests = 200000;
constexpr int kMaxLoadConcurrency = 65536;
struct LoadSpec {
    LoadProtocol protocol = LoadProtocol::Steady;
    int concurrency = 0;      // closed loop: requests in flight
    double requestRate = 0;   // open loop: requests per second (+infinity: all at t = 0)
    int requests = 0;         // measured requests; 0: 10 x concurrency (closed), 500 (open)
    // Requests the benchmark runs to the end before it measures; -1: 2 x concurrency
    // (closed), 0 (open). The tools (InferenceX's and vLLM's benchmark_serving, aiperf) send
    // them as a phase of their own, so the measured run starts on an idle engine, a closed
    // loop with all C at once; nothing the model prices carries over from them, so they
    // name the run as the tool ran it and do not change its figures.
    int warmupRequests = -1;
    // Input and output lengths each uniform in [0.8 L, L] (InferenceX); else exactly L.
    bool uniformLengths = false;
    std::uint64_t seed = 1;   // arrivals and lengths

    bool steady() const { return protocol == LoadProtocol::Steady; }
    int measuredRequests() const
    {
        return requests > 0                              ? requests
            : protocol == LoadProtocol::Concurrency ? std::min(10 * concurrency, kMaxLoadRequests)
                                                         : 500;
    }
    int warmup() const
    {
        return warmupRequests >= 0 ? warmupRequests : protocol == LoadProtocol::Concurrency ? 2 * concurrency : 0;
    }
    bool operator==(const LoadSpec&) const = default;
};

// The load `given` (a scenario's) driven by another protocol: a command's --concurrency or
// --request-rate, a load front's points. The traffic's lengths and seed are kept. An open
// loop's request counts do not depend on its rate, so they are kept from an open loop; a
// closed loop's defaults scale with its concurrency, so its counts are kept only at the
// same concurrency. Otherwise the protocol's defaults.
LoadSpec withProtocol(const LoadSpec& given, LoadProtocol protocol, int concurrency, double requestRate);
// Why a load's request counts cannot drive it ("" when they can): a closed loop measuring
// fewer requests than it keeps in flight never has them all in flight.
std::string loadRequestsProblem(const LoadSpec& l);

// Speculative decoding (docs/simulator.md §4, "Speculative decoding"): each decode step
// verifies `draftTokens` drafted tokens per sequence beside its own (k + 1 queries per
// sequence), and drafts the next step's k tokens.
//   Mtp: DeepSeek-V3's multi-token-prediction module (one transformer block of the model's
//        last layer kind and a 2d -> d projection; embedding and LM head shared) run k times
//        per step, as TensorRT-LLM's "MTP Eagle", vLLM's and SGLang's MTP/NextN run it.
enum class SpeculativeMethod : std::uint8_t { None, Mtp };
const char* speculativeMethodName(SpeculativeMethod m); // "none", "mtp"
bool speculativeMethodFromName(const std::string& name, SpeculativeMethod& out);
constexpr int kMaxDraftTokens = 16;

struct SpeculativeSpec {
    SpeculativeMethod method = SpeculativeMethod::None;
    int draftTokens = 0;          // k: tokens drafted per sequence per step
    double acceptanceRate = -1;   // per drafted token, in [0, 1]; < 0: the model family's published rate
    // Or the mean tokens a sequence emits per step, as engines report it (the verified token
    // included), in [1, draftTokens + 1]; < 0: not given. At most one of the two is given.
    double acceptanceLength = -1;
    bool on() const { return method != SpeculativeMethod::None && draftTokens > 0; }
    bool operator==(const SpeculativeSpec&) const = default;
};
// How likely each drafted token is accepted, given the earlier ones were: `first` for the
// first draft, `later` for every deeper one (one rate for all depths: first == later).
// first < 0: no rate (neither given nor published).
struct DraftAcceptance {
    double first = -1;
    double later = -1;
};
// Expected tokens a sequence emits per step with k drafts: 1 + a1 · (1 + b + ... + b^(k-1))
// for first-draft rate a1 and deeper rate b; with one rate a, (1 - a^(k+1)) / (1 - a).
// 1 when off.
double speculativeTokensPerStep(DraftAcceptance a, int draftTokens);
double speculativeTokensPerStep(double acceptanceRate, int draftTokens);
// The published MTP acceptance of a model's family by draft depth, first < 0 when none is
// published (docs/simulator.md §4, "Speculative decoding", sources).
DraftAcceptance publishedMtpAcceptance(const ModelSpec& m);
// DeepSeek-V3's family (V3, R1): the models whose checkpoints carry the MTP module, whose
// published acceptance rate the default is, and whose MTP the engines' exports name.
bool deepSeekV3Family(const ModelSpec& m);
// The acceptance a workload runs `m` with: its own rate at every depth (or the one rate that
// gives its acceptance length), else the family's.
DraftAcceptance speculativeAcceptance(const SpeculativeSpec& s, const ModelSpec& m);
// Ranges at `prefix` ("workload.speculative"); with a model, also that an acceptance rate
// is given or published for it.
FieldErrors validateSpeculative(const SpeculativeSpec& s, const ModelSpec* m, const std::string& prefix);

// The largest latency limit a workload may hold (ms). A pool's scenario holds the other
// pool's limit at it (poolScenario): in practice a limit that binds nothing.
constexpr double kUnlimitedSloMs = 1e9;

struct WorkloadSpec {
    int promptTokens = 0;
    int outputTokens = 0;
    double ttftSloMs = 0;  // time to first token limit
    double tpotSloMs = 0;  // time per output token limit
    ServingMode serving = ServingMode::Aggregated;
    int maxNumTokens = 8192; // tokens per engine step (max_num_tokens / max-num-batched-tokens)
    // Share of the memory left after the reserve, the weights and the activations that the
    // engine gives its KV cache pool (TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction,
    // 0.9 when not set). 1: the whole of it, the pool a launch config then sizes to the
    // plan's batch (docs/launch.md, "Memory settings"). The rest stays unused.
    double kvCacheMemoryFraction = 1.0;
    KvLink kvTransfer = KvLink::InterNode; // disaggregated: the links the KV cache crosses
    CollectiveEngine engine = CollectiveEngine::Nccl; // whose collectives price the plan
    // Plans restricted to what `engine` runs (model/engine_caps.h): every search, exact's
    // certificate and the recipe stay inside the engine's layouts. Needs a named engine.
    bool runnable = false;
    LoadSpec load{};       // how a benchmark drives it (steady state unless said)
    SpeculativeSpec speculative{}; // draft tokens verified per step (off unless said)

    // Context a decode step sees on average, and at its longest (KV cache sizing).
    double meanDecodeContext() const { return promptTokens + outputTokens / 2.0; }
    int maxContext() const { return promptTokens + outputTokens; }
};

// A constraint's list allows value `v`: an empty list allows any value.
inline bool constraintAllows(const std::vector<int>& allowed, long long v)
{
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

// What a serving team has already decided ("we run TP 8", "no pipeline"): the values each
// degree may take, a batch range and operators' options. Every search algorithm and the
// Megatron recipe stay inside them; exact certifies within them (docs/choices.md).
struct PlanConstraints {
    std::vector<int> tensorParallel;   // empty: any value
    std::vector<int> expertParallel;
    std::vector<int> pipelineParallel;
    std::vector<int> dataParallel;
    std::vector<int> instances;        // MoE: engine instances (model/plan.h)
    int batchMin = 1;                  // sequences per replica, inclusive
    int batchMax = 0;                  // 0: no upper limit but the simulator's (kMaxBatch)
    // (operator index, as OpId in model/plan.h; its allowed option indices)
    std::vector<std::pair<int, std::vector<int>>> operatorOptions;

    // Whether option `option` of operator `op` (an OpId's index) is allowed: no list names
    // the operator, or each that does names the option.
    bool allowsOption(int op, int option) const
    {
        for (const auto& [id, options] : operatorOptions)
            if (id == op && !constraintAllows(options, option))
                return false;
        return true;
    }
    bool empty() const
    {
        return tensorParallel.empty() && expertParallel.empty() && pipelineParallel.empty() && dataParallel.empty()
            && instances.empty() && batchMin <= 1 && batchMax == 0 && operatorOptions.empty();
    }
    bool operator==(const PlanConstraints&) const = default;
};

struct Scenario {
    std::string name;
    std::string description;
    ModelSpec model;
    ClusterSpec cluster;
    WorkloadSpec workload;
    PlanConstraints constraints; // empty unless the scenario file has "constraints"
};

// Whether a request of this workload has a time per output token: a gap between two of its
// tokens. A prefill pool emits none, and a request of one output token has no second one
// (TPOT = (e2e - TTFT) / (OSL - 1) is undefined): its TPOT is 0 and no TPOT limit binds it.
inline bool hasTpot(const WorkloadSpec& w) { return w.serving != ServingMode::Prefill && w.outputTokens > 1; }

// Requests per second a rate of output tokens serves: each request emits outputTokens.
inline double requestsPerS(const WorkloadSpec& w, double outputTokensPerS)
{
    return outputTokensPerS / (w.outputTokens > 1 ? w.outputTokens : 1);
}
// Its inverse: the output tokens per second `requestsPerS` requests of this workload emit.
inline double outputTokensPerS(const WorkloadSpec& w, double requestsPerS)
{
    return requestsPerS * (w.outputTokens > 1 ? w.outputTokens : 1);
}

// Semantic checks (ranges, divisibility). Paths are relative to `prefix` ("model").
FieldErrors validateModel(const ModelSpec& m, const std::string& prefix);
FieldErrors validateCluster(const ClusterSpec& c, const std::string& prefix);
FieldErrors validateWorkload(const WorkloadSpec& w, const std::string& prefix);
FieldErrors validateScenario(const Scenario& s);

} // namespace shardlab
