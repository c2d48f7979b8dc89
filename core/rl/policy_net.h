// PRIVATE to core/rl: included only by its .cpp files, never by a public header. Plain
// C++: LibTorch stays inside policy_net.cpp, the one translation unit that includes it;
// the network, its tensors and its optimizer are behind the opaque Scene, History and
// Policy below.
//
// The Learn-to-Shard policy network, independent of any one search space (docs/ppo.md,
// "A policy that carries across scenarios"): every parameter is keyed by names, not by
// positions. A (slot, value) token is embedded from a hashed table keyed by the slot's name
// and the value's name ("operators.qkv_proj=column", "tensor_parallel=8"), plus, for
// ordered slots, a learned direction per slot kind times log2(value); a slot's own
// embedding and copy strengths are keyed by its name. So the same weights apply to a space
// with other slots, other operator sets or other value lists, and a pretrained policy can be
// loaded into any scenario's search.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rl/ppo_agent.h"
#include "rl/ppo_options.h"
#include "search/search_space.h"

namespace shardlab::rl::net {

constexpr int kTokenBuckets = 2048; // hashed (slot, value) names
constexpr int kSlotBuckets = 256;   // hashed slot names
constexpr int kKindBuckets = 32;    // hashed slot-kind names: a new kind gets its own row
constexpr int kValueFeatures = 27;  // what a value means (describeValue in policy_layout.cpp)
constexpr int kMaxElite = 16;       // rank embeddings (PpoOptions::elite's upper bound)
constexpr int kProximity = 3;       // copy features: same value, one step away, two steps away
constexpr float kMaskedLogit = -1e9f;

// A search space seen through names: what the network reads of it, row-major.
struct SpaceLayout {
    int slots = 0, widest = 0;
    std::vector<int> count;             // values per slot
    std::vector<std::uint8_t> ordered;  // per slot
    std::vector<std::int64_t> tokenIndex; // [S, V]: bucket of (slot name, value name); 0 where padded
    std::vector<float> features;        // [S, V, kValueFeatures]: what each value means
    std::vector<std::int64_t> kind;     // [S]: bucket of the slot kind's name
    std::vector<std::int64_t> slotIndex; // [S]: bucket of the slot's name
};
SpaceLayout makeLayout(const SearchSpace& space);
// A slot kind's name: its hashed row in kind_table is keyed by it, not by the enum's value.
const char* kindName(SlotKind k);

// One batch of samples: the anchor (memory place) and the slot choices of each.
struct Batch {
    std::vector<std::vector<int>> choices;
    std::vector<std::int64_t> anchors;
    std::vector<std::uint8_t> masks; // [B][S][V] allowed values, as the sampler saw them
    std::vector<float> temperature;  // [B]
    void append(const Batch& o);
    void clear();
};

// Teacher-forcing masks of a given choice path: [S, V] bytes.
std::vector<std::uint8_t> pathMask(const SearchSpace& space, const SpaceLayout& L, const std::vector<int>& choice);

// Inverse-CDF draw over the allowed entries of `p` only: a masked entry is never drawn,
// whatever the float rounding of its probability. -1 when nothing is allowed.
int drawAllowed(const float* p, const std::uint8_t* allowed, int n, std::mt19937_64& rng);
int argmaxAllowed(const float* p, const std::uint8_t* allowed, int n);

// Which slots each of n samples near an elite redraws (decodeNear): per sample its free
// slots, and the first slot from which every slot is drawn afresh (slots: none).
struct NearPlan {
    std::vector<std::vector<int>> free;
    std::vector<int> redrawFrom;
};
NearPlan planNear(const SpaceLayout& L, int n, std::mt19937_64& rng);
// Sample i's value at slot k near `choice`: choice's own where k is not free (if the mask
// `ok` still allows it), a policy draw from `row` without choice's value where k is free
// (when another is allowed), -1 where the policy draws as usual (from redrawFrom on, or
// when neither applies). `without` is scratch space of L.widest bytes.
int pickNear(const std::vector<int>& choice, const NearPlan& plan, int i, int k, const SpaceLayout& L,
             const float* row, const std::uint8_t* ok, std::vector<std::uint8_t>& without, std::mt19937_64& rng);

// The first min(memoryElites, elites) elites as the network's memory reads them, flat:
// their choices [count, S], rewards [count], which of the 1 + memoryElites places hold one
// (the no-elite place always), and per place, slot and value whether the value is the
// elite's own, one or two steps from it on an ordered slot [M, S, V, kProximity].
struct EliteArrays {
    int count = 0;
    std::vector<std::int64_t> choice, present;
    std::vector<float> reward, proximity;
};
EliteArrays eliteArrays(const SpaceLayout& L, const std::vector<EliteEntry>& elites, int memoryElites);

// A scenario's search space and features as the network reads them (tensors inside). It
// keeps a pointer to `space`, which must outlive it. A History is movable; a moved-from
// one may only be assigned to or destroyed.
class Scene {
public:
    // `features`: the scenario's kScenarioFeatures values (rl::scenarioFeatures); padded
    // with zeros if shorter.
    Scene(const SearchSpace& space, const std::vector<float>& features);
    ~Scene();
    const SpaceLayout& layout() const;
    struct Data;
    const Data& data() const { return *m_data; }

private:
    std::unique_ptr<Data> m_data;
};

// The elite history frozen for one rollout, so that the PPO ratio compares the same
// conditional distributions: the first `memoryElites` elites, and the least share of
// samples drawn without an anchor elite.
class History {
public:
    History();
    History(const Scene& scene, const std::vector<EliteEntry>& elites, int memoryElites, double scratch);
    ~History();
    History(History&&) noexcept;
    History& operator=(History&&) noexcept;
    int count() const; // elites present
    struct Data;
    const Data& data() const { return *m_data; }

private:
    std::unique_ptr<Data> m_data;
};

// The PPO update's samples, chosen by the agent (its baseline rule): n samples, flat.
struct LearningSamples {
    int n = 0;
    double baseline = 0;
    std::vector<std::int64_t> actions, anchors; // [n * S], [n]
    std::vector<std::uint8_t> masks;            // [n * S * V]
    std::vector<float> temperature, reward;     // [n] each
};

// One imitation example: the optimum `target` (with its teacher-forcing mask, pathMask)
// under an elite history, from every anchor present.
struct ImitationExample {
    const Scene* scene = nullptr;
    const std::vector<int>* target = nullptr;
    const std::vector<std::uint8_t>* targetMask = nullptr;
    std::vector<EliteEntry> elites;
};

// The network's named parameters as plain values, in the network's order.
struct NamedValues {
    std::string name;
    std::vector<float> values;
};

// Sets LibTorch's intra-op threads; returns the previous setting. OpenBLAS keeps a pool of
// its own that this does not cap (the agent caps it, ppo_agent.cpp's capBlasThreads).
int setThreads(int threads);

// The policy network with its optimizer. Every member turns a LibTorch error into
// std::runtime_error and an allocation failure into std::bad_alloc.
class Policy {
public:
    // With a seed, LibTorch's process-wide generator is seeded with it (under a process-wide
    // lock) before the initial parameters are drawn, so the same seed gives the same network.
    Policy(int hidden, int heads, float copyInit, const std::uint64_t* seed);
    ~Policy();
    Policy(const Policy&) = delete;
    Policy& operator=(const Policy&) = delete;

