// The disaggregated search's running state and progress reporting (used by
// runner/disaggregated_search.cpp only): the best pair of pools so far with every split's
// record, the outcome runSearch reports from it, and the observer that reports a pool
// search's progress as the deployment search's.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "runner/run_search.h"
#include "sim/deployment.h"
#include "sim/disaggregated.h"

namespace shardlab::pools {

// The search's running state: the best pair of pools so far and every split's record.
struct PoolsSearch {
    std::string algorithm;
    bool found = false;
    DisaggregatedPlan best;
    DisaggregatedResult bestResult; // with both pools' per-operator breakdowns at the end
    int calls = 0;                  // simulator calls, every pool search and the recipe
    double wallSeconds = 0;
    std::vector<std::pair<int, double>> bestCurve; // (calls, deployment tokens/s per GPU)
    std::string message;
    std::string stopReason; // why a budgeted run ended before its budget ("" when it did not)
    bool stopped = false;
    bool provedOptimal = false;
    bool provedInfeasible = false;
    bool failed = false; // a pool search could not run (SearchOutcome::failed): message says why
    using Split = DisaggregatedSplit;
    std::vector<Split> splits;
};

// The outcome runSearch reports: the common fields, and the best pools as the deployment.
inline SearchOutcome searchOutcome(const Scenario& s, const PoolsSearch& in)
{
    SearchOutcome out;
    out.algorithm = in.algorithm;
    out.found = in.found;
    if (in.found)
        out.deployment = deploymentOutcome(s, in.best, in.bestResult);
    out.splits = in.splits;
    out.calls = in.calls;
    out.wallSeconds = in.wallSeconds;
    out.bestCurve = in.bestCurve;
    out.message = in.message;
    out.stopReason = in.stopReason;
    out.stopped = in.stopped;
    out.provedOptimal = in.provedOptimal;
    out.provedInfeasible = in.provedInfeasible;
    out.failed = in.failed;
    return out;
}

// Reports a pool search's progress as the deployment search's: calls and fraction over
// the whole run, the best deployment so far (its decode plan as `bestPlan`).
class PoolObserver final : public SearchObserver {
public:
    PoolObserver(SearchObserver* outer, const PoolsSearch& out, int searches)
        : m_outer(outer), m_out(out), m_searches(std::max(1, searches))
    {
    }
    void begin(int index, int callsBefore)
    {
        m_index = index;
        m_callsBefore = callsBefore;
    }
    void progress(const SearchProgress& p) override
    {
        if (!m_outer)
            return;
        SearchProgress q;
        q.calls = m_callsBefore + p.calls;
        q.budget = m_budget;
        q.fraction = std::min(1.0, (m_index + p.fraction) / m_searches);
        q.haveBest = m_out.found;
        q.bestTokensPerSPerGpu = m_out.bestResult.tokensPerSPerGpu;
        q.bestPlan = m_out.best.decode;
        q.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        q.metrics.push_back({"pool search", double(m_index + 1)});
        m_outer->progress(q);
    }
    void finish(const PoolsSearch& out)
    {
        if (!m_outer)
            return;
        SearchProgress q;
        q.calls = out.calls;
        q.budget = m_budget;
        q.fraction = 1;
        q.haveBest = out.found;
        q.bestTokensPerSPerGpu = out.bestResult.tokensPerSPerGpu;
        q.bestPlan = out.best.decode;
        q.elapsedS = out.wallSeconds;
        q.finished = true;
        m_outer->progress(q);
    }
    int m_budget = 0;

private:
    SearchObserver* m_outer;
    const PoolsSearch& m_out;
    int m_searches;
    int m_index = 0, m_callsBefore = 0;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

} // namespace shardlab::pools
