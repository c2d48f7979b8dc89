#include "report/result_json.h"

#include "io/profile_json.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace shardlab {

using ojson = nlohmann::ordered_json;

namespace {
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

std::string fmt(const char* f, double a, double b)
{
    char buf[200];
    std::snprintf(buf, sizeof buf, f, a, b);
    return buf;
}

ojson opsJson(const Scenario& s, const Plan& p, const std::array<OpBreakdown, kOpCount>& ops)
{
    ojson arr = ojson::array();
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = ops[i];
        if (!opPresent(s.model, id) || !o.present)
            continue;
        arr.push_back({{"operator", opName(id)},
                       {"sharding", opInfo(id).options[p.option(id)].name},
                       {"time_us", finite(o.timeUs)},
                       {"compute_us", finite(o.computeUs)},
                       {"memory_us", finite(o.memoryUs)},
                       {"bound", o.bound == Bound::Compute ? "compute" : "memory"},
                       {"comm_us", finite(o.commUs)},
                       {"collective", collectiveName(o.collective)},
                       {"collectives_per_layer", o.collectivesPerLayer},
                       {"comm_bytes_per_gpu", finite(o.commBytes)},
                       {"comm_inter_node_bytes_per_gpu", finite(o.commInterBytes)},
                       {"flops_per_gpu", finite(o.flops)},
                       {"hbm_bytes_per_gpu", finite(o.hbmBytes)}});
    }
    return arr;
}
} // namespace

std::vector<std::string> violationReasons(const Scenario& s, const Plan& p, const SimResult& r)
{
    std::vector<std::string> out;
    for (int b = 0; b < kPlanCheckCount; ++b)
        if (r.structureChecks & (1u << b))
            out.push_back(describePlanCheck(static_cast<PlanCheck>(b), p, s).reason);
    if (r.violates(Violation::Memory))
        out.push_back(fmt("memory: needs %.1f GB per GPU, the GPU has %.0f GB", r.memory.totalGb, r.memory.capacityGb));
    if (r.violates(Violation::TtftSlo))
        out.push_back(fmt(s.workload.serving == ServingMode::Prefill
                              ? "TTFT SLO: %.1f ms (waiting for a pass, the pass, the KV transfer) exceeds the limit of %g ms"
                              : "TTFT SLO: %.1f ms exceeds the limit of %g ms",
                          r.ttftMs, s.workload.ttftSloMs));
    if (r.violates(Violation::TpotSlo))
        out.push_back(fmt("TPOT SLO: %.2f ms exceeds the limit of %g ms", r.tpotMs, s.workload.tpotSloMs));
    if (r.violates(Violation::TokenBudget) && s.workload.serving == ServingMode::Prefill) {
        char buf[300];
        std::snprintf(buf, sizeof buf,
                      "token budget: a prefill pass carries %.0f tokens (%.0f prompts of %d), above max_num_tokens %d; "
                      "use fewer prompts per pass or more micro-batches",
                      r.stepTokens, double(p.batch) / std::max(1, p.microBatches), s.workload.promptTokens,
                      s.workload.maxNumTokens);
        out.push_back(buf);
    } else if (r.violates(Violation::TokenBudget)) {
        char buf[300];
        std::snprintf(buf, sizeof buf,
                      "token budget: an engine step carries %.0f tokens (%.0f decoding sequences, each bringing %.2f "
                      "prompt tokens per step), above max_num_tokens %d; use a smaller batch or more micro-batches",
                      r.stepTokens, double(p.batch) / std::max(1, p.microBatches),
                      double(s.workload.promptTokens) / std::max(1, s.workload.outputTokens), s.workload.maxNumTokens);
        out.push_back(buf);
    }
    return out;
}

