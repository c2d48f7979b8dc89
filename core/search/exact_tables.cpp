#include "search/exact_tables.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <functional>
#include <limits>
#include <numeric>

namespace shardlab::exact {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }
bool isNorm(OpId id) { return id == OpId::AttnNorm || id == OpId::FfnNorm; }
constexpr size_t kMaxCachedTables = 256;
} // namespace

GroupTables::GroupTables(const Simulator& sim, const SearchSpace& space)
    : m_sim(sim), m_cm(sim.costs().withSizeCapsLifted()), m_space(space)
{
    const ModelSpec& m = sim.scenario().model;
    const bool shared = opPresent(m, OpId::SharedExpert);
    for (int i = 0; i < kOpCount; ++i) {
        m_present[i] = opPresent(m, static_cast<OpId>(i));
        m_opBase[i] = i * kMaxOptions;
    }
    int next = kOpCount * kMaxOptions;
    auto addEdge = [&](const GraphEdge& e, int channel) {
        m_edges.push_back({e, channel, next});
        next += kMaxOptions * kMaxOptions;
    };
    const bool kinds[2] = {m.denseLayerCount() > 0, m.moeLayers() > 0};
    for (int k = 0; k < 2; ++k) {
        if (!kinds[k])
            continue;
        for (const GraphStep& st : layerSteps(k == 0 ? LayerKind::Dense : LayerKind::Moe, shared)) {
            if (st.isEdge)
                addEdge(st.edge, k);
            else
                m_opChannels[idx(st.op)] |= 1 << k;
        }
    }
    addEdge(embeddingEdge(), 2);
    addEdge(lmHeadEdge(m.moeLayers() > 0), 3);
    m_opChannels[idx(OpId::Embedding)] |= 1 << 2;
    m_opChannels[idx(OpId::LmHead)] |= 1 << 3;
    m_computeBase = next;
    m_ownBase = next + kOpCount * kMaxOptions;
    m_values = next + 2 * kOpCount * kMaxOptions;
    m_drafts = m_cm.draftPasses() > 0;
    m_draftChannel = m.isMoe() ? 1 : 0;
    if (m_drafts) { // a second copy of the layout at the draft phase, then the projection
        m_draftBase = m_values;
        m_projBase = 2 * m_values;
        m_values = 2 * m_values + kMaxOptions; // about 1,300: Term's 16-bit index holds it
    }

    // Groups: the graph's non-norm operators, joined by every edge between two of them.
    std::vector<int> parent(kOpCount);
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> root = [&](int x) { return parent[x] == x ? x : parent[x] = root(parent[x]); };
    for (const EdgeRef& e : m_edges)
        if (!isNorm(e.edge.from) && !isNorm(e.edge.to))
            parent[root(idx(e.edge.from))] = root(idx(e.edge.to));
    std::vector<int> order; // groups in the order their first operator runs
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!m_present[i] || isNorm(id) || m_opChannels[i] == 0)
            continue;
        const int r = root(i);
        auto it = std::find(order.begin(), order.end(), r);
        if (it == order.end()) {
            order.push_back(r);
            m_groupOps.emplace_back();
            it = order.end() - 1;
        }
        m_groupOps[it - order.begin()].push_back(id);
    }
}

