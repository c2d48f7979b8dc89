// Operator groups of CostModel (exact_model.h): each group's choices with their cost,
// summed in the order of Simulator::evalLayer.
#include "search/exact_model.h"

namespace shardlab::exact {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }
inline Layout inOf(OpId id, int o) { return opInfo(id).options[o].in; }
inline Layout outOf(OpId id, int o) { return opInfo(id).options[o].out; }
} // namespace

// qkv_proj, attention, out_proj between the norms, with both norms' own costs; the same
// in dense and MoE layers.
void CostModel::addAttention(int a, int f, std::vector<OpGroup>& out)
{
    OpGroup g;
    g.ops = {OpId::QkvProj, OpId::Attention, OpId::OutProj};
    const int A = idx(OpId::AttnNorm), Q = idx(OpId::QkvProj), T = idx(OpId::Attention), O = idx(OpId::OutProj),
              F = idx(OpId::FfnNorm);
    for (int q : allowed(OpId::QkvProj))
        for (int t : allowed(OpId::Attention))
            for (int o : allowed(OpId::OutProj)) {
                Combo c;
                c.options = {std::uint8_t(q), std::uint8_t(t), std::uint8_t(o)};
                for (int ph = 0; ph < 2; ++ph) {
                    double s = m_time[ph][A][a];
                    s += conv(ph, kAttnNormQkv, outOf(OpId::AttnNorm, a), inOf(OpId::QkvProj, q));
                    s += m_time[ph][Q][q];
                    s += conv(ph, kQkvAttention, outOf(OpId::QkvProj, q), inOf(OpId::Attention, t));
                    s += m_time[ph][T][t];
                    s += conv(ph, kAttentionOut, outOf(OpId::Attention, t), inOf(OpId::OutProj, o));
                    s += m_time[ph][O][o];
                    s += conv(ph, kOutFfnNorm, outOf(OpId::OutProj, o), inOf(OpId::FfnNorm, f));
                    s += m_time[ph][F][f];
                    auto& dst = ph == 0 ? c.cost.dec : c.cost.pre;
                    dst[0] = m_nd > 0 ? s : 0;
                    dst[1] = m_nm > 0 ? s : 0;
                }
                const double mem = m_weight[A][a] + m_weight[Q][q] + m_weight[T][t] + m_weight[O][o] + m_weight[F][f]
                    + kvBytes(t);
                c.cost.mem[0] = m_nd > 0 ? mem : 0;
                c.cost.mem[1] = m_nm > 0 ? mem : 0;
                g.combos.push_back(c);
            }
    out.push_back(std::move(g));
}

void CostModel::addFfn(int a, int f, std::vector<OpGroup>& out)
{
    if (m_nd == 0)
        return;
    const bool withHead = m_nm == 0; // the LM head then reads down's layout directly
    OpGroup g;
    g.ops = {OpId::GateUp, OpId::Down};
    if (withHead)
        g.ops.push_back(OpId::LmHead);
    const int G = idx(OpId::GateUp), D = idx(OpId::Down), H = idx(OpId::LmHead);
    const std::vector<int> noHead{0};
    for (int u : allowed(OpId::GateUp))
        for (int d : allowed(OpId::Down))
            for (int h : withHead ? allowed(OpId::LmHead) : noHead) {
                Combo c;
                c.options = {std::uint8_t(u), std::uint8_t(d), std::uint8_t(h)};
                for (int ph = 0; ph < 2; ++ph) {
                    double s = conv(ph, kFfnNormGateUp, outOf(OpId::FfnNorm, f), inOf(OpId::GateUp, u));
                    s += m_time[ph][G][u];
                    s += conv(ph, kGateUpDown, outOf(OpId::GateUp, u), inOf(OpId::Down, d));
                    s += m_time[ph][D][d];
                    s += conv(ph, kDownAttnNorm, outOf(OpId::Down, d), inOf(OpId::AttnNorm, a));
                    auto& dst = ph == 0 ? c.cost.dec : c.cost.pre;
                    dst[0] = s;
                    if (withHead)
                        dst[3] = conv(ph, kLastHead, outOf(OpId::Down, d), inOf(OpId::LmHead, h)) + m_time[ph][H][h];
                }
                c.cost.mem[0] = m_weight[G][u] + m_weight[D][d];
                if (withHead)
                    c.cost.mem[3] = m_weight[H][h];
                g.combos.push_back(c);
            }
    out.push_back(std::move(g));
}

