// The ppo search's progress values (rl/ppo_progress.h).
#include "rl/ppo_progress.h"

#include <string>

namespace shardlab::rl {

void publishMetrics(BudgetedEvaluator& ev, const SearchSpace& space, const PpoUpdateMetrics& m, const GreedyView& g,
                    const std::vector<std::int64_t>& anchors, int updates, int eliteAge)
{
    ev.setMetric("updates", updates);
    ev.setMetric("elite_age", eliteAge);
    for (size_t i = 0; i < g.attention.size(); ++i)
        ev.setMetric("attention:" + std::to_string(i), g.attention[i]);
    std::vector<double> share(g.anchorProbabilities.size(), 0.0);
    for (std::int64_t a : anchors)
        if (a >= 0 && a < static_cast<std::int64_t>(share.size()))
            share[a] += 1.0 / anchors.size();
    for (size_t i = 0; i < share.size(); ++i)
        ev.setMetric("anchor:" + std::to_string(i), share[i]);
    ev.setMetric("policy_loss", m.policyLoss);
    ev.setMetric("entropy", m.entropy);
    ev.setMetric("approx_kl", m.approxKl);
    ev.setMetric("clip_fraction", m.clipFraction);
    ev.setMetric("grad_norm", m.gradNorm);
    ev.setMetric("baseline", m.baseline);
    ev.setMetric("confidence", g.confidence);
    ev.setMetric("from_scratch", g.anchorProbabilities.empty() ? 1.0 : g.anchorProbabilities[0]);
    // Per slot, the probability of each value given the greedy choices before it.
    std::vector<SearchProgress::SlotDistribution> slots(space.slotCount());
    for (int k = 0; k < space.slotCount(); ++k)
        slots[k] = {space.slots()[k], g.probabilities[k]};
    ev.setSlotDistributions(std::move(slots));
}

} // namespace shardlab::rl
