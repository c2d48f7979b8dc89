// How many GPUs a load needs and how throughput per GPU changes with the cluster's size
// (docs/choices.md): the same GPU, node and links, other GPU counts, each count's
// certified optimum from exact (for disaggregated serving, over every split of the count).
//
// Threading: as pareto.h (caller's thread; `progress` called on it; the stop flag shared).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runner/run_search.h"
#include "sim/serving_load.h"

namespace shardlab {

// The scenario on `gpus` GPUs of the same kind and links: whole nodes (a multiple of the
// GPUs per node) or part of one node (fewer GPUs than a node holds, one NVLink domain).
// Other counts are refused with the reason in `why`.
bool withGpuCount(const Scenario& s, long long gpus, Scenario& out, std::string* why = nullptr);

// One cluster size's certified optimum.
struct ClusterSizePoint {
    long long gpus = 0;
    bool found = false;               // some plan meets the limits
    bool provedOptimal = false;       // exact: no plan on this count scores higher
    bool provedInfeasible = false;    // exact: no plan on this count meets the limits
    double tokensPerSPerGpu = 0;      // output tokens/s per GPU
    double outputTokensPerS = 0;      // the whole cluster
    double requestsPerS = 0;          // outputTokensPerS / output tokens per request
    double tpotMs = 0, ttftMs = 0, e2eMs = 0;
    Deployment deployment;            // one pool's plan, or a disaggregated split's two pools
    double seconds = 0;
    std::string message;              // exact's note or why nothing was found
};

struct ScaleProgress {
    int searches = 0;
    int plannedSearches = 0;          // 0 when not known in advance (sizing)
    long long gpus = 0;               // the count just searched
    double elapsedS = 0;
};
using ScaleProgressFn = std::function<void(const ScaleProgress&)>;

// "8,16,32" into GPU counts (appended to `out`); false with `why` (no field name) at an
// empty item ("8,,16") or one that is not a positive whole number. An empty list reads
// (validateGpuCounts refuses it). One reader for the CLI's --gpus and the window's field.
bool parseGpuCounts(const std::string& text, std::vector<long long>& out, std::string& why);

// Problems with a list of GPU counts ("--gpus": empty, a count that is not whole nodes or
// part of one node, above the limit) or the scenario's serving mode.
FieldErrors validateGpuCounts(const Scenario& s, const std::vector<long long>& gpus);

struct SweepResult {
    bool ok = false;
    std::vector<ClusterSizePoint> points; // in the order asked
    bool stopped = false;
    double wallSeconds = 0;
    std::string message;
};
SweepResult sweepClusterSizes(const Scenario& s, const std::vector<long long>& gpus,
                              const ScaleProgressFn& progress = {}, const std::atomic<bool>* stop = nullptr);

struct SizingOptions {
    double requestsPerS = 0;          // the load: requests/s at the scenario's lengths and SLOs
    bool anyCount = false;            // false: whole nodes; true: also 1..GPUs per node - 1
    long long maxGpus = 16384;        // the largest count tried
};
FieldErrors validateSizingRequest(const Scenario& s, const SizingOptions& o);

// A count's best deployment run under Poisson arrivals at the sizing's rate (sim/serving_load.h):
// the steady capacity ignores queueing, which near the capacity sets TTFT.
struct SizingAtRate {
    bool ran = false;
    std::string error;                // why the run was not possible (decode mode, ...)
    LoadFigures figures;
    // Not saturated, and p90 TTFT and p90 TPOT (over requests) within the scenario's limits.
    bool withinLimits = false;
};

struct SizingResult {
    bool ok = false;                  // a count meeting the rate was found
    long long gpus = 0;
    ClusterSizePoint best;            // its optimum (requestsPerS >= the rate)
    // The next smaller count tried ("one node fewer"), 0 when `gpus` is the smallest
    // count; `smallerProved`: exact proved its best plan below the rate (or no plan).
    long long smallerGpus = 0;
    bool smallerProved = false;
    double smallerRequestsPerS = 0;   // its best rate (0: no valid plan)
    // The answer's plan at the rate, and the first count from the answer up whose best plan
    // keeps p90 TTFT and p90 TPOT within the limits there (0: none within
    // kQueueingCounts further counts). Not proved minimal: exact's proof covers the steady
    // state, and another plan on a count might queue less than its steady optimum.
    SizingAtRate atRate;
    long long queueingGpus = 0;
    ClusterSizePoint queueingBest;
    SizingAtRate queueingAtRate;
    std::vector<ClusterSizePoint> curve; // every count searched, by GPU count
    bool stopped = false;
    double wallSeconds = 0;
    std::string message;
};
// Counts above the steady answer searched for one that holds the limits under queueing.
constexpr int kQueueingCounts = 8;

// Doubles the count until the rate is met, then bisects between the last count that
// missed it and the first that met it, down to adjacent counts (docs/choices.md). Then runs
// the answer's plan under Poisson arrivals at the rate (the scenario's workload.load for the
// requests, warm-up, lengths and seed when it is an open loop; else 500 requests; when that
// holds the limits, again over at least 20 request lifetimes of arrivals) and, when it
// breaks a limit there, goes up count by count (at most kQueueingCounts).
SizingResult sizeCluster(const Scenario& s, const SizingOptions& o, const ScaleProgressFn& progress = {},
                         const std::atomic<bool>* stop = nullptr);

// CSV of cluster sizes, one row per count (per pool for two): gpus, found, proved, the
// figures, the degrees, the pool and its GPUs.
std::string clusterSizesCsv(const std::vector<ClusterSizePoint>& points);

} // namespace shardlab
