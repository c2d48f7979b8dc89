// `exact`: the best valid plan under the simulator, with a proof that covers every plan
// the simulator accepts (docs/search.md, "What exact certifies").
//
// 1. Degrees (TP, PP, EP, DP): every combination the simulator accepts. Each gets an
//    upper bound on its throughput over every batch, micro-batch count and operator
//    option: per operator and per edge the cheapest allowed price (GroupTables::lowerBound)
//    at the largest batch those prices still fit the limits. Two properties of the cost
//    model make this a bound (docs/search.md): every price is non-decreasing in the batch
//    with no fixed share growing faster than the batch ("batch property"), so throughput
//    never falls when the batch grows and the best batch of any fixed plan is the largest
//    feasible one. Micro-batches run 1..PP (the simulator refuses more).
// 2. Entries are examined best bound first until no bound can beat the best plan. A
//    degrees entry splits into one entry per micro-batch count; a (degrees, micro) entry
//    is solved by branch and bound over the operator groups (exact_tables.h), for each
//    pair of norm options: a node's bound is the throughput of its partial sums plus the
//    cheapest choice of every remaining group, at the largest batch where those fit.
//    Redundant-expert counts of one (TP, PP, EP, overlap) enter as ranges bounded by the
//    cost model's phase floor (CostModel::phaseFloor); a range whose branch and bound
//    reaches the best plan is halved, a single count is solved as above. With one EP
//    rank, redundant slots only add weights: r = 0 dominates (docs/search.md).
// 3. The tables price with the engines' all-reduce size limits lifted (a bound at every
//    batch). Each leaf's plan is judged by Simulator::evaluate over its batch segments
//    (leafSegment): the largest valid batch between two size-limit crossings. A disagreement
//    with the tables, or drafting they leave out, is reported, and no optimum is claimed.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <sstream>

#include "search/exact_search.h"
#include "sim/batch.h"

