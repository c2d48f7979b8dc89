// Searching a disaggregated scenario (docs/search.md, "Disaggregated serving"): the
// prefill:decode split is part of the search, and each pool's plan is searched on its own
// pool scenario by the chosen algorithm.
//
// Given a split, the two pools are independent (the deployment serves the least of the
// prefill pool's, the decode pool's and the KV links' request rates), so the best plan of
// a split is the best prefill plan with the best decode plan.
//   exact:    every split; each pool's optimum is certified by `exact` with a floor (only
//             plans that could beat the best deployment so far are examined), so the
//             claim is: optimal over every split and every pair of plans the simulator
//             accepts.
//   megatron: the recipe on each pool at every split; the best split.
//   others:   the splits ranked by the recipe's deployment; the budget shared by the
//             best-ranked ones (at least 500 calls per pool search), each pool searched
//             with the algorithm and its seed + the split's index.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "runner/run_search.h"
#include "sim/disaggregated.h"

namespace shardlab {

// The most prefill:decode splits one disaggregated search examines. Each split costs two
// recipes and two pool simulators (tens of KB each): a cluster of 100,000 nodes has 99,999
// splits, which took 4.5 GB and minutes. Beyond the bound, the budgeted searches and the
// recipe examine this many splits evenly spaced over the range (the message says so), and
// exact, which must examine every split to prove anything, refuses.
constexpr int kMaxDisaggregatedSplits = 1024;

struct DisaggregatedSearchOutcome {
    std::string algorithm;
    bool found = false;
    DisaggregatedPlan best;
    DisaggregatedResult bestResult; // with both pools' per-operator breakdowns
    int calls = 0;                  // simulator calls, every pool search and the recipe
    double wallSeconds = 0;
    std::vector<std::pair<int, double>> bestCurve; // (calls, deployment tokens/s per GPU)
    std::string message;
    bool stopped = false;
    bool provedOptimal = false;
    bool provedInfeasible = false;
    bool failed = false; // a pool search could not run (SearchOutcome::failed): message says why
    // What happened at each split, in the order the search examined them.
    struct Split {
        int prefillGpus = 0, decodeGpus = 0;
        bool searched = false;      // pool searches ran (exact skips splits it proves worse)
        double prefillTokensPerS = 0, decodeTokensPerS = 0, kvLinkTokensPerS = 0; // best of each
        double tokensPerSPerGpu = 0; // the split's best deployment (0: none valid, or pruned)
        bool prefillFound = false, decodeFound = false; // each pool's search found a valid plan
        std::string note;
    };
    std::vector<Split> splits;
};

DisaggregatedSearchOutcome runDisaggregatedSearch(const Scenario& scenario, const SearchOptions& options,
                                                  SearchObserver* observer = nullptr,
                                                  const std::atomic<bool>* stop = nullptr);

} // namespace shardlab
