// The trade-off a serving team chooses from (docs/choices.md): the front of
// output tokens/s per GPU against tokens/s per user (1000 / TPOT in ms), each point the
// certified optimum under a TPOT limit, and the Megatron recipe's front beside it. A
// disaggregated scenario's points are deployments: the split and both pools' plans, each
// the optimum over every split (runner/disaggregated_search.h).
//
// Threading: computeParetoFront runs on the caller's thread; `progress` is called on it.
// The stop flag is the only state shared across threads.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runner/run_search.h"

namespace shardlab {

struct ParetoPoint {
    double tokensPerSPerUser = 0;       // 1000 / tpotMs
    double outputTokensPerSPerGpu = 0;
    double tpotMs = 0;
    double ttftMs = 0;
    double tpotLimitMs = 0;             // the limit it is the optimum under (tpot <= limit)
    // One pool's plan, or for disaggregated serving the two pools (their split is their
    // GPU counts); the figures above are the deployment's (TPOT the decode pool's).
    Deployment deployment;
    bool provedOptimal = false;         // exact proved no plan within the limit scores higher
};

struct ParetoOptions {
    int points = 16;                    // distinct front points wanted (2..200)
    int maxSearches = 0;                // exact searches at most; 0: 4 x points + 16
    // Exact searches run at once while resolving knees (1..8). Deterministic for a given
    // value: a round's searches are chosen before any runs and merged in a fixed order
    // (another value picks other limits, so other, equally certified, points).
    int threads = 2;
};

// One report per exact search finished (value type: copy it across threads).
struct ParetoProgress {
    int searches = 0;                   // exact searches so far
    int maxSearches = 0;
    int points = 0;                     // distinct front points so far
    double elapsedS = 0;
    double lastTpotLimitMs = 0;
    std::string stage;                  // "optimum at the SLO", "fastest users", "knees"
};

struct ParetoFront {
    bool ok = false;                    // false: nothing computed, `message` says why
    std::vector<ParetoPoint> points;    // sorted by tokens/s per user, ascending; non-dominated
    std::vector<ParetoPoint> megatronPoints; // the recipe under the same limits, non-dominated
    // A scenario that names an engine: the front of the other space under the same TPOT
    // limits (and the fastest limit `points` proved out of reach): the best plans the
    // engine runs when `points` are per-operator, the per-operator optima when the scenario
    // is runnable. Exact at each limit; non-dominated. Empty without an engine.
    std::vector<ParetoPoint> otherPoints;
    bool otherRunnable = false;         // otherPoints are plans the engine runs
    std::string engineName;             // "vLLM 0.11" when the scenario names an engine
    int searches = 0;
    double wallSeconds = 0;
    bool stopped = false;
    bool allProved = false;             // every point proved optimal and the fastest end proved
    // The fastest per-user speed (tokens/s) shown to be out of reach: exact proved that
    // no plan has a TPOT at or below 1000 / this (0 when not established).
    double unreachableTokensPerSPerUser = 0;
    std::string message;
};

// The non-dominated points of (per-user speed, throughput per GPU) pairs: sorted by speed,
// those that serve more per GPU than every faster point. Indices into the input, by
// ascending speed (ties: the higher throughput kept).
std::vector<size_t> nonDominatedIndices(const std::vector<std::pair<double, double>>& speedAndThroughput);

// Problems with the options or the scenario (by field: "--points", "workload.serving").
FieldErrors validateParetoRequest(const Scenario& s, const ParetoOptions& o);

// The limits are chosen adaptively (docs/choices.md): the optimum at the scenario's TPOT
// SLO; tighter limits (per-user speed doubled) until exact proves none can be met; then,
// repeatedly, the gap between adjacent points whose box (speed gap x throughput gap,
// normalized) is largest is bisected in per-user speed, each search floored at the
// throughput the faster neighbour already guarantees. Identical plans are one point.
ParetoFront computeParetoFront(const Scenario& s, const ParetoOptions& o,
                               const std::function<void(const ParetoProgress&)>& progress = {},
                               const std::atomic<bool>* stop = nullptr);

// The per-operator optimum over the best plan the engine runs at the scenario's TPOT SLO
// (each front's slowest point); 0 without an engine or when either front is empty.
double paretoGainAtSlo(const ParetoFront& f);

// A deployment's pools as CSV fields, one string per pool (one pool: "plan"; two: the
// prefill pool, then the decode pool): tensor_parallel .. instances, then the pool's name
// and its GPUs. The front's and the sizing's CSVs share these columns.
std::vector<std::string> poolCsvFields(const Deployment& d);

// CSV of the fronts, one row per point: front (exact|megatron|runnable|per_operator: the
// other space's front, "runnable" when `points` are per-operator), the figures, the degrees.
std::string paretoCsv(const ParetoFront& f);

// The scenario with its TPOT limit replaced (every other limit kept).
Scenario withTpotLimit(const Scenario& s, double tpotMs);

} // namespace shardlab
