#include "sim/calibration.h"

#include <algorithm>
#include <cmath>

#include "io/presets.h"
#include "sim/simulator.h"

namespace shardlab {

namespace {
constexpr const char* kTrtPerf = "TensorRT-LLM perf-overview (docs/source/performance/perf-overview.md), v0.17 "
                                 "data, H100 80GB HBM3 column";
constexpr const char* kTrtPerf10 = "TensorRT-LLM perf-overview, v1.0-era table, H100 SXM 80GB";
constexpr const char* kNim = "NVIDIA NIM LLM benchmarking page, NIM 1.8.0";
constexpr const char* kTrtServe = "TensorRT-LLM online serving table (v0.14.0, BF16)";
constexpr const char* kTrtOld = "TensorRT-LLM performance.md (v0.5/v0.6.1), H100 FP8";

// Engines batch requests up to a maximum and prefill in chunks of this many tokens.
constexpr int kMaxEngineBatch = 2048;
constexpr int kPrefillChunkTokens = 8192;
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
    };
    return cases;
}

std::vector<CalibrationRow> runCalibration(const ClusterSpec& baseCluster)
{
    std::vector<CalibrationRow> rows;
    for (const CalibrationCase& c : calibrationCases()) {
        CalibrationRow row;
        row.c = c;
        auto model = modelPreset(c.modelPreset);
        if (!model.ok()) {
            row.error = model.firstError();
            rows.push_back(row);
            continue;
        }
        Scenario s;
        s.name = "calibration " + c.id;
        s.model = model.value;
        if (c.fp8) {
            s.model.weightPrecision = Precision::FP8;
            s.model.kvPrecision = Precision::FP8;
        }
        if (c.vocabOverride > 0)
            s.model.vocabSize = c.vocabOverride;
        s.cluster = baseCluster;
        s.cluster.nodes = 1;
        s.cluster.gpusPerNode = c.tensorParallel;
        s.workload = {c.promptTokens, c.outputTokens, 1e9, 1e9};

        Plan p;
        applyMegatronSharding(p);
        p.tensorParallel = c.tensorParallel;
        p.expertParallel = c.expertParallel;

        // Prefill in engine-sized chunks of whole prompts.
        SimConstants k;
        k.prefillPrompts = std::max(1, kPrefillChunkTokens / std::max(1, c.promptTokens));
        const Simulator chunkSim(s, k);
        const Simulator oneSim(s);

        int batch = c.batch;
        if (batch == 0) { // largest batch that fits memory, as an engine's max-throughput run
            int lo = 0, hi = kMaxEngineBatch;
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                p.batch = mid;
                if (!chunkSim.evaluate(p).violates(Violation::Memory))
                    lo = mid;
                else
                    hi = mid - 1;
            }
            batch = std::max(1, lo);
        }
        p.batch = batch;
        row.batchUsed = batch;
        const SimResult r = (c.metric == CalibrationMetric::TtftMs ? oneSim : chunkSim).evaluate(p);
        switch (c.metric) {
        case CalibrationMetric::TpotMs:
            row.predicted = r.tpotMs;
            break;
        case CalibrationMetric::TtftMs:
            row.predicted = r.ttftMs;
            break;
        case CalibrationMetric::OutputTokensPerS: {
            // One batch's life: its prompts prefilled in chunks, then `output` decode steps
            // (TPOT at the mean context). Engines overlap these; this is the serial sum.
            const double chunks = std::ceil(double(batch) / k.prefillPrompts);
            const double seconds = c.outputTokens * r.tpotMs * 1e-3 + chunks * r.ttftMs * 1e-3;
            row.predicted = double(batch) * c.outputTokens / seconds;
            // Physical bound: each decode step reads every weight shard at full HBM speed.
            const double weightBytes = r.memory.weightsGb * 1e9;
            row.boundTokensPerS = batch / (weightBytes / (s.cluster.gpu.hbmTbps * 1e12));
            break;
        }
        }
        row.ratio = c.published > 0 ? row.predicted / c.published : 0;
        rows.push_back(row);
    }
    return rows;
}

} // namespace shardlab
