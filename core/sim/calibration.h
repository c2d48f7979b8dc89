// Calibration of the simulator against published H100 measurements (docs/simulator.md).
// Each case rebuilds the published setup (model, precision, GPUs, lengths, batch) as a
// scenario and plan, predicts the published metric, and reports the ratio.
#pragma once

#include <string>
#include <vector>

#include "model/specs.h"

namespace shardlab {

enum class CalibrationMetric { OutputTokensPerS, TpotMs, TtftMs };

struct CalibrationCase {
    std::string id;          // e.g. "A2"
    std::string modelPreset; // resources/models name
    std::string engine;      // engine and version
    bool fp8 = false;        // FP8 weights and KV cache (W8A8; the KV cache 16-bit with kvCache16)
    int tensorParallel = 1;
    int expertParallel = 1;
    int promptTokens = 0;
    int outputTokens = 0;
    int batch = 0;           // 0 = the engine's "max throughput": the largest that fits
    CalibrationMetric metric = CalibrationMetric::OutputTokensPerS;
    double published = 0;
    std::string source;
    int vocabOverride = 0;   // Llama-2 shares Llama-3-70B's shape but a 32k vocabulary
    std::string gpu = "h100"; // "h100" (the cluster given to runCalibration) or "h200"
    bool attentionDp = false; // attention split by sequences over the TP group (attention DP)
    // "fit": used when the efficiencies were chosen; "check": the end-to-end rows the serving
    // model was built against, never tuned on; "held_out": other published cells, looked at
    // only after the model was done (docs/simulator.md, "Held-out check"); "held_out_vllm":
    // vLLM's runs, held out the same way; "held_out_inferencex": InferenceX's sweeps that chose
    // nothing (its vLLM sweep's rows are "fit": they chose vLLM's and SGLang's kernel floor).
    std::string set = "fit";
    // Whose collectives: TensorRT-LLM's (NIM runs it too) unless the row says vLLM's.
    CollectiveEngine collectives = CollectiveEngine::TrtLlm;
    int maxNumTokens = 0;      // the engine's token budget per step (0: 8192)
    LoadSpec load{};           // how the benchmark drove the engine (steady: max throughput)
    SpeculativeSpec speculative{}; // speculative decoding as run (acceptance: the published default)
    // Set when the row needs a mechanism the simulator does not have: listed, not predicted.
    std::string excluded{};
    // The KV cache pool the run gave a TensorRT-LLM engine, as a share of the memory left
    // after the model loads (0: the engine's default, kTrtLlmDefaultKvFraction).
    double kvCacheFraction = 0;
    // The published run offered more than the engine served: TTFT there is the length of
    // the run's queue, not a latency, so it is judged by whether saturation is reported.
    bool publishedSaturated = false;
    // A row run with speculative decoding: the speed-up a published source measured for the
    // same drafting (TPOT without drafts / with), to hold the model's own against (0: none).
    double publishedSpeculativeSpeedup = 0;
    std::string speculativeSpeedupSource{};
    // With fp8: the KV cache in 16 bits beside the FP8 weights, as vLLM and SGLang store it
    // unless told otherwise (kv-cache-dtype "auto": the model's activation dtype).
    bool kvCache16 = false;
};

struct CalibrationRow {
    CalibrationCase c;
    // The weights as run, by the format of the most of them (an MoE model's routed experts):
    // "bf16", "fp8", "mxfp4", ... (precisionName).
    std::string precision;
    double predicted = 0;
    double ratio = 0;        // predicted / published
    int batchUsed = 0;
    double boundTokensPerS = 0; // physical upper bound (weights / HBM peak) for throughput rows
    std::string error;       // set when the case could not be built or is excluded (c.excluded)
    // Rows run under a load protocol: the plan's capacity and whether the run was saturated.
    bool saturated = false;
    double capacityRequestsPerS = 0;
    // Rows run with speculative decoding: the same plan's TPOT without it / with it.
    double speculativeSpeedup = 0;
    // Max-throughput rows run by trtllm-bench, predicted as the benchmark drove the engine
    // beside the steady state: its `benchRequests` requests all queued at t = 0 (the page's
    // num_requests for the row's lengths, trtllmBenchRequests) through the request-level
    // model, output tokens over the whole run. 0: not such a row.
    int benchRequests = 0;
    double asRunPredicted = 0, asRunRatio = 0;
};

const std::vector<CalibrationCase>& calibrationCases();

// The engine limits trtllm-bench sets for a max-throughput run given none (calc_engine_setting
// and finetune_setting, NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py, used by both
// its TensorRT and PyTorch flows): the requests whose whole context (prompt + output) fits
// 0.95 of the memory the weights leave on the TP group (device memory in GiB less the
// weights' GB, key and value heads at least one per TP rank), at most 4096, rounded up (to
// 32 below 256 and at least 64, to 128 below 1024, to 256 above); the token budget that
// many requests need, max batch × (1 + prompt / output) before rounding, at most 32768,
// rounded up (to 256 and at least 2048 below 4096, to 512 below 8192, to 1024 above).
struct TrtllmBenchLimits {
    int maxBatch = 0;
    int maxNumTokens = 0;
};
TrtllmBenchLimits trtllmBenchLimits(const Scenario& s, double weightsGbPerGpu, int tp);
// The requests TensorRT-LLM's performance overview generated for a max-throughput run of
// these lengths (its "$num_requests" table, the same in the v0.17 and v1.0 pages,
// docs/source/performance/perf-overview.md): more for short requests so the run reaches a
// steady state. 0 for lengths the table does not list.
int trtllmBenchRequests(int promptTokens, int outputTokens);
// Runs every case on `cluster` (an H100 SXM node preset) with its efficiency factors; H200
// rows use the H200 preset with the same efficiencies and its kernel profile (h200-sxm; the
// cluster's own profile instead when it names one). Max-throughput rows are predicted
// by the simulator's aggregated serving model (in-flight batching with chunked prefill,
// max_num_tokens 8192, the largest batch that is valid); TPOT and TTFT rows of a lone
// request (batch 1) by the decode mode, which has no other request's prompt beside it.
std::vector<CalibrationRow> runCalibration(const ClusterSpec& cluster);

} // namespace shardlab
