// Searching a disaggregated scenario (docs/search.md, "Disaggregated serving"): the
// prefill:decode split is part of the search, and each pool's plan is searched on its own
// pool scenario by the chosen algorithm.
//
// Given a split, the two pools are independent (the deployment serves the least of the
// prefill pool's, the decode pool's and the KV links' request rates), so the best plan of
// a split is the best prefill plan with the best decode plan.
//   exact:    every split; each pool's optimum is certified by `exact` with a floor (only
//             plans that could beat the best deployment so far are examined), so the
//             claim is: optimal over every split and every pair of plans the simulator
//             accepts.
//   megatron: the recipe on each pool at every split; the best split.
//   others:   the splits ranked by the recipe's deployment; the budget shared by the
//             best-ranked ones (at least 500 calls per pool search), each pool searched
//             with the algorithm and its seed + the split's index.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "runner/run_search.h"
#include "sim/disaggregated.h"

namespace shardlab {

// The most prefill:decode splits one disaggregated search examines. Each split costs two
// recipes and two pool simulators (tens of KB each): a cluster of 100,000 nodes has 99,999
// splits, which took 4.5 GB and minutes. Beyond the bound, the budgeted searches and the
// recipe examine this many splits evenly spaced over the range (the message says so), and
// exact, which must examine every split to prove anything, refuses.
constexpr int kMaxDisaggregatedSplits = 1024;

// The search of a disaggregated scenario, as runSearch's outcome: `deployment` holds the
// best two pools (their split is their GPU counts) and `splits` every split examined.
// runSearch calls it for a disaggregated scenario.
SearchOutcome runDisaggregatedSearch(const Scenario& scenario, const SearchOptions& options,
                                     SearchObserver* observer = nullptr, const std::atomic<bool>* stop = nullptr);

} // namespace shardlab
