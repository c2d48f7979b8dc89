// The memory fraction a launch configuration writes (docs/launch.md, "Memory settings"),
// from the simulator's memory model: the MemoryBreakdown of the evaluated plan, per GPU of
// its fullest pipeline stage (weights, the KV cache of the plan's batch at its context,
// activations, reserve, capacity). Each engine reads its fraction differently; this is the
// one place that says how, for every engine's exporter:
//
//   vLLM 0.11 --gpu-memory-utilization f: the engine may use f x the GPU's memory for
//     weights, activations and KV cache (its worker's requested memory is total x f; the KV
//     cache gets that minus weights and the profiled activation peak):
//       KV room = f x capacity - weights - activations
//   SGLang 0.5 --mem-fraction-static f: f x the GPU's memory holds weights and the KV pool;
//     activations and CUDA graphs live in the rest:
//       KV room = f x capacity - weights
//   TensorRT-LLM 1.0 kv_cache_config.free_gpu_memory_fraction f: the KV cache gets f of the
//     memory still free after the model is loaded and its runtime buffers profiled (weights,
//     activations, and what lives outside torch: the CUDA context, NCCL, CUDA graphs, which
//     the memory model counts in its reserve):
//       KV room = f x (capacity - reserve - weights - activations)
//
// The reserve (CUDA context, NCCL buffers, fragmentation) is never the engine's to give to the
// KV cache: vLLM's and SGLang's fractions leave it outside, TensorRT-LLM's base excludes it.
#pragma once

#include <string>
#include <vector>

#include "model/engine_caps.h"
#include "model/error.h"
#include "sim/simulator.h"

namespace shardlab {

// The engine flag that carries the fraction: "--gpu-memory-utilization",
// "--mem-fraction-static", "--kv_cache_free_gpu_memory_fraction".
const char* memoryFractionFlag(Engine e);

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

// A fraction as the launch configuration writes it: two decimals ("0.92"), up to four when
// a user's value has them ("0.925"); fractionAsWritten is the number the engine then reads.
std::string memoryFractionText(double f);
double fractionAsWritten(double f);

// One pool's memory setting: what the plan needs and what is written.
struct LaunchMemory {
    Engine engine = Engine::Vllm;
    bool userGiven = false;       // --memory-fraction
    double neededFraction = 0;    // neededMemoryFraction
    double largestFraction = 0;   // largestMemoryFraction
    double writtenFraction = 0;   // as the engine reads it
    double kvNeededGb = 0;        // the plan's KV cache per GPU
    double kvRoomGb = 0;          // kvRoomGb at writtenFraction
    MemoryBreakdown terms;        // the plan's memory breakdown it was derived from
};

// The fraction to write for the plan, checked so that its KV room holds the plan's batch.
// userFraction 0: derived (vLLM and SGLang: the largest fraction rounded down to two
// decimals, at most 0.98, when that covers the need, else the need rounded up;
// TensorRT-LLM: its default 0.90 when that covers the need, else the need rounded up plus
// 0.02, at most 1). Errors: a user's fraction whose KV room is too small names
// "--memory-fraction"; a plan whose batch no fraction up to the largest holds names the
// engine's flag. `batch` says what the KV cache holds, for the messages ("64 sequences of up
// to 2560 tokens"). A user's fraction above the largest is warned.
Result<LaunchMemory> launchMemory(Engine e, const MemoryBreakdown& m, double userFraction, const std::string& batch,
                                  std::vector<std::string>& warnings);

} // namespace shardlab
