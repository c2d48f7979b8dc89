#include "model/placement.h"

#include "model/plan_checks.h"

#include <algorithm>

namespace shardlab {

Group placeGroup(int size, int stride, int gpusPerNode)
{
    Group g;
    g.size = std::max(1, size);
    const int perNode = std::max(1, std::max(1, gpusPerNode) / std::max(1, stride));
    g.ranksPerNode = std::min(g.size, perNode);
    g.nodes = (g.size + perNode - 1) / perNode;
    g.fewestPerNode = g.size - (g.nodes - 1) * perNode; // the last node's share
    return g;
}

Group placeConsecutive(int size, long long offset, int gpusPerNode)
{
    const int gpn = std::max(1, gpusPerNode);
    Group g;
    g.size = std::max(1, size);
    const int first = std::min<long long>(g.size, gpn - std::max(0LL, offset) % gpn);
    const int rest = g.size - first;
    const int full = rest / gpn, last = rest % gpn;
    g.nodes = 1 + full + (last > 0 ? 1 : 0);
    g.ranksPerNode = std::max({first, full > 0 ? gpn : 0, last});
    g.fewestPerNode = first;
    if (full > 0)
        g.fewestPerNode = std::min(g.fewestPerNode, gpn);
    if (last > 0)
        g.fewestPerNode = std::min(g.fewestPerNode, last);
    return g;
}

Group worstConsecutiveGroup(int size, long long count, int gpusPerNode)
{
    const int gpn = std::max(1, gpusPerNode);
    size = std::max(1, size);
    // Offsets k x size repeat modulo a node after at most gpn groups.
    const long long groups = std::clamp<long long>(count, 1, gpn);
    Group worst = placeConsecutive(size, 0, gpn);
    for (long long k = 1; k < groups; ++k) {
        const Group g = placeConsecutive(size, k * size, gpn);
        if (g.nodes > worst.nodes || (g.nodes == worst.nodes && g.fewestPerNode < worst.fewestPerNode))
            worst = g;
    }
    return worst;
}

RankCoordinates rankCoordinates(const Plan& p, long long gpu)
{
    const long long tp = std::max(1, p.tensorParallel), dp = std::max(1, p.dataParallel);
    const long long stage = tp * dp;
    const long long etp = std::max(1, expertTensorParallel(p));
    gpu = std::max(0LL, gpu);
    RankCoordinates c;
    c.tensor = static_cast<int>(gpu % tp);
    c.data = static_cast<int>((gpu / tp) % dp);
    c.stage = static_cast<int>(gpu / stage);
    const long long perInstance = std::max(1, expertGroupRanks(p)); // of a stage
    c.expertShard = static_cast<int>((gpu % stage % perInstance) / etp);
    c.instance = static_cast<int>((gpu % stage) / perInstance);
    return c;
}

namespace {
// Whether some stage's rank g sends to a rank g + stageSize in another node.
bool handoffCrossesNodes(int stageSize, int stages, int gpn)
{
    if (stages <= 1)
        return false;
    if (stageSize >= gpn)
        return true;
    // Stage starts repeat modulo a node after at most gpn stages.
    const long long boundaries = std::min(stages - 1, gpn);
    for (long long j = 0; j < boundaries; ++j)
        for (long long g = j * stageSize; g < (j + 1) * stageSize; ++g)
            if (g / gpn != (g + stageSize) / gpn)
                return true;
    return false;
}
} // namespace

PlanPlacement placePlan(const Plan& p, int gpusPerNode)
{
    const int gpn = std::max(1, gpusPerNode);
    const long long tp = std::max(1, p.tensorParallel), dp = std::max(1, p.dataParallel);
    const long long pp = std::max(1, p.pipelineParallel);
    const long long stage = tp * dp;
    PlanPlacement out;
    out.tensor = worstConsecutiveGroup(static_cast<int>(tp), dp * pp, gpn);
    // An instance's share of a stage: TP x DP / instances consecutive ranks.
    const long long instances = std::max(1, p.instances);
    const int exchange = std::max(1, expertGroupRanks(p));
    out.expertExchange = worstConsecutiveGroup(exchange, pp * instances, gpn);
    const int etp = std::max(1, expertTensorParallel(p));
    out.expertTensor = worstConsecutiveGroup(etp, stage * pp / etp, gpn);
    out.expertReplicas = placeGroup(std::max(1, exchange / static_cast<int>(tp)), static_cast<int>(tp), gpn);
    out.stageHandoffCrossesNodes = handoffCrossesNodes(static_cast<int>(stage), static_cast<int>(pp), gpn);
    out.tensor.role = GroupRole::Tensor;
    out.expertExchange.role = GroupRole::ExpertExchange;
    out.expertTensor.role = GroupRole::ExpertTensor;
    out.expertReplicas.role = GroupRole::ExpertReplicas;
    return out;
}

GroupRole shardingGroup(OpId id)
{
    switch (id) {
    case OpId::ExpertUp:
    case OpId::ExpertDown: return GroupRole::ExpertTensor;
    case OpId::Dispatch:
    case OpId::Combine: return GroupRole::ExpertExchange;
    default: return GroupRole::Tensor;
    }
}

int shardingDegree(const Plan& p, OpId id)
{
    return shardingGroup(id) == GroupRole::ExpertTensor ? std::max(1, expertTensorParallel(p)) : p.tensorParallel;
}

const Group& placedGroup(const PlanPlacement& placed, GroupRole role)
{
    switch (role) {
    case GroupRole::ExpertExchange: return placed.expertExchange;
    case GroupRole::ExpertTensor: return placed.expertTensor;
    case GroupRole::ExpertReplicas: return placed.expertReplicas;
    case GroupRole::Tensor: break;
    }
    return placed.tensor;
}

} // namespace shardlab
