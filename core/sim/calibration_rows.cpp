// The published rows the simulator is judged on (docs/simulator.md §8): each measurement
// with its source, engine, lengths, load and set (fit, check, held_out, held_out_vllm,
// held_out_inferencex). The runner that predicts them is sim/calibration.cpp.
#include "sim/calibration.h"

#include <limits>
#include <utility>

namespace shardlab {

namespace {
constexpr const char* kTrtPerf = "TensorRT-LLM perf-overview (docs/source/performance/perf-overview.md), v0.17 "
                                 "data, H100 80GB HBM3 column";
constexpr const char* kTrtPerf10 = "TensorRT-LLM perf-overview, v1.0-era table, H100 SXM 80GB";
constexpr const char* kNim = "NVIDIA NIM LLM benchmarking page, NIM 1.8.0";
constexpr const char* kTrtServe = "TensorRT-LLM online serving table (v0.14.0, BF16)";
constexpr const char* kTrtOld = "TensorRT-LLM performance.md (v0.5/v0.6.1), H100 FP8";

constexpr const char* kTrtPerf11 = "TensorRT-LLM perf-overview (PyTorch backend, FP8, trtllm-bench throughput, "
                                   "total output tok/s), H200 column unless the id ends in H";
constexpr const char* kTrtPerf11H100 = "TensorRT-LLM perf-overview (PyTorch backend, FP8), H100 cells";
// The same page's other cells (NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md
// at 00f3768, the v1.0 tables): published, but outside the rows the model was built and
// checked against. Never used to choose anything: the held-out check of docs/simulator.md.
constexpr const char* kHeldOut = "TensorRT-LLM perf-overview v1.0 tables (NVIDIA/TensorRT-LLM@00f3768), cells "
                                 "outside the fit and check sets";

constexpr const char* kTrtQps = "TensorRT-LLM perf-overview online serving table (NVIDIA/TensorRT-LLM@258c7540c0, "
                                "v0.14.0 + Triton backend, Llama-3.1-70B BF16 TP4, ISL 467 / OSL 256, 500 requests)";
constexpr const char* kTrtTp = "TensorRT-LLM perf-overview max throughput by TP (NVIDIA/TensorRT-LLM@258c7540c0, "
                               "v0.17 engine flow, trtllm-bench, FP8 weights and KV, KV fraction 0.95)";
constexpr const char* kTrtR1 = "TensorRT-LLM blog Best_perf_practice_on_DeepSeek-R1 (NVIDIA/TensorRT-LLM@01c4ece911eb, "
                               "PyTorch flow, FP8 weights, 8x H200)";

CalibrationCase tpRow(const std::string& id, const char* model, const char* gpu, int tp, int isl, int osl,
                      double published, const char* set)
{
    CalibrationCase c{id, model, "TensorRT-LLM 0.17", true, tp, 1, isl, osl, 0, CalibrationMetric::OutputTokensPerS,
                      published, kTrtTp};
    c.gpu = gpu;
    c.set = set;
    return c;
}

// The letter a load row's id ends in for its metric: "t" TTFT, "i" ITL/TPOT, "x" throughput.
const char* metricSuffix(CalibrationMetric m)
{
    return m == CalibrationMetric::TtftMs ? "t" : m == CalibrationMetric::TpotMs ? "i" : "x";
}

// DeepSeek-R1 (DeepSeek-V3's architecture) on 8 H200: the blog's max-throughput and
// minimum-latency rows.
std::vector<CalibrationCase> deepSeekR1Cases()
{
    using M = CalibrationMetric;
    std::vector<CalibrationCase> v;
    CalibrationCase r1{"R1", "deepseek-v3", "TensorRT-LLM (PyTorch flow)", true, 8, 8, 1024, 2048, 1024,
                       M::OutputTokensPerS, 11489.3, kTrtR1, 0, "h200", true, "check"};
    r1.maxNumTokens = 8 * 1151; // max_num_tokens 1151 on each of the 8 attention-DP ranks
    r1.load.protocol = LoadProtocol::Concurrency;
    r1.load.concurrency = 1024;
    r1.load.requests = 5120;
    r1.load.warmupRequests = 0;
    v.push_back(r1);
    CalibrationCase r2{"R2", "deepseek-v3", "TensorRT-LLM (PyTorch flow)", true, 8, 4, 1024, 2048, 1,
                       M::TpotMs, 1000.0 / 158.1, kTrtR1, 0, "h200", false, "check"};
    // MTP with 3 draft tokens; the blog gives no acceptance rate: the family's published
    // default by draft depth (model/speculative.cpp), never fitted to this row.
    r2.speculative.method = SpeculativeMethod::Mtp;
    r2.speculative.draftTokens = 3;
    // Held against, not fitted: 3 MTP drafts at batch 1 measured 2.16x the speed without
    // them on 8 B200 (FP4 weights, MLA TP 8, MoE EP 2), ISL/OSL 1K/2K.
    r2.publishedSpeculativeSpeedup = 2.16;
    r2.speculativeSpeedupSource = "TensorRT-LLM blog DeepSeek_R1_MTP_Implementation_and_Optimization "
                                  "(NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog2_*), Evaluation: 8 B200, FP4";
    v.push_back(r2);
    return v;
}

// measurements: "Serving at load, MoE by TP, and speculative decoding". The split into sets
// was fixed before the request-level model was written: the H100 request-rate sweep is
// what the load model may be fitted on; the H200 sweep and the H200 columns of the TP
// tables are held out; the rest checks.
std::vector<CalibrationCase> servingAtLoadCases()
{
    using M = CalibrationMetric;
    std::vector<CalibrationCase> v;
    const double inf = std::numeric_limits<double>::infinity();
    const double rates[] = {2, 4, 8, 16, 32, inf};
    const char* rateNames[] = {"2", "4", "8", "16", "32", "inf"};
    struct Sweep {
        const char* gpu;
        const char* set;
        double ttft[6], itl[6], tput[6]; // 0: not published
    };
    const Sweep sweeps[] = {
        {"h100", "fit", {62, 68, 92, 175, 1229, 9123}, {21, 24, 32, 66, 86, 85}, {498, 973, 1860, 3164, 4083, 4103}},
        {"h200", "held_out", {58, 63, 84, 165, 1279, 9222}, {18, 20, 27, 60, 83, 83}, {499, 0, 0, 0, 0, 4185}},
    };
    for (const Sweep& s : sweeps)
        for (int i = 0; i < 6; ++i) {
            const std::string tag = std::string(s.gpu[1] == '1' ? "Q1" : "Q2") + "-" + rateNames[i];
            const std::pair<M, double> metrics[] = {{M::TtftMs, s.ttft[i]}, {M::TpotMs, s.itl[i]},
                                                    {M::OutputTokensPerS, s.tput[i]}};
            for (const auto& [metric, value] : metrics) {
                if (value <= 0)
                    continue;
                CalibrationCase c{tag + metricSuffix(metric), "llama3-70b", "TensorRT-LLM 0.14 + Triton", false, 4, 1, 467, 256, 0,
                                  metric, value, kTrtQps};
                c.gpu = s.gpu;
                c.set = s.set;
                c.load.protocol = LoadProtocol::RequestRate;
                c.load.requestRate = rates[i];
                c.load.requests = 500;
                // Past the knee: at 32 requests/s and all at once the sweep serves the same
                // output (H100 4,083 and 4,103 tok/s) at the same ITL (86 and 85 ms; H200 83
                // and 83), half of the 8,192 tok/s that 32 requests/s of 256 tokens offer.
                c.publishedSaturated = rates[i] >= 32;
                v.push_back(c);
            }
        }
    // Max throughput by TP, ISL/OSL 1000/1000 (A9 and A17 are this table's TP4 and 8x22B
    // H100 cells, already in the fit set).
    const struct {
        const char* model;
        const char* gpu;
        const char* set;
        double tp[4]; // TP1, TP2, TP4, TP8; 0: in another row or not published
    } tables[] = {
        {"llama3-70b", "h100", "check", {840.0, 4390.5, 0, 11451.2}},
        {"llama3-70b", "h200", "held_out", {2823.5, 5164.8, 8911.3, 13181.2}},
        {"mixtral-8x7b", "h100", "check", {6868.5, 15770.9, 27784.7, 40631.7}},
        {"mixtral-8x7b", "h200", "held_out", {10371.4, 19151.2, 33580.9, 44705.5}},
        {"mixtral-8x22b", "h200", "held_out", {0, 0, 0, 19712.4}},
    };
    int n = 0;
    for (const auto& t : tables)
        for (int k = 0; k < 4; ++k)
            if (t.tp[k] > 0)
                v.push_back(tpRow("T" + std::to_string(++n), t.model, t.gpu, 1 << k, 1000, 1000, t.tp[k], t.set));
    const double at2048[] = {343, 773, 1303, 1923}, at20000[] = {0, 443, 920, 1513};
    for (int k = 0; k < 4; ++k)
        v.push_back(tpRow("T" + std::to_string(++n), "llama3-70b", "h100", 1 << k, 2048, 128, at2048[k], "check"));
    for (int k = 1; k < 4; ++k)
        v.push_back(tpRow("T" + std::to_string(++n), "llama3-70b", "h100", 1 << k, 20000, 2000, at20000[k], "held_out"));
    for (CalibrationCase& c : deepSeekR1Cases())
        v.push_back(c);
    return v;
}

// One published figure of a serving run, as its engine was started: TP only, its collectives
// and token budget, and the KV cache in 16 bits beside FP8 weights (vLLM's and SGLang's
// kv-cache-dtype "auto"). The caller sets how the benchmark drove it.
CalibrationCase servingRunRow(std::string id, CalibrationMetric metric, double value, const char* model,
                              const char* engine, CollectiveEngine collectives, const char* gpu, bool fp8, int tp, int isl,
                              int osl, int maxNumTokens, const char* source, const char* set)
{
    CalibrationCase c{std::move(id), model, engine, fp8, tp, 1, isl, osl, 0, metric, value, source};
    c.gpu = gpu;
    c.set = set;
    c.collectives = collectives;
    c.kvCache16 = fp8;
    c.maxNumTokens = maxNumTokens;
    return c;
}

constexpr const char* kGpuStackR1 = "GPUStack performance lab, DeepSeek-R1-0528 on 8x H200 (gpustack/gpustack@a5c9faf "
                                    "docs/performance-lab/deepseek-r1/h200.md), vLLM 0.11.0 `vllm serve -tp 8`, "
                                    "`vllm bench serve`";
constexpr const char* kGpuStackQwen = "GPUStack performance lab, Qwen3-235B-A22B-Instruct-2507 on H100 "
                                      "(gpustack/gpustack@10e9444 docs/performance-lab/qwen3-235b-a22b/h100.md), "
                                      "vLLM 0.11.0, `vllm bench serve`";
constexpr const char* kGpuStackGptOss = "GPUStack performance lab, gpt-oss-120b on H100 (gpustack/gpustack@72aee9d "
                                        "docs/performance-lab/gpt-oss-120b/h100.md), vLLM 0.10.2, `vllm bench serve`";

// Runs of another engine, vLLM, by another benchmark tool, `vllm bench serve`, looked at only
// after the model was done and never used to choose anything: the set "held_out_vllm". A
// burst sends every request at t = 0 (--request-rate inf, the tool's default): TTFT there is
// the queue's length, judged by whether saturation is reported. The random dataset's lengths
// are fixed (--random-range-ratio 0); no run passed --ignore-eos and some Qwen3 and gpt-oss
// answers ended early, so their output length is the run's mean (total generated tokens /
// requests). The concurrency-4 runs drew ShareGPT conversations: their lengths are the
// run's means. Each runs under vLLM's own limits (applyEngineLimits).
std::vector<CalibrationCase> vllmServingCases()
{
    using M = CalibrationMetric;
    struct Run {
        const char* id;
        const char* model;
        const char* source;
        const char* engine;
        const char* gpu;
        bool fp8;
        int tp, isl, osl, requests, concurrency; // concurrency 0: a burst
        int maxNumTokens;
        double tput, ttft, tpot;
    };
    const Run runs[] = {
        {"V1", "deepseek-v3", kGpuStackR1, "vLLM 0.11.0", "h200", true, 8, 4000, 200, 500, 0, 0, 753.67, 63058.71, 164.23},
        {"V2", "deepseek-v3", kGpuStackR1, "vLLM 0.11.0", "h200", true, 8, 2000, 100, 500, 0, 0, 843.71, 28911.90, 237.02},
        {"V3", "deepseek-v3", kGpuStackR1, "vLLM 0.11.0", "h200", true, 8, 32000, 100, 100, 0, 0, 48.33, 101351.99, 365.79},
        {"V4", "deepseek-v3", kGpuStackR1, "vLLM 0.11.0", "h200", true, 8, 228, 213, 100, 4, 0, 196.81, 123.30, 19.36},
        {"V5", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", false, 8, 4000, 184, 500, 0, 0, 931.21, 47811.58, 68.94},
        {"V6", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", false, 8, 2000, 99, 500, 0, 0, 1127.26, 21313.79, 101.08},
        {"V7", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", false, 8, 32000, 82, 100, 0, 0, 57.85, 70409.55, 132.10},
        {"V8", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", true, 4, 4000, 182, 500, 0, 16384, 717.60, 60513.14, 89.52},
        {"V9", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", true, 4, 2000, 99, 500, 0, 16384, 894.84, 26860.95, 125.93},
        {"V10", "qwen3-235b-a22b", kGpuStackQwen, "vLLM 0.11.0", "h100", true, 4, 32000, 83, 100, 0, 16384, 39.66, 103754.50, 194.60},
        // gpt-oss-120b as shipped (MXFP4 experts, BF16 attention): one H100, then TP2.
        {"V11", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 1, 4000, 134, 500, 0, 0, 463.35, 72954.68, 31.70},
        {"V12", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 1, 2000, 98, 500, 0, 0, 675.11, 36234.76, 41.35},
        {"V13", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 1, 32000, 99, 100, 0, 0, 49.65, 99444.04, 23.99},
        {"V14", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 1, 229, 217, 100, 4, 0, 453.04, 49.00, 8.31},
        {"V15", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 2, 4000, 136, 500, 0, 0, 1135.29, 29487.34, 164.73},
        {"V16", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 2, 2000, 98, 500, 0, 0, 1595.22, 15291.77, 139.32},
        {"V17", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 2, 32000, 100, 100, 0, 0, 100.70, 48826.05, 220.32},
        {"V18", "gpt-oss-120b", kGpuStackGptOss, "vLLM 0.10.2", "h100", false, 2, 229, 217, 100, 4, 0, 645.55, 37.51, 5.75},
    };
    std::vector<CalibrationCase> v;
    for (const Run& r : runs) {
        const std::pair<M, double> metrics[] = {{M::OutputTokensPerS, r.tput}, {M::TtftMs, r.ttft}, {M::TpotMs, r.tpot}};
        for (const auto& [metric, value] : metrics) {
            CalibrationCase c = servingRunRow(std::string(r.id) + metricSuffix(metric), metric, value, r.model, r.engine,
                                              CollectiveEngine::Vllm, r.gpu, r.fp8, r.tp, r.isl, r.osl, r.maxNumTokens,
                                              r.source, "held_out_vllm");
            c.load.requests = r.requests;
            c.load.warmupRequests = 0;
            if (r.concurrency > 0) {
                c.load.protocol = LoadProtocol::Concurrency;
                c.load.concurrency = r.concurrency;
            } else {
                c.load.protocol = LoadProtocol::RequestRate;
                c.load.requestRate = std::numeric_limits<double>::infinity();
                c.publishedSaturated = true;
            }
            v.push_back(c);
        }
    }
    return v;
}

// InferenceX's published runs (docs/simulator.md §8, "InferenceX's concurrency sweeps"); each
// names the engine flags its launch script ran (SemiAnalysisAI/InferenceX benchmarks/single_node).
constexpr const char* kIxDsr1Sglang057 =
    "InferenceX issue #870 (2026-03-05): DeepSeek-R1-0528 FP8 on 8x H200, SGLang v0.5.7 `--tensor-parallel-size 8` "
    "(MoE TP 8, no attention DP, --chunked-prefill-size 32768, --attention-backend flashinfer, --stream-interval 10)";
constexpr const char* kIxDsr1Sglang0512 =
    "InferenceX dsr1-fp8-h200-sglang baseline of 2026-05-17 (lmsysorg/sglang:v0.5.12-cu130; the table in "
    "SemiAnalysisAI/InferenceX PRs #3173 and #3288): DeepSeek-R1-0528 FP8 on 8x H200, the same flags as v0.5.7";
constexpr const char* kIxGptOssVllm =
    "InferenceX issue #828 (2026-03-01): gpt-oss-120b MXFP4 on H100, vllm/vllm-openai:v0.15.1 (VLLM_MXFP4_USE_MARLIN=1, "
    "--max-num-batched-tokens 8192, --max-num-seqs C, no EP)";

// InferenceX's closed-loop sweeps: C requests in flight, each replaced as it ends, 10 C
// measured after 2 C warm-ups, input and output lengths uniform in [0.8 L, L]
// (--random-range-ratio 0.8), --ignore-eos; throughput is the run's output tokens per
// second of all its GPUs (published per GPU). SGLang and vLLM store the KV cache in the
// model's 16-bit dtype beside FP8 weights (kv-cache-dtype "auto"). A metric the thread did
// not print is 0 and has no row. The split, fixed before the model was changed for them:
// gpt-oss-120b's vLLM sweep is "fit" (the engines' per-kernel floor under CUDA graphs is
// chosen on its TPOT rows); DeepSeek-R1's SGLang sweeps, another engine, model and GPU, are
// "held_out_inferencex", never used to choose anything, as are three vLLM runs entered late.
struct InferenceXRun {
    const char* id;
    const char* model;
    const char* source;
    const char* engine;
    CollectiveEngine collectives;
    const char* gpu;
    bool fp8;
    int tp, isl, osl, concurrency, maxNumTokens;
    double outputPerGpu, ttft, tpot; // 0: not published
    const char* set;
};

// The runs as published, one per engine launch and load.
const std::vector<InferenceXRun>& inferencexRuns()
{
    constexpr auto kSgl = CollectiveEngine::Sglang;
    constexpr auto kVllm = CollectiveEngine::Vllm;
    static const std::vector<InferenceXRun> runs = {
        // DeepSeek-R1 on SGLang 0.5.7 (the c4 runs on three other runners, one per length).
        {"X1", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 1024, 4, 32768, 21.2, 267.3, 22.73, "held_out_inferencex"},
        {"X2", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 8192, 4, 32768, 45.0, 204.1, 10.93, "held_out_inferencex"},
        {"X3", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 8192, 1024, 4, 32768, 38.9, 474.3, 12.05, "held_out_inferencex"},
        {"X4", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 1024, 8, 32768, 74.6, 330.6, 12.8, "held_out_inferencex"},
        {"X5", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 1024, 16, 32768, 111.9, 356.0, 17.2, "held_out_inferencex"},
        {"X6", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 1024, 32, 32768, 151.1, 426.5, 25.6, "held_out_inferencex"},
        {"X7", "deepseek-v3", kIxDsr1Sglang057, "SGLang 0.5.7", kSgl, "h200", true, 8, 1024, 1024, 64, 32768, 223.6, 423.1, 34.6, "held_out_inferencex"},
        // DeepSeek-R1 on SGLang 0.5.12.
        {"X8", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 1024, 1024, 4, 32768, 49.17, 157.77, 9.7, "held_out_inferencex"},
        {"X9", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 1024, 1024, 8, 32768, 82.37, 165.36, 11.73, "held_out_inferencex"},
        {"X10", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 1024, 1024, 16, 32768, 126.62, 197.84, 15.28, "held_out_inferencex"},
        {"X11", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 1024, 1024, 32, 32768, 177.14, 307.02, 21.8, "held_out_inferencex"},
        {"X12", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 1024, 1024, 64, 32768, 259.8, 359.75, 29.77, "held_out_inferencex"},
        {"X13", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 8192, 1024, 4, 32768, 43.12, 373.26, 10.94, "held_out_inferencex"},
        {"X14", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 8192, 1024, 8, 32768, 68.33, 490.53, 13.88, "held_out_inferencex"},
        {"X15", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 8192, 1024, 16, 32768, 93.89, 688.2, 20.02, "held_out_inferencex"},
        {"X16", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 8192, 1024, 32, 32768, 121.01, 979.34, 31.37, "held_out_inferencex"},
        {"X17", "deepseek-v3", kIxDsr1Sglang0512, "SGLang 0.5.12", kSgl, "h200", true, 8, 8192, 1024, 64, 32768, 150.98, 2245.58, 49.33, "held_out_inferencex"},
        // gpt-oss-120b on vLLM 0.15.1 (no TTFT published; TPOT of the 1k/8k runs past c8
        // and of 8k/1k printed to 0.1 ms).
        {"X18", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 1024, 4, 8192, 129.6, 0, 3.72, "fit"},
        {"X19", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 1024, 8, 8192, 238.4, 0, 4.05, "fit"},
        {"X20", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 1024, 16, 8192, 405.2, 0, 4.83, "fit"},
        {"X21", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 1024, 32, 8192, 664.2, 0, 5.82, "fit"},
        {"X22", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 1024, 64, 8192, 1053.2, 0, 7.36, "fit"},
        {"X23", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 1024, 1024, 64, 8192, 1571.8, 0, 9.89, "fit"},
        {"X24", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 2, 1024, 1024, 64, 8192, 2061.5, 0, 15.21, "fit"},
        {"X25", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 8192, 4, 8192, 133.6, 0, 3.68, "fit"},
        {"X26", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 8192, 8, 8192, 242.9, 0, 4.00, "fit"},
        {"X27", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 8192, 16, 8192, 0, 0, 4.53, "fit"},
        {"X28", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 8192, 32, 8192, 0, 0, 5.65, "fit"},
        // Entered after the floor's scale was chosen (missed when the rows were first
        // entered): held out. 1k/8k at 64 in flight; TP 8's run slowed from 32 in flight
        // (781 -> 553 tok/s per GPU, TPOT 5.65 -> 16.0), which the thread puts down to the KV
        // cache and the model finds no limit for.
        {"X36", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 1024, 8192, 64, 8192, 0, 0, 16.0, "held_out_inferencex"},
        {"X37", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 1024, 8192, 64, 8192, 0, 0, 9.6, "held_out_inferencex"},
        {"X38", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 2, 1024, 8192, 64, 8192, 0, 0, 14.6, "held_out_inferencex"},
        {"X29", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 8192, 1024, 4, 8192, 0, 0, 3.95, "fit"},
        {"X30", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 8, 8192, 1024, 8, 8192, 0, 0, 4.59, "fit"},
        {"X31", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 8192, 1024, 4, 8192, 0, 0, 4.5, "fit"},
        {"X32", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 8192, 1024, 8, 8192, 0, 0, 5.6, "fit"},
        {"X33", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 8192, 1024, 16, 8192, 0, 0, 7.5, "fit"},
        {"X34", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 4, 8192, 1024, 64, 8192, 0, 0, 17.2, "fit"},
        {"X35", "gpt-oss-120b", kIxGptOssVllm, "vLLM 0.15.1", kVllm, "h100", false, 2, 8192, 1024, 64, 8192, 0, 0, 27.2, "fit"},
    };
    return runs;
}

std::vector<CalibrationCase> inferencexCases()
{
    using M = CalibrationMetric;
    std::vector<CalibrationCase> v;
    for (const InferenceXRun& r : inferencexRuns()) {
        const std::pair<M, double> metrics[] = {
            {M::OutputTokensPerS, r.outputPerGpu * r.tp}, {M::TtftMs, r.ttft}, {M::TpotMs, r.tpot}};
        for (const auto& [metric, value] : metrics) {
            if (value <= 0)
                continue;
            CalibrationCase c = servingRunRow(std::string(r.id) + metricSuffix(metric), metric, value, r.model, r.engine,
                                              r.collectives, r.gpu, r.fp8, r.tp, r.isl, r.osl, r.maxNumTokens, r.source,
                                              r.set);
            c.load.protocol = LoadProtocol::Concurrency;
            c.load.concurrency = r.concurrency;
            c.load.uniformLengths = true;
            v.push_back(c);
        }
    }
    return v;
}

// Every row: `cases` and the serving-at-load ones. The v0.17 max-throughput tables (A and
// T rows) were run with --kv_cache_free_gpu_mem_fraction 0.95, the others at the engine's
// default.
std::vector<CalibrationCase> allCases(std::vector<CalibrationCase> v)
{
    for (const CalibrationCase& c : servingAtLoadCases())
        v.push_back(c);
    for (const CalibrationCase& c : vllmServingCases())
        v.push_back(c);
    for (const CalibrationCase& c : inferencexCases())
        v.push_back(c);
    for (CalibrationCase& c : v)
        if (c.engine == "TensorRT-LLM 0.17")
            c.kvCacheFraction = 0.95;
    return v;
}
} // namespace

const std::vector<CalibrationCase>& calibrationCases()
{
    using M = CalibrationMetric;
    static const std::vector<CalibrationCase> cases = {
        {"A2", "llama3-8b", "TensorRT-LLM 0.17", true, 1, 1, 1000, 1000, 0, M::OutputTokensPerS, 15244.78, kTrtPerf},
        {"A9", "llama3-70b", "TensorRT-LLM 0.17", true, 4, 1, 1000, 1000, 0, M::OutputTokensPerS, 7430.99, kTrtPerf},
        {"A10", "llama3-70b", "TensorRT-LLM 0.17", true, 8, 1, 128, 2048, 0, M::OutputTokensPerS, 17061.82, kTrtPerf},
        {"A16", "mixtral-8x7b", "TensorRT-LLM 0.17", true, 8, 1, 128, 2048, 0, M::OutputTokensPerS, 61607.7, kTrtPerf},
        {"A17", "mixtral-8x22b", "TensorRT-LLM 0.17", true, 8, 1, 1000, 1000, 0, M::OutputTokensPerS, 16573.24,
         kTrtPerf},
        {"B7", "llama3-405b", "TensorRT-LLM ~1.0", true, 8, 1, 1000, 1000, 0, M::OutputTokensPerS, 2919, kTrtPerf10},
        {"B9", "qwen3-235b-a22b", "TensorRT-LLM ~1.0", true, 8, 8, 1000, 1000, 0, M::OutputTokensPerS, 14898,
         kTrtPerf10},
        {"D1", "llama3-70b", "NIM 1.8.0 (TensorRT-LLM)", true, 2, 1, 5000, 500, 1, M::TpotMs, 18.58, kNim},
        {"D2", "llama3-70b", "NIM 1.8.0 (TensorRT-LLM)", true, 2, 1, 500, 2000, 1, M::TpotMs, 18.91, kNim},
        {"C1", "llama3-70b", "TensorRT-LLM 0.14 + Triton", false, 4, 1, 467, 256, 11, M::TpotMs, 21, kTrtServe},
        {"E6", "llama3-70b", "TensorRT-LLM 0.5", true, 4, 1, 2048, 1, 1, M::TtftMs, 109, kTrtOld, 32000},
        // measurements.md §4: end-to-end max-throughput rows; never used to choose an efficiency.
        {"F1", "llama3-70b", "TensorRT-LLM 1.x", true, 1, 1, 1000, 1000, 0, M::OutputTokensPerS, 2909, kTrtPerf11, 0,
         "h200", false, "check"},
        {"F2", "llama3-70b", "TensorRT-LLM 1.x", true, 1, 1, 5000, 500, 0, M::OutputTokensPerS, 566, kTrtPerf11, 0,
         "h200", false, "check"},
        {"F3", "llama3-70b", "TensorRT-LLM 1.x", true, 1, 1, 20000, 2000, 0, M::OutputTokensPerS, 283, kTrtPerf11, 0,
         "h200", false, "check"},
        {"F4", "llama3-405b", "TensorRT-LLM 1.x", true, 8, 1, 1000, 1000, 0, M::OutputTokensPerS, 3330, kTrtPerf11, 0,
         "h200", false, "check"},
        {"F5", "llama3-405b", "TensorRT-LLM 1.x", true, 8, 1, 20000, 2000, 0, M::OutputTokensPerS, 505, kTrtPerf11, 0,
         "h200", false, "check"},
        {"F5H", "llama3-405b", "TensorRT-LLM 1.x", true, 8, 1, 20000, 2000, 0, M::OutputTokensPerS, 345, kTrtPerf11H100,
         0, "h100", false, "check"},
        {"F6", "qwen3-235b-a22b", "TensorRT-LLM 1.x", true, 8, 8, 1000, 1000, 0, M::OutputTokensPerS, 23789, kTrtPerf11,
         0, "h200", true, "check"},
        {"F7", "qwen3-235b-a22b", "TensorRT-LLM 1.x", true, 8, 8, 5000, 500, 0, M::OutputTokensPerS, 3623, kTrtPerf11,
         0, "h200", true, "check"},
        {"F8H", "llama3-8b", "TensorRT-LLM 1.x", true, 1, 1, 1000, 1000, 0, M::OutputTokensPerS, 15220, kTrtPerf11H100,
         0, "h100", false, "check"},
        {"F9H", "llama3-8b", "TensorRT-LLM 1.x", true, 1, 1, 128, 2048, 0, M::OutputTokensPerS, 22714, kTrtPerf11H100,
         0, "h100", false, "check"},
        {"F10H", "llama3-70b", "TensorRT-LLM 1.x", true, 2, 1, 128, 2048, 0, M::OutputTokensPerS, 6651, kTrtPerf11H100,
         0, "h100", false, "check"},
        {"F11H", "llama3-70b", "TensorRT-LLM 1.x", true, 2, 1, 2048, 128, 0, M::OutputTokensPerS, 762, kTrtPerf11H100,
         0, "h100", false, "check"},
        // Held out: published cells not among the rows above (kHeldOut).
        {"H1", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 128, 128, 0, M::OutputTokensPerS, 6378, kHeldOut, 0, "h100", false, "held_out"},
        {"H2", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 128, 4096, 0, M::OutputTokensPerS, 4199, kHeldOut, 0, "h100", false, "held_out"},
        {"H3", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 500, 2000, 0, M::OutputTokensPerS, 5222, kHeldOut, 0, "h100", false, "held_out"},
        {"H4", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 1000, 1000, 0, M::OutputTokensPerS, 4205, kHeldOut, 0, "h100", false, "held_out"},
        {"H5", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 1000, 2000, 0, M::OutputTokensPerS, 4146, kHeldOut, 0, "h100", false, "held_out"},
        {"H6", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 2048, 2048, 0, M::OutputTokensPerS, 3082, kHeldOut, 0, "h100", false, "held_out"},
        {"H7", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 5000, 500, 0, M::OutputTokensPerS, 898, kHeldOut, 0, "h100", false, "held_out"},
        {"H8", "llama3-70b", "TensorRT-LLM 1.0", true, 2, 1, 20000, 2000, 0, M::OutputTokensPerS, 437, kHeldOut, 0, "h100", false, "held_out"},
        {"H9", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 128, 128, 0, M::OutputTokensPerS, 28312, kHeldOut, 0, "h100", false, "held_out"},
        {"H10", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 128, 4096, 0, M::OutputTokensPerS, 14325, kHeldOut, 0, "h100", false, "held_out"},
        {"H11", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 500, 2000, 0, M::OutputTokensPerS, 17660, kHeldOut, 0, "h100", false, "held_out"},
        {"H12", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 1000, 2000, 0, M::OutputTokensPerS, 13899, kHeldOut, 0, "h100", false, "held_out"},
        {"H13", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 2048, 128, 0, M::OutputTokensPerS, 3450, kHeldOut, 0, "h100", false, "held_out"},
        {"H14", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 2048, 2048, 0, M::OutputTokensPerS, 9305, kHeldOut, 0, "h100", false, "held_out"},
        {"H15", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 5000, 500, 0, M::OutputTokensPerS, 3459, kHeldOut, 0, "h100", false, "held_out"},
        {"H16", "llama3-8b", "TensorRT-LLM 1.0", true, 1, 1, 20000, 2000, 0, M::OutputTokensPerS, 1351, kHeldOut, 0, "h100", false, "held_out"},
        {"H17", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 128, 128, 0, M::OutputTokensPerS, 3627, kHeldOut, 0, "h100", false, "held_out"},
        {"H18", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 128, 2048, 0, M::OutputTokensPerS, 4340, kHeldOut, 0, "h100", false, "held_out"},
        {"H19", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 500, 2000, 0, M::OutputTokensPerS, 3994, kHeldOut, 0, "h100", false, "held_out"},
        {"H20", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 2048, 128, 0, M::OutputTokensPerS, 453, kHeldOut, 0, "h100", false, "held_out"},
        {"H21", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 2048, 2048, 0, M::OutputTokensPerS, 2296, kHeldOut, 0, "h100", false, "held_out"},
        {"H22", "llama3-405b", "TensorRT-LLM 1.0", true, 8, 1, 5000, 500, 0, M::OutputTokensPerS, 610, kHeldOut, 0, "h100", false, "held_out"},
        {"H23", "qwen3-235b-a22b", "TensorRT-LLM 1.0", true, 8, 8, 128, 2048, 0, M::OutputTokensPerS, 19658, kHeldOut, 0, "h100", true, "held_out"},
        {"H24", "qwen3-235b-a22b", "TensorRT-LLM 1.0", true, 8, 8, 500, 2000, 0, M::OutputTokensPerS, 18351, kHeldOut, 0, "h100", true, "held_out"},
        {"H25", "qwen3-235b-a22b", "TensorRT-LLM 1.0", true, 8, 8, 2048, 2048, 0, M::OutputTokensPerS, 9924, kHeldOut, 0, "h100", true, "held_out"},
        {"H26", "qwen3-235b-a22b", "TensorRT-LLM 1.0", true, 8, 8, 5000, 500, 0, M::OutputTokensPerS, 3225, kHeldOut, 0, "h100", true, "held_out"},
        {"H27", "llama3-70b", "TensorRT-LLM 1.0", true, 1, 1, 128, 2048, 0, M::OutputTokensPerS, 4336, kHeldOut, 0, "h200", false, "held_out"},
        {"H28", "llama3-70b", "TensorRT-LLM 1.0", true, 1, 1, 2048, 128, 0, M::OutputTokensPerS, 442, kHeldOut, 0, "h200", false, "held_out"},
        {"H29", "llama3-70b", "TensorRT-LLM 1.0", true, 1, 1, 2048, 2048, 0, M::OutputTokensPerS, 2003, kHeldOut, 0, "h200", false, "held_out"},
    };
    static const std::vector<CalibrationCase> all = allCases(cases);
    return all;
}

} // namespace shardlab
