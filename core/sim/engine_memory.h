// How much KV cache each engine allocates at its memory fraction (docs/launch.md, "Memory
// settings"), from the simulator's memory model: the MemoryBreakdown of an evaluated plan,
// per GPU of its fullest pipeline stage (weights, the KV cache of the plan's batch at its
// context, activations, reserve, capacity). Each engine reads its fraction differently; this
// is the one place that says how, for the launch configurations and the calibration alike:
//
//   vLLM 0.11 --gpu-memory-utilization f: the engine may use f x the GPU's memory for
//     weights, activations and KV cache (its worker's requested memory is total x f; the KV
//     cache gets that minus weights and the activation peak it profiles at start-up):
//       KV room = f x capacity - weights - profiled peak
//     The profile (gpu_model_runner.profile_run) runs one forward pass of the token budget,
//     then its sampler on min(max_num_seqs, max_num_batched_tokens) dummy requests over the
//     whole vocabulary: the peak is the larger of the plan's activations (which count the
//     sampling of the plan's own batch) and that sampler run (vllmSamplerWarmupGb), larger
//     where max_num_seqs exceeds the batch, as `vllm serve`'s default 1024 does.
//   SGLang 0.5 --mem-fraction-static f: f x the GPU's memory holds weights and the KV pool;
//     activations and CUDA graphs live in the rest:
//       KV room = f x capacity - weights
//   TensorRT-LLM 1.0 kv_cache_config.free_gpu_memory_fraction f: the KV cache gets f of the
//     memory still free after the model is loaded and its runtime buffers profiled (weights,
//     activations, and what lives outside torch: the CUDA context, NCCL, CUDA graphs, which
//     the memory model counts in its reserve):
//       KV room = f x (capacity - reserve - weights - activations)
//     which is the simulator's own pool rule (kvPoolGbPerCacheGb, workload.kv_cache_memory_fraction)
//
// The reserve (CUDA context, NCCL buffers, fragmentation) is never the engine's to give to the
// KV cache: vLLM's and SGLang's fractions leave it outside, TensorRT-LLM's base excludes it.
#pragma once

#include "model/engine_caps.h"
#include "sim/simulator.h"

namespace shardlab {

// The memory vLLM's start-up sampler run peaks at, in GB per GPU: every GPU of the last
// pipeline stage samples the gathered logits of min(max_num_seqs, max_num_batched_tokens)
// dummy requests over the full vocabulary, holding the sampler's bytes per logit
// (SimConstants::samplerBytesPerLogit, the same a step's sampling holds).
double vllmSamplerWarmupGb(long long vocab, long long maxNumSeqs, long long maxNumBatchedTokens);
// What vLLM's start-up profile finds beside the weights: max(activations, sampler run).
double vllmProfiledPeakGb(const MemoryBreakdown& m);

// What the reserve, the weights and the activations leave of the GPU, in GB: the base of
// TensorRT-LLM's fraction (and of the workload's kv_cache_memory_fraction).
double freeAfterModelGb(const MemoryBreakdown& m);
// The KV cache, in GB per GPU, that engine e allocates at fraction f beside the plan's
// other memory terms (the formulas above).
double kvRoomGb(Engine e, const MemoryBreakdown& m, double f);
// The least fraction whose KV room holds the plan's KV cache (m.kvCacheGb); +inf when no
// fraction does (TensorRT-LLM with nothing free after the model).
double neededMemoryFraction(Engine e, const MemoryBreakdown& m);
// The largest fraction that leaves the memory model's other terms their room: vLLM
// 1 - reserve/capacity; SGLang 1 - (reserve + activations)/capacity; TensorRT-LLM 1 (its base
// is already what the other terms leave).
double largestMemoryFraction(Engine e, const MemoryBreakdown& m);

} // namespace shardlab
