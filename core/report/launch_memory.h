// The memory fraction a launch configuration writes (docs/launch.md, "Memory settings"),
// from the simulator's memory model and each engine's reading of its fraction
// (sim/engine_memory.h, the one place that says how each engine reads it).
#pragma once

#include <string>
#include <vector>

#include "model/engine_caps.h"
#include "model/error.h"
#include "sim/engine_memory.h"
#include "sim/simulator.h"

namespace shardlab {

// The engine flag that carries the fraction: "--gpu-memory-utilization",
// "--mem-fraction-static", "--kv_cache_free_gpu_memory_fraction".
const char* memoryFractionFlag(Engine e);

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