void GroupTables::setDegrees(const Degrees& d)
{
    m_d = d;
    m_cache.clear();
    const Scenario& s = m_sim.scenario();
    const ModelSpec& m = s.model;
    const Plan p = degreesPlan(1, 1);
    m_cm.phaseFloor(p, d.redundantHigh, true, m_pre);
    m_stages = pipelineStages(m.layers, m.denseLayerCount(), d.pp);
    const int etp = m.isMoe() ? expertTensorParallel(p) : 0;

    for (auto& v : m_allowed)
        v.clear();
    for (int i = 0; i < kOpCount; ++i)
        if (!m_present[i])
            m_allowed[i].push_back(opInfo(static_cast<OpId>(i)).megatronOption);
    for (int sl = m_space.firstOpSlot(); sl < m_space.slotCount(); ++sl) {
        const Slot& slot = m_space.slots()[sl];
        for (int o : slot.values)
            if (m_space.optionAllowed(slot.op, o, d.tp, etp)
                && (d.mode < 0 || engineOptionAllowed(*m_space.engine(), m, p, d.mode, slot.op, o)))
                m_allowed[idx(slot.op)].push_back(o);
        // An option that cannot matter with these degrees (canonicalPlan, model/plan_checks.h:
        // every option of it evaluates the same, tst_simulator checks it) is searched once:
        // the recipe's when allowed. The certificate covers the others through that equality.
        std::vector<int>& a = m_allowed[idx(slot.op)];
        if (a.size() > 1 && optionIrrelevant(p, slot.op)) {
            const int keep = std::find(a.begin(), a.end(), opInfo(slot.op).megatronOption) != a.end()
                ? opInfo(slot.op).megatronOption
                : a.front();
            a.assign(1, keep);
        }
    }

    m_preValues.assign(m_values, 0.0);
    m_weights.assign(m_values, 0.0);
    for (int i = 0; i < kOpCount; ++i) {
        if (!m_present[i])
            continue;
        for (int o : m_allowed[i]) {
            const OpId id = static_cast<OpId>(i);
            const OpCost c = m_cm.op(id, o, m_pre);
            m_preValues[opIndex(id, o)] = c.totalS();
            m_preValues[computeIndex(id, o)] = c.timeS;
            m_preValues[ownIndex(id, o)] = c.own.seconds;
            m_weights[opIndex(id, o)] = c.weightBytes;
        }
    }
    if (m_drafts)
        for (int o : m_allowed[idx(OpId::QkvProj)]) {
            Plan q = p;
            q.setOption(OpId::QkvProj, o);
            m_projWeights[o] = m_cm.mtpProjection(q, m_pre).weightBytes;
        }
    for (const EdgeRef& e : m_edges)
        for (int f : m_allowed[idx(e.edge.from)])
            for (int t : m_allowed[idx(e.edge.to)]) {
                const Layout to = e.edge.intoOutput ? outLayout(e.edge.to, t) : inLayout(e.edge.to, t);
                m_preValues[edgeIndex(e, f, t)] = m_cm.edge(e.edge, outLayout(e.edge.from, f), to, m_pre).seconds;
            }
}

Plan planOfDegrees(const Degrees& d, int micro, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = d.tp;
    p.pipelineParallel = d.pp;
    p.expertParallel = d.ep;
    p.dataParallel = d.dp;
    p.redundantExperts = d.redundant;
    p.twoBatchOverlap = d.tbo;
    p.instances = d.instances;
    p.batch = batch;
    p.microBatches = micro;
    return p;
}

Plan GroupTables::degreesPlan(int micro, int batch) const { return planOfDegrees(m_d, micro, batch); }

bool GroupTables::empty() const
{
    for (int i = 0; i < kOpCount; ++i)
        if (m_present[i] && m_allowed[i].empty())
            return true;
    return false;
}

const DecodeTable& GroupTables::decodeAt(int micro, int batch)
{
    const auto key = std::make_pair(micro, batch);
    auto it = m_cache.find(key);
    if (it != m_cache.end())
        return it->second;
    if (m_cache.size() >= kMaxCachedTables)
        m_cache.clear(); // a bisection revisits few batches; a fresh start costs only time
    DecodeTable& t = m_cache[key];
    const Plan p = degreesPlan(micro, batch);
    m_cm.phaseFloor(p, m_d.redundantHigh, false, t.dec);
    t.values.assign(m_values, 0.0);
    for (int i = 0; i < kOpCount; ++i) {
        if (!m_present[i])
            continue;
        for (int o : m_allowed[i]) {
            const OpId id = static_cast<OpId>(i);
            const OpCost c = m_cm.op(id, o, t.dec);
            t.values[opIndex(id, o)] = c.totalS();
            t.values[computeIndex(id, o)] = c.timeS;
            t.values[ownIndex(id, o)] = c.own.seconds;
        }
    }
    for (const EdgeRef& e : m_edges)
        for (int f : m_allowed[idx(e.edge.from)])
            for (int to : m_allowed[idx(e.edge.to)]) {
                const Layout tl = e.edge.intoOutput ? outLayout(e.edge.to, to) : inLayout(e.edge.to, to);
                t.values[edgeIndex(e, f, to)] = m_cm.edge(e.edge, outLayout(e.edge.from, f), tl, t.dec).seconds;
            }
    for (int o : m_allowed[idx(OpId::Attention)])
        t.kvPerLayer[o] = m_cm.kvBytesPerLayer(o, t.dec);
    if (m_drafts)
        fillDraftPrices(p, t);
    return t;
}

