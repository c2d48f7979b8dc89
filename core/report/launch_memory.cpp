// Memory fractions of launch configurations (core/report/launch_memory.h): the fraction the
// plan's batch needs, the one written, and the refusals, from each engine's KV room at a
// fraction (sim/engine_memory.h).
#include "report/launch_memory.h"

#include "model/printf_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace shardlab {

namespace {

constexpr double kRoomSlackGb = 1e-6;  // rounding of the GB figures themselves
constexpr double kTrtMargin = 0.02;    // above the need, when the default does not cover it
constexpr double kCeilingShare = 0.98; // vLLM's and SGLang's derived fraction never above it

double ceil2(double f) { return std::ceil(f * 100 - 1e-6) / 100; }
double floor2(double f) { return std::floor(f * 100 + 1e-6) / 100; }

std::string gb(double v) { return printfText("%.2f", v); }
// A needed fraction shown rounded up, so that "at least" it is true.
std::string atLeast(double f) { return printfText("%.4f", std::ceil(f * 1e4 - 1e-6) / 1e4); }

bool holds(Engine e, const MemoryBreakdown& m, double f) { return kvRoomGb(e, m, f) >= m.kvCacheGb - kRoomSlackGb; }

// The largest fraction written without a user's value: the engine's fraction may go this far
// for the plan's batch and no further.
double largestWritable(Engine e, const MemoryBreakdown& m)
{
    return e == Engine::TrtLlm ? 1.0 : std::min(1.0, ceil2(largestMemoryFraction(e, m)));
}

// The derived fraction (launchMemory's rules), before the check that it holds the batch.
double derivedFraction(Engine e, const MemoryBreakdown& m)
{
    const double need = neededMemoryFraction(e, m);
    if (e == Engine::TrtLlm)
        return holds(e, m, kTrtLlmDefaultKvFraction) ? kTrtLlmDefaultKvFraction
                                                     : std::min(1.0, ceil2(need) + kTrtMargin);
    const double budget = std::min(kCeilingShare, floor2(largestMemoryFraction(e, m)));
    return budget > 0 && holds(e, m, budget) ? budget : ceil2(need);
}

// What vLLM's start-up profile takes beside the weights, and of what.
std::string vllmPeakTerms(const MemoryBreakdown& m)
{
    return "profiled peak " + gb(vllmProfiledPeakGb(m)) + " GB (the larger of activations " + gb(m.activationGb)
        + " GB and the sampler's start-up run " + gb(m.samplerWarmupGb) + " GB)";
}

// The KV room at f with the plan's terms, as the engine computes it.
std::string roomTerms(Engine e, const MemoryBreakdown& m, double f)
{
    const std::string frac = memoryFractionText(f), cap = gb(m.capacityGb) + " GB";
    switch (e) {
    case Engine::Vllm:
        return frac + " x " + cap + " - weights " + gb(m.weightsGb) + " GB - " + vllmPeakTerms(m);
    case Engine::Sglang: return frac + " x " + cap + " - weights " + gb(m.weightsGb) + " GB";
    case Engine::TrtLlm:
        return frac + " x (" + cap + " - reserve " + gb(m.reserveGb) + " GB - weights " + gb(m.weightsGb)
            + " GB - activations " + gb(m.activationGb) + " GB)";
    }
    return {};
}

// What vLLM's and SGLang's largest fraction leaves outside the engine's share.
std::string outsideShare(Engine e, const MemoryBreakdown& m)
{
    const std::string reserve = "the memory model's " + gb(m.reserveGb) + " GB reserve";
    return e == Engine::Sglang ? "activations " + gb(m.activationGb) + " GB and " + reserve : reserve;
}

// Why the plan's batch needs the fraction it needs, and how far the fraction may go.
std::string needTerms(Engine e, const MemoryBreakdown& m)
{
    const std::string cap = gb(m.capacityGb) + " GB GPU";
    switch (e) {
    case Engine::Vllm:
        return "weights " + gb(m.weightsGb) + " + " + vllmPeakTerms(m) + " + KV cache "
            + gb(m.kvCacheGb) + " GB of the " + cap + "; the largest fraction leaves " + outsideShare(e, m)
            + " outside it";
    case Engine::Sglang:
        return "weights " + gb(m.weightsGb) + " + KV cache " + gb(m.kvCacheGb) + " GB of the " + cap
            + "; the largest fraction leaves " + outsideShare(e, m) + " outside it";
    case Engine::TrtLlm:
        return "KV cache " + gb(m.kvCacheGb) + " GB of the "
            + gb(freeAfterModelGb(m)) + " GB left after reserve "
            + gb(m.reserveGb) + ", weights " + gb(m.weightsGb) + " and activations " + gb(m.activationGb)
            + " GB of the " + cap + "; the engine takes at most 1 of it";
    }
    return {};
}

} // namespace

