// A plan's degrees as the reports and the window print them: every degree, so that the
// line alone rebuilds the plan's shape (its options are in the plan file). One wording for
// the CLI's reports, its tables, the window's labels and the searches' own messages.
#pragma once

#include <string>

#include "model/plan.h"
#include "model/specs.h"

namespace shardlab {

// "TP 8, EP 8 (expert TP 1), PP 1, DP 8, batch 64 per replica, 1 micro-batch, 32 redundant
// experts, two-batch overlap, attention data parallel over the 8 TP ranks, 2 engine instances
// of 32 GPUs per stage". The expert figures
// only for an MoE model, the expert-TP group by what it splits (an expert's weights, or the
// tokens); the batch is a prefill pool's prompts per pass on a prefill pool's scenario
// (`s`: the scenario the plan is priced on, a pool's for a pool), else per replica.
std::string planDegreesText(const Scenario& s, const Plan& p);
// The same for a plan of model `m`, its batch counted as a prefill pool's when `prefillPool`.
std::string planDegreesText(const ModelSpec& m, const Plan& p, bool prefillPool);

// The same degrees for a table's column: "TP 8 EP 8 PP 1 DP 8 batch 64 x1 micro +32
// redundant overlap attention-DP 2 instances".
std::string planDegreesCompact(const ModelSpec& m, const Plan& p);

} // namespace shardlab