// Appends to `g` the combo of its operators' options in `option`: its fixed sums (prefill,
// weights) and its decode terms (ops and the edges in `edges`).
void GroupTables::addCombo(OpGroup& g, const std::vector<const EdgeRef*>& edges, const std::array<int, kOpCount>& option) const
{
    Combo c;
    c.firstTerm = static_cast<std::uint32_t>(g.terms.size());
    auto term = [&](int target, int vi) {
        g.terms.push_back({static_cast<std::uint8_t>(target), static_cast<std::uint16_t>(vi)});
    };
    auto part = [&](OverlapPart x, int vi) {
        c.fixed.moePre[static_cast<int>(x)] += m_preValues[vi];
        term(Term::kPartTarget + static_cast<int>(x), vi);
    };
    for (OpId id : g.ops) {
        const int o = option[idx(id)];
        g.options.push_back(static_cast<std::uint8_t>(o));
        const int vi = opIndex(id, o);
        for (int ch = 0; ch < 4; ++ch)
            if (m_opChannels[idx(id)] & (1 << ch)) {
                c.fixed.pre[ch] += m_preValues[vi];
                c.fixed.weights[ch] += m_weights[vi];
                term(ch, vi);
            }
        if (m_opChannels[idx(id)] & (1 << 1)) {
            part(overlapPart(id, o, false), computeIndex(id, o));
            part(overlapPart(id, o, true), ownIndex(id, o));
        }
        if (m_drafts)
            addDraftTerms(c, id, o, vi, term);
    }
    for (const EdgeRef* e : edges) {
        const int vi = edgeIndex(*e, option[idx(e->edge.from)], option[idx(e->edge.to)]);
        c.fixed.pre[e->channel] += m_preValues[vi];
        term(e->channel, vi);
        if (e->channel == 1)
            part(overlapPart(e->edge), vi);
        if (m_drafts && e->channel == m_draftChannel) {
            term(Term::kDraftLayerTarget, draftIndex(vi));
            if (m_draftChannel == 1)
                term(Term::kDraftPartTarget + static_cast<int>(overlapPart(e->edge)), draftIndex(vi));
        } else if (m_drafts && e->channel >= 2) // the embedding's and the LM head's edges
            term(Term::kDraftFixedTarget, draftIndex(vi));
    }
    if (std::find(g.ops.begin(), g.ops.end(), OpId::LmHead) != g.ops.end())
        c.fixed.logitsShare = lmHeadLogitsShare(option[idx(OpId::LmHead)], m_d.tp);
    if (std::find(g.ops.begin(), g.ops.end(), OpId::Attention) != g.ops.end()) {
        c.fixed.promptOwnerShare = promptOwnerShare(option[idx(OpId::Attention)], m_d.tp);
        c.hasKv = true;
        c.kvOption = static_cast<std::uint8_t>(option[idx(OpId::Attention)]);
        for (int ch = 0; ch < 2; ++ch)
            if (m_opChannels[idx(OpId::Attention)] & (1 << ch))
                c.kvChannels[c.kvChannelCount++] = static_cast<std::uint8_t>(ch);
    }
    c.termCount = static_cast<std::uint32_t>(g.terms.size()) - c.firstTerm;
    g.combos.push_back(c);
}

