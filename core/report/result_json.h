// JSON form of what the simulator says of a deployment (the CLI's --json output and the
// window's exports), of a cost account, and of a comparison. The headline figures
// (output_tokens_per_s, ..._per_gpu, ttft_ms, tpot_ms, e2e_ms, gpu_us_per_token) are
// written by one function for the deployment and for each pool. Never contains NaN or Inf.
#pragma once

#include <string>

#include "report/cost_account.h"
#include "sim/deployment.h"
#include "report/explanation.h"
#include "report/engine_gap.h"
#include "report/plan_comparison.h"
#include "report/step_timeline.h"

namespace shardlab {

// One pool: the plan, validity and violations with reasons, throughput, TTFT, TPOT, memory
// breakdown and the per-operator breakdown at the top level. Two pools: the deployment's
// figures, "limited_by", the KV links' figures, and "prefill" and "decode" objects, each a
// pool's evaluation on its own pool scenario with its "gpus" and "requests_per_s".
std::string deploymentToJson(const DeploymentOutcome& o, int indent = 2);
std::string evaluationToJson(const Scenario& s, const Plan& p, const SimResult& r, int indent = 2);
std::string disaggregatedEvaluationToJson(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r,
                                          int indent = 2);

// `shardlab-cli explain`: "evaluation" (as above), "cost" (each pool's account, and for two
// pools the deployment's split between them), "recipe" (its explanation, whether it has a
// costed deployment, its tokens/s per GPU and the ratio to it) and "versus_recipe" (per
// pool, the comparison with the recipe on that pool); with `withTimelines` also "timelines",
// each pool's step timeline as timelineToJson writes it.
std::string explanationToJson(const DeploymentExplanation& e, int indent = 2, bool withTimelines = false);
// `shardlab-cli compare`: "a" and "b" (evaluations), "ratio", the GPU·µs per token of each,
// "headline", and "pools" (one comparison per pool).
std::string comparisonToJson(const DeploymentOutcome& a, const DeploymentOutcome& b, const DeploymentComparison& c,
                             int indent = 2);

// The engine gap of a result that names an engine (report/engine_gap.h): "engine",
// "engine_label", "scenario_runnable", "runnable" and "per_operator" (each: found,
// proved_optimal, proved_none, from_result, output_tokens_per_s_per_gpu, plan), "gain"
// (per-operator / runnable), "bound" (exact, at_least, at_most, estimate, none), "stopped",
// "headline", "rules_broken" (field, reason) and "causes" (lead, text). "null" when the
// scenario names no engine.
std::string engineGapToJson(const EngineGap& g, int indent = 2);

// A pool's step timeline (report/step_timeline.h): "pool", "unit", "stages",
// "micro_batches", "step_us", "cycle_us", and "step" and "cycle" lanes of bars (kind,
// operator or null, label, link, start_us, duration_us). ok false: the pool is not costed.
std::string timelineToJson(const StepTimeline& t, const std::string& pool, int indent = -1);

} // namespace shardlab
