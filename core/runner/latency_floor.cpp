#include "runner/latency_floor.h"

#include <cmath>
#include <sstream>

namespace shardlab {

namespace {
std::string ms(double v)
{
    std::ostringstream o;
    o.precision(v < 10 ? 3 : 4);
    o << v;
    return o.str();
}
} // namespace

TpotFloor shortestTpot(const Scenario& s, double unreachableMs, double tolerance, int maxSearches,
                       const std::atomic<bool>* stop)
{
    TpotFloor f;
    f.unreachableMs = unreachableMs > 0 ? unreachableMs : 0;
    SearchOptions o;
    o.algorithm = "exact";
    auto at = [&](double limitMs) {
        Scenario t = s;
        t.workload.tpotSloMs = limitMs;
        ++f.searches;
        return runSearch(t, o, nullptr, stop);
    };
    // Without a TPOT limit: does any plan meet the others? Its TPOT is an upper bracket.
    const SearchOutcome free = at(1e9);
    f.stopped = free.stopped;
    if (!free.found)
        return f;
    f.reached = true;
    f.reachedMs = free.deployment.tpotMs;
    f.deployment = free.deployment.deployment();
    while (!f.stopped && f.searches < maxSearches && f.reachedMs > f.unreachableMs * (1 + tolerance)) {
        const double lo = f.unreachableMs > 0 ? f.unreachableMs : f.reachedMs / 64;
        const double limit = std::sqrt(lo * f.reachedMs);
        const SearchOutcome r = at(limit);
        f.stopped = r.stopped;
        if (r.found) {
            if (!(r.deployment.tpotMs < f.reachedMs))
                break; // a valid plan is within the limit, below reachedMs: never here
            f.reachedMs = r.deployment.tpotMs;
            f.deployment = r.deployment.deployment();
        } else if (r.provedInfeasible) {
            f.unreachableMs = limit;
        } else {
            break; // neither a plan nor a proof
        }
    }
    f.proved = f.unreachableMs > 0 && f.reachedMs <= f.unreachableMs * (1 + tolerance);
    return f;
}

std::string describeTpotFloor(const TpotFloor& f, double sloMs)
{
    std::ostringstream o;
    if (!f.reached) {
        o << "no plan meets the other limits (memory, TTFT) even without a TPOT limit";
        return o.str();
    }
    if (f.proved)
        o << "the shortest time per output token any plan reaches is " << ms(f.reachedMs) << " ms (proved by exact: no "
          << "plan reaches " << ms(f.unreachableMs) << " ms)";
    else if (f.unreachableMs > 0)
        o << "the shortest time per output token any plan reaches is between " << ms(f.unreachableMs) << " and "
          << ms(f.reachedMs) << " ms (a plan reaches " << ms(f.reachedMs) << " ms; exact proved none reaches "
          << ms(f.unreachableMs) << " ms)";
    else
        o << "the shortest time per output token any plan reaches is at most " << ms(f.reachedMs) << " ms";
    o << ", the SLO is " << ms(sloMs) << " ms";
    return o.str();
}

} // namespace shardlab
