// PRIVATE to core/rl: included only by its .cpp files (policy_net.cpp, ppo_agent.cpp),
// never by a public header, so no LibTorch type leaves the RL library.
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

#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rl/ppo_agent.h"
#include "search/search_space.h"

namespace shardlab::rl::net {

constexpr int kTokenBuckets = 2048; // hashed (slot, value) names
constexpr int kSlotBuckets = 256;   // hashed slot names
constexpr int kKindBuckets = 32;    // hashed slot-kind names: a new kind gets its own row
constexpr int kValueFeatures = 27;  // what a value means (valueFeatures in policy_net.cpp)
constexpr int kMaxElite = 16;       // rank embeddings (PpoOptions::elite's upper bound)
constexpr int kProximity = 3;       // copy features: same value, one step away, two steps away
constexpr float kMaskedLogit = -1e9f;

// A search space seen through names: what the network needs of it.
struct SpaceLayout {
    int slots = 0, widest = 0;
    std::vector<int> count;           // values per slot
    std::vector<std::uint8_t> ordered; // per slot
    torch::Tensor tokenIndex;  // [S, V] long: bucket of (slot name, value name); 0 where padded
    torch::Tensor features;    // [S, V, kValueFeatures] float: what each value means
    torch::Tensor kind;        // [S] long: bucket of the slot kind's name
    torch::Tensor slotIndex;   // [S] long: bucket of the slot's name
};
SpaceLayout makeLayout(const SearchSpace& space);
// A slot kind's name: its hashed row in kind_table is keyed by it, not by the enum's value.
const char* kindName(SlotKind k);

struct EliteAttentionImpl : torch::nn::Module {
    EliteAttentionImpl(int d, int heads);
    struct Memory {
        torch::Tensor keys, values; // [H, M, dh]
        torch::Tensor bias;         // [M]
    };
    Memory project(const torch::Tensor& memory, const torch::Tensor& present);
    torch::Tensor forward(const torch::Tensor& query, const Memory& mem); // [B, L, d] -> [B, L, d]
    torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
    int m_heads, m_dh;
};
TORCH_MODULE(EliteAttention);

struct PolicyNetImpl : torch::nn::Module {
    PolicyNetImpl(int d, int heads, float copyInit);
    torch::Tensor decoder(const torch::Tensor& x);

    int hidden, heads;
    torch::nn::Linear featureIn{nullptr}, rewardIn{nullptr}, anchorKey{nullptr}, anchorIn{nullptr},
        decoderIn{nullptr}, decoderOut{nullptr}, valueIn{nullptr}, valueOut{nullptr};
    torch::nn::Embedding tokenTable{nullptr}, outTable{nullptr}, outBiasTable{nullptr}, slotTable{nullptr},
        copyTable{nullptr}, kindTable{nullptr};
    torch::nn::LayerNorm eliteNorm{nullptr};
    EliteAttention contextAttention{nullptr}, slotAttention{nullptr};
    torch::Tensor rankEmbedding, noEliteToken;
};
TORCH_MODULE(PolicyNet);

// The elite history as tensors, frozen for one rollout so that the PPO ratio compares the
// same conditional distributions.
struct EliteSnapshot {
    torch::Tensor choice;    // [T', S] long: value index per slot
    torch::Tensor reward;    // [T', 1]
    torch::Tensor present;   // [M] bool (the no-elite place is always present)
    torch::Tensor proximity; // [M, S, V, kProximity]
    int count = 0;
    double scratch = 0;      // least share of samples drawn without an anchor elite
};
EliteSnapshot makeSnapshot(const SpaceLayout& L, const std::vector<EliteEntry>& elites, int memoryElites,
                           double scratch);

// What the network derives from the scenario, the space and the elites, once per batch.
struct Context {
    torch::Tensor context;      // [1, 1, d]
    torch::Tensor anchorLogits; // [M], masked where no elite is present
    torch::Tensor anchorProb;   // [M]: softmax mixed with the from-scratch floor
    torch::Tensor anchorInput;  // [M, d]
    torch::Tensor copy;         // [M, S, V]
    torch::Tensor tokens;       // [S, V, d]: embeddings of every (slot, value)
    torch::Tensor slotInput;    // [S, d]: the slots' own embeddings
    torch::Tensor outW;         // [S, V, d]
    torch::Tensor outB;         // [S, V]
    torch::Tensor attention;    // [M]: the context's attention over the memory (mean of heads)
    EliteAttentionImpl::Memory memory;
};
Context encode(PolicyNet& net, const SpaceLayout& L, const torch::Tensor& features, const EliteSnapshot& s,
               int memoryElites);

// Log-probabilities [B] and entropies [B] of given samples (teacher forcing), each under
// the sampling temperature it was drawn at ([B]; undefined = 1): the value logits are
// divided by it (the anchor's are not).
std::pair<torch::Tensor, torch::Tensor> logProb(PolicyNet& net, const SpaceLayout& L, const Context& c,
                                                const torch::Tensor& anchors, const torch::Tensor& actions,
                                                const torch::Tensor& mask, const torch::Tensor& temperature = {});

// One batch of samples: the anchor (memory place) and the slot choices of each.
struct Batch {
    std::vector<std::vector<int>> choices;
    std::vector<std::int64_t> anchors;
    std::vector<std::uint8_t> masks; // [B][S][V] allowed values, as the sampler saw them
    std::vector<float> temperature;  // [B]
    void append(const Batch& o);
    void clear();
};

// Decodes n samples: the anchor, then the slots in order (each mask depends on the earlier
// choices). Greedy: argmax everywhere. The anchor distribution and the first sample's
// per-slot value probabilities go to `anchorProbs` and `probs` if given.
Batch decode(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, int n, bool greedy,
             std::mt19937_64& rng, std::vector<double>* anchorProbs, std::vector<std::vector<double>>* probs,
             float temperature = 1.0f);

// Decodes n samples near `choice` (an elite's slot values, at memory place `place`): each
// keeps choice's values but at one or two free slots, drawn at random, where the policy
// draws a value other than choice's (given the slots before it; a later slot whose value
// the mask no longer allows is drawn from the policy too); one sample in three instead
// changes one slot and draws every later slot from the policy given the change (values
// that only pay together move in one step). Exploration from an elite that stays the
// policy's own proposal: the free slots' values are the policy's choices.
Batch decodeNear(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, int place,
                 const std::vector<int>& choice, int n, std::mt19937_64& rng, float temperature = 1.0f);

// Teacher-forcing masks of a given choice path: [S, V] bytes.
std::vector<std::uint8_t> pathMask(const SearchSpace& space, const SpaceLayout& L, const std::vector<int>& choice);

// Weights: a small binary file (docs/ppo.md, "The weights file"). Loading matches
// parameters by name: a parameter of the network the file lacks keeps its initial value and
// one the file has that the network lacks is ignored (both listed in `notes`), so a network
// grown by a part still loads what it shares; a shape that differs, damaged or non-finite
// values are errors naming the parameter.
std::string saveWeights(PolicyNet& net, const std::string& metadataJson);
bool loadWeights(PolicyNet& net, const std::string& bytes, std::string& error, std::string* notes = nullptr);

} // namespace shardlab::rl::net