    std::vector<NamedValues> parameters() const;
    // Each parameter's name and value count, in the network's order (no values copied).
    std::vector<std::pair<std::string, size_t>> parameterSizes() const;
    // Copies `values` into the parameter `name` (sizes checked by the caller); false if the
    // network has no such parameter.
    bool assign(const std::string& name, const std::vector<float>& values);
    // Adam over every parameter, for ppoUpdate and imitationStep (which throw
    // std::logic_error without it).
    void makeOptimizer(double learningRate);

    // Decodes n samples: the anchor, then the slots in order (each mask depends on the
    // earlier choices). Greedy: argmax everywhere. The anchor distribution, the first
    // sample's per-slot value probabilities and the scenario context's attention over the
    // memory (mean of heads) go to the pointers given.
    Batch decode(const Scene& scene, const History& h, int n, bool greedy, std::mt19937_64& rng,
                 std::vector<double>* anchorProbs = nullptr, std::vector<std::vector<double>>* probs = nullptr,
                 float temperature = 1.0f, std::vector<double>* attention = nullptr);

    // Decodes n samples near `choice` (an elite's slot values, at memory place `place`): each
    // keeps choice's values but at one or two free slots, drawn at random, where the policy
    // draws a value other than choice's (given the slots before it; a later slot whose value
    // the mask no longer allows is drawn from the policy too); one sample in three instead
    // changes one slot and draws every later slot from the policy given the change (values
    // that only pay together move in one step). Exploration from an elite that stays the
    // policy's own proposal: the free slots' values are the policy's choices.
    Batch decodeNear(const Scene& scene, const History& h, int place, const std::vector<int>& choice, int n,
                     std::mt19937_64& rng, float temperature = 1.0f);

    // The clipped-surrogate PPO update (docs/ppo.md, "The update") on `s`, drawn under `h`:
    // advantages standardized against s.baseline, options.epochs passes of
    // options.minibatches minibatches in an order drawn from `rng`.
    PpoUpdateMetrics ppoUpdate(const Scene& scene, const History& h, const LearningSamples& s,
                               const PpoOptions& options, std::mt19937_64& rng);

    // One Adam step on the mean negative log-likelihood of the examples (gradient norm
    // clipped at 1); returns that mean.
    double imitationStep(const std::vector<ImitationExample>& examples, int memoryElites);
    // The same loss for one example, without a step.
    double imitationLoss(const ImitationExample& example, int memoryElites);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// Weights: a small binary file (docs/ppo.md, "The weights file"). Loading matches
// parameters by name: a parameter of the network the file lacks keeps its initial value and
// one the file has that the network lacks is ignored (both listed in `notes`), so a network
// grown by a part still loads what it shares; a shape that differs, damaged or non-finite
// values are errors naming the parameter.
std::string saveWeights(const Policy& net, const std::string& metadataJson);
bool loadWeights(Policy& net, const std::string& bytes, std::string& error, std::string* notes = nullptr);

} // namespace shardlab::rl::net
