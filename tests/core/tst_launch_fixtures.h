// Scenarios, plans and command readers shared by the launch-configuration tests
// (tst_launch_config, tst_launch_disaggregated, tst_launch_limits, tst_launch_memory) and
// the memory tests beside them.
#pragma once

#include <cstdlib>
#include <string>

#include <QString>

#include "io/presets.h"
#include "model/plan.h"
#include "report/launch_config.h"
#include "sim/simulator.h"

namespace shardlab::testing {

// A configuration's warnings, one per line, for QVERIFY(...contains(...)).
inline QString warnings(const LaunchConfig& c)
{
    QString s;
    for (const std::string& w : c.warnings)
        s += QString::fromStdString(w) + "\n";
    return s;
}

inline Scenario launchPreset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

// `plan` with the largest batch the memory model admits: one more sequence is over memory.
inline Plan atMemoryLimit(const Scenario& s, Plan p)
{
    const Simulator sim(s);
    const auto fits = [&](int batch) {
        p.batch = batch;
        return !sim.evaluate(p).violates(Violation::Memory);
    };
    int lo = 1, hi = 2;
    while (fits(hi))
        lo = hi, hi *= 2;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    p.batch = lo;
    return p;
}

inline Plan megatronLike(int tp, int pp, int dp, int ep, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.pipelineParallel = pp;
    p.dataParallel = dp;
    p.expertParallel = ep;
    p.batch = batch;
    p.microBatches = pp;
    return p;
}

// DeepSeek's wide-EP layout: attention data parallel over the TP group (token-split
// attention side), experts over all 256 ranks, all-to-all dispatch.
// `p` with attention data parallelism: every operator but the experts token-split, the
// norms sequence-split, the embedding whole on each rank. Operators `model` lacks keep
// their options.
inline Plan withAttentionDp(Plan p, const ModelSpec& model)
{
    for (OpId id : {OpId::QkvProj, OpId::Attention, OpId::OutProj, OpId::GateUp, OpId::Down, OpId::Router,
                    OpId::SharedExpert, OpId::LmHead})
        if (opPresent(model, id))
            p.setOption(id, optionFromName(id, "token"));
    p.setOption(OpId::AttnNorm, optionFromName(OpId::AttnNorm, "sequence"));
    p.setOption(OpId::FfnNorm, optionFromName(OpId::FfnNorm, "sequence"));
    p.setOption(OpId::Embedding, optionFromName(OpId::Embedding, "replicated"));
    return p;
}

inline Plan deepseekWideEp()
{
    return withAttentionDp(megatronLike(2, 1, 128, 256, 128), launchPreset("deepseek-v3-256gpu").model);
}

// The same stage as one vLLM or TensorRT-LLM deployment runs it: attention data parallel
// over all 256 ranks is TP 1 x DP 256 (each rank its own sequences, 64 of them); TensorRT-LLM
// exchanges tokens by all-gather and reduce-scatter (its all-to-all backend is not exported).
inline Plan deepseekWideEpTp1(bool allToAll)
{
    Plan p = megatronLike(1, 1, 256, 256, 64);
    if (!allToAll) {
        p.setOption(OpId::Dispatch, optionFromName(OpId::Dispatch, "all_gather"));
        p.setOption(OpId::Combine, optionFromName(OpId::Combine, "reduce_scatter"));
    }
    return p;
}

// The integer after "flag " in a command ("--tp-size 8"), or `fallback` when absent.
inline long long flagValue(const std::string& text, const std::string& flag, long long fallback)
{
    const auto at = text.find(flag + " ");
    if (at == std::string::npos)
        return fallback;
    return std::atoll(text.c_str() + at + flag.size() + 1);
}

// The number after "flag " in a command or file ("--gpu-memory-utilization 0.92",
// "free_gpu_memory_fraction: 0.90" with flag "free_gpu_memory_fraction:"), or -1.
inline double flagNumber(const std::string& text, const std::string& flag)
{
    const auto at = text.find(flag + " ");
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + flag.size() + 1);
}

} // namespace shardlab::testing
