// Collective communication costs (docs/simulator.md §2, "Collectives by algorithm and size").
// Inside a node, the algorithm an engine would run for the size: NCCL's ring with its LL128 or
// Simple protocol or NVLink SHARP (NVLS) for all-reduce, whichever is faster (NCCL's own
// tuner works that way), or an engine's custom one-shot/two-shot all-reduce within its size
// limits. Groups that span nodes (model/placement.h): the intra-node part, then a ring over
// the nodes, paced by the node holding the fewest of the group's ranks.
#pragma once

#include <cstdint>

#include "model/placement.h"
#include "model/plan.h"
#include "model/profile.h"
#include "model/specs.h"

namespace shardlab {

enum class Collective : std::uint8_t { None, AllReduce, ReduceScatter, AllGather, AllToAll, LocalSlice };
const char* collectiveName(Collective c);

// How a collective was run: the algorithm (and NCCL protocol) the model chose.
enum class CollectiveAlgo : std::uint8_t {
    None, RingLL128, RingSimple, Nvls, OneShot, TwoShot, Direct, Hierarchical,
    DeepEpLowLatency, DeepEpNormal // MoE dispatch/combine kernels (moe_all_to_all.h)
};
const char* collectiveAlgoName(CollectiveAlgo a); // "ring LL128", "ring Simple", "NVLS", "one-shot", "DeepEP low-latency", ...

// Per-link figures already multiplied by their efficiency, in bytes/s and seconds.
struct LinkModel {
    double intraBytesPerS = 0;
    double intraLatencyS = 0;   // per ring step between two GPUs of a node
    CollectiveEngine engine = CollectiveEngine::Nccl;
    double interBytesPerS = 0;
    double interLatencyS = 0;
    int gpusPerNode = 1;
    double invIntra = 0, invInter = 0; // seconds per byte
    const KernelProfile* profile = nullptr; // the cluster's (linkModel); null: the built-in one
    // The engine's custom all-reduce at any size (its size limits ignored): every price is
    // then a floor of the real one that grows smoothly with the size (exact's bounds).
    bool sizeCapsLifted = false;
    const KernelProfile& kernels() const;
};
LinkModel linkModel(const ClusterSpec& c, CollectiveEngine engine = CollectiveEngine::Nccl);

// The collective libraries' parameters (NcclParams, model/profile.h) come from the kernel
// profile; the built-in profile's
// The values in use (tests, docs).
const NcclParams& ncclParams();

struct CollectiveCost {
    Collective kind = Collective::None;
    GroupRole group = GroupRole::Tensor; // the group it runs in (the Group's role)
    double seconds = 0;
    double bytesPerRank = 0; // sent by each rank (the busiest rank across nodes)
    double interBytesPerRank = 0; // of which over the inter-node fabric
    CollectiveAlgo algo = CollectiveAlgo::None; // inside the node (Hierarchical: also across nodes)
    // The engine's custom all-reduce kernels (one-shot, two-shot) this group has that the
    // size is above the limit of: it never falls as the size grows, and a price can jump
    // up only where it rises.
    std::uint8_t sizeCapped = 0;
};

// `fullBytes` is S of docs/simulator.md §2: the whole tensor's size across the group (for
// all-reduce, all-gather and reduce-scatter the nccl-tests "size"; for all-to-all, n times it).
CollectiveCost collectiveCost(Collective kind, double fullBytes, const Group& g, const LinkModel& link);

// The collective that converts layout `from` into layout `to` (same side of the model).
Collective conversionFor(Layout from, Layout to);

} // namespace shardlab