void GroupTables::buildGroups(int a, int f, std::vector<OpGroup>& out) const
{
    out.clear();
    for (const std::vector<OpId>& ops : m_groupOps) {
        OpGroup g;
        g.ops = ops;
        auto inGroup = [&](OpId id) { return std::find(ops.begin(), ops.end(), id) != ops.end(); };
        std::vector<const EdgeRef*> edges;
        for (const EdgeRef& e : m_edges)
            if (inGroup(e.edge.from) || inGroup(e.edge.to))
                edges.push_back(&e);
        size_t count = 1;
        for (OpId id : ops)
            count *= m_allowed[idx(id)].size();
        g.combos.reserve(count);
        g.options.reserve(count * ops.size());
        std::array<int, kOpCount> option{};
        option[idx(OpId::AttnNorm)] = a;
        option[idx(OpId::FfnNorm)] = f;
        // Every combination of the ops' allowed options, the last op fastest (an odometer).
        std::vector<size_t> digit(ops.size(), 0);
        for (size_t n = 0; n < count; ++n) {
            for (size_t j = 0; j < ops.size(); ++j)
                option[idx(ops[j])] = m_allowed[idx(ops[j])][digit[j]];
            for (size_t j = ops.size(); j-- > 0;) {
                if (++digit[j] < m_allowed[idx(ops[j])].size())
                    break;
                digit[j] = 0;
            }
            addCombo(g, edges, option);
        }
        out.push_back(std::move(g));
    }
    // With two-batch overlap the MoE block's parts decide the layer's schedule, and the
    // componentwise minimum of its combos (one's compute, another's communication) is a
    // loose bound: branch on it first, so every node below prices it exactly.
    if (m_d.tbo) {
        auto moe = std::find_if(out.begin(), out.end(), [](const OpGroup& g) {
            return std::find(g.ops.begin(), g.ops.end(), OpId::Dispatch) != g.ops.end();
        });
        if (moe != out.end())
            std::rotate(out.begin(), moe, moe + 1);
    }
}

LayerSums GroupTables::comboSums(const OpGroup& g, const Combo& c, const DecodeTable& t) const
{
    LayerSums s = c.fixed;
    const Term* term = g.terms.data() + c.firstTerm;
    for (std::uint32_t i = 0; i < c.termCount; ++i, ++term) {
        const double v = t.values[term->index];
        if (term->target < Term::kPartTarget)
            s.dec[term->target] += v;
        else if (term->target < Term::kDraftLayerTarget)
            s.moeDec[term->target - Term::kPartTarget] += v;
        else if (term->target == Term::kDraftLayerTarget)
            s.draftLayer += v;
        else if (term->target == Term::kDraftFixedTarget)
            s.draftFixed += v;
        else
            s.draftParts[term->target - Term::kDraftPartTarget] += v;
    }
    for (int i = 0; i < c.kvChannelCount; ++i)
        s.kv[c.kvChannels[i]] += t.kvPerLayer[c.kvOption];
    if (m_drafts && c.hasKv) // the draft block's cache, on the last stage
        s.kv[3] += t.draftKvPerLayer[c.kvOption];
    return s;
}

LayerSums GroupTables::normSums(int a, int f, const DecodeTable& t) const
{
    LayerSums s;
    for (OpId id : {OpId::AttnNorm, OpId::FfnNorm}) {
        const int o = id == OpId::AttnNorm ? a : f;
        const int vi = opIndex(id, o);
        for (int ch = 0; ch < 4; ++ch)
            if (m_opChannels[idx(id)] & (1 << ch)) {
                s.dec[ch] += t.values[vi];
                s.pre[ch] += m_preValues[vi];
                s.weights[ch] += m_weights[vi];
            }
        if (m_opChannels[idx(id)] & (1 << 1)) {
            addParts(id, o, t.values, s.moeDec);
            addParts(id, o, m_preValues, s.moePre);
        }
        if (m_drafts && (m_opChannels[idx(id)] & (1 << m_draftChannel))) {
            s.draftLayer += t.values[draftIndex(vi)];
            s.weights[3] += m_weights[vi];
            if (m_draftChannel == 1)
                addDraftParts(id, o, t.values, s.draftParts);
        }
    }
    return s;
}

void GroupTables::addParts(OpId id, int o, const std::vector<double>& v, std::array<double, kOverlapParts>& parts) const
{
    parts[static_cast<int>(overlapPart(id, o, false))] += v[computeIndex(id, o)];
    parts[static_cast<int>(overlapPart(id, o, true))] += v[ownIndex(id, o)];
}

