// Disaggregated pools under a load protocol (docs/simulator.md §4, "Serving under load"):
// a request-level run of the whole deployment, every replica of both pools, each pass and
// step priced by the cost model on its pool's scenario. Deterministic for a seed.
//
// A request goes to the prefill replicas in turn (round robin, as a router spreads them)
// and waits in that replica's FIFO queue. A prefill replica runs passes of at most its
// plan's `batch` waiting prompts, priced as a pass of that many prompts. When a pass ends,
// each prompt's KV cache is sent over the prefill replica's links, one cache after the
// other (a later cache waits for the links), taking the pool's KV transfer time. The
// request then goes to the decode replicas in turn and waits there for a slot: a decode
// replica runs in-flight batching of at most its plan's `batch` sequences, each step one
// decode token per sequence (with speculative decoding its draft tokens), priced as the
// decode step of that many sequences. An MoE decode pool's replicas of one engine instance
// (CostModel::lockStepReplicas) step together: each step lasts as long as the step of the
// most sequences any of them runs. The first output token reaches the client at the end
// of the request's first decode step (the decode engine streams it), so TTFT = prefill
// wait + pass + KV transfer + decode wait + one decode step; an engine whose decode instance
// streams the token the prefill computed (SGLang: streamsPrefillFirstToken) sends it as it
// takes the request in, so there TTFT = prefill wait + pass + KV transfer + decode wait.
#pragma once

#include "sim/disaggregated.h"
#include "sim/serving_load.h"

namespace shardlab {

// Runs the disaggregated plan `plan` (valid for `sim`'s scenario) under `load`. `steady`
// is its steady-state evaluation (the capacity: the deployment's request rate). Returns an
// error text instead when the protocol cannot run the plan.
LoadRun simulateDisaggregatedLoad(const DisaggregatedSimulator& sim, const DisaggregatedPlan& plan,
                                  const DisaggregatedResult& steady, const LoadSpec& load);

} // namespace shardlab
