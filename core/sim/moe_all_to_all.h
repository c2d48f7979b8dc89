// MoE dispatch and combine kernels (docs/simulator.md §2, "MoE dispatch and combine"):
// DeepEP-style low-latency (decode) and normal (prefill) kernels, inside a node over NVLink
// and across nodes over RDMA, as a mechanism (a launch and per-node latency, then bytes over
// the achievable bandwidth of each link; FP8 dispatch, BF16 combine; destinations by top-k),
// fitted to measured H100 figures. NCCL's all-to-all (collectives.h) is the other choice.
#pragma once

#include <cstdint>

#include "sim/collectives.h"

namespace shardlab {

enum class MoeKernel : std::uint8_t { Nccl, DeepEpLowLatency, DeepEpNormal };
const char* moeKernelName(MoeKernel k); // "nccl", "deepep_ll", "deepep_normal"
bool moeKernelFromName(const char* name, MoeKernel& out);

// Which kernel an engine runs for a step: `nccl` keeps NCCL's all-to-all; the serving engines
// run DeepEP-style kernels (SGLang --moe-a2a-backend deepep, vLLM --all2all-backend deepep_*,
// TensorRT-LLM's wide-EP kernels), low-latency for a step of decode tokens only and normal
// for any step that carries prompt tokens (SGLang's `auto` mode resolves this way).
MoeKernel moeKernelFor(CollectiveEngine engine, bool promptTokensInStep);

// The fitted constants (DeepEpParams, model/profile.h) come from the link's kernel profile;
// the built-in profile's (tests, docs):
const DeepEpParams& deepEpParams();

// One dispatch (FP8 payload: hidden bytes + one 4-byte scale per 128) or combine (BF16) of
// `tokensPerRank` tokens, each to `topK` of `experts` experts spread evenly over the group's
// ranks. Low-latency: one message per (token, expert) pair. Normal: a token goes once to each
// destination node over RDMA and once to each destination rank over NVLink.
// Time is linear in the tokens with a positive intercept (the exact search's batch property).
CollectiveCost moeAllToAllCost(MoeKernel kernel, bool combine, double tokensPerRank, double hidden, int topK,
                               const Group& g, const LinkModel& link);

} // namespace shardlab
