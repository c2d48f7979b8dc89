// Where a plan's ranks sit on the cluster, and which nodes each communication group spans
// (docs/simulator.md §2, "Placement"). One rank layout for the cost model, the Topology tab
// and the reports: GPU g of a pool runs tensor rank g mod TP, data replica (g / TP) mod DP,
// pipeline stage g / (TP x DP); a pool's GPUs start at a node boundary (disaggregated pools
// are whole nodes, disaggregated_plan.h). Groups are consecutive ranks, so a group whose
// ranks do not fit in one node, or that starts late in one, spans two or more nodes.
#pragma once

#include <cstdint>

#include "model/plan.h"

namespace shardlab {

// Which of a plan's communication groups a group is (PlanPlacement's fields): the cost
// model records it on every collective it prices, so the reports and the window name the
// group an operator's traffic runs in from the pricing itself.
enum class GroupRole : std::uint8_t { Tensor, ExpertExchange, ExpertTensor, ExpertReplicas };
constexpr int kGroupRoleCount = 4;

// A communication group as placed: `size` ranks over `nodes` nodes, at most `ranksPerNode`
// and at least `fewestPerNode` of them in one node. A collective's inter-node leg is paced
// by the node with the fewest ranks (its ranks carry that node's share alone).
struct Group {
    GroupRole role = GroupRole::Tensor;
    int size = 1;
    int ranksPerNode = 1;
    int fewestPerNode = 1;
    int nodes = 1;
    bool spansNodes() const { return nodes > 1; }
};

// `size` ranks placed `stride` GPUs apart from the start of a node: ranksPerNode in every
// node but the last (the nccl-tests placements the collective commands price).
Group placeGroup(int size, int stride, int gpusPerNode);
// `size` consecutive ranks starting at GPU `offset` of the pool.
Group placeConsecutive(int size, long long offset, int gpusPerNode);
// The costliest of `count` groups of `size` consecutive ranks laid end to end from GPU 0:
// the one spanning the most nodes, and of those the one with the fewest ranks in a node.
// Every group runs the same collectives in lock step, so the slowest paces the step.
Group worstConsecutiveGroup(int size, long long count, int gpusPerNode);

// A GPU's place in the plan's rank layout.
struct RankCoordinates {
    int tensor = 0;   // rank in its TP group
    int data = 0;     // replica inside its stage
    int stage = 0;    // pipeline stage
    int expertShard = 0; // MoE: the EP rank (shard of experts) it holds in its instance
    int instance = 0;    // MoE: the engine instance it belongs to
};
RankCoordinates rankCoordinates(const Plan& p, long long gpu);

// Every group of one pool's plan as the cost model prices it (the worst of each kind).
struct PlanPlacement {
    Group tensor;          // a TP group
    Group expertExchange;  // MoE: the TP x DP / instances ranks of a stage of one instance exchanging tokens
    Group expertTensor;    // MoE: the ranks holding one shard of experts (expert-TP)
    // MoE: the exchange group's ranks of one tensor rank, one per replica (TP apart): the
    // ranks a replicated token must still reach when its own TP group holds it already.
    Group expertReplicas;
    bool stageHandoffCrossesNodes = false; // some stage sends its hidden states to another node
};
// `gpusPerNode`: the pool's. Expert shards are expertTensorParallel(p) consecutive ranks.
PlanPlacement placePlan(const Plan& p, int gpusPerNode);
// The group an operator's option splits over: the routed experts' GEMMs over their expert-TP
// shard, the token exchange (dispatch, combine) over the exchange group, every other
// operator over its TP group.
GroupRole shardingGroup(OpId id);
// The degree an operator's weight split divides by: expert TP for the routed experts' GEMMs,
// TP for the rest (dispatch and combine, which split no weights, also read TP).
int shardingDegree(const Plan& p, OpId id);

// The group of `placed` that plays `role`.
const Group& placedGroup(const PlanPlacement& placed, GroupRole role);

} // namespace shardlab
