// Running a search by name: runSearch, the one synchronous entry point over the
// interchangeable algorithms of search/search.h, and the algorithm registry it looks the
// name up in. The registry lists the built-ins (core/search) and the RL plugin's ppo
// (core/plugin/rl_plugin.h; create() loads the plugin), so it sits above the plugin layer
// (tests/structure/layers.txt), with the searches made of runSearch calls (the
// disaggregated search, the Pareto front, cluster sizing).
//
// Threading: as search/search.h (the caller's thread; the stop flag shared).
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "search/search.h"
#include "sim/deployment.h"

namespace shardlab {

// Problems with the options (unknown algorithm, budget out of range), by field name.
FieldErrors validateSearchOptions(const SearchOptions& o);

// What happened at one prefill:decode split of a disaggregated search, in the order the
// search examined them.
struct DisaggregatedSplit {
    int prefillGpus = 0, decodeGpus = 0;
    bool searched = false;      // pool searches ran (exact skips splits it proves worse)
    double prefillTokensPerS = 0, decodeTokensPerS = 0, kvLinkTokensPerS = 0; // best of each
    double tokensPerSPerGpu = 0; // the split's best deployment (0: none valid, or pruned)
    bool prefillFound = false, decodeFound = false; // each pool's search found a valid plan
    std::string note;
};

// The last step of a budgeted search: the best plan's batch raised as far as it stays
// valid (a gallop and bisection over the batches, charged to the budget).
struct BatchRefinement {
    bool ran = false;      // a budgeted search with a best plan to refine
    int firstCall = 0;     // simulator calls before it
    int calls = 0;         // simulator calls it spent
    int fromBatch = 0, toBatch = 0;
    double fromValue = 0, toValue = 0; // best tokens/s per GPU before and after it
    bool improved() const { return ran && toValue > fromValue; }
};

// A search's result, for one pool and for a disaggregated scenario's two pools alike.
struct SearchOutcome {
    std::string algorithm;
    bool found = false;             // a valid plan was found
    // The best deployment (one pool or two) and what the simulator says of it, per-operator
    // breakdowns included: the headline every front reports. Set when `found`.
    DeploymentOutcome deployment;
    // One pool: the best plan and its result (deployment's only pool). Two pools: unset;
    // the pools are in `deployment`.
    Plan best;
    SimResult bestResult;
    std::vector<DisaggregatedSplit> splits; // two pools: every split examined
    int calls = 0;                  // simulator calls spent
    double wallSeconds = 0;
    // (call index at which the best valid plan improved, its tokens/s per GPU).
    std::vector<std::pair<int, double>> bestCurve;
    std::string message;            // why nothing was found, or the algorithm's note
    std::string work;               // AlgorithmReport::work: what it did beside simulator calls
    bool stopped = false;           // ended by the stop token
    bool outOfMemory = false;       // ended by std::bad_alloc; best/found are what was found before
    bool failed = false;            // the search could not run (AlgorithmReport::error): message says why
    std::string stopReason;         // why a budgeted run ended before its budget ("" when it did not)
    bool provedOptimal = false;     // exact: no valid plan of the space scores higher
    bool provedInfeasible = false;  // exact: no plan of the space is valid
    double log10SpaceSize = 0;
    BatchRefinement refinement;     // one pool: the final batch refinement, as its own step

    bool twoPools() const { return deployment.twoPools(); }
    // > 0: the best plan's batch was raised from this value by the refinement.
    int refinedFromBatch() const
    {
        return found && refinement.ran && refinement.toBatch != refinement.fromBatch ? refinement.fromBatch : 0;
    }
    // Searched under the load protocol (SearchOptions::underLoad): the objective is the
    // run's output per GPU (deployment.load), not the steady headline.
    bool underLoad = false;
    double bestTokensPerSPerGpu() const
    {
        return !found ? 0.0 : underLoad ? deployment.load.tokensPerSPerGpu : deployment.tokensPerSPerGpu;
    }
};

// Calls of a budget held back from a budgeted algorithm for runSearch's final batch
// refinement (a gallop and bisection over the batches): min(40, budget / 10). A run's calls
// are at most its budget and, when the space has room, at least the budget minus this.
int refinementReserve(int budget);

// Why `o` cannot search `s` under its load protocol (SearchOptions::underLoad): no
// protocol, an open loop, a serving mode other than aggregated, or exact; "" when it can.
std::string underLoadError(const Scenario& s, const SearchOptions& o);

// Searches the scenario: one pool's plan, or for a disaggregated scenario the split and
// both pools' plans (runner/disaggregated_search.h).
SearchOutcome runSearch(const Scenario& scenario, const SearchOptions& options, SearchObserver* observer = nullptr,
                        const std::atomic<bool>* stop = nullptr);

// One pool's search exactly as runSearch runs it (the budget's reserve, the final batch
// refinement, the outcome), by the algorithm `info` creates instead of the registry's
// entry for options.algorithm: the ppo pretrainer scores candidate policies with the
// search users run. One-pool steady-state scenarios only; anything else is an error outcome.
SearchOutcome runSearchWith(const Scenario& scenario, const SearchOptions& options, const SearchAlgorithmInfo& info);
// What runSearchWith refuses `scenario` and `options` for (empty: it searches them): the
// scenario's own errors, two pools, a search under load.
FieldErrors runSearchWithErrors(const Scenario& scenario, const SearchOptions& options);

// ---- The algorithm registry ---------------------------------------------------------

// Built-ins (megatron, random, anneal, genetic, exact) followed by registered ones.
std::vector<SearchAlgorithmInfo> searchAlgorithms();
bool findSearchAlgorithm(const std::string& name, SearchAlgorithmInfo& out);
std::string knownSearchAlgorithms(); // "megatron, random, anneal, genetic, exact"
// Adds an algorithm (e.g. the LibTorch ppo, from the composition root at start-up,
// before any search runs). False when the name is taken.
bool registerSearchAlgorithm(SearchAlgorithmInfo info);

} // namespace shardlab
