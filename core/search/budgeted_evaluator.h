// The only door from a search algorithm to the simulator: counts every call, refuses
// beyond the budget or after a stop request, remembers the best valid plan and the
// best-so-far curve, and reports progress to the observer at a bounded rate.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/search.h"

namespace shardlab {

// What an algorithm learns from one evaluation.
struct Evaluation {
    bool valid = false;
    bool structureOk = false;    // tiling and divisibility hold (always, for plans of a SearchSpace)
    double tokensPerSPerGpu = 0; // the objective: 0 for an invalid plan
    double rawTokensPerSPerGpu = 0; // the simulator's throughput even when a limit is broken
    // Summed relative excess over the memory, TTFT and TPOT limits (0 when within all):
    // 0.1 = one limit exceeded by 10%.
    double excess = 0;
    bool cached = false;         // answered from the cache: no simulator call spent
};

// Score the metaheuristics climb: log(tokens/s per GPU) for a valid plan; an invalid plan
// keeps its log-throughput minus penaltyWeight x excess, so a search can cross a thin
// invalid region towards better plans but is pulled back to validity. -inf when the
// structure is broken (no throughput at all).
double penalizedLogScore(const Evaluation& e, double penaltyWeight);

class BudgetedEvaluator {
public:
    // budget <= 0: unlimited (exact). Observer and stop may be null.
    BudgetedEvaluator(const Simulator& sim, int budget, StopToken stop, SearchObserver* observer);

    // False (and `out` untouched) when the budget is spent or a stop was requested.
    // A plan evaluated before (or one with the same canonicalPlan) is answered from a
    // cache and costs nothing. With `full`, the simulator is always called.
    bool evaluate(const Plan& p, Evaluation& out, SimResult* full = nullptr);
    // The budget is spent, a stop was requested, or the algorithm keeps asking for plans
    // it has seen (more than 20 requests per budgeted call: the space is exhausted).
    bool exhausted() const;
    bool stopRequested() const { return m_stop.stopRequested(); }

    // A plan evaluated outside the evaluator by a fixed procedure (the Megatron recipe,
    // which spent `calls` simulator calls); recorded as if those calls went through here.
    void recordExternal(const Plan& p, const SimResult& r, int calls);

    // Progress bar value for algorithms without a budget, and named metrics for reports.
    void setFraction(double f) { m_fraction = f; }
    void setMetric(const std::string& name, double value);
    // A learning algorithm's elite history (SearchProgress::elites), copied into every
    // later report.
    void setElites(std::vector<SearchProgress::ElitePlan> elites);
    // Lets an algorithm that rarely calls the simulator still report (time-throttled).
    void tick() { maybeReport(false); }
    // Sends the final report (finished = true). Idempotent.
    void finish();

    int calls() const { return m_calls; }
    int budget() const { return m_budget; }
    bool haveBest() const { return m_haveBest; }
    const Plan& best() const { return m_best; }
    // Without the per-operator breakdown (searches use the simulator's fast path).
    const SimResult& bestResult() const { return m_bestResult; }
    double bestValue() const { return m_haveBest ? m_bestResult.tokensPerSPerGpu : 0; }
    const std::vector<std::pair<int, double>>& bestCurve() const { return m_curve; }
    double elapsedS() const;

private:
    struct PlanHash {
        std::size_t operator()(const Plan& p) const;
    };
    Evaluation summarize(const SimResult& r) const;
    void consider(const Plan& p, const SimResult& r);
    void maybeReport(bool force);

    const Simulator& m_sim;
    int m_budget;
    StopToken m_stop;
    SearchObserver* m_observer;
    int m_calls = 0;
    long long m_requests = 0;
    bool m_haveBest = false;
    Plan m_best;
    SimResult m_bestResult;
    std::vector<std::pair<int, double>> m_curve;
    std::unordered_map<Plan, Evaluation, PlanHash> m_cache; // looked up only, never iterated
    SimResult m_scratch;

    // Progress reporting.
    std::chrono::steady_clock::time_point m_start, m_lastReport;
    int m_lastReportCalls = 0;
    int m_reportEvery = 1;
    double m_fraction = 0;
    bool m_finished = false;
    std::vector<std::pair<int, double>> m_recent;
    std::vector<std::pair<std::string, double>> m_metrics;
    std::vector<SearchProgress::ElitePlan> m_elites;
};

} // namespace shardlab
