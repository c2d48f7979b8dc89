// Strategy search: interchangeable algorithms behind one interface, and what a search is
// run with (options, observer, stop token). Running one by name (runSearch, its
// SearchOutcome) and the algorithm registry are in runner/run_search.h, above the plugin
// layer: the registry lists the RL plugin's ppo (core/plugin/rl_plugin.h).
//
// Threading: runSearch runs on the caller's thread and returns when the search ends. The
// observer is called on that same thread; a GUI copies the value types it receives and
// hands them to its own thread. The stop flag is the only state shared across threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "search/search_space.h"
#include "sim/simulator.h"

namespace shardlab {

// Knobs of simulated annealing. Defaults tuned on the four benchmark scenarios at a
// budget of 4000 (docs/benchmarks.md): more, shorter cooling runs beat one long one.
struct AnnealOptions {
    double initialTemperature = 0.15; // in log(throughput): a 15% worse plan is accepted with p = 1/e
    double finalTemperature = 0.002;
    int restarts = 16;                // budget split into this many cooling runs
    double penaltyWeight = 8;         // log-score lost per unit of relative constraint excess
};

// Knobs of the genetic algorithm (tuned like the annealer's).
struct GeneticOptions {
    int population = 48;
    int tournament = 3;
    int elite = 2;
    double crossoverRate = 0.9;
    double mutationsPerChild = 3;   // expected slots changed per child (of ~15-19 slots)
    double penaltyWeight = 12;
};

// The most simulator calls a search may be given (the CLI's --budget, the window's field).
inline constexpr long long kMaxSearchBudget = 100'000'000;

struct SearchOptions {
    std::string algorithm = "random";
    int budget = 4000;              // simulator calls; ignored by algorithms that are not budgeted
    std::uint64_t seed = 0;
    SearchSpaceOptions space;       // restrictions of the space (tests, focused searches)
    AnnealOptions anneal;
    GeneticOptions genetic;
    // Knobs of algorithms registered later (e.g. "ppo.lr"), by name.
    std::map<std::string, double> extra;
    // exact only: examine only plans above this many tokens/s per GPU (0: all). With a
    // floor, "no valid plan" means none exceeds it. The Pareto front sets it; on a
    // disaggregated scenario it bounds the deployment (each pool search gets its own).
    double exactFloor = 0;
    // exact only: stop (unproved) after this many units of work (bounds, table levels,
    // branch-and-bound nodes; 0: no limit). A limit on work, not time, so that a bounded run gives the same result
    // on every machine and load (pretraining's labels use it).
    long long exactWorkLimit = 0;
    // Rank plans by their run under the scenario's load protocol (workload.load, a closed
    // loop: rankUnderLoad in sim/serving_load.h) instead of the steady state. One pool
    // only; exact refuses it (its bounds are the steady state's).
    bool underLoad = false;
};

// A snapshot for a progress bar and a live chart. Value type: copy it across threads.
struct SearchProgress {
    int calls = 0;                  // simulator calls so far
    int budget = 0;                 // 0 when the algorithm is not budgeted (exact)
    double fraction = 0;            // 0..1 of the work, for a progress bar
    bool haveBest = false;
    double bestTokensPerSPerGpu = 0;
    Plan bestPlan;
    // Plans evaluated since the previous report, thinned to at most kMaxRecentSamples:
    // (call index, tokens/s per GPU; 0 for an invalid plan).
    std::vector<std::pair<int, double>> recentSamples;
    double elapsedS = 0;
    bool finished = false;          // the last report of the run
    // Algorithm-specific named values (temperature, generation, later PPO losses).
    std::vector<std::pair<std::string, double>> metrics;

    static constexpr int kMaxRecentSamples = 256;

    // The elite history a learning search (ppo) attends to, best first; empty for the
    // other algorithms.
    struct ElitePlan {
        Plan plan;
        double tokensPerSPerGpu = 0;
    };
    std::vector<ElitePlan> elites;

    // A learning search's (ppo's) policy along its greedy plan: for each slot of the
    // search space, in slot order, the probability of each of its values given the greedy
    // choices before it; empty for the other algorithms.
    struct SlotDistribution {
        Slot slot;                         // name, kind, operator (for an operator slot), values
        std::vector<double> probabilities; // one per slot.values (0 where masked)
    };
    std::vector<SlotDistribution> slotDistributions;
};

// Receives progress at a bounded rate: at most once per 1% of the budget or per 50 ms
// (whichever comes first), and once at the end with finished = true.
class SearchObserver {
public:
    virtual ~SearchObserver() = default;
    virtual void progress(const SearchProgress& p) = 0;
    // Every simulator call, unthrottled; keep it cheap (tests count calls with it).
    virtual void evaluated(int call, const Plan& plan, const SimResult& result) {}
};

// A read-only view of a cancellation flag owned by the caller (nullptr: never stops).
class StopToken {
public:
    StopToken() = default;
    explicit StopToken(const std::atomic<bool>* flag) : m_flag(flag) {}
    bool stopRequested() const { return m_flag && m_flag->load(std::memory_order_relaxed); }

private:
    const std::atomic<bool>* m_flag = nullptr;
};

// ---- Extending: the algorithm interface (the registry: runner/run_search.h) -------

class BudgetedEvaluator;

// What an algorithm sees. All simulator calls go through `evaluator`.
struct SearchContext {
    const Scenario& scenario;
    const Simulator& simulator;
    const SearchSpace& space;
    BudgetedEvaluator& evaluator;
    const SearchOptions& options;
    std::uint64_t seed;
};

// What an algorithm adds to the evaluator's record of the run.
struct AlgorithmReport {
    std::string note;
    bool provedOptimal = false;
    bool provedInfeasible = false;
    // Set when the search could not run (bad options, a policy that does not load, a
    // failure inside the algorithm): the outcome is then an error whatever the evaluator
    // holds, with this reason first, found false and no plan, since a plan it holds may
    // be another procedure's (a warm start's recipe), not this search's result.
    std::string error;
    // What the algorithm did beside its simulator calls, for a status line ("" when the
    // calls are all it did): exact's branch-and-bound nodes.
    std::string work;
};

class SearchAlgorithm {
public:
    virtual ~SearchAlgorithm() = default;
    // Searches until the evaluator refuses (budget or stop) or the algorithm's own rule
    // ends it. Must not throw, except std::bad_alloc: runSearch then reports that memory
    // ran out, with the evaluator's best plan so far.
    virtual AlgorithmReport run(SearchContext& ctx) = 0;
};

struct SearchAlgorithmInfo {
    std::string name;
    std::string summary;
    bool budgeted = true;   // false: ignores the budget (exact)
    bool stochastic = true; // uses the seed
    std::function<std::unique_ptr<SearchAlgorithm>()> create;
};

} // namespace shardlab
