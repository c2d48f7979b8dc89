// Structural checks of a plan against a scenario, as a bit mask so the simulator's hot
// path can run them without allocating; messages are built only on request.
#pragma once

#include <cstdint>

#include "model/plan.h"

namespace shardlab {

enum class PlanCheck : std::uint8_t {
    Tiling,            // TP x PP x DP != GPUs in the cluster
    PipelineLayers,    // more pipeline stages than layers
    HeadsTp,           // head-split attention ops need heads divisible by TP
    KvHeadsTp,         // KV heads neither divisible by TP nor dividing it
    FfnTp,             // column/row FFN needs ffn_hidden divisible by TP
    ExpertParallelDense, // EP > 1 on a dense model
    ExpertsEp,         // experts not divisible by EP
    EpGroup,           // EP does not divide TP x DP (the expert side's ranks per stage)
    ExpertFfnEtp,      // expert ffn not divisible by expert-TP = TP x DP / EP
    SharedFfnTp,       // shared expert ffn not divisible by TP
    MicroBatches,      // micro-batches outside 1..batch
    BatchLimit,        // batch above kMaxBatch
    Count
};
constexpr int kPlanCheckCount = static_cast<int>(PlanCheck::Count);

// True for checks that are about the cluster's tiling rather than divisibility.
inline bool isTilingCheck(PlanCheck c) { return c == PlanCheck::Tiling; }

std::uint32_t planStructureViolations(const Plan& p, const Scenario& s);

// The one place of the per-operator divisibility rules: the check option `option` of
// operator `id` fails with tensor-parallel degree `tp` and expert-tensor-parallel degree
// `etp` (0 when not an MoE model), or PlanCheck::Count when it fits. The simulator's
// plan checks and the search space's masks both ask this.
PlanCheck optionRule(const ModelSpec& m, OpId id, int option, int tp, int etp);
FieldError describePlanCheck(PlanCheck c, const Plan& p, const Scenario& s);

// Expert-tensor-parallel degree implied by the plan (0 if EP does not divide TP x DP).
int expertTensorParallel(const Plan& p);

// The plan with every sharding choice that cannot matter reset to the recipe's: an
// operator whose group has one rank (TP 1 on the attention side, expert-TP 1 on the
// expert side, one expert-side rank for dispatch/combine) costs the same whatever its
// option. Two plans with equal canonical forms evaluate identically.
Plan canonicalPlan(const Plan& p);

} // namespace shardlab
