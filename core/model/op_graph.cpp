#include "model/op_graph.h"

namespace shardlab {

namespace {
GraphStep op(OpId id) { return {false, id, {}}; }
GraphStep edge(OpId from, OpId to, EdgeSpace space = EdgeSpace::Attention, bool intoOutput = false,
               OpId chargedTo = OpId::Count)
{
    return {true, OpId::Count, {from, to, space, intoOutput, chargedTo == OpId::Count ? to : chargedTo}};
}

std::vector<GraphStep> attentionSteps()
{
    return {op(OpId::AttnNorm),  edge(OpId::AttnNorm, OpId::QkvProj), op(OpId::QkvProj),
            edge(OpId::QkvProj, OpId::Attention), op(OpId::Attention), edge(OpId::Attention, OpId::OutProj),
            op(OpId::OutProj),   edge(OpId::OutProj, OpId::FfnNorm),   op(OpId::FfnNorm)};
}

std::vector<GraphStep> build(LayerKind kind, bool shared)
{
    std::vector<GraphStep> s = attentionSteps();
    auto add = [&](std::initializer_list<GraphStep> more) { s.insert(s.end(), more); };
    if (kind == LayerKind::Dense) {
        add({edge(OpId::FfnNorm, OpId::GateUp), op(OpId::GateUp), edge(OpId::GateUp, OpId::Down), op(OpId::Down),
             edge(OpId::Down, OpId::AttnNorm)});
        return s;
    }
    if (shared)
        add({edge(OpId::FfnNorm, OpId::SharedExpert), op(OpId::SharedExpert)});
    add({edge(OpId::FfnNorm, OpId::Router), op(OpId::Router), edge(OpId::Router, OpId::Dispatch), op(OpId::Dispatch),
         edge(OpId::Dispatch, OpId::ExpertUp, EdgeSpace::Expert), op(OpId::ExpertUp),
         edge(OpId::ExpertUp, OpId::ExpertDown, EdgeSpace::Expert), op(OpId::ExpertDown),
         edge(OpId::ExpertDown, OpId::Combine, EdgeSpace::Expert), op(OpId::Combine)});
    if (shared) // the shared expert's output joins the combined output (same layout needed)
        add({edge(OpId::SharedExpert, OpId::Combine, EdgeSpace::Attention, true, OpId::SharedExpert)});
    add({edge(OpId::Combine, OpId::AttnNorm)});
    return s;
}
} // namespace

const std::vector<GraphStep>& layerSteps(LayerKind kind, bool sharedExpert)
{
    static const std::vector<GraphStep> dense = build(LayerKind::Dense, false);
    static const std::vector<GraphStep> moe = build(LayerKind::Moe, false);
    static const std::vector<GraphStep> moeShared = build(LayerKind::Moe, true);
    if (kind == LayerKind::Dense)
        return dense;
    return sharedExpert ? moeShared : moe;
}

GraphEdge embeddingEdge() { return {OpId::Embedding, OpId::AttnNorm, EdgeSpace::Attention, false, OpId::Embedding}; }

GraphEdge lmHeadEdge(bool lastLayerMoe)
{
    return {lastLayerMoe ? OpId::Combine : OpId::Down, OpId::LmHead, EdgeSpace::Attention, false, OpId::LmHead};
}

} // namespace shardlab
