// The pretrained ppo policy shipped with ShardLab (resources/ppo/pretrained-policy.bin,
// docs/ppo.md "Pretraining"), compiled into the library, and what its header says: the
// network's shape, how it was trained and its learning curves. Plain C++: no LibTorch, so
// the window and the CLI can show it without loading the RL plugin.
#pragma once

#include <string>
#include <vector>

namespace shardlab::rl {

struct PretrainedCurvePoint {
    int epoch = 0;
    double trainLoss = 0;        // imitation loss (nats per plan) on the training scenarios
    double validationLoss = 0;   // the same on the validation scenarios (never trained on)
    double validationBestOf32 = 0; // median over validation scenarios of the best of 32 plans sampled
                                   // from scratch / exact optimum (0 = none valid)
};

struct PretrainedPolicyInfo {
    bool available = false;
    std::string error;           // why not, when not available
    int hidden = 0, heads = 0, features = 0;
    int trainingScenarios = 0, validationScenarios = 0;
    unsigned long long seed = 0;
    std::string command;         // the command that reproduces the weights
    // What the weights were trained against (search/training_fingerprint.h); "" in
    // weights older than the fingerprint.
    std::string fingerprint;
    double trainingSeconds = 0;
    std::vector<PretrainedCurvePoint> curve;
    std::string metadataJson;    // the whole header, as written by the trainer
};

// The weights file's bytes ("" when the build has none).
const std::string& pretrainedPolicyBytes();
// The header of a weights file (the shipped one when `bytes` is omitted).
PretrainedPolicyInfo pretrainedPolicyInfo();
PretrainedPolicyInfo readPolicyInfo(const std::string& bytes);

// "" when the weights were trained against this build's search space and cost model (their
// fingerprint equals trainingFingerprint()); otherwise one sentence saying they are stale
// and the command that retrains them.
std::string policyStaleness(const PretrainedPolicyInfo& info);

} // namespace shardlab::rl
