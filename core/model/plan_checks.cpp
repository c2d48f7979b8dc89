#include "model/plan_checks.h"

#include <string>
#include <vector>

namespace shardlab {

namespace {
std::string num(long long v) { return std::to_string(v); }
} // namespace

int replicasPerInstance(const Plan& p) { return p.instances > 0 ? p.dataParallel / p.instances : p.dataParallel; }

int expertGroupRanks(const Plan& p)
{
    if (p.instances < 1 || p.dataParallel % p.instances != 0)
        return 0;
    return static_cast<int>(static_cast<long long>(p.tensorParallel) * replicasPerInstance(p));
}

int expertTensorParallel(const Plan& p)
{
    const long long side = expertGroupRanks(p);
    if (side == 0 || p.expertParallel < 1 || side % p.expertParallel != 0)
        return 0;
    return static_cast<int>(side / p.expertParallel);
}

bool tensorParallelFits(const ModelSpec& m, const Plan& p, int tp)
{
    if (tp < 1)
        return false;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(m, id) || id == OpId::ExpertUp || id == OpId::ExpertDown)
            continue;
        if (optionRule(m, id, p.option(id), tp, 0) != PlanCheck::Count)
            return false;
    }
    return true;
}

bool attentionDataParallel(const Plan& p)
{
    return !optionIrrelevant(p, OpId::Attention)
        && opOption(OpId::Attention, p.option(OpId::Attention)).split == Split::Tokens;
}

bool optionIrrelevant(const Plan& p, OpId id)
{
    switch (id) {
    case OpId::ExpertUp:
    case OpId::ExpertDown:
        return expertTensorParallel(p) == 1;
    case OpId::Dispatch:
    case OpId::Combine:
        return expertGroupRanks(p) == 1;
    default:
        return p.tensorParallel == 1;
    }
}

Plan canonicalPlan(const Plan& p)
{
    Plan c = p;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (optionIrrelevant(p, id))
            c.setOption(id, opInfo(id).megatronOption);
    }
    return c;
}

std::uint32_t planStructureViolations(const Plan& p, const Scenario& s)
{
    const ModelSpec& m = s.model;
    const int tp = p.tensorParallel;
    std::uint32_t v = 0;
    auto flag = [&](PlanCheck c) { v |= 1u << static_cast<int>(c); };

    if (p.gpus() != s.cluster.totalGpus())
        flag(PlanCheck::Tiling);
    if (p.pipelineParallel > m.layers)
        flag(PlanCheck::PipelineLayers);
    const int etp = m.isMoe() ? expertTensorParallel(p) : 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (p.sharding[i] >= opInfo(id).optionCount)
            continue;
        if (!opPresent(m, id)) {
            // Plan files leave such operators out, and a search never sets them: an option
            // for one (expert_up on a dense model) is a plan made for another model.
            if (p.option(id) != opInfo(id).megatronOption)
                flag(PlanCheck::AbsentOperator);
            continue;
        }
        if (m.isMoe() && etp == 0 && (id == OpId::ExpertUp || id == OpId::ExpertDown))
            continue; // EpGroup below says why
        const PlanCheck c = optionRule(m, id, p.option(id), tp, etp);
        if (c != PlanCheck::Count)
            flag(c);
    }
    if (!m.isMoe()) {
        if (p.expertParallel != 1)
            flag(PlanCheck::ExpertParallelDense);
        if (p.redundantExperts != 0)
            flag(PlanCheck::RedundantDense);
        if (p.twoBatchOverlap)
            flag(PlanCheck::OverlapDense);
        if (p.instances != 1)
            flag(PlanCheck::InstancesDense);
    } else {
        if (!expertSlotsFit(m.moe.experts, p.redundantExperts, p.expertParallel))
            flag(PlanCheck::ExpertsEp);
        if (p.redundantExperts > maxRedundantExperts(m.moe.experts))
            flag(PlanCheck::RedundantLimit);
        if (expertGroupRanks(p) == 0)
            flag(PlanCheck::InstancesDp);
        else if (etp == 0)
            flag(PlanCheck::EpGroup);
    }
    if (p.microBatches < 1 || p.microBatches > p.batch || p.microBatches > p.pipelineParallel)
        flag(PlanCheck::MicroBatches);
    if (p.batch > kMaxBatch)
        flag(PlanCheck::BatchLimit);
    return v;
}

