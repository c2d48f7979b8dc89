// Where a token's cost goes: the GPU·µs one token costs a pool (1e6 / its tokens/s per
// GPU), split into the busiest pipeline stage's operators and the named causes between a
// step and a token (pipeline bubble and stage transfers, two-batch overlap's hidden time).
//
// A decode cycle is micro-batches x the busiest stage's step plus what the stages wait
// for each other; it emits batch x DP tokens on every GPU of the pool. So one µs of the
// busiest stage's micro-batch step costs micro-batches x GPUs / (batch x DP) GPU·µs per
// token (the account's `perStepUs`), and the parts, each a per-step time times that
// factor, sum to exactly the headline's inverse. A prefill pool's token is a prompt token:
// its cycle serves batch x DP prompts of the workload's prompt length.
#pragma once

#include <string>
#include <vector>

#include "sim/deployment.h"

namespace shardlab {

enum class CostPartKind : std::uint8_t {
    Operator,       // an operator of the busiest stage: roofline + launch overhead + its collectives
    PipelineBubble, // the cycle minus micro-batches x the stage step: waiting and stage-to-stage sends
    Overlap,        // two-batch overlap: step time hidden by running one half's communication
                    // beside the other's compute (negative)
    Drafting,       // speculative decoding: the MTP module's drafting passes (last stage)
};
const char* costPartKindName(CostPartKind k); // "operator", "pipeline_bubble", "overlap", "drafting"

struct CostPart {
    CostPartKind kind = CostPartKind::Operator;
    OpId id = OpId::Count; // operators only
    std::string name;      // the operator's name, "pipeline bubble + transfers", "two-batch overlap"
    bool inBusiestStage = true; // operators: present in the busiest stage (embedding, LM head may not be)
    double stepUs = 0;     // per micro-batch step of the busiest stage, communication included
    double commUs = 0;     // of which communication
    double launchUs = 0;   // of which kernel launch overhead
    double gpuUsPerToken = 0;
};

struct CostAccount {
    bool costed = false;      // the pool has a throughput to account for
    std::string unit;         // "output token" or "prompt token"
    double gpuUsPerToken = 0; // 1e6 / the pool's tokens/s per GPU, in `unit`s
    double tokensPerSPerGpu = 0; // the pool's throughput per GPU in `unit`s (a prefill pool: prompt tokens)
    double perStepUs = 0;     // GPU·µs per token for one µs of the busiest stage's step
    double tokensPerStep = 0; // tokens one micro-batch step emits over the pool (drafts accepted included)
    // The model's operators in graph order, then (speculative decoding) the drafting passes,
    // then the bubble, then (with two-batch overlap) the overlap.
    std::vector<CostPart> parts;
    // Named causes as shares of gpuUsPerToken (overlap negative: time saved).
    double bubbleShare = 0;
    double overlapShare = 0;
    double launchShare = 0;
    double commShare = 0;
    double draftShare = 0;
};

CostAccount costAccount(const PoolOutcome& pool);

// The deployment's own account: for two pools, each pool's GPUs per output token served
// (the pool that does not limit the rate idles for part of its time); for one pool, its
// account.
struct DeploymentAccount {
    double gpuUsPerToken = 0; // 1e6 / the deployment's tokens/s per GPU
    struct Pool {
        std::string name;
        long long gpus = 0;
        double gpuUsPerToken = 0; // this pool's GPUs per output token the deployment serves
        double busyShare = 0;     // of that, the share it works: served rate / its own rate
    };
    std::vector<Pool> pools;
};
DeploymentAccount deploymentAccount(const DeploymentOutcome& o);

} // namespace shardlab
