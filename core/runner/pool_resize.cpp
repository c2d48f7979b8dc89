// A pool's plan resized to another prefill:decode split (docs/search.md, "Disaggregated
// serving"): what the deployment search's moves hand to the new pool's search space.
#include "runner/disaggregated_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardlab {

Plan resizedForPool(Plan p, int gpus)
{
    if (p.tensorParallel <= 0 || p.pipelineParallel <= 0 || p.dataParallel <= 0 || gpus <= 0)
        return p;
    // A stage's ranks over every replica (TP x DP) before the move: the expert groups are
    // rescaled by how these grow below, whatever TP becomes.
    const long long ranksBefore = static_cast<long long>(p.tensorParallel) * p.dataParallel;
    if (gpus % p.tensorParallel != 0) {
        // TP that does not divide the pool: the largest of its divisors that does, each
        // replica's batch scaled with its GPUs. The model may refuse that TP (a KV-head
        // count it neither divides nor is divided by); the pool's space then takes the
        // nearest TP it has (SearchSpace::choiceNear).
        const int tp = std::gcd(p.tensorParallel, gpus);
        p.batch = std::max(std::max(1, p.microBatches),
                           static_cast<int>(std::lround(double(p.batch) * tp / p.tensorParallel)));
        p.tensorParallel = tp;
    }
    if (gpus % (p.tensorParallel * p.pipelineParallel) != 0) {
        // The pipeline depth nearest the plan's (by ratio, the shallower on a tie) that
        // fills the pool with whole replicas. A full pipeline of micro-batches stays full,
        // each micro-batch as large as it was (the stage's step, so its limits, kept).
        const int rest = gpus / p.tensorParallel;
        int depth = 1;
        for (int d = 2; d <= rest; ++d)
            if (rest % d == 0
                && std::abs(std::log(double(d) / p.pipelineParallel))
                    < std::abs(std::log(double(depth) / p.pipelineParallel)) - 1e-12)
                depth = d;
        if (p.microBatches == p.pipelineParallel) {
            p.batch = std::max(depth, static_cast<int>(std::lround(double(p.batch) * depth / p.pipelineParallel)));
            p.microBatches = depth;
        } else {
            p.microBatches = std::min(p.microBatches, depth);
        }
        p.pipelineParallel = depth;
    }
    const long long dp = gpus / (p.tensorParallel * p.pipelineParallel);
    const long long ranksAfter = static_cast<long long>(p.tensorParallel) * dp;
    if (p.expertParallel > 1) { // one instance: its group widens; several: more of them
        int& grows = p.instances <= 1 ? p.expertParallel : p.instances;
        if ((static_cast<long long>(grows) * ranksAfter) % ranksBefore == 0)
            grows = static_cast<int>(grows * ranksAfter / ranksBefore);
    }
    p.dataParallel = static_cast<int>(dp);
    return p;
}

} // namespace shardlab
