// JSON form of a simulator result (the CLI's --json output and the GUI's exports).
#pragma once

#include <string>

#include "sim/simulator.h"

namespace shardlab {

// A JSON object with the plan, validity and violations with reasons, throughput, TTFT,
// TPOT, memory breakdown and the per-operator breakdown. Never contains NaN or Inf.
std::string evaluationToJson(const Scenario& s, const Plan& p, const SimResult& r, int indent = 2);

// Human-readable reasons for a result's violations, one per line.
std::vector<std::string> violationReasons(const Scenario& s, const Plan& p, const SimResult& r);

} // namespace shardlab
