#include "report/result_json.h"

#include "io/profile_json.h"
#include "model/plan_text.h"
#include "report/json_figure.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace shardlab {

using ojson = nlohmann::ordered_json;

namespace {
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

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


namespace {

// A figure the simulator computed (report/json_figure.h), or null.
ojson figure(bool costed, double v) { return jsonFigure(v, costed); }

// The headline figures, for a deployment and for each pool alike; "costed" says whether
// they were computed.
void writeFigures(ojson& j, bool costed, bool hasTpot, double outputTokensPerS, double tokensPerSPerGpu, double ttftMs,
                  double tpotMs, double e2eMs)
{
    j["costed"] = costed;
    j["has_tpot"] = hasTpot; // one output token, or a prefill pool: no gap between tokens
    j["output_tokens_per_s"] = figure(costed, outputTokensPerS);
    j["output_tokens_per_s_per_gpu"] = figure(costed, tokensPerSPerGpu);
    // No TPOT (one output token, a prefill pool) is null, as an uncosted figure is: 0 would
    // read as a gap between tokens.
    j["tpot_ms"] = figure(costed && hasTpot, tpotMs);
    j["ttft_ms"] = figure(costed, ttftMs);
    j["e2e_ms"] = figure(costed, e2eMs);
    j["tokens_per_s_per_user"] = figure(costed && hasTpot && tpotMs > 0, tpotMs > 0 ? 1e3 / tpotMs : 0.0);
    j["gpu_us_per_token"] = figure(costed, tokensPerSPerGpu > 0 ? 1e6 / tokensPerSPerGpu : 0.0);
}

ojson planObject(const Scenario& s, const Plan& p)
{
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
    return plan;
}

// One pool's evaluation on the scenario it is priced on.
ojson poolObject(const PoolOutcome& pool)
{
    const Scenario& s = pool.scenario;
    const SimResult& r = pool.result;
    ojson j;
    j["scenario"] = s.name;
    j["profile"] = profileOf(s.cluster).name; // the kernel profile that priced it (docs/profiles.md)
    j["plan"] = planObject(s, pool.plan);
    j["degrees"] = planDegreesText(s, pool.plan); // as evaluate prints the plan's line
    j["valid"] = r.valid;
    j["violations"] = violationNames(r.violations);
    j["reasons"] = pool.reasons;
    j["unbounded"] = r.unbounded; // figures that overflowed are written as null (SimResult::unbounded)
    const bool costed = pool.costed();
    j["serving"] = servingModeName(s.workload.serving);
    writeFigures(j, costed, hasTpot(s.workload), r.outputTokensPerS, r.tokensPerSPerGpu, r.ttftMs, r.tpotMs, r.e2eMs);
    j["step_tokens"] = figure(costed, r.stepTokens);
    // Names of v1, kept for scripts: the same figures as output_tokens_per_s(_per_gpu).
    j["decode_tokens_per_s"] = figure(costed, r.outputTokensPerS);
    j["tokens_per_s_per_gpu"] = figure(costed, r.tokensPerSPerGpu);
    j["stage_step_us"] = figure(costed, r.stageStepUs);
    j["pipeline_bubble"] = figure(costed, r.pipelineBubble);
    j["stage_handoff_crosses_nodes"] = r.p2pCrossesNodes;
    j["expert_tensor_parallel"] = costed ? ojson(r.expertTensorParallel) : ojson(nullptr);
    if (s.workload.speculative.on() && costed)
        j["speculative"] = {{"method", speculativeMethodName(s.workload.speculative.method)},
                            {"draft_tokens", s.workload.speculative.draftTokens},
                            {"tokens_per_step", finite(r.tokensPerStep)},
                            {"draft_us", finite(r.draftUs)}};
    if (s.model.isMoe() && costed) {
        j["expert_load_imbalance"] = finite(r.expertLoadImbalance);
        j["overlap_hidden_us"] = finite(r.overlapHiddenUs);
    }
    // Memory is counted only for a plan whose degrees fit.
    if (costed)
        j["memory_gb"] = {{"weights", finite(r.memory.weightsGb)},   {"kv_cache", finite(r.memory.kvCacheGb)},
                          {"activations", finite(r.memory.activationGb)}, {"reserve", finite(r.memory.reserveGb)},
                          {"kv_held_back", finite(r.memory.kvHeldBackGb)},
                          {"total", finite(r.memory.totalGb)},       {"capacity", finite(r.memory.capacityGb)}};
    else
        j["memory_gb"] = nullptr;
    if (r.serving == ServingMode::Prefill) {
        j["pass_ms"] = figure(costed, r.passMs);
        j["kv_transfer_ms"] = figure(costed, r.kvTransferMs);
    }
    if (costed) {
        j["decode_operators"] = opsJson(s, pool.plan, r.decode);
        j["prefill_operators"] = opsJson(s, pool.plan, r.prefill);
    }
    return j;
}

// The request-level run under the scenario's load protocol (sim/serving_load.h).
ojson loadObject(const DeploymentOutcome& o, const LoadSpec& spec)
{
    const LoadFigures& f = o.load;
    ojson j;
    j["protocol"] = loadProtocolName(spec.protocol);
    if (spec.protocol == LoadProtocol::Concurrency)
        j["concurrency"] = spec.concurrency;
    else
        j["request_rate"] = std::isinf(spec.requestRate) ? ojson("inf") : ojson(spec.requestRate);
    if (!o.loadError.empty()) {
        j["error"] = o.loadError;
        return j;
    }
    auto stats = [](double mean, double p50, double p90, double p99) {
        return ojson{{"mean", finite(mean)}, {"p50", finite(p50)}, {"p90", finite(p90)}, {"p99", finite(p99)}};
    };
    j["requests"] = f.requests;
    j["warmup_requests"] = spec.warmup();
    j["ttft_ms"] = stats(f.ttftMeanMs, f.ttftP50Ms, f.ttftP90Ms, f.ttftP99Ms);
    // One output token has no gap between tokens: no TPOT, null rather than 0.
    j["tpot_ms"] = o.hasTpot() ? stats(f.tpotMeanMs, f.tpotP50Ms, f.tpotP90Ms, f.tpotP99Ms) : ojson(nullptr);
    j["e2e_ms_mean"] = finite(f.e2eMeanMs);
    j["output_tokens_per_s"] = finite(f.outputTokensPerS);
    j["output_tokens_per_s_per_gpu"] = finite(f.tokensPerSPerGpu);
    j["capacity_requests_per_s"] = finite(f.capacityRequestsPerS);
    j["offered_requests_per_s"] = std::isinf(f.offeredRequestsPerS) ? ojson("inf") : ojson(finite(f.offeredRequestsPerS));
    j["saturated"] = f.saturated;
    j["within_limits"] = o.loadVerdict.withinLimits;
    j["limit_reasons"] = o.loadVerdict.reasons;
    if (f.ttftAt90Ms > 0 || f.ttftAt110Ms > 0)
        j["ttft_ms_mean_at_rate_x0.9_x1.1"] = {finite(f.ttftAt90Ms), finite(f.ttftAt110Ms)};
    if (f.pools) {
        j["prefill_wait_ms_mean"] = finite(f.prefillWaitMeanMs);
        j["kv_transfer_ms_mean"] = finite(f.kvTransferMeanMs);
        j["decode_wait_ms_mean"] = finite(f.decodeWaitMeanMs);
    }
    j["mean_running"] = finite(f.meanRunning);
    j["mean_queued"] = finite(f.meanQueued);
    j["steps"] = f.steps;
    return j;
}

ojson deploymentObject(const DeploymentOutcome& o)
{
    if (!o.twoPools()) {
        ojson j = o.pools.empty() ? ojson::object() : poolObject(o.pools.front());
        j["valid"] = o.valid;
        j["reasons"] = o.reasons;
        if (o.underLoad && !o.pools.empty())
            j["load"] = loadObject(o, o.pools.front().scenario.workload.load);
        return j;
    }
    const Scenario& s = o.pools[1].scenario; // the decode pool's: the scenario's profile, link and load
    ojson j;
    j["scenario"] = o.scenarioName;
    j["profile"] = profileOf(s.cluster).name;
    j["serving"] = servingModeName(ServingMode::Disaggregated);
    j["valid"] = o.valid;
    j["reasons"] = o.reasons;
    writeFigures(j, o.costed, hasTpot(s.workload), o.outputTokensPerS, o.tokensPerSPerGpu, o.ttftMs, o.tpotMs, o.e2eMs);
    j["requests_per_s"] = figure(o.costed, o.requestsPerS);
    j["gpus"] = o.gpus;
    j["limited_by"] = disaggLimitName(o.limitedBy);
    j["kv_transfer"] = kvLinkName(s.workload.kvTransfer);
    j["kv_bytes_per_request"] = figure(o.costed, o.kvBytesPerRequest);
    j["kv_link_requests_per_s"] = figure(o.costed, o.kvLinkRequestsPerS);
    j["kv_link_load"] = figure(o.costed, o.kvLinkLoad);
    if (o.costed)
        for (const PoolOutcome& pool : o.pools) {
            ojson x = poolObject(pool);
            x["gpus"] = pool.gpus;
            x["requests_per_s"] = finite(pool.requestsPerS);
            j[poolRoleName(pool.role)] = x;
        }
    if (o.underLoad)
        j["load"] = loadObject(o, s.workload.load);
    return j;
}

ojson accountObject(const PoolOutcome& pool, const CostAccount& a)
{
    ojson j = {{"pool", pool.name()}, {"costed", a.costed}, {"unit", a.unit},
               {"gpu_us_per_token", finite(a.gpuUsPerToken)}, {"tokens_per_step", finite(a.tokensPerStep)},
               {"gpu_us_per_token_per_step_us", finite(a.perStepUs)}, {"bubble_share", finite(a.bubbleShare)},
               {"overlap_share", finite(a.overlapShare)}, {"launch_share", finite(a.launchShare)},
               {"communication_share", finite(a.commShare)}, {"drafting_share", finite(a.draftShare)}};
    ojson parts = ojson::array();
    for (const CostPart& p : a.parts)
        parts.push_back({{"name", p.name}, {"kind", costPartKindName(p.kind)}, {"in_busiest_stage", p.inBusiestStage},
                         {"step_us", finite(p.stepUs)}, {"comm_us", finite(p.commUs)},
                         {"launch_us", finite(p.launchUs)}, {"gpu_us_per_token", finite(p.gpuUsPerToken)}});
    j["parts"] = parts;
    return j;
}

ojson comparisonObject(const PlanComparison& c)
{
    ojson j = {{"this", c.thisName}, {"reference", c.refName}, {"unit", c.unit}, {"comparable", c.comparable},
               {"identical", c.identical}, {"same_work_per_step", c.sameWorkPerStep}, {"ratio", finite(c.ratio)},
               {"this_tokens_per_s_per_gpu", finite(c.thisTokensPerSPerGpu)},
               {"reference_tokens_per_s_per_gpu", finite(c.refTokensPerSPerGpu)},
               {"this_gpu_us_per_token", finite(c.thisPerToken)},
               {"reference_gpu_us_per_token", finite(c.refPerToken)}, {"headline", c.headline}};
    ojson parts = ojson::array();
    for (const ComparedPart& p : c.parts)
        parts.push_back({{"name", p.name}, {"kind", costPartKindName(p.kind)},
                         {"this_step_us", finite(p.thisStepUs)}, {"this_comm_us", finite(p.thisCommUs)},
                         {"reference_step_us", finite(p.refStepUs)}, {"reference_comm_us", finite(p.refCommUs)},
                         {"this_gpu_us_per_token", finite(p.thisPerToken)},
                         {"reference_gpu_us_per_token", finite(p.refPerToken)}});
    j["parts"] = parts;
    ojson lines = ojson::array();
    for (const ExplainLine& l : c.lines)
        lines.push_back({{"lead", l.lead}, {"text", l.text}});
    j["lines"] = lines;
    return j;
}

ojson deploymentComparisonObject(const DeploymentComparison& c)
{
    ojson j = {{"this", c.thisName}, {"reference", c.refName}, {"ratio", finite(c.ratio)},
               {"this_tokens_per_s_per_gpu", finite(c.thisTokensPerSPerGpu)},
               {"reference_tokens_per_s_per_gpu", finite(c.refTokensPerSPerGpu)},
               {"this_gpu_us_per_token", finite(c.thisPerToken)}, {"reference_gpu_us_per_token", finite(c.refPerToken)},
               {"headline", c.headline},
               {"ratio_under_load", figure(c.underLoad.ratio > 0, c.underLoad.ratio)},
               {"load_lines", c.underLoad.lines}};
    ojson pools = ojson::array();
    for (size_t i = 0; i < c.pools.size(); ++i) {
        ojson p = comparisonObject(c.pools[i]);
        p["pool"] = c.poolNames[i];
        pools.push_back(p);
    }
    j["pools"] = pools;
    return j;
}

} // namespace

std::string deploymentToJson(const DeploymentOutcome& o, int indent) { return deploymentObject(o).dump(indent); }

std::string evaluationToJson(const Scenario& s, const Plan& p, const SimResult& r, int indent)
{
    return deploymentToJson(deploymentOutcome(s, p, r), indent);
}

std::string disaggregatedEvaluationToJson(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r,
                                          int indent)
{
    return deploymentToJson(deploymentOutcome(s, p, r), indent);
}

namespace {
// A pool's step timeline as JSON (timelineToJson).
ojson timelineObject(const StepTimeline& t, const std::string& pool)
{
    auto lane = [](const std::vector<TimelineBar>& bars) {
        ojson a = ojson::array();
        for (const TimelineBar& b : bars)
            a.push_back({{"kind", barKindName(b.kind)},
                         {"operator", b.id == OpId::Count ? ojson(nullptr) : ojson(opName(b.id))},
                         {"label", b.label},
                         {"link", b.link},
                         {"start_us", finite(b.startUs)},
                         {"duration_us", finite(b.durationUs)}});
        return a;
    };
    ojson j = {{"pool", pool},
               {"ok", t.ok},
               {"unit", t.unit},
               {"stages", t.stages},
               {"micro_batches", t.microBatches},
               {"step_us", finite(t.stepUs)},
               {"cycle_us", finite(t.cycleUs)},
               {"step", lane(t.step)},
               {"cycle", lane(t.cycle)}};
    return j;
}
} // namespace

std::string timelineToJson(const StepTimeline& t, const std::string& pool, int indent)
{
    return timelineObject(t, pool).dump(indent);
}


std::string explanationToJson(const DeploymentExplanation& e, int indent, bool withTimelines)
{
    const DeploymentOutcome& o = e.outcome;
    ojson j;
    j["evaluation"] = deploymentObject(o);
    ojson cost = {{"gpu_us_per_token", figure(o.costed, o.gpuUsPerToken())}};
    ojson pools = ojson::array();
    for (size_t i = 0; i < o.pools.size(); ++i)
        pools.push_back(accountObject(o.pools[i], e.accounts[i]));
    cost["pools"] = pools;
    if (o.twoPools()) {
        ojson split = ojson::array();
        for (const DeploymentAccount::Pool& p : deploymentAccount(o).pools)
            split.push_back({{"pool", p.name}, {"gpus", p.gpus}, {"gpu_us_per_token", finite(p.gpuUsPerToken)},
                             {"busy_share", finite(p.busyShare)}});
        cost["deployment"] = split;
    }
    j["cost"] = cost;
    j["recipe"] = {{"explanation", e.recipeExplanation},
                   {"costed", e.recipe.has_value()},
                   {"valid", e.recipe && e.recipe->valid},
                   {"output_tokens_per_s_per_gpu", figure(e.recipe.has_value(), e.recipe ? e.recipe->tokensPerSPerGpu : 0.0)},
                   {"ratio", figure(e.recipe.has_value() && o.costed, e.ratioToRecipe)},
                   {"output_tokens_per_s_per_gpu_under_load",
                    figure(e.ratioToRecipeUnderLoad > 0, e.recipe ? e.recipe->load.tokensPerSPerGpu : 0.0)},
                   {"ratio_under_load", figure(e.ratioToRecipeUnderLoad > 0, e.ratioToRecipeUnderLoad)}};
    ojson versus = ojson::array();
    for (size_t i = 0; i < e.versusRecipe.size(); ++i) {
        ojson c = comparisonObject(e.versusRecipe[i]);
        c["pool"] = o.pools[i].name();
        versus.push_back(c);
    }
    j["versus_recipe"] = versus;
    if (withTimelines) {
        ojson timelines = ojson::array();
        for (const PoolOutcome& pool : o.pools)
            timelines.push_back(timelineObject(stepTimeline(pool), pool.name()));
        j["timelines"] = timelines;
    }
    return j.dump(indent);
}

std::string comparisonToJson(const DeploymentOutcome& a, const DeploymentOutcome& b, const DeploymentComparison& c,
                             int indent)
{
    ojson j = deploymentComparisonObject(c);
    j["a"] = deploymentObject(a);
    j["b"] = deploymentObject(b);
    return j.dump(indent);
}

namespace {
ojson gapSideObject(const EngineGapSide& side)
{
    ojson j = {{"found", side.found},
               {"proved_optimal", side.found && side.proved},
               {"proved_none", !side.found && side.proved},
               {"from_result", side.fromResult},
               {"output_tokens_per_s_per_gpu", finite(side.tokensPerSPerGpu())}};
    if (!side.found) {
        j["plan"] = nullptr;
        j["message"] = side.message;
    } else if (side.deployment.pools.size() == 1) {
        j["plan"] = planObject(side.deployment.pools[0].scenario, side.deployment.pools[0].plan);
    } else {
        ojson pools = ojson::object();
        for (const PoolOutcome& p : side.deployment.pools)
            pools[p.role == PoolRole::Prefill ? "prefill" : "decode"] = planObject(p.scenario, p.plan);
        j["plan"] = pools;
    }
    return j;
}
} // namespace

std::string engineGapToJson(const EngineGap& g, int indent)
{
    if (!g.applies)
        return "null";
    ojson rules = ojson::array(), causes = ojson::array();
    for (const FieldError& f : g.rulesBroken)
        rules.push_back({{"field", f.where}, {"reason", f.reason}});
    for (const ExplainLine& l : g.causes)
        causes.push_back({{"lead", l.lead}, {"text", l.text}});
    ojson j = {{"engine", engineInfo(g.engine).name},
               {"engine_label", g.engineName},
               {"scenario_runnable", g.scenarioRunnable},
               {"runnable", gapSideObject(g.runnable)},
               {"per_operator", gapSideObject(g.perOperator)},
               {"gain", finite(g.gain)},
               {"bound", gapBoundName(g.bound)},
               {"stopped", g.stopped},
               {"headline", g.headline},
               {"rules_broken", rules},
               {"causes", causes}};
    return j.dump(indent);
}

} // namespace shardlab
