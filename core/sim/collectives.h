// Collective communication costs (docs/simulator.md §2): latency term + bytes / bandwidth, with
// a hierarchical (intra-node, then inter-node) form for groups that span nodes.
#pragma once

#include <cstdint>

#include "model/plan.h"

namespace shardlab {

enum class Collective : std::uint8_t { None, AllReduce, ReduceScatter, AllGather, AllToAll, LocalSlice };
const char* collectiveName(Collective c);

// Per-link figures already multiplied by their efficiency, in bytes/s and seconds.
struct LinkModel {
    double intraBytesPerS = 0;
    double intraLatencyS = 0;
    double interBytesPerS = 0;
    double interLatencyS = 0;
    int gpusPerNode = 1;
    double invIntra = 0, invInter = 0; // seconds per byte
};
LinkModel linkModel(const ClusterSpec& c);

// A communication group: n ranks, ranksPerNode of them in each node it touches.
struct Group {
    int size = 1;
    int ranksPerNode = 1;
};
// Group of `size` consecutive ranks (or ranks `stride` apart) placed on the cluster.
Group placeGroup(int size, int stride, int gpusPerNode);

struct CollectiveCost {
    Collective kind = Collective::None;
    double seconds = 0;
    double bytesPerRank = 0; // sent by each rank
};

// `fullBytes` is S of docs/simulator.md §2: the whole tensor's size across the group.
CollectiveCost collectiveCost(Collective kind, double fullBytes, const Group& g, const LinkModel& link);

// The collective that converts layout `from` into layout `to` (same side of the model).
Collective conversionFor(Layout from, Layout to);

} // namespace shardlab
