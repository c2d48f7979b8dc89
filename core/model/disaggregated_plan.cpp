#include "model/disaggregated_plan.h"

#include <algorithm>

namespace shardlab {

const char* poolRoleName(PoolRole r) { return r == PoolRole::Prefill ? "prefill" : "decode"; }

std::vector<int> disaggregatedSplits(const Scenario& s)
{
    std::vector<int> out;
    const ClusterSpec& c = s.cluster;
    if (c.nodes > 1) {
        for (int k = 1; k < c.nodes; ++k)
            out.push_back(k * c.gpusPerNode);
    } else {
        for (int g = 1; g < c.gpusPerNode; ++g)
            out.push_back(g);
    }
    return out;
}

Scenario poolScenario(const Scenario& s, PoolRole role, int gpus)
{
    Scenario p = s;
    const int gpn = std::max(1, std::min(s.cluster.gpusPerNode, gpus));
    p.cluster.gpusPerNode = gpn;
    p.cluster.nodes = std::max(1, gpus / gpn);
    // The other pool's limit is not this pool's: one that binds nothing.
    const double unlimited = kUnlimitedSloMs;
    if (role == PoolRole::Prefill) {
        p.workload.serving = ServingMode::Prefill;
        p.workload.tpotSloMs = unlimited;
    } else {
        p.workload.serving = ServingMode::Decode;
        p.workload.ttftSloMs = unlimited;
    }
    p.name = s.name + " (" + poolRoleName(role) + " pool, " + std::to_string(gpus) + " GPUs)";
    return p;
}

FieldErrors validateDisaggregatedPlan(const DisaggregatedPlan& p, const Scenario& s)
{
    FieldErrors e;
    const long long N = s.cluster.totalGpus();
    const long long gp = p.prefill.gpus(), gd = p.decode.gpus();
    const std::vector<int> splits = disaggregatedSplits(s);
    const std::string unit = s.cluster.nodes > 1
        ? "whole nodes of " + std::to_string(s.cluster.gpusPerNode) + " GPUs"
        : "1 to " + std::to_string(N - 1) + " GPUs";
    auto allowed = [&](long long g) { return std::find(splits.begin(), splits.end(), g) != splits.end(); };
    if (splits.empty())
        e.push_back({{}, "prefill", "a cluster of one GPU cannot be split into a prefill and a decode pool"});
    else if (gp + gd != N)
        e.push_back({{}, "decode",
                     "the pools use " + std::to_string(gp) + " + " + std::to_string(gd) + " = " + std::to_string(gp + gd)
                         + " GPUs (tensor x pipeline x data parallel each), the cluster has " + std::to_string(N)});
    else if (!allowed(gp))
        e.push_back({{}, "prefill",
                     "the prefill pool has " + std::to_string(gp) + " GPUs; each pool must be " + unit});
    return e;
}

} // namespace shardlab
