// The LibTorch search (ppo) lives in a plugin, libshardlab_rl_plugin.so, loaded with dlopen
// the first time a ppo search is created (docs/ppo.md, "Where ppo runs"). LibTorch pulls in
// OpenCV and Qt 5 on Debian; linked into the executables it cost every command ~0.6-1 s of
// start-up and put Qt 5 beside Qt 6 in the window. The core knows ppo's name, summary and
// flags without the plugin; only create() loads it.
//
// The plugin is built from the same sources as the executable that loads it and carries
// its own copy of the core (static, symbols hidden). Objects cross the boundary by
// reference (SearchContext) or through the SearchAlgorithm vtable, so both sides must agree
// on the layout of those types: the plugin reports an ABI version and a layout stamp of
// the types that cross, and a mismatch (a stale plugin from another build) is refused with
// a message instead of undefined behaviour.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/error.h"
#include "search/budgeted_evaluator.h"
#include "search/search.h"

namespace shardlab {

constexpr std::uint32_t kRlPluginAbi = 1;
constexpr const char* kRlPluginFileName = "libshardlab_rl_plugin.so";
constexpr const char* kRlPluginPathVariable = "SHARDLAB_RL_PLUGIN";

// Sizes of every type whose objects the plugin's code touches in the loader's memory,
// folded into one number (FNV-1a). Computed in both binaries from the same headers.
inline std::uint64_t rlPluginLayoutStamp()
{
    const std::uint64_t sizes[] = {sizeof(SearchContext),  sizeof(SearchOptions), sizeof(BudgetedEvaluator),
                                   sizeof(Simulator),      sizeof(SearchSpace),   sizeof(Scenario),
                                   sizeof(Plan),           sizeof(SimResult),     sizeof(SearchProgress),
                                   sizeof(AlgorithmReport), sizeof(Evaluation),   sizeof(std::string)};
    std::uint64_t h = 1469598103934665603ull;
    for (std::uint64_t s : sizes) {
        h ^= s;
        h *= 1099511628211ull;
    }
    return h;
}

// What the plugin exports, by the C symbol "shardlab_rl_plugin_api".
struct RlPluginApi {
    std::uint32_t abi;          // kRlPluginAbi of the plugin's build
    std::uint64_t layoutStamp;  // rlPluginLayoutStamp() of the plugin's build
    SearchAlgorithm* (*createPpo)(); // owned by the caller (delete through the vtable)
};
using RlPluginEntry = const RlPluginApi* (*)();

// Where the plugin is looked for: $SHARDLAB_RL_PLUGIN when set (tests, installs elsewhere),
// else the directory of the running executable (/proc/self/exe) + kRlPluginFileName.
std::string rlPluginPath();

// Loads the plugin once per process (thread-safe; never unloaded, its objects may live
// until exit). The error names the path and the reason (dlerror, a missing entry point,
// or an ABI/layout mismatch).
Result<const RlPluginApi*> loadRlPlugin();

// True when the process has already loaded the plugin (LibTorch is in memory).
bool rlPluginLoaded();

// The algorithms the plugin provides, as registry entries whose create() loads it:
// "ppo" when ShardLab was built with the RL plugin, none otherwise.
std::vector<SearchAlgorithmInfo> pluginSearchAlgorithms();

} // namespace shardlab
