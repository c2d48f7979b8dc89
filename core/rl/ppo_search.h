// The "ppo" search algorithm: Learn to Shard (docs/ppo.md). Plain C++; the
// LibTorch policy is hidden behind rl::PpoAgent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/specs.h"
#include "rl/ppo_options.h"
#include "search/search.h"
#include "search/search_space.h"

namespace shardlab::rl {

// A new ppo search (what the plugin's entry point hands out, core/plugin/rl_plugin.h),
// starting from the shipped pretrained policy, or from `weights` (a weights file's bytes)
// when given.
std::unique_ptr<SearchAlgorithm> makePpoSearch(std::shared_ptr<const std::string> weights = nullptr);

// What the policy knows of the scenario (PpoAgent::kScenarioFeatures values, each
// roughly in [0, 1]): model size, experts, cluster size, memory headroom, workload.
std::vector<float> scenarioFeatures(const Scenario& s);

} // namespace shardlab::rl
