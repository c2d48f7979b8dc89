// The shape of a disaggregated plan: a prefill pool and a decode pool, each a plan on its
// own GPUs, and the rules for how the cluster may be split between them. Structure only:
// what a pool costs is the simulator's (sim/disaggregated.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/plan.h"
#include "model/specs.h"

namespace shardlab {

enum class PoolRole : std::uint8_t { Prefill, Decode };
const char* poolRoleName(PoolRole r); // "prefill", "decode"

// The GPU counts a prefill pool may have on the scenario's cluster (the decode pool gets
// the rest): whole nodes when the cluster has several, any count inside a single node (or
// NVLink rack). Ascending; empty when the cluster has one GPU.
std::vector<int> disaggregatedSplits(const Scenario& s);

// The scenario one pool is priced on: the same model, GPU and links on `gpus` GPUs; the
// prefill pool carries the TTFT limit (and no TPOT), the decode pool the TPOT limit (and no
// TTFT: the steady state takes a request's first token to come from the prefill pool).
Scenario poolScenario(const Scenario& s, PoolRole role, int gpus);

struct DisaggregatedPlan {
    Plan prefill;
    Plan decode;
    bool operator==(const DisaggregatedPlan& o) const = default;
};

// Pool sizes that do not fit the cluster (sum, whole nodes), paths "prefill"/"decode".
FieldErrors validateDisaggregatedPlan(const DisaggregatedPlan& p, const Scenario& s);

} // namespace shardlab
