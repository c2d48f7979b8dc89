// The built-in roofline simulator: evaluates a plan for a scenario (docs/simulator.md).
// Deterministic, allocation-free on the hot path (evaluate into a caller's SimResult).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/plan.h"
#include "model/plan_checks.h"
#include "sim/collectives.h"
#include "sim/cost_model.h"

namespace shardlab {

enum class Violation : std::uint8_t { Tiling, Divisibility, Memory, TtftSlo, TpotSlo, TokenBudget, Count };
constexpr int kViolationCount = static_cast<int>(Violation::Count);
const char* violationName(Violation v);
// The names of the violations set in `mask` (a bit per Violation), in Violation order.
std::vector<std::string> violationNames(std::uint32_t mask);

enum class Bound : std::uint8_t { Compute, Memory };

// A figure the reports and the window print: finite and below 1e15 (ms, GB, tokens/s).
// Absurd inputs give finite figures far above any real one (a link of 1e-300 GB/s: a TTFT
// near 1e189 ms); those are said to be unbounded, as +infinity is.
constexpr double kLargestShownFigure = 1e15;
inline bool isShownFigure(double v) { return std::isfinite(v) && std::fabs(v) < kLargestShownFigure; }

// One operator's share of a phase: summed over the layers of the busiest pipeline stage
// (embedding/LM head once). Times in microseconds, per GPU.
struct OpBreakdown {
    bool present = false;
    double computeUs = 0;   // FLOPs / achieved peak
    double memoryUs = 0;    // HBM bytes / achieved bandwidth
    double timeUs = 0;      // max(compute, memory) + launch overhead
    // Of timeUs, the kernels' fixed costs (launch gaps, tails, floors); the rest is the
    // operator's work. With prompt pieces in some steps (aggregated serving) both are means
    // over the steps, where max(compute, memory) of the means would count some work as launch.
    double launchUs = 0;
    double workUs() const { return timeUs - launchUs; }
    Bound bound = Bound::Memory;
    double commUs = 0;      // collectives this operator needs (its input's conversion + its own)
    // The one its reports name: its own (dispatch, combine, a sequence-split prefill), else
    // an all-reduce of its input, else its input's conversion.
    Collective collective = Collective::None;
    double commBytes = 0;   // bytes sent per rank, summed over layers
    double commInterBytes = 0; // of which over the inter-node fabric (groups spanning nodes)
    // The same collectives by the group each ran in (GroupRole): an operator's own collective
    // and its input's conversion may run in different groups (combine's all-to-all over the
    // exchange group, the expert-TP reduce-scatter before it).
    struct GroupComm {
        double us = 0, bytes = 0, interBytes = 0;
        std::uint8_t kinds = 0; // a bit per Collective
        void add(const GroupComm& o, double k)
        {
            us += o.us * k;
            bytes += o.bytes * k;
            interBytes += o.interBytes * k;
            kinds |= o.kinds;
        }
    };
    std::array<GroupComm, kGroupRoleCount> byGroup{};
    int collectivesPerLayer = 0;
    double flops = 0;       // per GPU
    double hbmBytes = 0;    // per GPU
};

struct MemoryBreakdown {
    double weightsGb = 0;
    double kvCacheGb = 0;
    double activationGb = 0;
    // vLLM's start-up sampler run over max_num_seqs dummy requests (sim/engine_memory.h):
    // set where the engine's limits are known (launch configurations, calibration); 0 from
    // the simulator, whose activations count the sampling of the plan's own batch.
    double samplerWarmupGb = 0;
    double reserveGb = 0;
    // Left out of the KV cache pool by the engine (workload.kv_cache_memory_fraction):
    // unused, but no other sequence can have it.
    double kvHeldBackGb = 0;
    double totalGb = 0;
    double capacityGb = 0;
};

struct SimResult {
    bool valid = false;
    std::uint32_t violations = 0;      // bit per Violation
    std::uint32_t structureChecks = 0; // bit per PlanCheck (why Tiling/Divisibility)
    ServingMode serving = ServingMode::Aggregated; // the scenario's: what the figures mean
    double tpotMs = 0;                 // mean gap between a request's output tokens
    double ttftMs = 0;                 // a request's time to its first token
    double e2eMs = 0;                  // TTFT + (output - 1) x TPOT
    double outputTokensPerS = 0;       // whole cluster, in the serving mode
    double stepTokens = 0;             // one engine step's tokens (decode + prompt chunk)
    double passMs = 0;                 // prefill pool: one prompt's pass through the stages
    double kvTransferMs = 0;           // prefill pool: its KV cache to the decode pool
    double cycleMs = 0;                // one engine cycle: every micro-batch's step (a prefill pool: a pass)
    double tokensPerSPerGpu = 0;
    // Some figure overflowed (absurd inputs: a link of 1e-12 GB/s, a peak of ~0): each such
    // figure of tpotMs, ttftMs, e2eMs and memory.totalGb is +infinity, throughput is 0 and
    // the plan is invalid. Writers say "unbounded" instead of printing the figure.
    bool unbounded = false;
    // Collective kinds (one per layer kind, operator and phase) that run without one of the
    // engine's custom all-reduce kernels because the size is above its limit, counted in
    // each of a phase's two steps (a one-step phase's step twice: CostModel::op): never
    // falls as the batch grows; where it rises the step time can jump (exact's batch segments).
    int sizeCappedCollectives = 0;
    double stageStepUs = 0;            // busiest stage, one micro-batch, one decode step
    double pipelineBubble = 0;         // fraction of a decode cycle a stage idles
    double p2pUs = 0;                  // stage-to-stage transfer per micro-batch
    double p2pBytes = 0;               // of which the bytes each rank sends (its share of the hidden states)
    bool p2pCrossesNodes = false;      // some stage hands its hidden states to another node
    int expertTensorParallel = 0;
    double expertLoadImbalance = 1;    // decode: busiest EP rank's routed tokens / the mean
    double overlapHiddenUs = 0;        // two-batch overlap: busiest stage's decode step time hidden
    // Speculative decoding: the drafting passes' time in one micro-batch's step (last stage)
    // and the tokens a decoding sequence emits per step (1 when off).
    double draftUs = 0;
    double tokensPerStep = 1;
    MemoryBreakdown memory;
    std::array<OpBreakdown, kOpCount> decode{};
    std::array<OpBreakdown, kOpCount> prefill{};

