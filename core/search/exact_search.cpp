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

#include "search/algorithms.h"
#include "search/budgeted_evaluator.h"
#include "search/exact_tables.h"
#include "sim/batch.h"

namespace shardlab {

namespace {

using namespace exact;

// Relative slack for rounding: the tables sum the same terms as the simulator in another
// order (differences ~1e-15). Bounds and limits are relaxed by kSlack; a verified plan
// whose prediction is off by more than kMismatchTolerance counts as a disagreement.
constexpr double kSlack = 1e-9;
constexpr double kMismatchTolerance = 1e-9;

struct Entry {
    double bound = 0;
    Degrees d;
    int micro = 0; // 0: every micro-batch count (not split yet)
    int batchHi = 0;
    long long order = 0;
    bool operator<(const Entry& o) const // priority_queue: largest bound first, then earliest
    {
        return bound < o.bound || (bound == o.bound && order > o.order);
    }
};

class ExactSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override;

private:
    // Per-(degrees, micro, norms) data at one batch: every combo's sums and the suffix minima.
    struct Level {
        PhaseContext dec;
        LayerSums norms;
        std::vector<std::vector<LayerSums>> combo;
        std::vector<LayerSums> suffixMin; // [g]: cheapest choice of groups g.. (componentwise)
    };
    double bestValue() const { return m_ev->bestValue(); }
    // A stop request, or the options' work limit reached (deterministic, unlike a clock).
    bool halted() const { return m_overWork || m_ev->stopRequested(); }
    // One unit of work: a degrees or micro-batch bound, a table level, a branch node.
    void countWork()
    {
        if (++m_work > m_ctx->options.exactWorkLimit && m_ctx->options.exactWorkLimit > 0)
            m_overWork = true;
    }
    double threshold() const { return std::max(bestValue(), m_ctx->options.exactFloor) * (1 - kSlack); }
    const Level& levelAt(int batch);
    LayerSums nodeSums(const Level& lv, int gi) const;
    bool boundDegrees(Entry& e);
    bool boundMicro(Entry& e);
    void solve(const Entry& e);
    // A (degrees, micro) entry over a range of redundant counts: branch and bound on the
    // range's floor prices; when some of its leaves reaches the best plan, the two halves
    // of the range go back into the queue (a single count is solved as a plan), else the
    // whole range is done.
    void splitRange(const Entry& e, std::priority_queue<Entry>& queue, long long& order);
    void branch(int gi, int hi);
    void leaf(int batch);
    struct LeafBatch {
        bool valid = false;
        int sizeCapped = 0;
    };
    PipelineFigures leafFigures(int batch);
    const LeafBatch* leafAt(int batch); // the simulator's verdict (null: stopped)
    void leafSegment(int l, int h);

