#include "sim/deployment.h"

#include "model/printf_text.h"
#include "io/scenario_json.h"
#include "sim/serving_load_disaggregated.h"

#include <algorithm>
#include <cmath>

namespace shardlab {

namespace {
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// The headline figures, for one pool and two alike (finite; 0 where not priced).
void setHeadline(DeploymentOutcome& o, const Scenario& s, double outputTokensPerS, double tokensPerSPerGpu,
                 double ttftMs, double tpotMs, double e2eMs)
{
    o.outputTokensPerS = finite(outputTokensPerS);
    o.tokensPerSPerGpu = finite(tokensPerSPerGpu);
    o.ttftMs = finite(ttftMs);
    o.tpotMs = finite(tpotMs);
    o.e2eMs = finite(e2eMs);
    o.requestsPerS = requestsPerS(s.workload, o.outputTokensPerS);
}

PoolOutcome pricedPool(const Scenario& priced, const Plan& p, const SimResult& r, bool whole, PoolRole role)
{
    PoolOutcome o;
    o.whole = whole;
    o.role = role;
    o.scenario = priced;
    o.plan = p;
    o.result = r;
    o.gpus = p.gpus();
    o.reasons = violationReasons(priced, p, r);
    return o;
}
} // namespace

std::vector<std::string> violationReasons(const Scenario& s, const Plan& p, const SimResult& r)
{
    std::vector<std::string> out;
    for (int b = 0; b < kPlanCheckCount; ++b)
        if (r.structureChecks & (1u << b))
            out.push_back(describePlanCheck(static_cast<PlanCheck>(b), p, s).reason);
    // An unbounded figure (SimResult::unbounded, or too large to be a real one) is said in
    // words, not printed. A limit at kUnlimitedSloMs binds nothing (a pool's scenario holds the
    // other pool's limit there): a figure above it is named against the largest limit a
    // workload may hold, never as "exceeds the limit of 1e+09 ms" as if someone had set it.
    const std::string kUnboundedWhy = "unbounded (a bandwidth or peak of the scenario is effectively zero)";
    auto latencyReason = [&](const char* what, const char* detail, double valueMs, double limitMs, int decimals) {
        const bool limitSet = limitMs < kUnlimitedSloMs;
        const std::string name = std::string(what) + (limitSet ? " SLO: " : ": ");
        if (!isShownFigure(valueMs))
            return name + kUnboundedWhy + (limitSet ? printfText(", the limit is %g ms", limitMs) : std::string());
        const std::string figure = printfText("%.*f ms", decimals, valueMs) + detail;
        return name + figure
            + (limitSet ? printfText(" exceeds the limit of %g ms", limitMs)
                        : printfText(", above the largest limit a workload may hold (%g ms)", kUnlimitedSloMs));
    };
    if (r.violates(Violation::Memory))
        out.push_back(isShownFigure(r.memory.totalGb)
                          ? printfText("memory: needs %.1f GB per GPU, the GPU has %g GB", r.memory.totalGb, r.memory.capacityGb)
                          : "memory: " + kUnboundedWhy);
    if (r.violates(Violation::TtftSlo))
        out.push_back(latencyReason("TTFT",
                                    s.workload.serving == ServingMode::Prefill
                                        ? " (waiting for a pass, the pass, the KV transfer)"
                                        : "",
                                    r.ttftMs, s.workload.ttftSloMs, 1));
    if (r.violates(Violation::TpotSlo))
        out.push_back(latencyReason("TPOT", "", r.tpotMs, s.workload.tpotSloMs, 2));
    if (r.violates(Violation::TokenBudget) && s.workload.serving == ServingMode::Prefill) {
        out.push_back(printfText("token budget: a prefill pass carries %.0f tokens (%.0f prompts of %d), above "
                                 "max_num_tokens %d; use fewer prompts per pass or more micro-batches",
                                 r.stepTokens, double(p.batch) / std::max(1, p.microBatches), s.workload.promptTokens,
                                 s.workload.maxNumTokens));
    } else if (r.violates(Violation::TokenBudget)) {
        out.push_back(printfText("token budget: an engine step carries %.0f tokens (%.0f decoding sequences, each "
                                 "bringing %.2f prompt tokens per step), above max_num_tokens %d; use a smaller batch "
                                 "or more micro-batches",
                                 r.stepTokens, double(p.batch) / std::max(1, p.microBatches),
                                 double(s.workload.promptTokens) / std::max(1, s.workload.outputTokens),
                                 s.workload.maxNumTokens));
    }
    return out;
}

PoolOutcome poolOutcome(const Scenario& priced, const Plan& p, const SimResult& r)
{
    return pricedPool(priced, p, r, true, PoolRole::Decode);
}

std::string PoolOutcome::name() const
{
    if (whole)
        return "plan";
    return role == PoolRole::Prefill ? "prefill pool" : "decode pool";
}

double DeploymentOutcome::gpuUsPerToken() const
{
    return costed && tokensPerSPerGpu > 0 && std::isfinite(tokensPerSPerGpu) ? 1e6 / tokensPerSPerGpu : 0.0;
}

bool DeploymentOutcome::breaks(Violation v) const
{
    if (pools.empty())
        return false;
    return (v == Violation::TtftSlo ? pools.front() : pools.back()).result.violates(v);
}

Deployment DeploymentOutcome::deployment() const
{
    if (twoPools())
        return Deployment::twoPools({pools[0].plan, pools[1].plan});
    return Deployment::onePool(pools.empty() ? Plan{} : pools[0].plan);
}

DeploymentOutcome deploymentOutcome(const Scenario& s, const Plan& p, const SimResult& r)
{
    DeploymentOutcome o;
    o.serving = s.workload.serving;
    o.scenarioName = s.name;
    o.pools.push_back(pricedPool(s, p, r, true, PoolRole::Decode));
    o.reasons = o.pools[0].reasons;
    o.gpus = s.cluster.totalGpus();
    o.costed = r.structureChecks == 0;
    o.valid = r.valid;
    if (!o.costed)
        return o;
    setHeadline(o, s, r.outputTokensPerS, r.tokensPerSPerGpu, r.ttftMs, r.tpotMs, r.e2eMs);
    o.pools[0].requestsPerS = o.requestsPerS;
    if (!s.workload.load.steady()) {
        o.underLoad = true;
        const LoadRun run = simulateLoad(Simulator(s), p, r);
        o.load = run.figures;
        o.loadError = run.error;
        if (run.ok())
            o.loadVerdict = judgeLoad(s.workload, run.figures);
    }
    return o;
}

DeploymentOutcome deploymentOutcome(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r)
{
    DeploymentOutcome o;
    o.serving = ServingMode::Disaggregated;
    o.scenarioName = s.name;
    o.gpus = p.prefill.gpus() + p.decode.gpus();
    for (const FieldError& e : r.structure)
        o.reasons.push_back(e.where + ": " + e.reason);
    if (!r.structure.empty()) {
        // The split does not fit the cluster: the pools are shown as planned, not priced.
        for (PoolRole role : {PoolRole::Prefill, PoolRole::Decode}) {
            PoolOutcome pool;
            pool.whole = false;
            pool.role = role;
            pool.scenario = s;
            pool.plan = role == PoolRole::Prefill ? p.prefill : p.decode;
            pool.gpus = pool.plan.gpus();
            pool.result.structureChecks = 1u << static_cast<int>(PlanCheck::Tiling);
            o.pools.push_back(pool);
        }
        return o;
    }
    const int gp = static_cast<int>(p.prefill.gpus()), gd = static_cast<int>(p.decode.gpus());
    o.pools.push_back(pricedPool(poolScenario(s, PoolRole::Prefill, gp), p.prefill, r.prefill, false, PoolRole::Prefill));
    o.pools.push_back(pricedPool(poolScenario(s, PoolRole::Decode, gd), p.decode, r.decode, false, PoolRole::Decode));
    o.pools[0].requestsPerS = finite(r.prefillRequestsPerS);
    o.pools[1].requestsPerS = finite(r.decodeRequestsPerS);
    for (const PoolOutcome& pool : o.pools)
        for (const std::string& x : pool.reasons)
            o.reasons.push_back(pool.name() + ": " + x);
    o.costed = o.pools[0].costed() && o.pools[1].costed();
    o.valid = r.valid;
    o.limitedBy = r.limitedBy;
    o.kvBytesPerRequest = finite(r.kvBytesPerRequest);
    if (!o.costed)
        return o;
    setHeadline(o, s, r.outputTokensPerS, r.tokensPerSPerGpu, r.ttftMs, r.tpotMs, r.e2eMs);
    if (!s.workload.load.steady()) {
        o.underLoad = true;
        const LoadRun run = simulateDisaggregatedLoad(DisaggregatedSimulator(s), p, r, s.workload.load);
        o.load = run.figures;
        o.loadError = run.error;
        if (run.ok())
            o.loadVerdict = judgeLoad(s.workload, run.figures);
    }
    o.kvLinkRequestsPerS = finite(r.kvLinkRequestsPerS);
    o.kvLinkLoad = finite(r.kvLinkLoad);
    return o;
}

Status saveDeploymentFile(const std::string& path, const Deployment& d, const Scenario& s)
{
    return d.pools ? saveDisaggregatedPlanFile(path, *d.pools, &s) : savePlanFile(path, d.plan, &s);
}

std::string deploymentShapeError(const Scenario& s, const Deployment& d)
{
    const bool disaggregated = s.workload.serving == ServingMode::Disaggregated;
    if (d.pools && !disaggregated)
        return "a disaggregated plan (prefill and decode pools) needs a scenario whose workload.serving is "
               "\"disaggregated\"; scenario '" + s.name + "' is " + servingModeName(s.workload.serving);
    if (!d.pools && disaggregated)
        return "scenario '" + s.name + "' serves disaggregated: its plans have a \"prefill\" and a \"decode\" pool";
    return {};
}

DeploymentOutcome evaluateDeployment(const Scenario& s, const Deployment& d, SimConstants constants)
{
    DeploymentOutcome o;
    if (d.pools) {
        const DisaggregatedSimulator sim(s, constants);
        o = deploymentOutcome(s, *d.pools, sim.evaluate(*d.pools));
    } else {
        const Simulator sim(s, constants);
        o = deploymentOutcome(s, d.plan, sim.evaluate(d.plan));
    }
    const std::string shape = deploymentShapeError(s, d);
    if (!shape.empty()) {
        o.valid = false;
        o.reasons.insert(o.reasons.begin(), shape);
    }
    return o;
}

DeploymentRecipe megatronDeployment(const Scenario& s)
{
    DeploymentRecipe r;
    if (s.workload.serving == ServingMode::Disaggregated) {
        const DisaggregatedSimulator sim(s);
        const DisaggregatedRecipe rp = megatronDisaggregated(sim);
        r.deployment = Deployment::twoPools(rp.plan);
        r.outcome = deploymentOutcome(s, rp.plan, rp.result);
        r.found = rp.found;
        r.evaluations = rp.evaluations;
        r.explanation = rp.explanation;
        return r;
    }
    const Simulator sim(s);
    const RecipePlan rp = megatronPlan(sim);
    r.deployment = Deployment::onePool(rp.plan);
    r.outcome = deploymentOutcome(s, rp.plan, sim.evaluate(rp.plan)); // with the breakdown
    r.found = rp.found;
    r.evaluations = rp.evaluations;
    r.explanation = rp.explanation;
    return r;
}

} // namespace shardlab
