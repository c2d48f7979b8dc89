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
//             best-ranked ones, each pool searched with the algorithm and its seed + the
//             split's place; after each split, the best pools so far moved to every other
//             split (resizedForPool) and evaluated there, and the splits left searched in
//             the order the moved pools rank them; last, the best deployment's pools
//             finished (batch, micro-batches, operators) with the calls left.
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

// A pool's plan moved to a pool of `gpus` GPUs, before that pool's search space takes it
// (SearchSpace::choiceNear): DP fills the pool. Where TP does not divide the pool, TP
// becomes the largest of its divisors that does (TP 32 to 56 GPUs: TP 8), each replica's
// batch scaled with it. Where TP x PP does not divide the pool, the pipeline takes the
// depth nearest its own that does (112 GPUs of TP 4: PP 8 becomes 7; a full pipeline of
// micro-batches keeps each micro-batch's size, so batch 8 becomes 7). A MoE plan keeps the
// shape of its expert groups: one engine instance stays one, its expert group as wide as
// the pool (EP grows with the ranks, TP x DP, as wide-EP decode deployments run); several
// keep their size, and their number grows with the ranks. Where the new ranks do not
// divide so, EP and the instances stay as they were.
Plan resizedForPool(Plan p, int gpus);

// The search of a disaggregated scenario, as runSearch's outcome: `deployment` holds the
// best two pools (their split is their GPU counts) and `splits` every split examined.
// runSearch calls it for a disaggregated scenario.
SearchOutcome runDisaggregatedSearch(const Scenario& scenario, const SearchOptions& options,
                                     SearchObserver* observer = nullptr, const std::atomic<bool>* stop = nullptr);

} // namespace shardlab