    SearchContext* m_ctx = nullptr;
    BudgetedEvaluator* m_ev = nullptr;
    GroupTables* m_t = nullptr;
    // Branch-and-bound state of one (degrees, micro, norms).
    int m_micro = 1, m_a = 0, m_f = 0;
    std::vector<OpGroup> m_groups;
    std::vector<int> m_pick;
    std::map<int, Level> m_levels;
    std::map<int, LeafBatch> m_leafBatches; // the current leaf's evaluated batches
    bool m_probe = false;    // branch on a range's floor: stop at the first leaf reached
    bool m_probeHit = false;
    long long m_nodes = 0, m_degrees = 0, m_solved = 0, m_leaves = 0;
    long long m_work = 0; // bounds, table levels and nodes (countWork)
    bool m_overWork = false;
    double m_minMemGb = std::numeric_limits<double>::infinity();
    double m_minTtftMs = m_minMemGb, m_minTpotMs = m_minMemGb;
    int m_mismatches = 0;
    std::string m_mismatchExample;
};

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
            lv.combo[g][i] = m_t->comboSums(m_groups[g].combos[i], t);
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
        const bool prefillPool = s.workload.serving == ServingMode::Prefill;
        f.tpotMs = prefillPool ? 0 : f.cycleS * 1e3;
        const double perRequest = prefillPool ? s.workload.outputTokens : 1; // output tokens per sequence
        f.tokensPerSPerGpu =
            f.cycleS > 0 ? double(b) * e.d.dp * perRequest / f.cycleS / double(s.cluster.totalGpus()) : 0;
        // The most micro-batches (min(PP, batch)) give the smallest engine step: the
        // floors of the token budget's use and of the aggregated TTFT.
        const int mMax = std::min(e.d.pp, b);
        f.stepTokens /= mMax;
        if (s.workload.serving == ServingMode::Aggregated)
            f.ttftMs = cm.aggregatedTtftMs(f.cycleS, double(b) / mMax) + f.prefillMs;
        if (prefillPool) {
            // Half the cycle's floor, the pass of the smallest micro-batch, the transfer.
            const LayerSums lbm = m_t->lowerBound(mMax, b);
            const PhaseContext decm = m_t->decodeAt(mMax, b).dec;
            const PipelineFigures fm = m_t->figures(mMax, b, decm, lbm);
            f.ttftMs = 0.5 * f.cycleS * 1e3 + fm.passMs + fm.kvTransferMs;
        }
    };
    PipelineFigures f1;
    figuresAt(1, f1);
    m_minMemGb = std::min(m_minMemGb, f1.memoryGb);
    m_minTtftMs = std::min(m_minTtftMs, f1.ttftMs);
    m_minTpotMs = std::min(m_minTpotMs, f1.tpotMs);
    const int b = largestFeasible(m_ctx->space.batchMin(), m_ctx->space.batchMax(), [&](int batch) {
        PipelineFigures f;
        figuresAt(batch, f);
        return m_t->within(f, kSlack);
    });
    if (b == 0)
        return false;
    PipelineFigures f;
    figuresAt(b, f);
    e.bound = f.tokensPerSPerGpu;
    e.batchHi = b;
    return true;
}

bool ExactSearch::boundMicro(Entry& e)
{
    countWork();
    const int m = e.micro;
    const int b = largestFeasible(std::max(m, m_ctx->space.batchMin()), e.batchHi, [&](int batch) {
        const LayerSums lb = m_t->lowerBound(m, batch);
        return m_t->within(m_t->figures(m, batch, m_t->decodeAt(m, batch).dec, lb), kSlack);
    });
    if (b == 0)
        return false;
    const LayerSums lb = m_t->lowerBound(m, b);
    e.bound = m_t->figures(m, b, m_t->decodeAt(m, b).dec, lb).tokensPerSPerGpu;
    e.batchHi = b;
    return true;
}

void ExactSearch::leaf(int hi)
{
    if (m_probe) {
        m_probeHit = true; // a bound, not a plan: nothing to evaluate
        return;
    }
    ++m_leaves;
    // The leaf's own largest batch within the limits up to rounding: a plan whose figure
    // equals a limit to the last bit (a Pareto point's own TPOT) is on the boundary, and the
    // simulator decides it.
    const int lo = std::max(m_micro, m_ctx->space.batchMin());
    int b = largestFeasible(lo, hi, [&](int batch) { return m_t->within(leafFigures(batch), kSlack); });
    if (b == 0)
        b = hi;
    m_leafBatches.clear();
    leafSegment(lo, b);
}

PipelineFigures ExactSearch::leafFigures(int batch)
{
    const Level& lv = levelAt(batch);
    return m_t->figures(m_micro, batch, lv.dec, nodeSums(lv, static_cast<int>(m_groups.size())));
}

const ExactSearch::LeafBatch* ExactSearch::leafAt(int batch)
{
    auto it = m_leafBatches.find(batch);
    if (it != m_leafBatches.end())
        return &it->second;
    const PipelineFigures f = leafFigures(batch);
    const Plan plan = m_t->makePlan(m_micro, batch, m_a, m_f, m_groups, m_pick.data());
    SimResult r;
    Evaluation ev;
    if (!m_ev->evaluate(plan, ev, &r))
        return nullptr;
    // The tables' figure bounds the simulator's; with no size limit crossed they are the
    // same prices, so the two must agree.
    const double tol = kMismatchTolerance * std::max(1.0, r.tokensPerSPerGpu);
    const bool exactPrices = r.sizeCappedCollectives == 0 && m_t->pricesExactly();
    const bool disagree = r.valid ? r.tokensPerSPerGpu > f.tokensPerSPerGpu + tol
                                        || (exactPrices && std::abs(r.tokensPerSPerGpu - f.tokensPerSPerGpu) > tol)
                                  : exactPrices && m_t->within(f, -kSlack);
    if (disagree && m_mismatches++ == 0) {
        std::ostringstream os;
        os << "TP " << plan.tensorParallel << " PP " << plan.pipelineParallel << " EP " << plan.expertParallel
           << (plan.redundantExperts ? " +" + std::to_string(plan.redundantExperts) + " redundant" : "")
           << (plan.twoBatchOverlap ? " two-batch overlap" : "")
           << (plan.instances > 1 ? " " + std::to_string(plan.instances) + " instances" : "") << " batch " << plan.batch << ": predicted "
           << f.tokensPerSPerGpu << " tokens/s per GPU, simulator " << (r.valid ? r.tokensPerSPerGpu : 0.0)
           << (r.valid ? "" : " (invalid)");
        m_mismatchExample = os.str();
    }
    return &(m_leafBatches[batch] = {r.valid, r.sizeCappedCollectives});
}