void CostModel::addMoe(int a, int f, std::vector<OpGroup>& out)
{
    if (m_nm == 0)
        return;
    OpGroup g;
    if (m_shared)
        g.ops.push_back(OpId::SharedExpert);
    for (OpId id : {OpId::Router, OpId::Dispatch, OpId::ExpertUp, OpId::ExpertDown, OpId::Combine})
        g.ops.push_back(id);
    const int S = idx(OpId::SharedExpert), R = idx(OpId::Router), Di = idx(OpId::Dispatch), U = idx(OpId::ExpertUp),
              Dn = idx(OpId::ExpertDown), C = idx(OpId::Combine);
    const std::vector<int> noShared{0};
    const Layout normOut = outOf(OpId::FfnNorm, f);
    for (int sh : m_shared ? allowed(OpId::SharedExpert) : noShared)
        for (int r : allowed(OpId::Router))
            for (int di : allowed(OpId::Dispatch))
                for (int u : allowed(OpId::ExpertUp))
                    for (int dn : allowed(OpId::ExpertDown))
                        for (int co : allowed(OpId::Combine)) {
                            Combo c;
                            int j = 0;
                            if (m_shared)
                                c.options[j++] = std::uint8_t(sh);
                            for (int o : {r, di, u, dn, co})
                                c.options[j++] = std::uint8_t(o);
                            for (int ph = 0; ph < 2; ++ph) {
                                double s = 0;
                                if (m_shared) {
                                    s += conv(ph, kFfnNormShared, normOut, inOf(OpId::SharedExpert, sh));
                                    s += m_time[ph][S][sh];
                                }
                                s += conv(ph, kFfnNormRouter, normOut, inOf(OpId::Router, r));
                                s += m_time[ph][R][r];
                                s += conv(ph, kRouterDispatch, outOf(OpId::Router, r), inOf(OpId::Dispatch, di));
                                s += m_time[ph][Di][di];
                                s += conv(ph, kDispatchExpertUp, outOf(OpId::Dispatch, di), inOf(OpId::ExpertUp, u));
                                s += m_time[ph][U][u];
                                s += conv(ph, kExpertUpDown, outOf(OpId::ExpertUp, u), inOf(OpId::ExpertDown, dn));
                                s += m_time[ph][Dn][dn];
                                s += conv(ph, kExpertDownCombine, outOf(OpId::ExpertDown, dn), inOf(OpId::Combine, co));
                                s += m_time[ph][C][co];
                                const Layout combined = outOf(OpId::Combine, co);
                                if (m_shared)
                                    s += conv(ph, kSharedJoin, outOf(OpId::SharedExpert, sh), combined);
                                s += conv(ph, kCombineAttnNorm, combined, inOf(OpId::AttnNorm, a));
                                (ph == 0 ? c.cost.dec : c.cost.pre)[1] = s;
                            }
                            c.cost.mem[1] = (m_shared ? m_weight[S][sh] : 0.0) + m_weight[R][r] + m_weight[Di][di]
                                + m_weight[U][u] + m_weight[Dn][dn] + m_weight[C][co];
                            g.combos.push_back(c);
                        }
    out.push_back(std::move(g));
}

void CostModel::addEmbedding(int a, std::vector<OpGroup>& out)
{
    OpGroup g;
    g.ops = {OpId::Embedding};
    const int E = idx(OpId::Embedding);
    for (int e : allowed(OpId::Embedding)) {
        Combo c;
        c.options[0] = std::uint8_t(e);
        for (int ph = 0; ph < 2; ++ph)
            (ph == 0 ? c.cost.dec : c.cost.pre)[2] =
                m_time[ph][E][e] + conv(ph, kEmbeddingAttnNorm, outOf(OpId::Embedding, e), inOf(OpId::AttnNorm, a));
        c.cost.mem[2] = m_weight[E][e];
        g.combos.push_back(c);
    }
    out.push_back(std::move(g));
}

void CostModel::addHead(std::vector<OpGroup>& out)
{
    if (m_nm == 0)
        return; // decided with the FFN group
    OpGroup g;
    g.ops = {OpId::LmHead};
    const int H = idx(OpId::LmHead);
    for (int h : allowed(OpId::LmHead)) {
        Combo c;
        c.options[0] = std::uint8_t(h);
        for (int ph = 0; ph < 2; ++ph)
            (ph == 0 ? c.cost.dec : c.cost.pre)[3] =
                conv(ph, kLastHead, Layout::T, inOf(OpId::LmHead, h)) + m_time[ph][H][h];
        c.cost.mem[3] = m_weight[H][h];
        g.combos.push_back(c);
    }
    out.push_back(std::move(g));
}

void CostModel::buildGroups(int a, int f, std::vector<OpGroup>& out)
{
    out.clear();
    addMoe(a, f, out);
    addAttention(a, f, out);
    addFfn(a, f, out);
    addHead(out);
    addEmbedding(a, out);
}

Plan CostModel::makePlan(int a, int f, const std::vector<OpGroup>& groups, const int* comboIndex) const
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = m_c.tp;
    p.pipelineParallel = m_c.pp;
    p.expertParallel = m_c.ep;
    p.dataParallel = m_c.dp;
    p.batch = m_c.batch;
    p.microBatches = m_c.micro;
    p.setOption(OpId::AttnNorm, a);
    p.setOption(OpId::FfnNorm, f);
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const OpGroup& g = groups[gi];
        const Combo& c = g.combos[comboIndex[gi]];
        for (size_t j = 0; j < g.ops.size(); ++j)
            p.setOption(g.ops[j], c.options[j]);
    }
    return p;
}

Figures CostModel::predict(const Plan& p)
{
    setCoarse({p.tensorParallel, p.pipelineParallel, p.expertParallel, p.dataParallel, p.batch, p.microBatches});
    const ModelSpec& m = m_sim.scenario().model;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        m_allowed[i] = {p.option(id)};
        if (opPresent(m, id)) {
            double w = 0;
            m_time[0][i][p.option(id)] = opTime(id, p.option(id), m_phase[0], w);
            m_weight[i][p.option(id)] = w;
            m_time[1][i][p.option(id)] = opTime(id, p.option(id), m_phase[1], w);
        }
    }
    std::vector<OpGroup> groups;
    buildGroups(p.option(OpId::AttnNorm), p.option(OpId::FfnNorm), groups);
    CostVec total;
    for (const OpGroup& g : groups)
        total += g.combos.front().cost;
    return figures(total);
}

} // namespace shardlab::exact
