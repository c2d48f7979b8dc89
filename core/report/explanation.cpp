#include "report/explanation.h"

#include "sim/megatron.h"

namespace shardlab {

DeploymentExplanation explainDeployment(const Scenario& s, const Deployment& d)
{
    DeploymentExplanation e;
    e.outcome = evaluateDeployment(s, d);
    for (const PoolOutcome& pool : e.outcome.pools)
        e.accounts.push_back(costAccount(pool));
    const DeploymentRecipe rp = megatronDeployment(s);
    e.recipeExplanation = rp.explanation;
    const DeploymentOutcome& recipe = rp.outcome;
    if (recipe.costed) {
        e.ratioToRecipe = recipe.tokensPerSPerGpu > 0 ? e.outcome.tokensPerSPerGpu / recipe.tokensPerSPerGpu : 0;
        e.recipe = recipe;
        const DeploymentOutcome& o = e.outcome;
        if (o.underLoad && o.loadError.empty() && recipe.underLoad && recipe.loadError.empty()
            && recipe.load.tokensPerSPerGpu > 0) {
            e.bothServeOfferedLoad = servesOfferedLoad(o.load) && servesOfferedLoad(recipe.load);
            e.ratioToRecipeUnderLoad = e.bothServeOfferedLoad
                ? 1.0 // both serve the offered rate: the runs differ by their samples only
                : o.load.tokensPerSPerGpu / recipe.load.tokensPerSPerGpu;
        }
    }
    // Each pool against the recipe on the same pool: one pool, the recipe's plan; two pools,
    // the recipe applied to this pool's scenario (its GPUs), as the Plan tab compares.
    for (const PoolOutcome& pool : e.outcome.pools) {
        if (!pool.costed()) {
            e.versusRecipe.emplace_back();
            continue;
        }
        const Simulator sim(pool.scenario);
        const RecipePlan rp = megatronPlan(sim);
        const PoolOutcome ref = poolOutcome(pool.scenario, rp.plan, sim.evaluate(rp.plan));
        e.versusRecipe.push_back(comparePools(pool, ref, kThisPlanName, kRecipeName));
    }
    return e;
}

} // namespace shardlab