// Batch segments: the leaf's best batch in [l, h]. Its throughput never falls as the batch
// grows while no collective crosses an engine's size limit (sizeCappedCollectives equal at
// both ends: it never falls with the batch), and validity is a prefix of the batches (every
// limit's figure only grows, also across a crossing). So a range with equal counts at its
// ends is settled by its largest valid batch; one without is split in half; the tables'
// figure at h bounds the whole range.
void ExactSearch::leafSegment(int l, int h)
{
    if (l > h || halted() || leafFigures(h).tokensPerSPerGpu < threshold())
        return;
    const LeafBatch* top = leafAt(h);
    if (!top)
        return;
    if (!top->valid) {
        // The largest valid batch below h (0: none, or stopped: leafSegment then returns).
        leafSegment(l, largestValidBatch(l, h - 1, [&](int b) {
                        const LeafBatch* r = leafAt(b);
                        return r ? int(r->valid) : -1;
                    }));
        return;
    }
    if (top->sizeCapped == 0 || l == h)
        return;
    const LeafBatch* low = leafAt(l);
    if (!low || low->sizeCapped == top->sizeCapped)
        return;
    const int mid = l + (h - l) / 2;
    leafSegment(mid + 1, h);
    leafSegment(l, mid);
}

void ExactSearch::branch(int gi, int hi)
{
    ++m_nodes;
    countWork();
    if (m_overWork || ((m_nodes & 1023) == 0 && halted()))
        return;
    const int b = largestFeasible(std::max(m_micro, m_ctx->space.batchMin()), hi, [&](int batch) {
        const Level& lv = levelAt(batch);
        return m_t->within(m_t->figures(m_micro, batch, lv.dec, nodeSums(lv, gi)), kSlack);
    });
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
    ++m_solved;
    m_t->setDegrees(e.d);
    m_micro = e.micro;
    for (int a : m_t->allowed(OpId::AttnNorm))
        for (int f : m_t->allowed(OpId::FfnNorm)) {
            m_a = a;
            m_f = f;
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
        if (boundMicro(half) && half.bound >= threshold())
            queue.push(half);
    }
}

