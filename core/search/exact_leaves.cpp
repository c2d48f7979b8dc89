// The exact search's leaves: a complete choice of options, judged by Simulator::evaluate
// over its batch segments (exact_search.cpp, point 3).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "model/plan_text.h"
#include "search/exact_search.h"
#include "sim/batch.h"

namespace shardlab::exact {

void ExactSearch::leaf(int hi)
{
    if (m_probe) {
        m_probeHit = true; // a bound, not a plan: nothing to evaluate
        return;
    }
    ++m_facts.leaves;
    // The leaf's own largest batch within the limits up to rounding: a plan whose figure
    // equals a limit to the last bit (a Pareto point's own TPOT) is on the boundary, and the
    // simulator decides it.
    const int lo = std::max(m_micro, m_ctx->space.batchMin());
    int b = largestFeasible(lo, hi, [&](int batch) { return m_t->within(leafFigures(batch), kSlack); }, hi - 1);
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
    const bool exactPrices = r.sizeCappedCollectives == 0;
    const bool disagree = r.valid ? r.tokensPerSPerGpu > f.tokensPerSPerGpu + tol
                                        || (exactPrices && std::abs(r.tokensPerSPerGpu - f.tokensPerSPerGpu) > tol)
                                  : exactPrices && m_t->within(f, -kSlack);
    if (disagree && m_facts.mismatches++ == 0) {
        std::ostringstream os;
        os << planDegreesCompact(m_ctx->scenario.model, plan) << ": predicted "
           << f.tokensPerSPerGpu << " tokens/s per GPU, simulator " << (r.valid ? r.tokensPerSPerGpu : 0.0)
           << (r.valid ? "" : " (invalid)");
        m_facts.mismatchExample = os.str();
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

} // namespace shardlab::exact