    bool violates(Violation v) const { return violations & (1u << static_cast<int>(v)); }
};

// Applies the cost model (cost_model.h) to one plan: walks the operator graph with the
// plan's options, sums each layer kind, and adds the per-operator breakdown.
class Simulator {
public:
    explicit Simulator(const Scenario& scenario, SimConstants constants = {});

    // With breakdown = false the per-operator arrays stay empty: the searches' fast path
    // (every other field is identical).
    // With `load`, the decode step is that step (decoding sequences and prompt tokens of one
    // replica) instead of the steady state's mean step: tpotMs is then its cycle.
    void evaluate(const Plan& plan, SimResult& out, bool breakdown = true, const StepLoad* load = nullptr) const;
    SimResult evaluate(const Plan& plan) const
    {
        SimResult r;
        evaluate(plan, r, true);
        return r;
    }

    const Scenario& scenario() const { return m_costs.scenario(); }
    const SimConstants& constants() const { return m_costs.constants(); }
    const CostModel& costs() const { return m_costs; }
    const OpStatic& opStatic(OpId id) const { return m_costs.opStatic(id); }
    double kvBytesPerTokenPerLayer() const { return m_costs.kvBytesPerTokenPerLayer(); }

private:
    static constexpr int kCachedPipelines = 512;
    StageShapes stagesFor(int pp) const;

    CostModel m_costs;
    std::vector<StageShapes> m_stages; // [pp - 1]
};

} // namespace shardlab
