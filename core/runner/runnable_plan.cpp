#include "runner/runnable_plan.h"

#include <algorithm>

#include "runner/run_search.h"
#include "search/search_space.h"

namespace shardlab {

NearestRunnable nearestRunnablePlan(const Scenario& s, const Plan& p, Engine e)
{
    Scenario r = s;
    if (engineOfCollectives(r.workload.engine) != e)
        r.workload.engine = collectivesOf(e);
    r.workload.runnable = true;
    // Pins one degree to the plan's value unless the scenario's constraints exclude it.
    auto pin = [](std::vector<int>& allowed, int v) {
        if (constraintAllows(allowed, v))
            allowed = {v};
    };
    struct Step {
        bool tp, pp, ep;
        const char* kept;
    };
    const bool moe = s.model.isMoe();
    for (const Step& step : {Step{true, true, true, moe ? "TP, PP, EP and instances" : "TP and PP"},
                             Step{true, true, false, "TP and PP"}, Step{true, false, false, "TP"},
                             Step{false, false, false, "none of its degrees"}}) {
        Scenario t = r;
        if (step.tp)
            pin(t.constraints.tensorParallel, p.tensorParallel);
        if (step.pp)
            pin(t.constraints.pipelineParallel, p.pipelineParallel);
        if (step.ep && moe) {
            pin(t.constraints.expertParallel, p.expertParallel);
            pin(t.constraints.instances, p.instances);
        }
        if (!checkConstraints(t).empty())
            continue;
        SearchOptions o;
        o.algorithm = "exact";
        const SearchOutcome out = runSearch(t, o);
        if (!out.found || out.twoPools())
            continue;
        NearestRunnable n;
        n.found = true;
        n.plan = out.best;
        n.result = out.bestResult;
        n.scenario = r;
        n.kept = step.kept;
        return n;
    }
    return {};
}

} // namespace shardlab