namespace {
ojson evaluationObject(const Scenario& s, const Plan& p, const SimResult& r)
{
    ojson j;
    j["scenario"] = s.name;
    j["profile"] = profileOf(s.cluster).name; // the kernel profile that priced it (docs/profiles.md)
    ojson plan = {{"tensor_parallel", p.tensorParallel}, {"expert_parallel", p.expertParallel},
                  {"pipeline_parallel", p.pipelineParallel}, {"data_parallel", p.dataParallel},
                  {"batch", p.batch}, {"micro_batches", p.microBatches}};
    if (s.model.isMoe() || p.redundantExperts != 0 || p.twoBatchOverlap || p.instances != 1) {
        plan["redundant_experts"] = p.redundantExperts;
        plan["two_batch_overlap"] = p.twoBatchOverlap;
        plan["instances"] = p.instances;
    }
    ojson ops = ojson::object();
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (opPresent(s.model, id))
            ops[opName(id)] = opInfo(id).options[p.option(id)].name;
    }
    plan["operators"] = ops;
    j["plan"] = plan;
    j["valid"] = r.valid;
    ojson v = ojson::array();
    for (int b = 0; b < kViolationCount; ++b)
        if (r.violations & (1u << b))
            v.push_back(violationName(static_cast<Violation>(b)));
    j["violations"] = v;
    j["reasons"] = violationReasons(s, p, r);
    const bool costed = r.structureChecks == 0;
    j["serving"] = servingModeName(s.workload.serving);
    j["output_tokens_per_s"] = costed ? finite(r.outputTokensPerS) : 0.0;
    j["output_tokens_per_s_per_gpu"] = costed ? finite(r.tokensPerSPerGpu) : 0.0;
    j["tpot_ms"] = costed ? finite(r.tpotMs) : 0.0;
    j["ttft_ms"] = costed ? finite(r.ttftMs) : 0.0;
    j["e2e_ms"] = costed ? finite(r.e2eMs) : 0.0;
    j["tokens_per_s_per_user"] = costed && r.tpotMs > 0 ? finite(1e3 / r.tpotMs) : 0.0;
    j["step_tokens"] = costed ? finite(r.stepTokens) : 0.0;
    // Names of v1, kept for scripts: the same figures as output_tokens_per_s(_per_gpu).
    j["decode_tokens_per_s"] = costed ? finite(r.outputTokensPerS) : 0.0;
    j["tokens_per_s_per_gpu"] = costed ? finite(r.tokensPerSPerGpu) : 0.0;
    j["stage_step_us"] = finite(r.stageStepUs);
    j["pipeline_bubble"] = finite(r.pipelineBubble);
    j["stage_handoff_crosses_nodes"] = r.p2pCrossesNodes;
    j["expert_tensor_parallel"] = r.expertTensorParallel;
    if (s.model.isMoe() && costed) {
        j["expert_load_imbalance"] = finite(r.expertLoadImbalance);
        j["overlap_hidden_us"] = finite(r.overlapHiddenUs);
    }
    j["memory_gb"] = {{"weights", finite(r.memory.weightsGb)},   {"kv_cache", finite(r.memory.kvCacheGb)},
                      {"activations", finite(r.memory.activationGb)}, {"reserve", finite(r.memory.reserveGb)},
                      {"total", finite(r.memory.totalGb)},       {"capacity", finite(r.memory.capacityGb)}};
    if (r.serving == ServingMode::Prefill) {
        j["pass_ms"] = costed ? finite(r.passMs) : 0.0;
        j["kv_transfer_ms"] = costed ? finite(r.kvTransferMs) : 0.0;
    }
    if (costed) {
        j["decode_operators"] = opsJson(s, p, r.decode);
        j["prefill_operators"] = opsJson(s, p, r.prefill);
    }
    return j;
}
} // namespace

std::string evaluationToJson(const Scenario& s, const Plan& p, const SimResult& r, int indent)
{
    return evaluationObject(s, p, r).dump(indent);
}

std::vector<std::string> disaggregatedReasons(const Scenario& s, const DisaggregatedPlan& p,
                                              const DisaggregatedResult& r)
{
    std::vector<std::string> out;
    for (const FieldError& e : r.structure)
        out.push_back(e.where + ": " + e.reason);
    if (!r.structure.empty())
        return out;
    const int gp = static_cast<int>(p.prefill.gpus()), gd = static_cast<int>(p.decode.gpus());
    for (const std::string& x : violationReasons(poolScenario(s, PoolRole::Prefill, gp), p.prefill, r.prefill))
        out.push_back("prefill pool: " + x);
    for (const std::string& x : violationReasons(poolScenario(s, PoolRole::Decode, gd), p.decode, r.decode))
        out.push_back("decode pool: " + x);
    return out;
}

std::string disaggregatedEvaluationToJson(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r,
                                          int indent)
{
    ojson j;
    j["scenario"] = s.name;
    j["profile"] = profileOf(s.cluster).name;
    j["serving"] = servingModeName(ServingMode::Disaggregated);
    j["valid"] = r.valid;
    j["reasons"] = disaggregatedReasons(s, p, r);
    const bool costed = r.structure.empty();
    const double osl = std::max(1, s.workload.outputTokens);
    j["output_tokens_per_s"] = costed ? finite(r.outputTokensPerS) : 0.0;
    j["output_tokens_per_s_per_gpu"] = costed ? finite(r.tokensPerSPerGpu) : 0.0;
    j["ttft_ms"] = costed ? finite(r.ttftMs) : 0.0;
    j["tpot_ms"] = costed ? finite(r.tpotMs) : 0.0;
    j["e2e_ms"] = costed ? finite(r.e2eMs) : 0.0;
    j["tokens_per_s_per_user"] = costed && r.tpotMs > 0 ? finite(1e3 / r.tpotMs) : 0.0;
    j["requests_per_s"] = costed ? finite(r.outputTokensPerS / osl) : 0.0;
    j["gpus"] = p.prefill.gpus() + p.decode.gpus();
    j["limited_by"] = disaggLimitName(r.limitedBy);
    j["kv_transfer"] = kvLinkName(s.workload.kvTransfer);
    j["kv_bytes_per_request"] = finite(r.kvBytesPerRequest);
    j["kv_link_requests_per_s"] = costed ? finite(r.kvLinkRequestsPerS) : 0.0;
    j["kv_link_load"] = costed ? finite(r.kvLinkLoad) : 0.0;
    if (costed) {
        const int gp = static_cast<int>(p.prefill.gpus()), gd = static_cast<int>(p.decode.gpus());
        ojson pre = evaluationObject(poolScenario(s, PoolRole::Prefill, gp), p.prefill, r.prefill);
        pre["gpus"] = gp;
        pre["requests_per_s"] = finite(r.prefillRequestsPerS);
        ojson dec = evaluationObject(poolScenario(s, PoolRole::Decode, gd), p.decode, r.decode);
        dec["gpus"] = gd;
        dec["requests_per_s"] = finite(r.decodeRequestsPerS);
        j["prefill"] = pre;
        j["decode"] = dec;
    }
    return j.dump(indent);
}

} // namespace shardlab