AlgorithmReport ExactSearch::run(SearchContext& ctx)
{
    m_ctx = &ctx;
    m_ev = &ctx.evaluator;
    GroupTables tables(ctx.simulator, ctx.space);
    m_t = &tables;
    AlgorithmReport report;

    // Pass 1: every (TP, PP, EP, redundant experts, two-batch overlap, engine instances) the
    // simulator accepts among the space's values (the space's masks say which).
    const SearchSpace& space = ctx.space;
    const long long N = ctx.scenario.cluster.totalGpus();
    const auto& slots = space.slots();
    const int rs = space.redundantSlot(), os = space.overlapSlot(), is = space.instancesSlot();
    std::vector<int> choice(SearchSpace::kMaxSlots, 0);
    std::vector<std::uint8_t> tpOk(space.widestSlot()), ppOk(space.widestSlot()), epOk(space.widestSlot()),
        rOk(space.widestSlot()), oOk(space.widestSlot()), iOk(space.widestSlot());
    std::priority_queue<Entry> queue;
    long long order = 0;
    // A slot's mask, or the one value of a slot the model has not (-1).
    auto maskOr = [&](int slot, std::vector<std::uint8_t>& ok) {
        if (slot < 0)
            ok[0] = 1;
        else
            space.mask(slot, choice.data(), ok.data());
    };
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
                const int ep = slots[2].values[ei];
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
                            return report;
                        Entry e;
                        e.d.tp = slots[0].values[ti];
                        e.d.pp = slots[1].values[pi];
                        e.d.ep = ep;
                        e.d.dp = static_cast<int>(N / (static_cast<long long>(e.d.tp) * e.d.pp));
                        e.d.tbo = oValues[oi] != 0;
                        e.d.instances = iValues[ii];
                        m_degrees += static_cast<long long>(counts.size());
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
            }
            m_ev->setFraction(0.3 * (ti + double(pi) / slots[1].values.size()) / slots[0].values.size());
            m_ev->tick();
        }
    }

    // Pass 2: best bound first until no bound can beat the best plan.
    const size_t entries = queue.size();
    double openBound = 0;
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
            // An engine keeps one micro-batch per stage in flight (the space's rule).
            for (int m = space.engine() ? e.d.pp : 1; m <= std::min(e.d.pp, e.batchHi); ++m) {
                Entry s = e;
                s.micro = m;
                s.order = order++;
                if (boundMicro(s) && s.bound >= threshold())
                    queue.push(s);
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

    std::ostringstream note;
    const bool stopped = halted();
    // MoE models: every redundant-expert count and overlap (docs/search.md).
    const char* kDegreesWord = ctx.scenario.model.isMoe()
        ? "TP, PP, EP, redundant experts, two-batch overlap and engine instances"
        : "TP, PP and EP";
    if (stopped) {
        note << "stopped before the proof was complete";
        if (m_overWork)
            note << " (the work limit of " << ctx.options.exactWorkLimit << " bounds, table levels and nodes was reached)";
        if (m_ev->haveBest() && openBound > 0)
            note << ": the best plan found is at least " << std::round(1000 * bestValue() / openBound) / 10
                 << "% of the optimum (no unexamined plan exceeds " << openBound << " tokens/s per GPU)";
    } else if (!m_ev->haveBest() && ctx.options.exactFloor > 0) {
        report.provedInfeasible = m_mismatches == 0;
        note << "no valid plan exceeds " << ctx.options.exactFloor << " tokens/s per GPU (" << m_degrees
             << " combinations of " << kDegreesWord << " checked)";
    } else if (!m_ev->haveBest()) {
        report.provedInfeasible = m_mismatches == 0;
        note << "no valid plan exists" << (ctx.scenario.constraints.empty() ? "" : " within the scenario's constraints")
             << runnableSpaceWords(ctx.scenario)
             << ": " << explainNoPlan(ctx.scenario, m_minMemGb, m_minTtftMs, m_minTpotMs) << " (" << m_degrees
             << " combinations of " << kDegreesWord << " checked, every batch and micro-batch count)";
    } else {
        report.provedOptimal = m_mismatches == 0;
        note << "optimal over every plan the simulator accepts"
             << (ctx.scenario.constraints.empty() ? "" : " within the scenario's constraints") << runnableSpaceWords(ctx.scenario)
             << (ctx.scenario.model.isMoe() ? ", every redundant-expert count the plan rules allow" : "") << ": "
             << m_degrees
             << " combinations of " << kDegreesWord << ", every batch " << ctx.space.batchMin() << " to " << ctx.space.batchMax()
             << (space.engine() ? " with one micro-batch per stage (" : " and micro-batch count (") << m_solved << " solved in detail, " << m_nodes << " branch-and-bound nodes, "
             << m_leaves << " plans evaluated, " << m_work << " units of work)";
    }
    if (!tables.pricesExactly()) { // drafting is the simulator's alone: no proof (docs/search.md)
        report.provedOptimal = report.provedInfeasible = false;
        note << "; NOT CERTIFIED: speculative decoding's drafting passes are not in exact's tables";
    } else if (m_mismatches > 0)
        note << "; NOT CERTIFIED: the exact search's tables disagree with the simulator on " << m_mismatches
             << " plan(s), e.g. " << m_mismatchExample;
    report.note = note.str();
    return report;
}

} // namespace

std::unique_ptr<SearchAlgorithm> makeExactSearch() { return std::make_unique<ExactSearch>(); }

} // namespace shardlab
