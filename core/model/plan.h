// A parallelization strategy: coarse degrees plus one sharding choice per fused operator.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "model/specs.h"

namespace shardlab {

// The fused operators of the decoder (docs/simulator.md §1). One layer of each kind is
// evaluated and multiplied; embedding and LM head occur once.
enum class OpId : std::uint8_t {
    Embedding,
    AttnNorm,
    QkvProj,
    Attention,
    OutProj,
    FfnNorm,
    GateUp,
    Down,
    Router,
    Dispatch,
    ExpertUp,
    ExpertDown,
    Combine,
    SharedExpert,
    LmHead,
    Count
};
constexpr int kOpCount = static_cast<int>(OpId::Count);
constexpr int kMaxOptions = 4;
// The largest batch (sequences in flight per replica) a plan may have: plan files and
// the simulator refuse more, so a search's certificate can stop there.
constexpr int kMaxBatch = 1 << 20;

// Layout of the activation between operators, inside the operator's parallel group
// (docs/simulator.md §2). The attention side's group is the tensor-parallel group; the expert
// side's (X*) group is the expert-tensor-parallel group of one expert shard.
enum class Layout : std::uint8_t {
    R,  // replicated
    T,  // sharded on tokens (batch / sequence)
    F,  // sharded on a feature dimension (heads, hidden, ffn, vocab)
    P,  // partial sums
    XR, // expert side: every rank of the expert's group holds its tokens
    XT, // expert side: the expert's tokens split over its group
    XF, // expert side: feature-sharded (ffn dimension)
    XP, // expert side: partial sums
};
const char* layoutName(Layout l);

// What a sharding option splits inside its group.
enum class Split : std::uint8_t { None, Weights, Tokens };

struct OpOption {
    const char* name;
    Layout in;
    Layout out;
    Split split;
    const char* summary; // one line for tooltips and explanations
};

struct OpInfo {
    OpId id;
    const char* name;
    const char* label; // human-readable
    int optionCount;
    std::array<OpOption, kMaxOptions> options;
    int megatronOption; // the standard recipe's choice (sim/megatron.h)
};

extern const std::array<OpInfo, kOpCount> kOpTable;
inline const OpInfo& opInfo(OpId id) { return kOpTable[static_cast<int>(id)]; }
inline const OpOption& opOption(OpId id, int option) { return kOpTable[static_cast<int>(id)].options[option]; }
const char* opName(OpId id);
bool opFromName(const std::string& name, OpId& out);
int optionFromName(OpId id, const std::string& name); // -1 when unknown
bool opPresent(const ModelSpec& m, OpId id);

struct Plan {
    int tensorParallel = 1;
    int expertParallel = 1;
    int pipelineParallel = 1;
    int dataParallel = 1;
    int batch = 1;        // sequences in flight per data-parallel replica
    int microBatches = 1; // pipeline micro-batches, 1..min(batch, PP) (split as evenly as possible)
    // MoE: expert slots beyond the model's experts, filled with replicas of the busiest
    // experts by the engine's load balancer (EPLB); (experts + redundant) / EP slots per
    // EP rank. 0: every expert once, placed statically (docs/simulator.md §2).
    int redundantExperts = 0;
    // MoE: each step runs as two half-batches whose dispatch/combine overlap the other
    // half's compute (SGLang two-batch overlap, vLLM dual-batch overlap; docs/simulator.md §3).
    bool twoBatchOverlap = false;
    // MoE: independent engine instances the data-parallel replicas are split into (several
    // engines behind a router, e.g. TP 8 x EP 8 each). A stage's TP x DP / instances ranks of
    // one instance exchange tokens and hold the experts as EP x expert-TP; instances never
    // talk. 1: one engine whose every replica joins one expert group (docs/simulator.md §2).
    int instances = 1;
    std::array<std::uint8_t, kOpCount> sharding{}; // option index per OpId

    int option(OpId id) const { return sharding[static_cast<int>(id)]; }
    void setOption(OpId id, int o) { sharding[static_cast<int>(id)] = static_cast<std::uint8_t>(o); }
    long long gpus() const
    {
        return static_cast<long long>(tensorParallel) * pipelineParallel * dataParallel;
    }
    bool operator==(const Plan& o) const = default;
};

// The standard per-operator pattern, degrees left as given.
void applyMegatronSharding(Plan& p);

// Structural checks of a plan against a scenario: tiling of the cluster, divisibility of
// heads, experts and layers, option/layout compatibility. Paths name plan fields.
FieldErrors validatePlan(const Plan& p, const Scenario& s);
// Checks that need no scenario: positive degrees and batch, micro-batches divide batch,
// redundant experts not negative.
FieldErrors validatePlanShape(const Plan& p);
// The largest redundant_experts a plan may have (plan files and the simulator refuse more).
constexpr int kMaxRedundantExperts = 1 << 16;

} // namespace shardlab