LayerSums GroupTables::lowerBound(int micro, int batch, int a, int f)
{
    const DecodeTable& t = decodeAt(micro, batch);
    // The allowed options of operator i, the norms' narrowed to (a, f) when given.
    struct Options {
        const int *first, *last;
        const int* begin() const { return first; }
        const int* end() const { return last; }
    };
    auto allowedOf = [&](int i) -> Options {
        if (a >= 0 && i == idx(OpId::AttnNorm))
            return {&a, &a + 1};
        if (f >= 0 && i == idx(OpId::FfnNorm))
            return {&f, &f + 1};
        return {m_allowed[i].data(), m_allowed[i].data() + m_allowed[i].size()};
    };
    LayerSums s;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kOpCount; ++i) {
        if (!m_present[i] || m_opChannels[i] == 0)
            continue;
        double d = kInf, q = kInf, w = kInf;
        for (int o : allowedOf(i)) {
            const int vi = opIndex(static_cast<OpId>(i), o);
            d = std::min(d, t.values[vi]);
            q = std::min(q, m_preValues[vi]);
            w = std::min(w, m_weights[vi]);
        }
        for (int ch = 0; ch < 4; ++ch)
            if (m_opChannels[i] & (1 << ch)) {
                s.dec[ch] += d;
                s.pre[ch] += q;
                s.weights[ch] += w;
            }
        const bool split = m_d.tbo && (i == idx(OpId::Dispatch) || i == idx(OpId::Combine));
        if ((m_opChannels[i] & (1 << 1)) && !split) {
            // Each overlap part at its own cheapest option (a lower bound of every part): an
            // option adds to the part its price goes to, 0 to every other part.
            const OpId id = static_cast<OpId>(i);
            std::array<double, kOverlapParts> dm, qm;
            dm.fill(kInf);
            qm.fill(kInf);
            for (int o : allowedOf(i)) {
                std::array<double, kOverlapParts> dp{}, qp{};
                addParts(id, o, t.values, dp);
                addParts(id, o, m_preValues, qp);
                for (int k = 0; k < kOverlapParts; ++k) {
                    dm[k] = std::min(dm[k], dp[k]);
                    qm[k] = std::min(qm[k], qp[k]);
                }
            }
            for (int k = 0; k < kOverlapParts; ++k) {
                s.moeDec[k] += dm[k];
                s.moePre[k] += qm[k];
            }
        }
    }
    if (m_present[idx(OpId::LmHead)]) {
        s.logitsShare = kInf;
        for (int o : allowedOf(idx(OpId::LmHead)))
            s.logitsShare = std::min(s.logitsShare, lmHeadLogitsShare(o, m_d.tp));
    }
    for (const EdgeRef& e : m_edges) {
        double d = kInf, q = kInf;
        for (int from : allowedOf(idx(e.edge.from)))
            for (int to : allowedOf(idx(e.edge.to))) {
                d = std::min(d, t.values[edgeIndex(e, from, to)]);
                q = std::min(q, m_preValues[edgeIndex(e, from, to)]);
            }
        s.dec[e.channel] += d;
        s.pre[e.channel] += q;
        if (e.channel == 1) {
            s.moeDec[static_cast<int>(overlapPart(e.edge))] += d;
            s.moePre[static_cast<int>(overlapPart(e.edge))] += q;
        }
    }
    if (m_d.tbo && m_present[idx(OpId::Dispatch)] && m_present[idx(OpId::Combine)]) {
        // Dispatch's and combine's options move their collective between the overlapped
        // parts (all-to-all) and the compute side (gather / reduce-scatter): a part-wise
        // minimum over them would price a layer that has neither. Instead, the overlapped
        // layer at every pair of their options, the rest at its part-wise minimum, and the
        // least of those, written as parts that the schedule turns into exactly that time
        // (A = t/2, the rest 0: max(A, 0) + 0 + 0 + max(A, 0) = t). Valid because the
        // schedule is non-decreasing in every part.
        auto least = [&](const std::vector<double>& v, std::array<double, kOverlapParts>& parts) {
            double best = kInf;
            for (int od : m_allowed[idx(OpId::Dispatch)])
                for (int oc : m_allowed[idx(OpId::Combine)]) {
                    std::array<double, kOverlapParts> p = parts;
                    addParts(OpId::Dispatch, od, v, p);
                    addParts(OpId::Combine, oc, v, p);
                    best = std::min(best, overlappedLayerSeconds(p));
                }
            parts = {};
            parts[static_cast<int>(OverlapPart::Attention)] = 0.5 * best;
        };
        least(t.values, s.moeDec);
        least(m_preValues, s.moePre);
    }
    double kv = kInf;
    for (int o : m_allowed[idx(OpId::Attention)]) {
        kv = std::min(kv, t.kvPerLayer[o]);
        s.promptOwnerShare = std::max(s.promptOwnerShare, promptOwnerShare(o, m_d.tp));
    }
    for (int ch = 0; ch < 2; ++ch)
        if (m_opChannels[idx(OpId::Attention)] & (1 << ch))
            s.kv[ch] += kv;
    if (m_drafts)
        draftLowerBound(t, s);
    return s;
}

