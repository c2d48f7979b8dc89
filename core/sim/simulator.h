// The built-in roofline simulator: evaluates a plan for a scenario (docs/simulator.md).
// Deterministic, allocation-free on the hot path (evaluate into a caller's SimResult).
#pragma once

#include <array>
#include <cstdint>

#include "model/plan.h"
#include "model/plan_checks.h"
#include "sim/collectives.h"

namespace shardlab {

enum class Violation : std::uint8_t { Tiling, Divisibility, Memory, TtftSlo, TpotSlo, Count };
constexpr int kViolationCount = static_cast<int>(Violation::Count);
const char* violationName(Violation v);

enum class Bound : std::uint8_t { Compute, Memory };

// One operator's share of a phase: summed over the layers of the busiest pipeline stage
// (embedding/LM head once). Times in microseconds, per GPU.
struct OpBreakdown {
    bool present = false;
    double computeUs = 0;   // FLOPs / achieved peak
    double memoryUs = 0;    // HBM bytes / achieved bandwidth
    double timeUs = 0;      // max(compute, memory) + launch overhead
    Bound bound = Bound::Memory;
    double commUs = 0;      // collectives this operator needs (its input's conversion + its own)
    Collective collective = Collective::None; // the largest one
    double commBytes = 0;   // bytes sent per rank, summed over layers
    int collectivesPerLayer = 0;
    double flops = 0;       // per GPU
    double hbmBytes = 0;    // per GPU
};

struct MemoryBreakdown {
    double weightsGb = 0;
    double kvCacheGb = 0;
    double activationGb = 0;
    double reserveGb = 0;
    double totalGb = 0;
    double capacityGb = 0;
};

struct SimResult {
    bool valid = false;
    std::uint32_t violations = 0;      // bit per Violation
    std::uint32_t structureChecks = 0; // bit per PlanCheck (why Tiling/Divisibility)
    double tpotMs = 0;
    double ttftMs = 0;
    double decodeTokensPerS = 0;       // whole cluster
    double tokensPerSPerGpu = 0;
    double stageStepUs = 0;            // busiest stage, one micro-batch, one decode step
    double pipelineBubble = 0;         // fraction of a decode cycle a stage idles
    double p2pUs = 0;                  // stage-to-stage transfer per micro-batch
    int expertTensorParallel = 0;
    MemoryBreakdown memory;
    std::array<OpBreakdown, kOpCount> decode{};
    std::array<OpBreakdown, kOpCount> prefill{};

    bool violates(Violation v) const { return violations & (1u << static_cast<int>(v)); }
};

// Modelling constants that are not hardware: documented in docs/simulator.md.
struct SimConstants {
    double expertLoadImbalance = 1.25; // busiest expert rank / mean, routed tokens
    double prefillWorkspaceFactor = 6; // activation workspace per prompt token, in hidden vectors
    double decodeWorkspaceFactor = 32; // per in-flight token, in hidden vectors
    int prefillPrompts = 1;            // prompts prefilled together (TTFT = their batch's time)
};

class Simulator {
public:
    explicit Simulator(const Scenario& scenario, SimConstants constants = {});

    // With breakdown = false the per-operator arrays stay empty: the searches' fast path
    // (every other field is identical).
    void evaluate(const Plan& plan, SimResult& out, bool breakdown = true) const;
    SimResult evaluate(const Plan& plan) const
    {
        SimResult r;
        evaluate(plan, r, true);
        return r;
    }

    const Scenario& scenario() const { return m_scenario; }
    const SimConstants& constants() const { return m_constants; }

    // Static per-operator costs (one layer, one token, unsharded), for tests and docs.
    struct OpStatic {
        double flopsPerToken = 0;  // GEMM FLOPs for one token
        double weightBytes = 0;    // all of the operator's weights (one layer)
        double actBytesPerToken = 0; // activations read + written per token
        double outBytesPerToken = 0; // the tensor handed to the next operator
        double kvBytesPerCtx = 0;  // attention: cache bytes read per cached token
        double attnFlopsDecodePerCtx = 0;
        double attnFlopsPrefillPerCtx = 0;
        double kvFloor = 0;        // attention: smallest KV fraction one rank can hold
        bool fp8 = false;          // runs at the FP8 peak
    };
    const OpStatic& opStatic(OpId id) const { return m_ops[static_cast<int>(id)]; }
    double kvBytesPerTokenPerLayer() const { return m_kvPerTokenLayer; }

private:
    struct Phase;
    struct LayerCost {
        double timeS = 0;
        double weightBytes = 0; // per GPU, this layer
        double kvBytes = 0;     // per GPU, this layer, whole batch at max context
    };
    LayerCost evalLayer(bool moe, const Plan& p, const Phase& ph, std::array<OpBreakdown, kOpCount>* acc,
                        double accScale) const;
    double opTime(OpId id, const Plan& p, const Phase& ph, OpBreakdown* acc, double accScale,
                  double& weightBytesRank) const;
    double convert(Layout from, Layout to, double fullBytes, const Group& g, OpBreakdown* acc,
                   double accScale) const;
    void fillPhase(const Plan& p, bool prefill, Phase& ph) const;

    Scenario m_scenario;
    SimConstants m_constants;
    std::array<OpStatic, kOpCount> m_ops{};
    LinkModel m_link;
    double m_peakBf16 = 0, m_peakFp8 = 0, m_hbm = 0, m_overheadS = 0;
    double m_kvPerTokenLayer = 0;
    double m_hiddenBytes = 0; // one token's hidden vector in the activation precision
    double m_logExpertIdle = 0; // log(1 - top_k / experts): P(expert idle) = exp(tokens * this)
    bool m_hasShared = false;
};

} // namespace shardlab
