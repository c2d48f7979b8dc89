// Moves of a search's best plan (search/best_plan_moves.h).
#include "search/best_plan_moves.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "model/plan_checks.h"

namespace shardlab {

namespace {

// `plan` priced at its largest valid batch (raiseBatchThroughEvaluator); false when the
// evaluator refused.
bool raisedToLargestBatch(BudgetedEvaluator& ev, const SearchSpace& space, const Plan& plan)
{
    bool refused = false;
    raiseBatchThroughEvaluator(ev, plan, space.batchMax(), &refused);
    return !refused;
}

// Each variant of the best plan priced once, in order (one call each); the best of them,
// when it serves more than the best plan, priced at its largest valid batch. False when
// the evaluator refused.
bool bestVariantRaised(BudgetedEvaluator& ev, const SearchSpace& space, const std::vector<Plan>& variants)
{
    const double bestValue = ev.bestValue();
    Plan winner;
    double winnerValue = bestValue;
    for (const Plan& p : variants) {
        Evaluation e;
        if (!ev.evaluate(p, e))
            return false;
        if (e.valid && e.tokensPerSPerGpu > winnerValue) {
            winner = p;
            winnerValue = e.tokensPerSPerGpu;
        }
    }
    return winnerValue <= bestValue || raisedToLargestBatch(ev, space, winner);
}

} // namespace

bool moveRedundantExperts(BudgetedEvaluator& ev, const SearchSpace& space)
{
    if (space.redundantSlot() < 0 || !ev.haveBest())
        return true;
    const Plan best = ev.best();
    const int experts = space.scenario().model.moe.experts;
    std::vector<Plan> variants;
    for (const int r : {best.redundantExperts + best.expertParallel, best.redundantExperts - best.expertParallel}) {
        if (!isRedundantExpertCount(experts, best.expertParallel, r))
            continue;
        Plan p = best;
        p.redundantExperts = r;
        const std::vector<int> c = space.choiceNear(p);
        if (space.decode(c.data()).redundantExperts != r)
            continue; // the count is not in the space with these degrees
        variants.push_back(p);
    }
    return bestVariantRaised(ev, space, variants);
}

bool moveOperators(BudgetedEvaluator& ev, const SearchSpace& space)
{
    if (!ev.haveBest())
        return true;
    Plan plan = ev.best();
    double value = ev.bestValue();
    std::vector<int> c = space.choiceNear(plan);
    bool moved = false;
    for (int k = space.firstOpSlot(); k < space.slotCount(); ++k) {
        const Slot& slot = space.slots()[k];
        const int own = c[k];
        int chosen = own;
        for (int v = 0; v < static_cast<int>(slot.values.size()); ++v) {
            if (v == own)
                continue;
            c[k] = v;
            if (!space.isValid(c.data()))
                continue; // the option is masked with these degrees or these layouts
            Plan q = plan;
            q.setOption(slot.op, slot.values[v]);
            Evaluation e;
            if (!ev.evaluate(q, e))
                return false;
            if (e.valid && e.tokensPerSPerGpu > value) {
                plan = q;
                value = e.tokensPerSPerGpu;
                moved = true;
                chosen = v;
                break;
            }
        }
        c[k] = chosen;
    }
    return !moved || raisedToLargestBatch(ev, space, plan);
}

bool moveMicroBatches(BudgetedEvaluator& ev, const SearchSpace& space)
{
    if (!ev.haveBest())
        return true;
    const Plan best = ev.best();
    // The counts nearest the plan's first (the larger of two as near), so a short budget
    // tries the likeliest.
    std::vector<int> counts;
    for (const int m : space.slots()[space.microSlot()].values)
        if (m != best.microBatches && m <= best.pipelineParallel)
            counts.push_back(m);
    std::stable_sort(counts.begin(), counts.end(), [&](int a, int b) {
        const int da = std::abs(a - best.microBatches), db = std::abs(b - best.microBatches);
        return da != db ? da < db : a > b;
    });
    std::vector<Plan> variants;
    for (const int m : counts) {
        Plan p = best;
        p.microBatches = m;
        p.batch = std::max(p.batch, m);
        variants.push_back(p);
    }
    return bestVariantRaised(ev, space, variants);
}

} // namespace shardlab
