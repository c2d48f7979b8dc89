// The serving curve a benchmark sweep draws (docs/choices.md, "The front under load"): at
// each closed-loop concurrency, the plan a search finds when it ranks plans by their run
// under that loop (runSearch with SearchOptions::underLoad), its output tokens/s per GPU
// against tokens/s per user (1000 / the run's mean TPOT), as InferenceX plots throughput
// per GPU against interactivity. Searched, not proved: exact cannot rank by a run.
//
// Threading: the caller's thread; `progress` is called on it; the stop flag is shared.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runner/run_search.h"

namespace shardlab {

struct LoadFrontPoint {
    int concurrency = 0;
    bool found = false;             // a plan holds the limits (p90 TTFT and TPOT) at this loop
    Plan plan;
    LoadFigures load;               // its run
    double tokensPerSPerGpu = 0;    // the run's output per GPU
    double tokensPerSPerUser = 0;   // 1000 / the run's mean TPOT
    bool onFront = false;           // no point faster per user serves as much per GPU
    int calls = 0;
    std::string message;            // the search's note, or why nothing was found
};

struct LoadFront {
    bool ok = false;                // false: nothing computed, `message` says why
    std::vector<LoadFrontPoint> points; // one per concurrency asked, in ascending order
    int calls = 0;
    double wallSeconds = 0;
    bool stopped = false;
    std::string message;
};

// Concurrencies the CLI and the window sweep when none are given: powers of two, 1 to 1024.
std::vector<int> defaultFrontConcurrencies();
// The search at each point when none is named: anneal, 2000 simulator calls, seed 0 (the
// CLI's defaults and the window's, so both draw the same front).
SearchOptions defaultLoadFrontSearch();
// "1,4,16" as typed (io/count_list.h: blanks trimmed, empty items skipped) into
// concurrencies; false with `why` naming the item that is not one ("'x' is not a
// concurrency (1..65536)"), for the caller to prefix with its field.
bool parseConcurrencies(const std::string& text, std::vector<int>& out, std::string& why);

// The list's own rule, before a scenario is known: 1 to 64 concurrencies, each in
// 1..kMaxLoadConcurrency; empty when the list keeps it.
std::string concurrencyListError(const std::vector<int>& concurrencies);

// Problems with the request (by field: "--concurrencies", "--algo", "workload.serving").
FieldErrors validateLoadFront(const Scenario& s, const std::vector<int>& concurrencies, const SearchOptions& o);

// One search per concurrency, each with `o` (its algorithm, budget and seed) under a
// closed loop of that many requests; the scenario's own closed-loop settings (requests,
// warm-up, lengths, seed) are kept when it has them.
LoadFront computeLoadFront(const Scenario& s, std::vector<int> concurrencies, const SearchOptions& o,
                           const std::function<void(const LoadFrontPoint&)>& progress = {},
                           const std::atomic<bool>* stop = nullptr);

// CSV, one row per concurrency: the figures and the degrees.
std::string loadFrontCsv(const LoadFront& f);

} // namespace shardlab
