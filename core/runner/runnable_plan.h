// The best plan a serving engine runs near a given plan (model/engine_caps.h): what export
// offers when it refuses a plan the engine does not run as planned.
#pragma once

#include <string>

#include "model/engine_caps.h"
#include "model/plan.h"
#include "sim/simulator.h"

namespace shardlab {

struct NearestRunnable {
    bool found = false;
    Plan plan;
    SimResult result;
    Scenario scenario; // the scenario it was searched on: runnable, priced with the engine's collectives
    std::string kept;  // which of the plan's degrees it keeps: "TP, PP, EP and instances", "TP and PP", ...
};

// Exact under the engine's rules, on the scenario with `e`'s collectives (when it names
// another engine or none): first with the plan's TP, PP, EP and instances, then TP and
// PP, then TP, then any degrees; the first that has a valid plan wins. The scenario's own
// constraints stay.
NearestRunnable nearestRunnablePlan(const Scenario& s, const Plan& p, Engine e);

} // namespace shardlab
