// The fused operator graph of the decoder as data (docs/simulator.md §1): per layer kind, the
// operators in execution order and the tensors between them. Every consumer of the
// graph (the simulator, the exact search's operator groups, the window's collectives
// list) walks these tables; none writes the order down again.
#pragma once

#include <cstdint>
#include <vector>

#include "model/plan.h"

namespace shardlab {

// Where an edge's tensor lives, which decides its token count and its group:
//   Attention: the replica's tokens of one micro-batch, over the tensor-parallel group;
//   Expert:    the routed token-expert pairs of one expert-parallel rank, over the
//              expert-tensor-parallel group.
enum class EdgeSpace : std::uint8_t { Attention, Expert };

// A tensor handed from `from` to `to`. Its conversion is derived from the producer's
// output layout and the consumer's input layout (or, when `intoOutput`, the consumer's
// output layout: the shared expert's output joins combine's). Its size is the
// producer's output bytes per token times the tokens of its space.
struct GraphEdge {
    OpId from = OpId::Count;
    OpId to = OpId::Count;
    EdgeSpace space = EdgeSpace::Attention;
    bool intoOutput = false;
    OpId chargedTo = OpId::Count; // whose breakdown row shows the conversion
};

// One step of a layer, in execution order: an operator, or the conversion of an edge.
struct GraphStep {
    bool isEdge = false;
    OpId op = OpId::Count; // when !isEdge
    GraphEdge edge;        // when isEdge
};

enum class LayerKind : std::uint8_t { Dense, Moe };

// The steps of one layer of `kind`, ending with the edge into the next layer's
// attn_norm (steady state: the next layer is of the same kind). `sharedExpert` adds the
// shared expert beside the routed experts of an MoE layer.
const std::vector<GraphStep>& layerSteps(LayerKind kind, bool sharedExpert);

// Once per model: the embedding feeds the first layer's attn_norm; the last layer's
// output feeds the LM head (from down in a model without MoE layers, else from combine).
GraphEdge embeddingEdge();
GraphEdge lmHeadEdge(bool lastLayerMoe);

// The layout an edge converts from and to, given the plan's options.
inline Layout outLayout(OpId id, int option) { return opOption(id, option).out; }
inline Layout inLayout(OpId id, int option) { return opOption(id, option).in; }
inline Layout edgeSource(const GraphEdge& e, const Plan& p) { return outLayout(e.from, p.option(e.from)); }
inline Layout edgeTarget(const GraphEdge& e, const Plan& p)
{
    return e.intoOutput ? outLayout(e.to, p.option(e.to)) : inLayout(e.to, p.option(e.to));
}

} // namespace shardlab
