// The exact search's tables for speculative decoding's drafting pass (exact_tables.h):
// its prices at the drafting phase, its terms in a combo and its share of a lower bound,
// with the cost model's own functions, as the simulator's walkDraft prices the pass.
#include "search/exact_tables.h"

#include <limits>

namespace shardlab::exact {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }
} // namespace

void GroupTables::fillDraftPrices(const Plan& p, DecodeTable& t)
{
    // Every price again at the drafting pass's phase (one token per sequence).
    m_cm.draftPhase(p, t.draft, nullptr, m_d.redundantHigh);
    for (int i = 0; i < kOpCount; ++i) {
        if (!m_present[i])
            continue;
        for (int o : m_allowed[i]) {
            const OpId id = static_cast<OpId>(i);
            const OpCost c = m_cm.op(id, o, t.draft);
            t.values[draftIndex(opIndex(id, o))] = c.totalS();
            t.values[draftIndex(computeIndex(id, o))] = c.timeS;
            t.values[draftIndex(ownIndex(id, o))] = c.own.seconds;
        }
    }
    for (const EdgeRef& e : m_edges)
        for (int f : m_allowed[idx(e.edge.from)])
            for (int to : m_allowed[idx(e.edge.to)]) {
                const Layout tl = e.edge.intoOutput ? outLayout(e.edge.to, to) : inLayout(e.edge.to, to);
                t.values[draftIndex(edgeIndex(e, f, to))] =
                    m_cm.edge(e.edge, outLayout(e.edge.from, f), tl, t.draft).seconds;
            }
    for (int o : m_allowed[idx(OpId::Attention)])
        t.draftKvPerLayer[o] = m_cm.kvBytesPerLayer(o, t.draft);
    for (int o : m_allowed[idx(OpId::QkvProj)]) {
        Plan q = p;
        q.setOption(OpId::QkvProj, o);
        t.values[projIndex(o)] = m_cm.mtpProjection(q, t.draft).timeS;
    }
}

void GroupTables::addDraftTerms(Combo& c, OpId id, int o, int vi, const std::function<void(int, int)>& term) const
{
    if (m_opChannels[idx(id)] & (1 << m_draftChannel)) { // an operator of the draft block's layer
        term(Term::kDraftLayerTarget, draftIndex(vi));
        c.fixed.weights[3] += m_weights[vi];
        if (m_draftChannel == 1) {
            term(Term::kDraftPartTarget + static_cast<int>(overlapPart(id, o, false)), draftIndex(computeIndex(id, o)));
            term(Term::kDraftPartTarget + static_cast<int>(overlapPart(id, o, true)), draftIndex(ownIndex(id, o)));
        }
    }
    if (id == OpId::Embedding || id == OpId::LmHead)
        term(Term::kDraftFixedTarget, draftIndex(vi));
    if (id == OpId::QkvProj) {
        term(Term::kDraftFixedTarget, projIndex(o));
        c.fixed.weights[3] += m_projWeights[o];
    }
}

void GroupTables::addDraftParts(OpId id, int o, const std::vector<double>& v, std::array<double, kOverlapParts>& parts) const
{
    parts[static_cast<int>(overlapPart(id, o, false))] += v[draftIndex(computeIndex(id, o))];
    parts[static_cast<int>(overlapPart(id, o, true))] += v[draftIndex(ownIndex(id, o))];
}

void GroupTables::draftLowerBound(const DecodeTable& t, LayerSums& s) const
{
    // Each operator and edge at its cheapest allowed draft price, each overlap part at its
    // own cheapest (the schedule is non-decreasing in every part, so a bound however the
    // options split the exchange), the cheapest weights and cache. The norms take every
    // allowed option here: a bound for any pair.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const int dch = m_draftChannel;
    for (int i = 0; i < kOpCount; ++i) {
        if (!m_present[i] || m_opChannels[i] == 0)
            continue;
        const OpId id = static_cast<OpId>(i);
        double d = kInf, w = kInf;
        std::array<double, kOverlapParts> pm;
        pm.fill(kInf);
        for (int o : m_allowed[i]) {
            d = std::min(d, t.values[draftIndex(opIndex(id, o))]);
            w = std::min(w, m_weights[opIndex(id, o)]);
            std::array<double, kOverlapParts> dp{};
            addDraftParts(id, o, t.values, dp);
            for (int k = 0; k < kOverlapParts; ++k)
                pm[k] = std::min(pm[k], dp[k]);
        }
        if (m_opChannels[i] & (1 << dch)) {
            s.draftLayer += d;
            s.weights[3] += w;
            if (dch == 1)
                for (int k = 0; k < kOverlapParts; ++k)
                    s.draftParts[k] += pm[k];
        }
        if (id == OpId::Embedding || id == OpId::LmHead)
            s.draftFixed += d;
    }
    double proj = kInf, projWeights = kInf, kv = kInf;
    for (int o : m_allowed[idx(OpId::QkvProj)]) {
        proj = std::min(proj, t.values[projIndex(o)]);
        projWeights = std::min(projWeights, m_projWeights[o]);
    }
    s.draftFixed += proj;
    s.weights[3] += projWeights;
    for (int o : m_allowed[idx(OpId::Attention)])
        kv = std::min(kv, t.draftKvPerLayer[o]);
    s.kv[3] += kv;
    for (const EdgeRef& e : m_edges) {
        double d = kInf;
        for (int from : m_allowed[idx(e.edge.from)])
            for (int to : m_allowed[idx(e.edge.to)])
                d = std::min(d, t.values[draftIndex(edgeIndex(e, from, to))]);
        if (e.channel == dch) {
            s.draftLayer += d;
            if (dch == 1)
                s.draftParts[static_cast<int>(overlapPart(e.edge))] += d;
        } else if (e.channel >= 2)
            s.draftFixed += d;
    }
}

} // namespace shardlab::exact
