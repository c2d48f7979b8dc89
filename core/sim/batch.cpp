#include "sim/batch.h"

#include <algorithm>

namespace shardlab {

int largestValidBatch(const Simulator& sim, Plan plan, int lo, SimResult& result, int& evaluations)
{
    return largestValidBatch(sim, plan, lo, kMaxBatch, result, evaluations);
}

int largestValidBatch(const Simulator& sim, Plan plan, int lo, int hi, SimResult& result, int& evaluations)
{
    hi = std::clamp(hi, 1, kMaxBatch);
    lo = std::clamp(lo, std::max(1, plan.microBatches), kMaxBatch);
    if (lo > hi)
        return 0;
    SimResult r;
    auto valid = [&](int b) {
        plan.batch = b;
        ++evaluations;
        sim.evaluate(plan, r, false);
        return r.valid;
    };
    if (!valid(lo))
        return 0;
    int good = lo, bad = 0; // bad == 0: no invalid batch seen yet
    for (long long step = 1; bad == 0;) {
        const long long next = std::min<long long>(good + step, hi);
        if (valid(static_cast<int>(next)))
            good = static_cast<int>(next);
        else
            bad = static_cast<int>(next);
        if (good == hi)
            break;
        step *= 2;
    }
    while (bad != 0 && bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        if (valid(mid))
            good = mid;
        else
            bad = mid;
    }
    plan.batch = good;
    ++evaluations;
    sim.evaluate(plan, result, false);
    return good;
}

} // namespace shardlab
