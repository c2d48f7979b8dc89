// One step of a pool drawn as a teacher draws it on the board (docs/explain.md, "A step
// timeline"), built from the cost account (report/cost_account.h), so that whatever the
// cost model prices appears here without a second copy of a formula:
//
// - the step lane: the busiest pipeline stage's micro-batch step, operator by operator in
//   graph order, each as its roofline time (compute- or memory-bound), its kernel launch
//   overhead and its collectives on their link; two-batch overlap's hidden time as a bar
//   over the step's end (the step ends where the overlap says);
// - the cycle lane: that stage over one decode cycle (TPOT): each micro-batch's step, its
//   hand-off to the next stage, and the wait for the other stages (the pipeline bubble).
//
// The step lane sums to the stage step, the cycle lane to the cycle the headline's
// throughput implies. In aggregated serving the step carries its share of prompt tokens.
#pragma once

#include <string>
#include <vector>

#include "report/cost_account.h"

namespace shardlab {

enum class BarKind : std::uint8_t {
    Compute,  // roofline time, compute-bound
    Memory,   // roofline time, memory-bound (HBM)
    Launch,   // kernel launch overhead
    Comm,     // collectives, on `link`
    Overlap,  // step time two-batch overlap hides (drawn over the step's end)
    Step,     // cycle lane: one micro-batch step of the stage
    Transfer, // cycle lane: a micro-batch's hidden states to the next stage
    Wait,     // cycle lane: waiting for the other stages (pipeline bubble)
    Draft,    // speculative decoding's drafting passes (MTP module, last stage)
};
const char* barKindName(BarKind k); // "compute", "memory", "launch", "comm", "overlap", "step", "transfer", "wait", "draft"

struct TimelineBar {
    BarKind kind = BarKind::Compute;
    OpId id = OpId::Count;  // operator bars
    std::string label;      // "qkv_proj", "micro-batch 2", "to the next stage", ...
    std::string link;       // comm and transfer bars: "NVLink" or "inter-node fabric"
    double startUs = 0, durationUs = 0;
};

struct StepTimeline {
    bool ok = false;          // the pool is costed
    std::string unit;         // the account's: "output token" or "prompt token"
    int stages = 1, microBatches = 1;
    double stepUs = 0;        // the busiest stage's micro-batch step
    double cycleUs = 0;       // micro-batches x (step + bubble share): the decode cycle
    std::vector<TimelineBar> step;
    std::vector<TimelineBar> cycle;
};

StepTimeline stepTimeline(const PoolOutcome& pool);

// The timeline as text: each bar's start, duration and label, with a bar of '#' scaled to
// `width` columns over its lane.
std::vector<std::string> timelineText(const StepTimeline& t, int width = 40);

} // namespace shardlab
