#include "model/plan.h"

#include "model/plan_checks.h"

namespace shardlab {

namespace {

using L = Layout;
using S = Split;

// Option 0 is listed first for readability only; megatronOption names the recipe's.
}

const std::array<OpInfo, kOpCount> kOpTable = {{
    {OpId::Embedding, "embedding", "Embedding", 2,
     {{{"vocab", L::R, L::P, S::Weights, "vocabulary rows split; partial sums to combine"},
       {"replicated", L::R, L::R, S::None, "whole table on every rank; no communication"}}},
     0},
    {OpId::AttnNorm, "attn_norm", "Input RMSNorm", 2,
     {{{"replicated", L::R, L::R, S::None, "every rank normalizes every token"},
       {"sequence", L::T, L::T, S::Tokens, "tokens split (sequence parallel)"}}},
     0},
    {OpId::QkvProj, "qkv_proj", "QKV projection", 3,
     {{{"column", L::R, L::F, S::Weights, "heads split (column parallel)"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
    {OpId::Attention, "attention", "Attention core", 3,
     {{{"head", L::F, L::F, S::Weights, "heads split; KV cache split by KV heads"},
       {"token", L::T, L::T, S::Tokens, "sequences split (attention data parallel)"},
       {"replicated", L::R, L::R, S::None, "every rank attends for every sequence"}}},
     0},
    {OpId::OutProj, "out_proj", "Attention output projection", 4,
     {{{"row", L::F, L::P, S::Weights, "input dim split (row parallel): partial sums"},
       {"column", L::R, L::F, S::Weights, "hidden dim split (column parallel)"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
    {OpId::FfnNorm, "ffn_norm", "Residual + RMSNorm", 2,
     {{{"replicated", L::R, L::R, S::None, "every rank normalizes every token"},
       {"sequence", L::T, L::T, S::Tokens, "tokens split (sequence parallel)"}}},
     0},
    {OpId::GateUp, "gate_up", "FFN gate/up", 3,
     {{{"column", L::R, L::F, S::Weights, "ffn dim split (column parallel)"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
    {OpId::Down, "down", "FFN down", 3,
     {{{"row", L::F, L::P, S::Weights, "ffn dim split (row parallel): partial sums"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
    {OpId::Router, "router", "MoE router", 2,
     {{{"replicated", L::R, L::R, S::None, "every rank routes every token"},
       {"token", L::T, L::T, S::Tokens, "tokens split"}}},
     0},
    {OpId::Dispatch, "dispatch", "Token dispatch", 2,
     {{{"all_to_all", L::T, L::XT, S::Tokens, "each token sent to its top-k experts' ranks"},
       {"all_gather", L::R, L::XR, S::None, "every replica's tokens gathered on every expert rank"}}},
     0},
    {OpId::ExpertUp, "expert_up", "Expert gate/up", 2,
     {{{"column", L::XR, L::XF, S::Weights, "each expert's ffn dim split over expert-TP"},
       {"token", L::XT, L::XT, S::Tokens, "expert's tokens split, whole expert per rank"}}},
     0},
    {OpId::ExpertDown, "expert_down", "Expert down", 2,
     {{{"row", L::XF, L::XP, S::Weights, "ffn dim split over expert-TP: partial sums"},
       {"token", L::XT, L::XT, S::Tokens, "expert's tokens split, whole expert per rank"}}},
     0},
    {OpId::Combine, "combine", "Token combine", 2,
     {{{"all_to_all", L::XT, L::T, S::Tokens, "expert outputs returned to their tokens"},
       {"reduce_scatter", L::XP, L::T, S::None, "partial outputs summed and scattered"}}},
     0},
    {OpId::SharedExpert, "shared_expert", "Shared expert", 3,
     {{{"column_row", L::R, L::P, S::Weights, "Megatron pair: column then row, partial sums"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
    {OpId::LmHead, "lm_head", "Final norm + LM head", 3,
     {{{"column", L::R, L::F, S::Weights, "vocabulary split (column parallel)"},
       {"token", L::T, L::T, S::Tokens, "tokens split, full weights on every rank"},
       {"replicated", L::R, L::R, S::None, "full weights and all tokens on every rank"}}},
     0},
}};

namespace {
const auto& kOps = kOpTable;
} // namespace

const char* layoutName(Layout l)
{
    switch (l) {
    case L::R: return "R";
    case L::T: return "S(token)";
    case L::F: return "S(feature)";
    case L::P: return "P";
    case L::XR: return "expert R";
    case L::XT: return "expert S(token)";
    case L::XF: return "expert S(feature)";
    case L::XP: return "expert P";
    }
    return "?";
}

const char* opName(OpId id) { return opInfo(id).name; }

bool opFromName(const std::string& name, OpId& out)
{
    for (const OpInfo& o : kOps)
        if (name == o.name) {
            out = o.id;
            return true;
        }
    return false;
}

int optionFromName(OpId id, const std::string& name)
{
    const OpInfo& info = opInfo(id);
    for (int i = 0; i < info.optionCount; ++i)
        if (name == info.options[i].name)
            return i;
    return -1;
}

bool opPresent(const ModelSpec& m, OpId id)
{
    switch (id) {
    case OpId::GateUp:
    case OpId::Down:
        return m.denseLayerCount() > 0;
    case OpId::Router:
    case OpId::Dispatch:
    case OpId::ExpertUp:
    case OpId::ExpertDown:
    case OpId::Combine:
        return m.isMoe();
    case OpId::SharedExpert:
        return m.isMoe() && m.moe.sharedExperts > 0;
    default:
        return true;
    }
}

void applyMegatronSharding(Plan& p)
{
    for (const OpInfo& o : kOps)
        p.setOption(o.id, o.megatronOption);
    // Megatron-Core's MoE dispatcher: all-to-all both ways (partial sums reduced inside
    // the expert-TP group before the return all-to-all).
    p.setOption(OpId::Combine, 0);
}

FieldErrors validatePlanShape(const Plan& p)
{
    FieldErrors e;
    auto positive = [&](const char* field, int v, int hi) {
        if (v < 1 || v > hi)
            e.push_back({{}, field,
                         "must be between 1 and " + std::to_string(hi) + " (got " + std::to_string(v) + ")"});
    };
    positive("tensor_parallel", p.tensorParallel, 1 << 20);
    positive("expert_parallel", p.expertParallel, 1 << 20);
    positive("pipeline_parallel", p.pipelineParallel, 1 << 20);
    positive("data_parallel", p.dataParallel, 1 << 20);
    positive("batch", p.batch, kMaxBatch);
    positive("micro_batches", p.microBatches, 1 << 20);
    positive("instances", p.instances, 1 << 20);
    if (p.redundantExperts < 0 || p.redundantExperts > kMaxRedundantExperts)
        e.push_back({{}, "redundant_experts",
                     "must be between 0 and " + std::to_string(kMaxRedundantExperts) + " (got "
                         + std::to_string(p.redundantExperts) + ")"});
    if (p.batch >= 1 && p.microBatches > p.batch)
        e.push_back({{}, "micro_batches",
                     "must be at most the batch (" + std::to_string(p.microBatches) + " micro-batches for a batch of "
                         + std::to_string(p.batch) + ")"});
    for (int i = 0; i < kOpCount; ++i)
        if (p.sharding[i] >= kOps[i].optionCount)
            e.push_back({{}, std::string("operators.") + kOps[i].name, "option index out of range"});
    return e;
}

FieldErrors validatePlan(const Plan& p, const Scenario& s)
{
    FieldErrors e = validatePlanShape(p);
    if (!e.empty())
        return e;
    const std::uint32_t v = planStructureViolations(p, s);
    for (int bit = 0; bit < kPlanCheckCount; ++bit)
        if (v & (1u << bit))
            e.push_back(describePlanCheck(static_cast<PlanCheck>(bit), p, s));
    return e;
}

} // namespace shardlab
