// Each engine's KV room at its memory fraction (sim/engine_memory.h).
#include "sim/engine_memory.h"

#include "sim/cost_model.h"

#include <algorithm>
#include <limits>

namespace shardlab {

double vllmSamplerWarmupGb(long long vocab, long long maxNumSeqs, long long maxNumBatchedTokens)
{
    const double requests = static_cast<double>(std::max(0LL, std::min(maxNumSeqs, maxNumBatchedTokens)));
    return requests * static_cast<double>(std::max(0LL, vocab)) * SimConstants{}.samplerBytesPerLogit * 1e-9;
}

double vllmProfiledPeakGb(const MemoryBreakdown& m) { return std::max(m.activationGb, m.samplerWarmupGb); }

double freeAfterModelGb(const MemoryBreakdown& m) { return m.capacityGb - m.reserveGb - m.weightsGb - m.activationGb; }

double kvRoomGb(Engine e, const MemoryBreakdown& m, double f)
{
    switch (e) {
    case Engine::Vllm: return f * m.capacityGb - m.weightsGb - vllmProfiledPeakGb(m);
    case Engine::Sglang: return f * m.capacityGb - m.weightsGb;
    case Engine::TrtLlm: return freeAfterModelGb(m) / kvPoolGbPerCacheGb(f);
    }
    return 0;
}

double neededMemoryFraction(Engine e, const MemoryBreakdown& m)
{
    switch (e) {
    case Engine::Vllm: return (m.weightsGb + vllmProfiledPeakGb(m) + m.kvCacheGb) / m.capacityGb;
    case Engine::Sglang: return (m.weightsGb + m.kvCacheGb) / m.capacityGb;
    case Engine::TrtLlm: {
        // The room grows in proportion to the fraction.
        const double fullRoom = kvRoomGb(e, m, 1.0);
        return fullRoom > 0 ? m.kvCacheGb / fullRoom : std::numeric_limits<double>::infinity();
    }
    }
    return 0;
}

double largestMemoryFraction(Engine e, const MemoryBreakdown& m)
{
    switch (e) {
    case Engine::Vllm: return 1.0 - m.reserveGb / m.capacityGb;
    case Engine::Sglang: return 1.0 - (m.reserveGb + m.activationGb) / m.capacityGb;
    case Engine::TrtLlm: return 1.0;
    }
    return 1.0;
}

} // namespace shardlab
