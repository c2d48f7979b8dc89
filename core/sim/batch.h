// The largest valid batch of a plan. For fixed degrees, micro-batches and options,
// validity is monotone in the batch (memory and every decode price grow with it; the
// prefill does not depend on it) and throughput never falls as the batch grows (the
// "batch property", docs/search.md): the largest valid batch is the plan's best.
#pragma once

#include "sim/simulator.h"

namespace shardlab {

// Largest b in [lo, kMaxBatch] for which `plan` with batch b is valid (bisection over the
// whole range the simulator accepts), 0 when batch lo is already invalid. `result` gets
// that plan's evaluation (without breakdown); `evaluations` counts simulator calls.
int largestValidBatch(const Simulator& sim, Plan plan, int lo, SimResult& result, int& evaluations);
// The same within [lo, hi] (a scenario's batch constraint).
int largestValidBatch(const Simulator& sim, Plan plan, int lo, int hi, SimResult& result, int& evaluations);

} // namespace shardlab
