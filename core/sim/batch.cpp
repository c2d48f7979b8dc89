#include "sim/batch.h"

#include <algorithm>
#include <limits>

namespace shardlab {

int largestValidBatch(const Simulator& sim, Plan plan, int lo, SimResult& result, int& evaluations)
{
    return largestValidBatch(sim, plan, lo, kMaxBatch, result, evaluations);
}

int largestValidBatch(int lo, int hi, const std::function<int(int)>& valid)
{
    if (lo > hi || valid(lo) != 1)
        return 0;
    int good = lo, bad = 0; // bad == 0: no invalid batch seen yet
    for (long long step = 1; bad == 0 && good < hi; step *= 2) {
        const int next = static_cast<int>(std::min<long long>(good + step, hi));
        const int v = valid(next);
        if (v < 0)
            return good;
        (v == 1 ? good : bad) = next;
    }
    while (bad != 0 && bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        const int v = valid(mid);
        if (v < 0)
            return good;
        (v == 1 ? good : bad) = mid;
    }
    return good;
}

int largestValidBatch(const Simulator& sim, Plan plan, int lo, int hi, SimResult& result, int& evaluations)
{
    hi = std::clamp(hi, 1, kMaxBatch);
    lo = std::clamp(lo, std::max(1, plan.microBatches), kMaxBatch);
    SimResult r;
    const int good = largestValidBatch(lo, hi, [&](int b) {
        plan.batch = b;
        ++evaluations;
        sim.evaluate(plan, r, false);
        return r.valid ? 1 : 0;
    });
    if (good == 0)
        return 0;
    plan.batch = good;
    ++evaluations;
    sim.evaluate(plan, result, false);
    return good;
}

int tilingDataParallel(const Plan& plan, const Scenario& s)
{
    const long long perReplica = static_cast<long long>(plan.tensorParallel) * plan.pipelineParallel;
    const long long gpus = s.cluster.totalGpus();
    if (perReplica < 1 || gpus < perReplica || gpus % perReplica != 0 || gpus / perReplica > std::numeric_limits<int>::max())
        return 0;
    return static_cast<int>(gpus / perReplica);
}

} // namespace shardlab