PipelineFigures GroupTables::figures(int micro, int batch, const PhaseContext& dec, const LayerSums& s) const
{
    const Plan p = degreesPlan(micro, batch);
    return m_cm.pipeline(p, m_stages, dec, m_pre, s);
}

Plan GroupTables::makePlan(int micro, int batch, int a, int f, const std::vector<OpGroup>& groups,
                           const int* pick) const
{
    Plan p = degreesPlan(micro, batch);
    p.setOption(OpId::AttnNorm, a);
    p.setOption(OpId::FfnNorm, f);
    for (size_t g = 0; g < groups.size(); ++g) {
        for (size_t j = 0; j < groups[g].ops.size(); ++j)
            p.setOption(groups[g].ops[j], groups[g].option(pick[g], j));
    }
    return p;
}

// Ascending redundant counts as maximal runs in steps of `step`: (first, last) of each.
std::vector<std::pair<int, int>> countRanges(const std::vector<int>& counts, int step)
{
    std::vector<std::pair<int, int>> out;
    for (int c : counts) {
        if (!out.empty() && c == out.back().second + step)
            out.back().second = c;
        else
            out.push_back({c, c});
    }
    return out;
}

int largestFeasible(int lo, int hi, const std::function<int(int)>& ok, int hint)
{
    if (hi < lo)
        return 0;
    // hi first: it is often known already (a parent's batch) and may end the search.
    if (const int top = ok(hi); top != 0)
        return top > 0 ? hi : 0;
    int bad = hi;
    if (hint >= lo && hint < hi) {
        // Gallop from the hint towards the answer, then bisect the last step.
        const int v = ok(hint);
        if (v < 0)
            return 0;
        int step = 1;
        if (v > 0) {
            lo = hint;
            while (lo + step < bad) {
                const int w = ok(lo + step);
                if (w < 0)
                    return 0;
                if (w == 0) {
                    bad = lo + step;
                    break;
                }
                lo += step;
                step *= 2;
            }
        } else {
            bad = hint;
            if (ok(lo) <= 0)
                return 0;
            while (bad - step > lo) {
                const int w = ok(bad - step);
                if (w < 0)
                    return 0;
                if (w > 0) {
                    lo = bad - step;
                    break;
                }
                bad -= step;
                step *= 2;
            }
        }
    } else if (ok(lo) <= 0) {
        return 0;
    }
    while (bad - lo > 1) {
        const int mid = lo + (bad - lo) / 2;
        const int v = ok(mid);
        if (v < 0)
            return 0;
        if (v > 0)
            lo = mid;
        else
            bad = mid;
    }
    return lo;
}


// The engine modes an entry of these degrees is solved in: each mode the engine runs them
// in (its operators' options differ), or -1 (every option) when the space has no engine.
std::vector<int> entryModes(const SearchSpace& space, const Degrees& d)
{
    if (!space.engine())
        return {-1};
    std::vector<int> out;
    const unsigned bits = space.engineModeBits(planOfDegrees(d, 1, 1));
    for (int m = 0; m < kEngineModes; ++m)
        if (bits >> m & 1u)
            out.push_back(m);
    return out;
}

} // namespace shardlab::exact
