// The largest valid batch of a plan. For fixed degrees, micro-batches and options,
// validity is monotone in the batch (memory and every decode price grow with it; the
// prefill does not depend on it) and throughput never falls as the batch grows (the
// "batch property", docs/search.md): the largest valid batch is the plan's best.
#pragma once

#include <functional>

#include "sim/simulator.h"

namespace shardlab {

// Largest b in [lo, kMaxBatch] for which `plan` with batch b is valid (bisection over the
// whole range the simulator accepts), 0 when batch lo is already invalid. `result` gets
// that plan's evaluation (without breakdown); `evaluations` counts simulator calls.
int largestValidBatch(const Simulator& sim, Plan plan, int lo, SimResult& result, int& evaluations);
// The same within [lo, hi] (a scenario's batch constraint).
int largestValidBatch(const Simulator& sim, Plan plan, int lo, int hi, SimResult& result, int& evaluations);
// The same gallop and bisection with `valid` answering each batch: 1 valid, 0 not, -1 no
// answer (a spent budget): the search then stops with the largest valid batch seen so far.
// Returns 0 when lo is invalid or unanswered.
int largestValidBatch(int lo, int hi, const std::function<int(int)>& valid);

// Fitting a plan's other free degree to the scenario: the data-parallel degree with which
// the plan's TP and PP tile the cluster (GPUs = TP x PP x DP, the tiling rule of
// model/plan_checks.h), 0 when TP x PP does not divide the cluster's GPUs.
int tilingDataParallel(const Plan& plan, const Scenario& s);

} // namespace shardlab
