// The exact search's branch and bound (internal to core/search; exact_search.cpp says how
// it works): the bounded entries it examines and its state. The passes and the branching
// are in exact_search.cpp; the simulator's verdict on each leaf in exact_leaves.cpp.
#pragma once

#include <limits>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "search/algorithms.h"
#include "search/budgeted_evaluator.h"
#include "search/exact_certificate.h"
#include "search/exact_tables.h"

namespace shardlab::exact {

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
    bool halted() const { return m_facts.overWork || m_ev->stopRequested(); }
    // One unit of work: a degrees or micro-batch bound, a table level, a branch node.
    void countWork()
    {
        if (++m_facts.work > m_ctx->options.exactWorkLimit && m_ctx->options.exactWorkLimit > 0)
            m_facts.overWork = true;
    }
    double threshold() const { return std::max(bestValue(), m_ctx->options.exactFloor) * (1 - kSlack); }
    const Level& levelAt(int batch);
    LayerSums nodeSums(const Level& lv, int gi) const;
    bool boundDegrees(Entry& e);
    // `hint`: a batch the answer is expected near (-1: none).
    bool boundMicro(Entry& e, int hint);
    void solve(const Entry& e);
    // A (degrees, micro) entry over a range of redundant counts: branch and bound on the
    // range's floor prices; when some of its leaves reaches the best plan, the two halves
    // of the range go back into the queue (a single count is solved as a plan), else the
    // whole range is done.
    void splitRange(const Entry& e, std::priority_queue<Entry>& queue, long long& order);
    bool enumerateDegrees(std::priority_queue<Entry>& queue, long long& order);
    bool enumerateEp(std::vector<int>& choice, std::priority_queue<Entry>& queue, long long& order);
    double examine(std::priority_queue<Entry>& queue, long long& order);
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
    // The run's counts, the least memory, TTFT and TPOT any plan needs, the work limit
    // reached (work: bounds, table levels and nodes, countWork), the disagreements.
    CertificateFacts m_facts;
    int m_lastDegreesBatch = -1; // boundDegrees' last answer
};

} // namespace shardlab::exact
