// Random scenarios from the distribution the pretrained ppo policy is trained on and
// evaluated on (docs/ppo.md, "Pretraining"): dense, MoE and MLA models from 1 B to 2 T
// parameters; 1 to 4096 GPUs of the preset GPU types in NVLink domains of 4, 8 and 72;
// prompt/output lengths, TTFT/TPOT limits, aggregated or decode serving and the engine's
// collectives. Deterministic in the seed. Plain C++.
#pragma once

#include <cstdint>
#include <vector>

#include "model/specs.h"

namespace shardlab {

struct ScenarioGeneratorOptions {
    int minGpus = 1;
    int maxGpus = 4096;
    double minParameters = 1e9;
    double maxParameters = 2e12;
};

// One scenario per index: generateScenario(seed, i) is the same on every run and build, and
// independent of the other indices. Every scenario passes validateScenario, and its weights
// fit in the cluster's memory (so most, not all, have a valid plan: limits may rule all out).
Scenario generateScenario(std::uint64_t seed, int index, const ScenarioGeneratorOptions& options = {});

// The generated scenario `s` (index `index` of `seed`) as one pool of a disaggregated
// deployment over its cluster: prefill or decode, on one of the splits the deployment may
// use (disaggregatedSplits) of at least a quarter of its GPUs, both drawn from (seed,
// index); a cluster that cannot be split is the prefill pool over all of it. The
// disaggregated search's pool searches run the policy on such scenarios, with node counts
// (3, 5, 7 of 8) the generator's clusters, of a power of two nodes, never have.
Scenario generatedPool(const Scenario& s, std::uint64_t seed, int index);

} // namespace shardlab
