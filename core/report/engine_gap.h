// What per-operator sharding is worth beyond what a serving engine runs (docs/engines.md,
// "Both answers"): for a scenario that names an engine (workload.engine vllm, sglang or
// trtllm), the best plan the engine runs and the per-operator optimum on the engine's
// collectives, each from exact, and where the difference comes from: the engine rules the
// per-operator optimum breaks, and the parts whose per-token cost differs (the comparison
// of report/plan_comparison.h, on the same outcomes as each headline).
//
// A search's own result is one side when it certifies it (exact, proved); the other side
// is always exact's, bounded by a work limit so that a result never waits long for its
// comparison. An unproved side is a lower bound on its optimum, and the ratio says so.
//
// Threading: runs on the caller's thread; the stop flag is the only state shared.
#pragma once

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "model/engine_caps.h"
#include "report/plan_comparison.h"
#include "runner/run_search.h"

namespace shardlab {

// Exact's work limit for a side of the comparison: about 20 s on the largest shipped
// scenario's per-operator space (which needs ~0.1 M units, ~1.5 s).
constexpr long long kEngineGapWorkLimit = 2'000'000;

struct EngineGapSide {
    bool found = false;           // a valid plan in this space
    bool proved = false;          // exact proved it optimal (or, without a plan, that none exists)
    bool fromResult = false;      // the search's own result, not a second exact run
    DeploymentOutcome deployment; // when found
    double tokensPerSPerGpu() const { return found ? deployment.tokensPerSPerGpu : 0.0; }
    std::string message;          // exact's note when nothing was found
};

// How far the ratio is established: both sides proved, or one a lower bound.
enum class GapBound : std::uint8_t { Exact, AtLeast, AtMost, Estimate, None };
const char* gapBoundName(GapBound b); // "exact", "at_least", "at_most", "estimate", "none"

struct EngineGap {
    bool applies = false;         // the scenario names an engine
    Engine engine = Engine::Vllm;
    std::string engineName;       // "vLLM 0.11"
    bool scenarioRunnable = false; // the result searched the engine's plans (workload.runnable)
    EngineGapSide runnable;       // the best plan the engine runs
    EngineGapSide perOperator;    // the per-operator optimum, on the engine's collectives
    double gain = 0;              // per-operator / runnable tokens/s per GPU; 0 when either has none
    GapBound bound = GapBound::None;
    // Whether the two optima serve differently (ties are common: several plans serve the
    // same, and exact may pick one the engine does not run); only then are there causes.
    bool differs() const { return gain > 0 && std::fabs(gain - 1) > 1e-9; }
    bool stopped = false;         // a side's exact run was stopped
    std::string headline;         // "the per-operator optimum is 1.035x the best plan vLLM 0.11 runs here (...)"
    // Where the difference comes from: the engine's rules the per-operator optimum breaks
    // (by plan field, a pool's prefixed), then the largest per-token differences.
    FieldErrors rulesBroken;
    std::vector<ExplainLine> causes;
    std::optional<DeploymentComparison> comparison; // per-operator optimum against the engine's best
};

// Both sides for `s` (either runnable or not; the engine is the one whose collectives
// price it, engineOfCollectives), reusing `result` for its own side when it
// is exact's proved answer. Without a named engine: `applies` false, nothing run.
EngineGap measureEngineGap(const Scenario& s, const SearchOutcome* result = nullptr,
                           const std::atomic<bool>* stop = nullptr, long long workLimit = kEngineGapWorkLimit);

// The lines a front prints: the headline, then "the difference comes from:" and its causes.
// The headline as a sentence: its first letter a capital, except an engine's own name
// ("vLLM 0.11 runs ..."). The CLI's lines and the window's paragraph both start with it.
std::string engineGapSentence(const EngineGap& g);
std::vector<std::string> engineGapLines(const EngineGap& g);

} // namespace shardlab
