// The shortest time per output token any plan reaches, proved: when exact proves that no
// plan meets a scenario's TPOT limit, this says how far the limit is from reach. Exact
// answers "is there a valid plan with TPOT <= L?" with a proof either way, so a bisection
// over L brackets the minimum between a TPOT a plan reaches and a limit no plan meets.
//
// Threading: as runSearch (the caller's thread; the stop flag shared).
#pragma once

#include <atomic>
#include <string>

#include "runner/run_search.h"

namespace shardlab {

struct TpotFloor {
    bool reached = false;     // some plan meets every limit but TPOT's
    double reachedMs = 0;     // the shortest TPOT of a valid plan found (the deployment's)
    double unreachableMs = 0; // exact proved no valid plan has TPOT at or below it (0: none)
    Deployment deployment;    // the plan (or pools) reaching reachedMs
    int searches = 0;         // exact searches run
    bool stopped = false;
    // The bracket is as narrow as asked: reachedMs is the minimum to within the tolerance.
    bool proved = false;
};

// `unreachableMs`: a TPOT limit already proved out of reach (the scenario's, typically),
// or 0. Bisects (geometrically) until reachedMs <= unreachableMs x (1 + tolerance) or
// `maxSearches` exact searches have run.
TpotFloor shortestTpot(const Scenario& s, double unreachableMs, double tolerance = 0.01, int maxSearches = 24,
                       const std::atomic<bool>* stop = nullptr);

// "the shortest time per output token any plan reaches is 13.9 ms (proved: no plan reaches
// 13.8 ms), the SLO is 0.5 ms", or with "at least" when the bracket is not closed.
std::string describeTpotFloor(const TpotFloor& f, double sloMs);

} // namespace shardlab
