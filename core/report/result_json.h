// JSON form of a simulator result (the CLI's --json output and the GUI's exports).
#pragma once

#include <string>

#include "sim/disaggregated.h"
#include "sim/simulator.h"

namespace shardlab {

// A JSON object with the plan, validity and violations with reasons, throughput, TTFT,
// TPOT, memory breakdown and the per-operator breakdown. Never contains NaN or Inf.
std::string evaluationToJson(const Scenario& s, const Plan& p, const SimResult& r, int indent = 2);

// A disaggregated plan's evaluation: the deployment's figures (the same names as above),
// "limited_by", the KV links' figures, and "prefill" and "decode" objects, each a pool's
// evaluation on its own pool scenario with its "gpus" and "requests_per_s".
std::string disaggregatedEvaluationToJson(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r,
                                          int indent = 2);
std::vector<std::string> disaggregatedReasons(const Scenario& s, const DisaggregatedPlan& p,
                                              const DisaggregatedResult& r);

// Human-readable reasons for a result's violations, one per line.
std::vector<std::string> violationReasons(const Scenario& s, const Plan& p, const SimResult& r);

} // namespace shardlab
