// The "ppo" search algorithm: Learn to Shard (docs/ppo.md). Plain C++; the
// LibTorch policy is hidden behind rl::PpoAgent.
#pragma once

#include <memory>
#include <vector>

#include "model/specs.h"
#include "rl/ppo_options.h"
#include "search/search.h"
#include "search/search_space.h"

namespace shardlab::rl {

// Adds "ppo" to the search registry (shardlab::registerSearchAlgorithm). Call once at
// start-up from the composition root, before any search runs; later calls do nothing.
void registerPpoSearch();

// A new ppo search (what the plugin's entry point hands out, core/plugin/rl_plugin.h).
std::unique_ptr<SearchAlgorithm> makePpoSearch();

// A plan moved into the space: degrees kept where the space has them, batch and
// micro-batches rounded down to the space's values, then repaired by the masks.
std::vector<int> choiceNear(const SearchSpace& space, const Plan& p);

// What the policy knows of the scenario (PpoAgent::kScenarioFeatures values, each
// roughly in [0, 1]): model size, experts, cluster size, memory headroom, workload.
std::vector<float> scenarioFeatures(const Scenario& s);

} // namespace shardlab::rl
