// Pretraining the ppo policy offline over generated scenarios (docs/ppo.md, "Pretraining").
// Plain C++ interface; the work is in ppo_pretrain.cpp, the network's in policy_net.cpp.
//
// What it does: draws scenarios from search/scenario_generator.h (seeded), certifies each
// one's optimum with the exact search, and trains one layout-independent policy
// (rl/policy_net.h) to propose that optimum from scratch and from elite histories of
// near-optimal and random plans (imitation of the certified optimum, by maximum likelihood).
// Validation scenarios, drawn from the same generator at other indices, are never trained
// on; the learning curve records their loss and the greedy plan's ratio to the optimum.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/specs.h"
#include "rl/pretrained_policy.h"

namespace shardlab::rl {

struct PretrainOptions {
    std::uint64_t seed = 1;        // generator and network seed
    int trainScenarios = 300;
    int validationScenarios = 40;
    int epochs = 30;
    double learningRate = 3e-3;
    int hidden = 32;
    int heads = 4;
    int elite = 3;                 // elite history the examples carry (as the search's default)
    int threads = 1;
    // Scenarios whose exact search needs more work than this (search.h, exactWorkLimit)
    // are skipped: a limit on work, so the labels are the same on every machine and load.
    long long exactWorkLimit = 3000000;
    // Imitation of the policy's own proposals (docs/ppo.md, "Learning from its own
    // proposals"): before each of the last `ownRounds` x `ownEvery` epochs' blocks, the
    // policy's samples on each training scenario join the pool its elite histories are
    // drawn from, so it learns to reach the optimum from the plans it would itself find.
    int ownRounds = 0;
    int ownEvery = 4;
    // Every n-th generated scenario serving aggregated becomes a prefill or decode pool of a
    // disaggregated deployment over a split of its cluster (generatedPool; 0: none): the
    // disaggregated search's pool searches run the policy on such scenarios, which the
    // generator's own aggregated and decode-only mix, on a power of two nodes, does not contain.
    int poolEvery = 0;
    // Checkpoint selection by the search itself (docs/ppo.md, "Choosing the checkpoint"):
    // the weights after the imitation epochs and after each own-proposal block are scored
    // by running the ppo search with them (at each of selectionBudgets calls, selectionSearchSeeds
    // seeds) on `selectionScenarios` scenarios of the generator's `selectionSeed`, a seed
    // of their own (never trained on, apart from the held-out and tuning sets), and the
    // latest checkpoint scoring within selectionMargin of the best score is kept (0: the
    // best, the later one on a tie). 0 scenarios: the last epoch.
    int selectionScenarios = 0;
    std::uint64_t selectionSeed = 20261128;
    // Several budgets: the score is the mean over them, so a checkpoint that gains at one
    // budget and loses at another is not preferred for the one alone.
    std::vector<int> selectionBudgets = {300};
    int selectionSearchSeeds = 2;
    // Mean best/exact differences up to this are a tie: which search seeds run moves the
    // mean over the selection set by about 0.005 (docs/ppo.md, "Choosing the checkpoint").
    double selectionMargin = 0.005;
    // Every n-th selection scenario serving aggregated becomes a pool, as poolEvery does
    // for training; fixed apart from it, so the selection set is the same
    // whatever the training recipe and a weights file scores alike in and out of training.
    int selectionPoolEvery = 5;
    std::string command;           // recorded in the weights' header
};

// How well the ppo search does with a set of weights on the selection scenarios.
struct SelectionScore {
    double meanRatio = 0;  // mean over scenarios and budgets of the median (over seeds) best / exact optimum
    double atOptimum = 0;  // share of (scenario, budget) pairs whose median is at least 0.99
    int scenarios = 0;     // scenarios scored (those exact certified within the work limit)
    // The same two figures at each budget of selectionBudgets, in its order.
    std::vector<std::pair<double, double>> byBudget;
};

struct PretrainResult {
    std::string weights; // the file's bytes (rl/policy_net.h format)
    PretrainedPolicyInfo info;
    int skippedInfeasible = 0; // exact proved that no valid plan exists
    int skippedLimit = 0;      // exact's proof needed more than exactWorkLimit
};

// Deterministic in the options and the build (wall time aside). `log` receives one line per stage/epoch.
PretrainResult pretrainPolicy(const PretrainOptions& o, const std::function<void(const std::string&)>& log);

// The selection score of a weights file's bytes (options: the selection fields and the
// exact work limit), as the pretrainer scores its checkpoints.
SelectionScore scorePolicy(const std::string& weights, const PretrainOptions& o,
                           const std::function<void(const std::string&)>& log);

// The same score on given scenarios (the shipped four, a held-out set): exact certifies
// each within the options' work limit; a scenario it cannot certify, or one runSearchWith
// refuses (two pools), is left out and named in `log` with the reason.
SelectionScore scorePolicyOn(const std::string& weights, const std::vector<Scenario>& scenarios,
                             const PretrainOptions& o, const std::function<void(const std::string&)>& log);

} // namespace shardlab::rl
