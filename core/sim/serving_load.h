// Serving under load (docs/simulator.md §4, "Serving under load"): a request-level run of
// one engine replica driven by a benchmark protocol (workload.load), each engine step
// priced by the cost model as the step it is (its decoding sequences and prompt chunk),
// not as the steady state's mean step. Deterministic for a seed.
//
// The engine, as vLLM, SGLang and TensorRT-LLM schedule aggregated serving: in-flight
// batching of at most the plan's `batch` sequences per replica; each step first gives
// every running sequence past its prompt one decode token, then fills the token budget
// (max_num_tokens) with prompt chunks of the admitted requests in arrival order; a request
// waits in a FIFO queue while `batch` sequences run. A request's first token comes at the
// end of the step that finishes its prompt. The DP replicas share the load evenly (the
// router's split of a Poisson stream is Poisson at the share's rate).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace shardlab {

struct LoadFigures {
    LoadProtocol protocol = LoadProtocol::Steady;
    int requests = 0;             // measured, over the whole deployment
    // Per request, over the measured requests: time to first token (queueing included) and
    // TPOT as aiperf defines it, (end-to-end - TTFT) / (output tokens - 1).
    double ttftMeanMs = 0, ttftP50Ms = 0, ttftP90Ms = 0, ttftP99Ms = 0;
    double tpotMeanMs = 0, tpotP50Ms = 0, tpotP90Ms = 0, tpotP99Ms = 0;
    double e2eMeanMs = 0;
    // Output tokens of the measured requests over the time from the first one's arrival to
    // the last one's finish, whole deployment (what benchmark tools print).
    double outputTokensPerS = 0;
    double tokensPerSPerGpu = 0;
    double meanRunning = 0;       // sequences in a replica's steps, mean over steps
    double meanQueued = 0;        // requests waiting for a slot at a step, mean over steps
    // The plan's steady-state request rate at its batch (output tokens/s / output tokens):
    // what an open loop may offer before its queue grows without bound.
    double capacityRequestsPerS = 0;
    double offeredRequestsPerS = 0; // open loop: the rate (infinite: all at once)
    // An open loop offering more than the capacity: TTFT grows with the run's length; the
    // figures above are this run's (its `requests`), not a steady state.
    bool saturated = false;
    // Near capacity (an open loop offering 0.8-1.25 of it), mean TTFT of the same run at 0.9
    // and 1.1 times the rate: how sharply the queue answers the load there. 0 elsewhere.
    double ttftAt90Ms = 0, ttftAt110Ms = 0;
    // Disaggregated pools: TTFT's parts, means over the measured requests: waiting for a
    // prefill pass, the KV cache's transfer (waiting for the prefill replica's links
    // included), and waiting for a decode slot once the cache has arrived.
    bool pools = false;
    double prefillWaitMeanMs = 0, kvTransferMeanMs = 0, decodeWaitMeanMs = 0;
    double durationS = 0;         // one replica's simulated time
    long long steps = 0;          // one replica's engine steps
    long long pricedSteps = 0;    // distinct step compositions priced by the cost model
};

// Runs `plan` (valid for `sim`'s scenario, aggregated serving) under the scenario's load
// protocol, or under `load` when given. `steady` is the plan's steady-state evaluation
// (its capacity). Returns an error text instead when the protocol cannot run the plan.
struct LoadRun {
    LoadFigures figures;
    std::string error;
    bool ok() const { return error.empty(); }
};
LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady);
LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load);

// Whether a run holds the workload's limits: not saturated, and p90 TTFT and p90 TPOT
// (over the measured requests) within the TTFT and TPOT limits. p90 because an SLO is a
// tail bound (DistServe's attainment); a mean would hide the requests that queue. Sizing
// under queueing, the searches under a protocol and every outcome's verdict use this one
// rule. `reasons` says which limit a run breaks, in words.
struct LoadVerdict {
    bool withinLimits = false;
    bool saturated = false, ttftOver = false, tpotOver = false;
    std::vector<std::string> reasons;
};
LoadVerdict judgeLoad(const WorkloadSpec& w, const LoadFigures& f);

// An open loop at a finite rate that the plan does not saturate: the plan serves the offered
// load, and its run's output per GPU differs from another such plan's only by the run's
// sample (its arrivals and when the last request ends), so two of them compare at 1x.
inline bool servesOfferedLoad(const LoadFigures& f)
{
    return f.protocol == LoadProtocol::RequestRate && !f.saturated && f.offeredRequestsPerS > 0
        && f.offeredRequestsPerS < std::numeric_limits<double>::infinity();
}

// A plan ranked by its run under a closed loop (LoadProtocol::Concurrency), in the terms
// the searches compare plans by: `r`, the plan's steady evaluation, becomes the run's.
// tokensPerSPerGpu and outputTokensPerS are the run's output, ttftMs and tpotMs its p90s,
// e2eMs its mean, and the TTFT and TPOT violations judgeLoad's; memory, structure and the
// token budget stay the steady evaluation's (a plan that does not fit is not run). A run
// that cannot be made leaves the plan invalid with no throughput. Only a closed loop:
// under an open loop the offered rate fixes every unsaturated plan's output, so there is
// no per-GPU throughput to rank by (sizing answers that question).
void rankUnderLoad(const Simulator& sim, const Plan& plan, SimResult& r, const LoadSpec& load);

} // namespace shardlab
