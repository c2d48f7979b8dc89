// The Megatron recipe (TP inside the NVLink domain, PP only when memory needs it, EP over the data-parallel ranks, column/row operators, the largest valid batch): the standard plan a user starts from.
#pragma once

#include <string>

#include "sim/simulator.h"

namespace shardlab {

struct RecipePlan {
    Plan plan;
    SimResult result;
    bool found = false;       // a valid plan exists under the recipe
    int evaluations = 0;      // simulator calls spent
    std::string explanation;  // how the degrees were chosen, one paragraph
};

// TP = the largest divisor of the heads that fits in one node's NVLink domain; PP across
// nodes only when the weights do not fit otherwise; EP over the data-parallel ranks;
// column/row per-operator pattern; the largest batch that fits memory and meets the SLOs.
RecipePlan megatronPlan(const Simulator& sim);

} // namespace shardlab