const char* memoryFractionFlag(Engine e)
{
    switch (e) {
    case Engine::Vllm: return "--gpu-memory-utilization";
    case Engine::Sglang: return "--mem-fraction-static";
    case Engine::TrtLlm: return "--kv_cache_free_gpu_memory_fraction";
    }
    return "";
}

std::string memoryFractionText(double f)
{
    if (std::abs(f * 100 - std::round(f * 100)) < 1e-6)
        return printfText("%.2f", f);
    std::string s = printfText("%.4f", f);
    while (s.size() > 4 && s.back() == '0')
        s.pop_back();
    return s;
}

double fractionAsWritten(double f) { return std::strtod(memoryFractionText(f).c_str(), nullptr); }

Result<LaunchMemory> launchMemory(Engine e, const MemoryBreakdown& m, double userFraction, const std::string& batch,
                                  std::vector<std::string>& warnings)
{
    LaunchMemory out;
    out.engine = e;
    out.terms = m;
    out.userGiven = userFraction > 0;
    out.neededFraction = neededMemoryFraction(e, m);
    out.largestFraction = largestMemoryFraction(e, m);
    out.kvNeededGb = m.kvCacheGb;
    const std::string label = engineInfo(e).label, flag = memoryFractionFlag(e);
    out.writtenFraction = fractionAsWritten(out.userGiven ? userFraction : derivedFraction(e, m));
    out.kvRoomGb = kvRoomGb(e, m, out.writtenFraction);
    if (out.userGiven) {
        if (!holds(e, m, out.writtenFraction))
            return FieldError{{}, "--memory-fraction",
                              memoryFractionText(out.writtenFraction) + " leaves " + label + "'s KV cache "
                                  + gb(out.kvRoomGb) + " GB per GPU (" + roomTerms(e, m, out.writtenFraction)
                                  + "), below the " + gb(m.kvCacheGb) + " GB the plan's batch needs (" + batch
                                  + "); " + flag + " needs at least " + atLeast(out.neededFraction) + " for it ("
                                  + needTerms(e, m) + ")"};
        if (out.writtenFraction > out.largestFraction + 1e-9)
            warnings.push_back("--memory-fraction " + memoryFractionText(out.writtenFraction) + ": " + flag
                               + " above " + atLeast(out.largestFraction) + " leaves less than " + outsideShare(e, m)
                               + " outside the engine's share; the engine may run out of memory");
        return out;
    }
    // A plan the simulator finds valid always fits: its weights, KV cache, activations and
    // reserve sum to at most the capacity, so its need is at most the largest fraction, and
    // the need rounded up is at most the largest rounded up. Only a plan over memory can be
    // refused here.
    if (!holds(e, m, out.writtenFraction) || ceil2(out.neededFraction) > largestWritable(e, m) + 1e-9) {
        std::string why = "the plan's batch (" + batch + ") needs a KV cache of " + gb(m.kvCacheGb) + " GB per GPU, which "
            + label + "'s " + flag + " holds only from " + atLeast(out.neededFraction) + " (" + needTerms(e, m)
            + "), above the largest " + memoryFractionText(largestWritable(e, m)) + " it may be written as";
        if (m.totalGb > m.capacityGb)
            why += "; the simulator finds the plan over memory (" + gb(m.totalGb) + " of " + gb(m.capacityGb)
                + " GB per GPU): a smaller batch, or more tensor or pipeline parallelism, fits";
        return FieldError{{}, flag, why};
    }
    return out;
}

} // namespace shardlab