namespace shardlab::exact {


const ExactSearch::Level& ExactSearch::levelAt(int batch)
{
    auto it = m_levels.find(batch);
    if (it != m_levels.end())
        return it->second;
    if (m_levels.size() > 512)
        m_levels.clear(); // bounded: a miss only costs time
    countWork();
    Level& lv = m_levels[batch];
    const DecodeTable& t = m_t->decodeAt(m_micro, batch);
    lv.dec = t.dec;
    lv.norms = m_t->normSums(m_a, m_f, t);
    const size_t G = m_groups.size();
    lv.combo.resize(G);
    lv.suffixMin.assign(G + 1, LayerSums{});
    for (size_t g = 0; g < G; ++g) {
        lv.combo[g].resize(m_groups[g].combos.size());
        for (size_t i = 0; i < m_groups[g].combos.size(); ++i)
            lv.combo[g][i] = m_t->comboSums(m_groups[g], m_groups[g].combos[i], t);
    }
    for (size_t g = G; g-- > 0;) {
        LayerSums mn = lv.combo[g].front();
        for (const LayerSums& c : lv.combo[g])
            mn = componentMin(mn, c);
        lv.suffixMin[g] = mn + lv.suffixMin[g + 1];
    }
    return lv;
}

LayerSums ExactSearch::nodeSums(const Level& lv, int gi) const
{
    LayerSums s = lv.norms;
    for (int g = 0; g < gi; ++g)
        s += lv.combo[g][m_pick[g]];
    s += lv.suffixMin[gi];
    return s;
}

// Degrees bound over every micro-batch count: a decode cycle is at least the busiest
// stage's step plus its transfer at micro-batch 1 (the batch property), so
// throughput <= batch x DP / that, at the largest batch where the cheapest prices fit.
bool ExactSearch::boundDegrees(Entry& e)
{
    countWork();
    m_t->setDegrees(e.d);
    if (m_t->empty())
        return false;
    const Scenario& s = m_ctx->scenario;
    const CostModel& cm = m_ctx->simulator.costs();
    auto figuresAt = [&](int b, PipelineFigures& f) {
        const LayerSums lb = m_t->lowerBound(1, b);
        f = m_t->figures(1, b, m_t->decodeAt(1, b).dec, lb);
        // The cycle's floor over every micro-batch count (one step's host work included).
        f.cycleS = f.stageStepS + f.p2pDecS + cm.stepOverheadS();
        // The most micro-batches (min(PP, batch)) give the smallest engine step: the
        // floors of the token budget's use and of the aggregated TTFT; a prefill pool's
        // pass and transfer are the smallest micro-batch's.
        const int mMax = std::min(e.d.pp, b);
        f.stepTokens /= mMax;
        if (s.workload.serving == ServingMode::Prefill) {
            const LayerSums lbm = m_t->lowerBound(mMax, b);
            const PipelineFigures fm = m_t->figures(mMax, b, m_t->decodeAt(mMax, b).dec, lbm);
            f.passMs = fm.passMs;
            f.kvTransferMs = fm.kvTransferMs;
        }
        // The serving figures at the floor, by the simulator's own formulas.
        cm.servingFigures(f, double(b) * e.d.dp, double(b) / mMax * cm.queriesPerSequence(), lb.promptOwnerShare);
    };
    PipelineFigures f1;
    figuresAt(1, f1);
    m_facts.minMemGb = std::min(m_facts.minMemGb, f1.memoryGb);
    m_facts.minTtftMs = std::min(m_facts.minTtftMs, f1.ttftMs);
    m_facts.minTpotMs = std::min(m_facts.minTpotMs, f1.tpotMs);
    // A batch beyond the limits whose bound is already below the best plan bounds every
    // smaller batch too (the batch property): the entry is dropped there.
    const int b = largestFeasible(m_ctx->space.batchMin(), m_ctx->space.batchMax(), [&](int batch) {
        PipelineFigures f;
        figuresAt(batch, f);
        return m_t->within(f, kSlack) ? 1 : f.tokensPerSPerGpu < threshold() ? -1 : 0;
    }, m_lastDegreesBatch); // the previous degrees' batch: neighbours in the enumeration
    if (b == 0)
        return false;
    m_lastDegreesBatch = b;
    PipelineFigures f;
    figuresAt(b, f);
    e.bound = f.tokensPerSPerGpu;
    e.batchHi = b;
    return true;
}

bool ExactSearch::boundMicro(Entry& e, int hint)
{
    countWork();
    const int m = e.micro;
    // The bound at the degrees' largest batch bounds every smaller one (the batch property).
    if (m_t->figures(m, e.batchHi, m_t->decodeAt(m, e.batchHi).dec, m_t->lowerBound(m, e.batchHi)).tokensPerSPerGpu
        < threshold())
        return false;
    const int b = largestFeasible(std::max(m, m_ctx->space.batchMin()), e.batchHi, [&](int batch) {
        const LayerSums lb = m_t->lowerBound(m, batch);
        const PipelineFigures f = m_t->figures(m, batch, m_t->decodeAt(m, batch).dec, lb);
        return m_t->within(f, kSlack) ? 1 : f.tokensPerSPerGpu < threshold() ? -1 : 0;
    }, hint);
    if (b == 0)
        return false;
    const LayerSums lb = m_t->lowerBound(m, b);
    e.bound = m_t->figures(m, b, m_t->decodeAt(m, b).dec, lb).tokensPerSPerGpu;
    e.batchHi = b;
    return true;
}

void ExactSearch::branch(int gi, int hi)
{
    ++m_facts.nodes;
    countWork();
    if (m_facts.overWork || ((m_facts.nodes & 1023) == 0 && halted()))
        return;
    // The node's throughput at a batch beyond the limits bounds it at every smaller batch
    // (the batch property): below the best plan, it is pruned there.
    const int b = largestFeasible(std::max(m_micro, m_ctx->space.batchMin()), hi, [&](int batch) {
        const Level& lv = levelAt(batch);
        const PipelineFigures f = m_t->figures(m_micro, batch, lv.dec, nodeSums(lv, gi));
        return m_t->within(f, kSlack) ? 1 : f.tokensPerSPerGpu < threshold() ? -1 : 0;
    }, hi - 1); // children sit near their parent's batch
    if (b == 0)
        return;
    double value;
    {
        const Level& lv = levelAt(b);
        value = m_t->figures(m_micro, b, lv.dec, nodeSums(lv, gi)).tokensPerSPerGpu;
    }
    if (value < threshold())
        return;
    if (gi == static_cast<int>(m_groups.size())) {
        leaf(b);
        return;
    }
    // Children cheapest first (decode time at this batch, weighted by layer counts; with
    // two-batch overlap each child's layers as the overlapped schedule prices them, with the
    // rest of the node at its cheapest).
    const ModelSpec& m = m_ctx->scenario.model;
    const double w[4] = {double(m.denseLayerCount()), double(m.moeLayers()), 1, 1};
    std::vector<std::pair<double, int>> order;
    {
        const Level& lv = levelAt(b);
        const int halves = lv.dec.halves;
        LayerSums rest; // the node without group gi: its picks, the norms, the groups after it
        if (halves > 1) {
            rest = lv.norms + lv.suffixMin[gi + 1];
            for (int g = 0; g < gi; ++g)
                rest += lv.combo[g][m_pick[g]];
        }
        for (size_t i = 0; i < lv.combo[gi].size(); ++i) {
            const LayerSums& c = lv.combo[gi][i];
            double cost = 0;
            if (halves > 1) {
                const LayerSums s = rest + c;
                for (int ch = 0; ch < 4; ++ch)
                    cost += w[ch] * layerSeconds(s, ch, false, halves);
            } else {
                cost = w[0] * c.dec[0] + w[1] * c.dec[1] + w[2] * c.dec[2] + w[3] * c.dec[3];
            }
            order.push_back({cost, int(i)});
        }
    }
    std::stable_sort(order.begin(), order.end());
    for (const auto& [cost, i] : order) {
        m_pick[gi] = i;
        branch(gi + 1, b);
        if (halted() || m_probeHit)
            return;
    }
}

void ExactSearch::solve(const Entry& e)
{
    ++m_facts.solved;
    m_t->setDegrees(e.d);
    m_micro = e.micro;
    for (int a : m_t->allowed(OpId::AttnNorm))
        for (int f : m_t->allowed(OpId::FfnNorm)) {
            m_a = a;
            m_f = f;
            // The norms' pair bounds every plan it heads: below the best plan, its groups
            // are not built (the batch property: the entry's largest batch bounds the rest).
            if (m_t->figures(m_micro, e.batchHi, m_t->decodeAt(m_micro, e.batchHi).dec,
                             m_t->lowerBound(m_micro, e.batchHi, a, f))
                    .tokensPerSPerGpu
                < threshold())
                continue;
            m_t->buildGroups(a, f, m_groups);
            bool empty = false;
            for (const OpGroup& g : m_groups)
                empty = empty || g.combos.empty();
            if (empty)
                continue;
            m_levels.clear();
            m_pick.assign(m_groups.size(), 0);
            branch(0, e.batchHi);
            if (halted() || m_probeHit)
                return;
        }
}

void ExactSearch::splitRange(const Entry& e, std::priority_queue<Entry>& queue, long long& order)
{
    m_probe = true;
    m_probeHit = false;
    solve(e);
    m_probe = false;
    const bool hit = m_probeHit;
    m_probeHit = false;
    if (!hit || halted())
        return;
    const int step = e.d.ep, members = (e.d.redundantHigh - e.d.redundant) / step + 1;
    const int mid = e.d.redundant + (members / 2 - 1) * step;
    for (const auto& [lo, hi] : {std::pair{e.d.redundant, mid}, std::pair{mid + step, e.d.redundantHigh}}) {
        Entry half = e;
        half.d.redundant = lo;
        half.d.redundantHigh = hi;
        half.order = order++;
        m_t->setDegrees(half.d);
        if (boundMicro(half, e.batchHi - 1) && half.bound >= threshold())
            queue.push(half);
    }
}

// Every (redundant-expert range, overlap, instances, engine mode) of one (TP, PP, EP),
// whose slot indices `choice` holds: bounded and queued. False when stopped.
bool ExactSearch::enumerateEp(std::vector<int>& choice, std::priority_queue<Entry>& queue, long long& order)
{
    const SearchSpace& space = m_ctx->space;
    const long long N = m_ctx->scenario.cluster.totalGpus();
    const auto& slots = space.slots();
    const int rs = space.redundantSlot(), os = space.overlapSlot(), is = space.instancesSlot();
    std::vector<std::uint8_t> rOk(space.widestSlot()), oOk(space.widestSlot()), iOk(space.widestSlot());
    // A slot's mask, or the one value of a slot the model has not (-1).
    auto maskOr = [&](int slot, std::vector<std::uint8_t>& ok) {
        if (slot < 0)
            ok[0] = 1;
        else
            space.mask(slot, choice.data(), ok.data());
    };
    // A dense model has none of these slots: one entry, no redundancy, no overlap, one instance.
    static const std::vector<int> kNone{0}, kOne{1};
    const std::vector<int>& rValues = rs >= 0 ? slots[rs].values : kNone;
    const std::vector<int>& oValues = os >= 0 ? slots[os].values : kNone;
    maskOr(rs, rOk);
    maskOr(os, oOk);
    const std::vector<int>& iValues = is >= 0 ? slots[is].values : kOne;
    // The counts this EP allows, ascending in steps of EP. One EP rank holds
    // every slot: redundant slots balance nothing and only add weights to hold
    // and read, so r = 0 dominates there (docs/search.md).
    const int ep = slots[2].values[choice[2]];
    std::vector<int> counts;
    for (size_t ri = 0; ri < rValues.size(); ++ri)
        if (rOk[ri] && (ep > 1 || rValues[ri] == 0))
            counts.push_back(rValues[ri]);
    for (size_t oi = 0; oi < oValues.size(); ++oi) {
        if (!oOk[oi])
            continue;
        if (os >= 0) // the instances an engine runs depend on the overlap
            choice[os] = static_cast<int>(oi);
        maskOr(is, iOk);
        for (size_t ii = 0; ii < iValues.size(); ++ii) {
            if (!iOk[ii])
                continue;
            if (halted())
                return false;
            Entry e;
            e.d.tp = slots[0].values[choice[0]];
            e.d.pp = slots[1].values[choice[1]];
            e.d.ep = ep;
            e.d.dp = static_cast<int>(N / (static_cast<long long>(e.d.tp) * e.d.pp));
            e.d.tbo = oValues[oi] != 0;
            e.d.instances = iValues[ii];
            m_facts.degrees += static_cast<long long>(counts.size());
            for (int mode : entryModes(space, e.d)) {
                e.d.mode = mode;
                for (const auto& [lo, hi] : countRanges(counts, ep)) {
                    e.d.redundant = lo;
                    e.d.redundantHigh = hi;
                    e.order = order++;
                    if (boundDegrees(e))
                        queue.push(e);
                }
            }
        }
    }
    return true;
}

// Pass 1: every (TP, PP, EP, redundant experts, two-batch overlap, engine instances) the
// simulator accepts among the space's values (the space's masks say which), bounded and
// queued. False when stopped.
bool ExactSearch::enumerateDegrees(std::priority_queue<Entry>& queue, long long& order)
{
    const SearchSpace& space = m_ctx->space;
    const auto& slots = space.slots();
    std::vector<int> choice(SearchSpace::kMaxSlots, 0);
    std::vector<std::uint8_t> tpOk(space.widestSlot()), ppOk(space.widestSlot()), epOk(space.widestSlot());
    space.mask(space.tpSlot(), choice.data(), tpOk.data());
    for (size_t ti = 0; ti < slots[0].values.size(); ++ti) {
        if (!tpOk[ti])
            continue;
        choice[0] = static_cast<int>(ti);
        space.mask(space.ppSlot(), choice.data(), ppOk.data());
        for (size_t pi = 0; pi < slots[1].values.size(); ++pi) {
            if (!ppOk[pi])
                continue;
            choice[1] = static_cast<int>(pi);
            space.mask(space.epSlot(), choice.data(), epOk.data());
            for (size_t ei = 0; ei < slots[2].values.size(); ++ei) {
                if (!epOk[ei])
                    continue;
                choice[2] = static_cast<int>(ei);
                if (!enumerateEp(choice, queue, order))
                    return false;
            }
            m_ev->setFraction(0.3 * (ti + double(pi) / slots[1].values.size()) / slots[0].values.size());
            m_ev->tick();
        }
    }
    return true;
}

// Pass 2: best bound first until no bound can beat the best plan. Returns the best bound
// left unexamined when stopped (0 when the queue was settled).
double ExactSearch::examine(std::priority_queue<Entry>& queue, long long& order)
{
    const size_t entries = queue.size();
    double openBound = 0;
    const SearchSpace& space = m_ctx->space;
    while (!queue.empty()) {
        Entry e = queue.top();
        if (e.bound < threshold())
            break;
        if (halted()) {
            openBound = e.bound;
            break;
        }
        queue.pop();
        if (e.micro == 0) {
            m_t->setDegrees(e.d);
            // An engine keeps one micro-batch per stage in flight (the space's rule). Each
            // count's largest batch is looked for near the previous count's.
            int hint = -1;
            for (int m = space.engine() ? e.d.pp : 1; m <= std::min(e.d.pp, e.batchHi); ++m) {
                Entry s = e;
                s.micro = m;
                s.order = order++;
                if (boundMicro(s, hint)) {
                    hint = s.batchHi;
                    if (s.bound >= threshold())
                        queue.push(s);
                }
            }
            continue;
        }
        if (e.d.isRange()) {
            splitRange(e, queue, order);
            continue;
        }
        solve(e);
        if (halted()) {
            openBound = e.bound;
            break;
        }
        m_ev->setFraction(0.3 + 0.7 * (1.0 - double(queue.size()) / std::max<size_t>(1, entries + queue.size())));
        m_ev->tick();
    }
    return openBound;
}

AlgorithmReport ExactSearch::run(SearchContext& ctx)
{
    m_ctx = &ctx;
    m_ev = &ctx.evaluator;
    GroupTables tables(ctx.simulator, ctx.space);
    m_t = &tables;
    AlgorithmReport report;

    std::priority_queue<Entry> queue;
    long long order = 0;
    if (!enumerateDegrees(queue, order))
        return report;
    const double openBound = examine(queue, order);

    CertificateFacts& facts = m_facts;
    facts.stopped = halted();
    facts.workLimit = ctx.options.exactWorkLimit;
    facts.haveBest = m_ev->haveBest();
    facts.best = facts.haveBest ? bestValue() : 0;
    facts.openBound = openBound;
    facts.floor = ctx.options.exactFloor;
    report.note = certificateNote(ctx.scenario, ctx.space, facts, report.provedOptimal, report.provedInfeasible);
    report.work = std::to_string(facts.nodes) + " branch-and-bound nodes";
    return report;
}

} // namespace shardlab::exact

namespace shardlab {
std::unique_ptr<SearchAlgorithm> makeExactSearch() { return std::make_unique<exact::ExactSearch>(); }
} // namespace shardlab
