// The only door from a search algorithm to the simulator: counts every call, refuses
// beyond the budget or after a stop request, remembers the best valid plan and the
// best-so-far curve, and reports progress to the observer at a bounded rate.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

// Memory: a plan evaluated before is recognised by a 64-bit fingerprint of its
// canonicalPlan kept in an open-addressing set (8 bytes per distinct plan at a load of at
// most 3/4: <= 1 GB, plus 0.5 GB while it grows, at the largest allowed budget of 10^8
// calls). The evaluations themselves live in a direct-mapped cache that grows with the
// distinct plans up to a fixed capacity (kDefaultCacheSlots x ~88 bytes = 5.8 MB): a
// newer plan whose fingerprint maps to the same slot evicts the older one. A repeat whose
// evaluation was evicted is simulated again, but answered as a repeat (cached = true, no
// call charged, no observer call), so eviction only costs time: calls, results and the
// best plan are the same for every cache size. Two distinct plans with the same
// fingerprint (odds ~n^2 / 2^65: ~3e-4 over a whole run of 10^8 distinct plans) would make
// the second one a repeat: simulated and considered for the best plan, but not charged --
// deterministic, whatever the cache holds.
class BudgetedEvaluator {
public:
    static constexpr std::size_t kDefaultCacheSlots = std::size_t(1) << 16;
    static constexpr std::size_t kInitialCacheSlots = 1024;

    // budget <= 0: unlimited (exact). Observer and stop may be null. `cacheSlots` (rounded
    // up to a power of two) bounds the evaluation cache; tests shrink it to force evictions.
    BudgetedEvaluator(const Simulator& sim, int budget, StopToken stop, SearchObserver* observer,
                      std::size_t cacheSlots = kDefaultCacheSlots);

    // False (and `out` untouched) when the budget is spent or a stop was requested.
    // A plan evaluated before (or one with the same canonicalPlan) is answered as a repeat
    // and costs nothing, even once the budget is spent. With `full`, the simulator is
    // always called and the call charged.
    bool evaluate(const Plan& p, Evaluation& out, SimResult* full = nullptr);
    // The budget is spent, a stop was requested, or the algorithm keeps asking for plans
    // it has seen (more than 20 requests per budgeted call: the space is exhausted).
    bool exhausted() const;
    bool stopRequested() const { return m_stop.stopRequested(); }
    // Why the run ended early when the budget was not spent: the stall rule above
    // ("converged: ..."), or "" (budget spent, a stop, or the algorithm's own end).
    std::string stallReason() const;

    // Ranks every plan from now on by its run under `load`, a closed loop (rankUnderLoad,
    // sim/serving_load.h): a search under a load protocol. Call before the first evaluation.
    void rankUnderLoad(const LoadSpec& load) { m_load = load; }
    bool rankedUnderLoad() const { return m_load.has_value(); }

    // A plan evaluated outside the evaluator by a fixed procedure (the Megatron recipe,
    // which spent `calls` simulator calls); recorded as if those calls went through here.
    void recordExternal(const Plan& p, const SimResult& r, int calls);

    // Progress bar value for algorithms without a budget, and named metrics for reports.
    void setFraction(double f) { m_fraction = f; }
    void setMetric(const std::string& name, double value);
    // A learning algorithm's elite history (SearchProgress::elites), copied into every
    // later report.
    void setElites(std::vector<SearchProgress::ElitePlan> elites);
    // A learning algorithm's per-slot probabilities (SearchProgress::slotDistributions),
    // copied into every later report.
    void setSlotDistributions(std::vector<SearchProgress::SlotDistribution> distributions);
    // Lets an algorithm that rarely calls the simulator still report (time-throttled).
    void tick() { maybeReport(false); }
    // Sends the final report (finished = true). Idempotent.
    void finish();

    int calls() const { return m_calls; }
    int budget() const { return m_budget; }
    // Changes the budget (<= 0: unlimited): runSearch holds some calls back from the
    // algorithm for the final batch refinement, then gives them back.
    void setBudget(int budget) { m_budget = budget; }
    bool haveBest() const { return m_haveBest; }
    const Plan& best() const { return m_best; }
    // Without the per-operator breakdown (searches use the simulator's fast path).
    const SimResult& bestResult() const { return m_bestResult; }
    double bestValue() const { return m_haveBest ? m_bestResult.tokensPerSPerGpu : 0; }
    const std::vector<std::pair<int, double>>& bestCurve() const { return m_curve; }
    double elapsedS() const;
    // Repeats whose evaluation had been evicted from the cache and was simulated again
    // (uncharged): what the bounded cache costs in time.
    long long resimulated() const { return m_resimulated; }
    // Distinct plans recorded as evaluated (the fingerprint set's size).
    std::size_t distinctPlans() const { return m_seen.size(); }

private:
    // Fingerprints of every plan evaluated so far; 0 marks an empty slot (a fingerprint
    // of 0 is stored as 1).
    class FingerprintSet {
    public:
        bool contains(std::uint64_t fp) const;
        void insert(std::uint64_t fp);
        std::size_t size() const { return m_size; }

    private:
        void grow();
        std::vector<std::uint64_t> m_slots;
        std::size_t m_size = 0;
    };
    struct CacheSlot {
        Plan key;
        Evaluation value;
        bool used = false;
    };
    void growCache();
    Evaluation summarize(const SimResult& r) const;
    // The simulator's fast path, then the run under the load protocol when ranking by it.
    void simulate(const Plan& p, SimResult& r) const;
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
    FingerprintSet m_seen;
    std::size_t m_cacheLimit;
    std::vector<CacheSlot> m_cache; // direct-mapped by fingerprint, at most m_cacheLimit slots
    long long m_resimulated = 0;
    SimResult m_scratch;
    std::optional<LoadSpec> m_load; // rank plans by their run under this closed loop

    // Progress reporting.
    std::chrono::steady_clock::time_point m_start, m_lastReport;
    int m_lastReportCalls = 0;
    int m_reportEvery = 1;
    double m_fraction = 0;
    bool m_finished = false;
    std::vector<std::pair<int, double>> m_recent;
    std::vector<std::pair<std::string, double>> m_metrics;
    std::vector<SearchProgress::ElitePlan> m_elites;
    std::vector<SearchProgress::SlotDistribution> m_slotDistributions;
};

// Raises `plan`'s batch from its own value towards its largest valid batch within
// [plan.batch, hi] through `ev` (every call charged, the plans seen enter its best), by
// the gallop and bisection of sim/batch.h. Returns the largest valid batch found (0 when
// plan.batch is invalid); `refused` is set when the evaluator refused a call (budget
// spent or a stop), the bisection then ends with what it had.
int raiseBatchThroughEvaluator(BudgetedEvaluator& ev, Plan plan, int hi, bool* refused = nullptr);

} // namespace shardlab
