// A deployment and what the simulator says of it, one shape for one-pool and two-pool
// serving: the headline figures (tokens/s per GPU, TTFT, TPOT, ...) are computed once here
// and every front (the CLI's evaluate, explain and compare, the window's Plan and Compare
// tabs, the JSON reports) reads them from this outcome.
//
// One pool: the scenario's plan on every GPU, priced on the scenario itself. Two pools
// (disaggregated serving): a prefill pool and a decode pool, each priced on its pool
// scenario (model/disaggregated_plan.h), the deployment serving the least of the pools'
// and the KV links' request rates (sim/disaggregated.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/disaggregated_plan.h"
#include "sim/disaggregated.h"
#include "sim/megatron.h"
#include "sim/serving_load.h"
#include "sim/simulator.h"

namespace shardlab {

// What a scenario is served with: one plan, or a prefill pool's and a decode pool's.
struct Deployment {
    Plan plan;                              // one pool
    std::optional<DisaggregatedPlan> pools; // two pools
    static Deployment onePool(const Plan& p) { return {p, std::nullopt}; }
    static Deployment twoPools(const DisaggregatedPlan& d) { return {Plan{}, d}; }
    bool operator==(const Deployment& o) const = default;
};

// One pool of a deployment: its plan, the scenario it is priced on and the result.
struct PoolOutcome {
    bool whole = true;                // the deployment's only pool
    PoolRole role = PoolRole::Decode; // two pools: which one
    Scenario scenario;                // the scenario itself, or the pool's scenario
    Plan plan;
    SimResult result;                 // with the per-operator breakdown
    long long gpus = 0;
    double requestsPerS = 0;          // requests this pool alone would serve per second
    std::vector<std::string> reasons; // its violations in words
    bool costed() const { return result.structureChecks == 0; }
    std::string name() const;         // "plan", "prefill pool", "decode pool"
};

struct DeploymentOutcome {
    ServingMode serving = ServingMode::Aggregated;
    std::string scenarioName;         // the deployment's scenario (a pool's is named for its pool)
    bool valid = false;
    bool costed = false;              // the simulator priced every pool (the degrees fit)
    std::vector<std::string> reasons; // every violation, a pool's prefixed with its name
    long long gpus = 0;               // every GPU of the deployment
    double outputTokensPerS = 0;      // 0 when not costed
    double tokensPerSPerGpu = 0;
    double ttftMs = 0, tpotMs = 0, e2eMs = 0;
    double requestsPerS = 0;
    std::vector<PoolOutcome> pools;   // one, or the prefill pool then the decode pool
    // Two pools: what limits the served rate, and the KV links between the pools.
    DisaggLimit limitedBy = DisaggLimit::Prefill;
    double kvBytesPerRequest = 0, kvLinkRequestsPerS = 0, kvLinkLoad = 0;
    // Under the scenario's load protocol (workload.load, not the steady state): the
    // request-level run of the plan (sim/serving_load.h), or why it could not run. The
    // headline above stays the steady state that searches optimise.
    bool underLoad = false;
    LoadFigures load;
    std::string loadError;
    LoadVerdict loadVerdict; // whether the run holds the limits (judgeLoad), when it ran

    bool twoPools() const { return pools.size() == 2; }
    // Whether its requests have a TPOT (hasTpot of the pool that decodes: the only pool, or
    // the decode pool): one output token has none, in the steady state and under load alike.
    bool hasTpot() const { return !pools.empty() && shardlab::hasTpot(pools.back().scenario.workload); }
    // The load run ran and breaks a limit (saturated, p90 TTFT or TPOT), whatever the
    // steady state says.
    bool breaksLimitsUnderLoad() const { return underLoad && loadError.empty() && !loadVerdict.withinLimits; }
    // GPU·µs one output token costs the deployment: 1e6 / (tokens/s per GPU); 0 when it
    // serves nothing.
    double gpuUsPerToken() const;
    // The deployment breaks `v` by its simulator verdict: a TTFT limit by the prefill pool's
    // (two pools: the one whose TTFT the deployment reports), a TPOT limit by the decode
    // pool's; one pool is both.
    bool breaks(Violation v) const;
    Deployment deployment() const;
};

// Writes a deployment's plan file (atomically, io/scenario_json.h), its scenario embedded.
Status saveDeploymentFile(const std::string& path, const Deployment& d, const Scenario& s);

// Why the deployment's shape does not suit the scenario (two pools need disaggregated
// serving, and disaggregated serving needs two pools); "" when it does.
std::string deploymentShapeError(const Scenario& s, const Deployment& d);
// Evaluates a deployment on the scenario (a deployment whose shape does not suit it is
// priced as given and reported invalid, deploymentShapeError first among the reasons).
DeploymentOutcome evaluateDeployment(const Scenario& s, const Deployment& d, SimConstants constants = {});
// The outcome of results already computed (the searches', the window's simulators).
DeploymentOutcome deploymentOutcome(const Scenario& s, const Plan& p, const SimResult& r);
DeploymentOutcome deploymentOutcome(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r);

// The Megatron recipe for the scenario's deployment: one plan (sim/megatron.h), or for
// disaggregated serving the recipe on each pool at the best split (sim/disaggregated.h).
struct DeploymentRecipe {
    Deployment deployment;
    DeploymentOutcome outcome; // with the per-operator breakdowns
    bool found = false;        // a valid deployment within the scenario's constraints
    int evaluations = 0;
    std::string explanation;
};
DeploymentRecipe megatronDeployment(const Scenario& s);

// A plan's result on the scenario it was priced on, as one pool (the window's simulators).
PoolOutcome poolOutcome(const Scenario& priced, const Plan& p, const SimResult& r);

// Human-readable reasons for one result's violations, one per line.
std::vector<std::string> violationReasons(const Scenario& s, const Plan& p, const SimResult& r);

} // namespace shardlab
