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
    ExpertsEp,         // expert slots (experts + redundant) not divisible by EP
    EpGroup,           // EP does not divide TP x DP / instances (an instance's expert-side ranks per stage)
    ExpertFfnEtp,      // expert ffn not divisible by expert-TP = TP x DP / (instances x EP)
    SharedFfnTp,       // shared expert ffn not divisible by TP
    MicroBatches,      // micro-batches outside 1..min(batch, pipeline_parallel)
    BatchLimit,        // batch above kMaxBatch
    RedundantDense,    // redundant experts on a dense model
    OverlapDense,      // two-batch overlap on a dense model (it overlaps MoE dispatch/combine)
    AbsentOperator,    // an option other than the recipe's for an operator the model does not have
    RedundantLimit,    // more redundant expert slots than the model has experts
    InstancesDp,       // instances do not divide data_parallel
    InstancesDense,    // several engine instances of a dense model (its replicas are already independent)
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
inline PlanCheck optionRule(const ModelSpec& m, OpId id, int option, int tp, int etp);
FieldError describePlanCheck(PlanCheck c, const Plan& p, const Scenario& s);

// Whether every operator the model has outside the expert FFN (attention, dense and shared
// FFN, embedding, head) passes optionRule at tensor-parallel degree `tp` with the option
// `p` gives it: the test a rule that picks TP before the rest of the plan (the recipe)
// asks, so it cannot disagree with the plan checks.
bool tensorParallelFits(const ModelSpec& m, const Plan& p, int tp);

// The data-parallel replicas one engine instance runs: DP / instances (DP when instances is
// not positive). A MoE instance's replicas exchange tokens every MoE layer, in lock step.
int replicasPerInstance(const Plan& p);
// The ranks of one stage of one engine instance: TP x DP / instances (0 when the instances
// do not divide DP). They exchange tokens with each other (MoE dispatch and combine).
int expertGroupRanks(const Plan& p);
// Expert-tensor-parallel degree implied by the plan: expertGroupRanks / EP (0 if EP does
// not divide it).
int expertTensorParallel(const Plan& p);

// The one expert-placement rule (plan checks, search-space masks, exact, the recipe, the
// window): every EP rank holds the same number of expert slots, the model's experts plus
// the redundant replicas, so EP must divide experts + redundant (vLLM: "(NUM_TOTAL_EXPERTS
// + NUM_REDUNDANT_EXPERTS) / NUM_EP_RANKS experts" per rank; docs/simulator.md §2).
inline bool expertSlotsFit(long long experts, long long redundant, long long ep)
{
    return ep >= 1 && redundant >= 0 && (experts + redundant) % ep == 0;
}
// The most redundant expert slots a plan may hold: one per expert. Beyond that every
// expert would have two or more replicas on average, which is data parallelism of the
// experts rather than load balancing (DeepSeek-V3 serves with 32 redundant slots for 256
// experts in prefill and 64 in decode; docs/search.md, "Redundant experts").
inline long long maxRedundantExperts(long long experts) { return experts > 0 ? experts : 0; }
// Some redundant-expert count within the limit lets `ep` ranks hold the experts evenly:
// the smallest count that fills them is at most the limit.
inline bool expertParallelFits(long long experts, long long ep)
{
    return ep >= 1 && experts >= 1 && (ep - experts % ep) % ep <= maxRedundantExperts(experts);
}
// The redundant-expert rule as a whole: the slots fill the EP ranks evenly and stay
// within the limit (the plan checks flag the two parts apart, to say which failed). The
// search space's masks, and so exact, ask this.
inline bool redundantExpertsFit(long long experts, long long redundant, long long ep)
{
    return expertSlotsFit(experts, redundant, ep) && redundant <= maxRedundantExperts(experts);
}

// The plan with every sharding choice that cannot matter reset to the recipe's: an
// operator whose group has one rank (TP 1 on the attention side, expert-TP 1 on the
// expert side, one expert-side rank for dispatch/combine) costs the same whatever its
// option. Two plans with equal canonical forms evaluate identically.
Plan canonicalPlan(const Plan& p);
// Whether operator `id`'s option cannot matter with the plan's degrees (canonicalPlan's rule;
// exact searches one option of such an operator).
bool optionIrrelevant(const Plan& p, OpId id);
// Whether attention splits whole sequences over a TP group of several ranks (its `token`
// option): what engines call attention data parallelism.
bool attentionDataParallel(const Plan& p);

inline PlanCheck optionRule(const ModelSpec& m, OpId id, int o, int tp, int etp)
{
    const OpOption& opt = opOption(id, o);
    const bool split = opt.split == Split::Weights;
    switch (id) {
    case OpId::QkvProj:
    case OpId::Attention:
    case OpId::OutProj: {
        // Head-split operators: qkv column, attention by heads, and row-parallel out_proj
        // (it consumes head shards). Column out_proj splits the hidden dimension instead.
        const bool headSplit = id == OpId::OutProj ? o == 0 : split;
        if (!headSplit)
            return PlanCheck::Count;
        if (m.attentionHeads % tp != 0)
            return PlanCheck::HeadsTp;
        if (m.attention == AttentionKind::GQA && m.kvHeads % tp != 0 && tp % m.kvHeads != 0)
            return PlanCheck::KvHeadsTp;
        return PlanCheck::Count;
    }
    case OpId::GateUp:
    case OpId::Down:
        return split && m.ffnHidden % tp != 0 ? PlanCheck::FfnTp : PlanCheck::Count;
    case OpId::ExpertUp:
    case OpId::ExpertDown:
        return split && (etp <= 0 || m.moe.expertFfnHidden % etp != 0) ? PlanCheck::ExpertFfnEtp : PlanCheck::Count;
    case OpId::SharedExpert:
        return split && m.moe.sharedExpertFfnHidden % tp != 0 ? PlanCheck::SharedFfnTp : PlanCheck::Count;
    default:
        return PlanCheck::Count;
    }
}

} // namespace shardlab
