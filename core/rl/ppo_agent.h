// Our reconstruction of the Learn-to-Shard policy and its PPO update (docs/ppo.md), behind
// a plain interface: only core/rl/policy_net.cpp includes LibTorch.
//
// Threading: an agent is used from one thread. Construction seeds LibTorch's global
// generator under a process-wide lock, so agents built concurrently stay deterministic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rl/ppo_options.h"
#include "search/search_space.h"

namespace shardlab::rl {

// Named results of one PPO update (means over its optimizer steps), for plots and reports.
struct PpoUpdateMetrics {
    double policyLoss = 0;   // clipped surrogate, negated
    double entropy = 0;      // nats per plan: the anchor's plus every slot's
    double approxKl = 0;     // E[(r - 1) - log r] between the sampling and the updated policy
    double clipFraction = 0; // share of samples whose ratio left [1 - eps, 1 + eps]
    double gradNorm = 0;     // global gradient norm before clipping
    double baseline = 0;     // what the advantages were taken against: the rollout's reward
                             // quantile (risk-seeking) or mean (plain PPO); no value head
    int samples = 0;         // samples in the policy loss
    int minibatches = 0;     // optimizer steps taken
};

// A plan of the elite history: its slot choices and its normalized reward (1 = Megatron).
struct EliteEntry {
    std::vector<int> choice;
    double reward = 0;
};

// The policy's greedy decoding: per slot the most probable allowed value given the
// greedy choices before it.
struct GreedyView {
    // The anchor: 0 = sample from scratch, i = mutate elite i (1-based); probabilities of
    // every memory place (0 where no elite is present).
    int anchor = 0;
    std::vector<double> anchorProbabilities;
    std::vector<int> choice;
    std::vector<std::vector<double>> probabilities; // per slot, per value (0 where masked)
    // Probability of the greedy decision path: the anchor's times the chosen values'.
    double confidence = 0;
    // The scenario context's attention over the memory places (no-elite token, then the
    // elites; mean over heads): what the policy looks at in the elite history.
    std::vector<double> attention;
};

// Why a weights file cannot be loaded into a policy of these options ("" when it can):
// a bad header, a truncated table, another shape, a value that is not finite. `notes`, if
// given, receives the parameters the file lacks (kept at their initial values) or has extra.
std::string policyWeightsProblem(const std::string& bytes, const PpoOptions& o, std::string* notes = nullptr);

class PpoAgent {
public:
    // `scenarioFeatures`: kScenarioFeatures values (rl::scenarioFeatures). Throws
    // std::runtime_error if LibTorch fails, std::bad_alloc if memory runs out (as do the
    // other members); nothing else escapes.
    PpoAgent(const SearchSpace& space, const std::vector<float>& scenarioFeatures, const PpoOptions& options,
             std::uint64_t seed);
    ~PpoAgent();
    PpoAgent(const PpoAgent&) = delete;
    PpoAgent& operator=(const PpoAgent&) = delete;

    static constexpr int kScenarioFeatures = 16;

    // True when the weights came from the shipped pretrained policy (ppo.pretrained=1).
    bool pretrained() const;
    // How the pretrained weights fit this build: parameters they lack, or a fingerprint
    // that differs from the build's (rl::policyStaleness). "" when they fit.
    const std::string& pretrainedNotes() const;

    // The elite history for the next rollout, best first; entries beyond options.elite
    // and entries whose choice does not have one value per slot are ignored.
    void setElites(const std::vector<EliteEntry>& elites);

    // The least share of the next rollout's samples drawn from scratch rather than as a
    // mutation of an elite (0..1; ignored while the elite history is empty).
    void setScratchShare(double share);

    // The sampling temperature of the next samples (value logits divided by it; 1 = the
    // policy as it is). Each sample's PPO ratio is taken at the temperature it was drawn at.
    void setTemperature(double t);

    // Samples n plans (slot choices) from the policy. Every choice passes the space's
    // masks, so every plan is structurally valid. The plans are appended to the pending
    // rollout until update(); the elite history is frozen at the rollout's first sample
    // so that the PPO ratio compares the same conditional distributions.
    const std::vector<std::vector<int>>& sample(int n);

    // Samples n plans near the best elite (net::Policy::decodeNear: one or two slots redrawn by the
    // policy and the rest kept, or one slot changed and every later one redrawn), appended
    // to the pending rollout like sample()'s; empty while the elite history is. Their
    // anchor is the best elite's place.
    const std::vector<std::vector<int>>& sampleNearBest(int n);

    // The memory place each plan of the last sample() call was drawn from (0 = from
    // scratch, i = a mutation of elite i).
    const std::vector<std::int64_t>& latestAnchors() const;

    // One PPO update on the pending rollout, `rewards[i]` for its sample i in order (a
    // shorter vector uses the first rewards.size() samples). Clears the rollout.
    // `learn[i]` = 0 leaves sample i out of the update (empty: learn from all).
    PpoUpdateMetrics update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn = {});

    // The greedy plan for the current elite history (consumes no randomness).
    GreedyView greedy();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace shardlab::rl
