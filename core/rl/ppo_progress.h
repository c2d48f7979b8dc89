// What a ppo search reports while it runs: the named values of the progress reports and
// each slot's distribution along the greedy plan (docs/ppo.md).
#pragma once

#include <cstdint>
#include <vector>

#include "rl/ppo_agent.h"
#include "search/budgeted_evaluator.h"
#include "search/search_space.h"

namespace shardlab::rl {

// Named values for the progress reports (the GUI plots confidence and entropy), and each
// slot's probabilities along the greedy plan (SearchProgress::slotDistributions: the GUI
// shows the operator slots' as a heatmap).
// "attention:<i>" is the scenario context's attention over memory place i (0 = the
// no-elite token, i = elite i) and "anchor:<i>" the share of the last rollout's proposals
// drawn from place i: which elite each proposal came from.
void publishMetrics(BudgetedEvaluator& ev, const SearchSpace& space, const PpoUpdateMetrics& m, const GreedyView& g,
                    const std::vector<std::int64_t>& anchors, int updates, int eliteAge);

} // namespace shardlab::rl