namespace {
// describePlanCheck's messages for the checks about experts, overlap and absent operators.
FieldError describeExpertCheck(PlanCheck c, const Plan& p, const Scenario& s)
{
    const ModelSpec& m = s.model;
    switch (c) {
    case PlanCheck::ExpertParallelDense:
        return {{}, "expert_parallel", "divisibility: a dense model has no experts; expert_parallel must be 1"};
    case PlanCheck::ExpertsEp:
        if (p.redundantExperts == 0)
            return {{}, "expert_parallel",
                    "divisibility: " + num(m.moe.experts) + " experts are not divisible by expert_parallel "
                        + num(p.expertParallel) + " (redundant_experts can make up the difference: each EP rank "
                        "holds (experts + redundant_experts) / expert_parallel expert slots)"};
        return {{}, "expert_parallel",
                "divisibility: " + num(m.moe.experts) + " experts + " + num(p.redundantExperts)
                    + " redundant_experts = " + num(static_cast<long long>(m.moe.experts) + p.redundantExperts)
                    + " expert slots are not divisible by expert_parallel " + num(p.expertParallel)};
    case PlanCheck::RedundantDense:
        return {{}, "redundant_experts", "a dense model has no experts to replicate; redundant_experts must be 0"};
    case PlanCheck::RedundantLimit:
        return {{}, "redundant_experts",
                "redundant_experts " + num(p.redundantExperts) + " is above the model's " + num(m.moe.experts)
                    + " experts: a plan holds at most one redundant slot per expert"};
    case PlanCheck::OverlapDense:
        return {{}, "two_batch_overlap",
                "a dense model has no MoE dispatch/combine to overlap; two_batch_overlap must be false"};
    case PlanCheck::AbsentOperator: {
        std::vector<std::string> ops;
        for (int i = 0; i < kOpCount; ++i) {
            const OpId id = static_cast<OpId>(i);
            if (!opPresent(m, id) && p.sharding[i] < opInfo(id).optionCount && p.option(id) != opInfo(id).megatronOption)
                ops.push_back(opName(id));
        }
        std::string list;
        for (const std::string& op : ops)
            list += (list.empty() ? "" : ", ") + op;
        const bool one = ops.size() == 1;
        return {{}, "operators." + ops.front(),
                "the model has no " + list + (one ? " operator" : " operators") + (m.isMoe() ? "" : " (a dense model)")
                    + ": leave " + (one ? "it" : "them") + " out of the plan"};
    }
    case PlanCheck::EpGroup:
        if (p.instances > 1)
            return {{}, "expert_parallel",
                    "divisibility: expert_parallel " + num(p.expertParallel)
                        + " must divide an instance's tensor_parallel x data_parallel / instances = "
                        + num(p.tensorParallel) + " x " + num(p.dataParallel) + " / " + num(p.instances) + " = "
                        + num(expertGroupRanks(p))};
        return {{}, "expert_parallel",
                "divisibility: expert_parallel " + num(p.expertParallel)
                    + " must divide tensor_parallel x data_parallel = "
                    + num(static_cast<long long>(p.tensorParallel) * p.dataParallel)};
    case PlanCheck::InstancesDp:
        return {{}, "instances",
                "divisibility: instances " + num(p.instances) + " must divide data_parallel " + num(p.dataParallel)
                    + " (each engine instance runs data_parallel / instances of the replicas)"};
    case PlanCheck::InstancesDense:
        return {{}, "instances",
                "a dense model's data-parallel replicas are already independent engines; instances must be 1 "
                "(several instances matter for MoE, whose replicas otherwise share one expert group)"};
    case PlanCheck::ExpertFfnEtp:
        return {{}, "operators.expert_up",
                "divisibility: expert_ffn_hidden " + num(m.moe.expertFfnHidden)
                    + " is not divisible by expert-tensor-parallel " + num(expertTensorParallel(p))};
    case PlanCheck::SharedFfnTp:
        return {{}, "operators.shared_expert",
                "divisibility: shared_expert_ffn_hidden " + num(m.moe.sharedExpertFfnHidden)
                    + " is not divisible by tensor_parallel " + num(p.tensorParallel)};
    default:
        break;
    }
    return {{}, {}, "unknown check"};
}
} // namespace

FieldError describePlanCheck(PlanCheck c, const Plan& p, const Scenario& s)
{
    const ModelSpec& m = s.model;
    switch (c) {
    case PlanCheck::Tiling:
        return {{}, "tensor_parallel",
                "tiling: tensor_parallel x pipeline_parallel x data_parallel = " + num(p.tensorParallel)
                    + " x " + num(p.pipelineParallel) + " x " + num(p.dataParallel) + " = " + num(p.gpus())
                    + " does not tile the cluster's " + num(s.cluster.totalGpus()) + " GPUs"};
    case PlanCheck::PipelineLayers:
        return {{}, "pipeline_parallel",
                "divisibility: " + num(p.pipelineParallel) + " pipeline stages for " + num(m.layers) + " layers"};
    case PlanCheck::HeadsTp:
        return {{}, "tensor_parallel",
                "divisibility: " + num(m.attentionHeads) + " attention heads are not divisible by tensor_parallel "
                    + num(p.tensorParallel) + " (head-split attention operators)"};
    case PlanCheck::KvHeadsTp:
        return {{}, "tensor_parallel",
                "divisibility: " + num(m.kvHeads) + " KV heads can be neither split nor replicated evenly over "
                    + num(p.tensorParallel) + " ranks"};
    case PlanCheck::FfnTp:
        return {{}, "tensor_parallel",
                "divisibility: ffn_hidden " + num(m.ffnHidden) + " is not divisible by tensor_parallel "
                    + num(p.tensorParallel)};
    case PlanCheck::ExpertParallelDense:
    case PlanCheck::ExpertsEp:
    case PlanCheck::RedundantDense:
    case PlanCheck::RedundantLimit:
    case PlanCheck::OverlapDense:
    case PlanCheck::AbsentOperator:
    case PlanCheck::EpGroup:
    case PlanCheck::InstancesDp:
    case PlanCheck::InstancesDense:
    case PlanCheck::ExpertFfnEtp:
    case PlanCheck::SharedFfnTp:
        return describeExpertCheck(c, p, s);
    case PlanCheck::MicroBatches:
        return {{}, "micro_batches",
                "micro_batches " + num(p.microBatches) + " must be between 1 and the smaller of the batch ("
                    + num(p.batch) + ") and pipeline_parallel (" + num(p.pipelineParallel)
                    + "): each pipeline stage runs one micro-batch at a time"};
    case PlanCheck::BatchLimit:
        return {{}, "batch", "batch " + num(p.batch) + " is above the limit of " + num(kMaxBatch)};
    case PlanCheck::Count:
        break;
    }
    return {{}, {}, "unknown check"};
}

} // namespace shardlab
