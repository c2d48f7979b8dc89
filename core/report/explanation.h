// Everything `shardlab-cli explain` says of a deployment, computed once: the outcome, each
// pool's cost account, and the comparison with the Megatron recipe as the window's Plan tab
// draws it (each pool against the recipe on that pool's GPUs), beside the recipe's whole
// deployment for the headline ratio.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/plan_comparison.h"

namespace shardlab {

struct DeploymentExplanation {
    DeploymentOutcome outcome;
    std::vector<CostAccount> accounts;     // one per pool, in the outcome's order
    std::optional<DeploymentOutcome> recipe; // the recipe's deployment, when it is costed
    std::string recipeExplanation;
    double ratioToRecipe = 0;              // tokens/s per GPU over the recipe's (0 without one)
    // The same under the scenario's load protocol (workload.load), when both plans' runs
    // ran: what each serves there, which the steady state above does not say (a loop of
    // fewer requests than the recipe's batch never fills it). 0 otherwise.
    double ratioToRecipeUnderLoad = 0;
    // Both it and the recipe serve the offered open-loop rate (servesOfferedLoad): the ratio
    // under load is then 1, whatever the two runs' samples give.
    bool bothServeOfferedLoad = false;
    // One per pool: against the recipe on that pool's scenario (not comparable when the
    // pool is not costed).
    std::vector<PlanComparison> versusRecipe;
};

DeploymentExplanation explainDeployment(const Scenario& s, const Deployment& d);

} // namespace shardlab
