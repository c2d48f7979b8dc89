// The only translation unit of ShardLab that includes LibTorch (compile cost ~30 s).
// Architecture, decoding and update rules are explained in docs/ppo.md.
#include "rl/ppo_agent.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>

#include "search/algorithms.h" // random01: the seeded draw the other searches use

namespace shardlab::rl {

namespace {

using torch::indexing::Slice;

constexpr float kMaskedLogit = -1e9f; // not -inf: 0 x log(0) must stay 0 in the entropy
constexpr int kProximity = 3;         // copy features: same value, one step away, two steps away

// LibTorch's default generator is process-wide.
std::mutex& torchGlobalsMutex()
{
    static std::mutex m;
    return m;
}

// Runs `f`, turning a LibTorch error into std::runtime_error with its first line, so no
// c10 type leaves this file (the search loop reports it; nothing crashes). LibTorch's
// allocation failures become std::bad_alloc: runSearch reports those as memory running
// out and keeps the best plan found so far.
template <typename F>
auto guarded(F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (const c10::Error& e) {
        const std::string what = e.what();
        if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || what.find("not enough memory") != std::string::npos)
            throw std::bad_alloc();
        throw std::runtime_error("LibTorch: " + what.substr(0, what.find('\n')));
    }
}

// Inverse-CDF draw over the allowed entries of `p` only: a masked entry is never drawn,
// whatever the float rounding of its probability. -1 when nothing is allowed.
int drawAllowed(const float* p, const std::uint8_t* allowed, int n, std::mt19937_64& rng)
{
    double total = 0;
    for (int v = 0; v < n; ++v)
        total += allowed[v] ? p[v] : 0.0;
    double u = random01(rng) * total;
    int pick = -1;
    for (int v = 0; v < n; ++v) {
        if (!allowed[v])
            continue;
        pick = v;
        u -= p[v];
        if (u < 0)
            break;
    }
    return pick;
}

int argmaxAllowed(const float* p, const std::uint8_t* allowed, int n)
{
    int pick = -1;
    for (int v = 0; v < n; ++v)
        if (allowed[v] && (pick < 0 || p[v] > p[pick]))
            pick = v;
    return pick;
}

struct AttentionMemory {
    torch::Tensor keys, values; // [H, M, dh]
    torch::Tensor bias;         // [M]: 0, or kMaskedLogit for empty elite places
};

// Multi-head attention of many queries over a small memory (the elite history) shared by
// the whole batch: the memory is projected once per batch, and batch and query positions
// are folded into one matrix per head (a few large products instead of B x H tiny ones,
// which LibTorch's CPU bmm handles slowly). torch::nn::MultiheadAttention would
// re-project the memory on every call of the slot loop.
struct EliteAttentionImpl : torch::nn::Module {
    EliteAttentionImpl(int d, int heads) : m_heads(heads), m_dh(d / heads)
    {
        q = register_module("q", torch::nn::Linear(d, d));
        k = register_module("k", torch::nn::Linear(d, d));
        v = register_module("v", torch::nn::Linear(d, d));
        o = register_module("o", torch::nn::Linear(d, d));
    }

    AttentionMemory project(const torch::Tensor& memory, const torch::Tensor& present)
    {
        const int64_t m = memory.size(0);
        AttentionMemory out;
        out.keys = k->forward(memory).view({m, m_heads, m_dh}).transpose(0, 1);
        out.values = v->forward(memory).view({m, m_heads, m_dh}).transpose(0, 1);
        out.bias = torch::zeros({m}).masked_fill(present.logical_not(), kMaskedLogit);
        return out;
    }

    // query [B, L, d] -> [B, L, d].
    torch::Tensor forward(const torch::Tensor& query, const AttentionMemory& mem)
    {
        const int64_t b = query.size(0), l = query.size(1);
        const auto qh = q->forward(query).view({b * l, m_heads, m_dh}).transpose(0, 1); // [H, BL, dh]
        const auto scores = torch::bmm(qh, mem.keys.transpose(1, 2)) / std::sqrt(double(m_dh)) + mem.bias;
        const auto ctx = torch::bmm(torch::softmax(scores, -1), mem.values); // [H, BL, dh]
        return o->forward(ctx.transpose(0, 1).reshape({b, l, m_heads * m_dh}));
    }

    torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
    int m_heads, m_dh;
};
TORCH_MODULE(EliteAttention);

// The policy and value network. Sizes: S slots, V values of the widest slot, M = 1 + T
// memory places (a learned "no elite" token first, then the elites), d hidden.
struct PolicyNetImpl : torch::nn::Module {
    PolicyNetImpl(int slots, int flatValues, int elites, int features, int d, int heads, float copyInit)
    {
        featureIn = register_module("feature_in", torch::nn::Linear(features, d));
        // Embedding of every (slot, value) pair: elite tokens and the decoder's prefix.
        valueEmbedding = register_module("value_embedding", torch::nn::Embedding(flatValues, d));
        slotPosition = register_parameter("slot_position", torch::randn({slots, d}) * 0.1);
        rankEmbedding = register_parameter("rank_embedding", torch::randn({std::max(1, elites), d}) * 0.1);
        noEliteToken = register_parameter("no_elite", torch::randn({1, d}) * 0.1);
        rewardIn = register_module("reward_in", torch::nn::Linear(1, d));
        eliteNorm = register_module("elite_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
        contextAttention = register_module("context_attention", EliteAttention(d, heads));
        slotAttention = register_module("slot_attention", EliteAttention(d, heads));
        anchorKey = register_module("anchor_key", torch::nn::Linear(d, d));
        // Zero: the anchor starts uniform over "from scratch" and the elites present.
        torch::nn::init::zeros_(anchorKey->weight);
        torch::nn::init::zeros_(anchorKey->bias);
        anchorIn = register_module("anchor_in", torch::nn::Linear(d, d));
        decoderIn = register_module("decoder_in", torch::nn::Linear(d, d));
        decoderOut = register_module("decoder_out", torch::nn::Linear(d, d));
        outEmbedding = register_parameter("out_embedding", torch::randn({flatValues, d}) * 0.05);
        outBias = register_parameter("out_bias", torch::zeros({flatValues}));
        // Copy strength per slot for: the anchor's value, one and two steps from it on
        // ordered slots. Starts strong, so an untrained policy proposes mutations of its
        // anchor elite, a few slots at a time (docs/ppo.md).
        copyScale = register_parameter("copy_scale",
                                       torch::tensor({copyInit, copyInit / 4, copyInit / 13}).repeat({slots, 1}));
        valueHidden = register_module("value_hidden", torch::nn::Linear(d, d));
        valueOut = register_module("value_out", torch::nn::Linear(d, 1));
        // Rewards are normalized so that the Megatron plan scores 1: start the estimate there.
        torch::nn::init::constant_(valueOut->bias, 1.0);
    }

    // The decoder state of a slot from x = context + anchor + position + prefix sum of
    // the earlier choices' embeddings (a MADE-style autoregressive conditioner).
    torch::Tensor decoder(const torch::Tensor& x) { return x + decoderOut->forward(torch::relu(decoderIn->forward(x))); }

    torch::nn::Linear featureIn{nullptr}, rewardIn{nullptr}, anchorKey{nullptr}, anchorIn{nullptr},
        decoderIn{nullptr}, decoderOut{nullptr}, valueHidden{nullptr}, valueOut{nullptr};
    torch::nn::Embedding valueEmbedding{nullptr};
    torch::nn::LayerNorm eliteNorm{nullptr};
    EliteAttention contextAttention{nullptr}, slotAttention{nullptr};
    torch::Tensor slotPosition, rankEmbedding, noEliteToken, outEmbedding, outBias, copyScale;
};
TORCH_MODULE(PolicyNet);

// The elite history as tensors, frozen for one rollout so that the PPO ratio compares
// the same conditional distributions.
struct EliteSnapshot {
    torch::Tensor flatIndex; // [T', S] long: (slot, value) indices into the embeddings
    torch::Tensor reward;    // [T', 1]
    torch::Tensor present;   // [M] bool (the no-elite place is always present)
    torch::Tensor proximity; // [M, S, V, kProximity]
    int count = 0;           // T' elites present
    double scratch = 0;      // least share of samples drawn without an anchor elite
};

// What the network derives from the scenario and the elites, once per batch.
struct Context {
    torch::Tensor context;      // [1, 1, d]
    torch::Tensor value;        // scalar
    torch::Tensor anchorLogits; // [M], masked where no elite is present
    torch::Tensor anchorProb;   // [M]: softmax mixed with the from-scratch floor
    torch::Tensor anchorInput;  // [M, d]: decoder input of each anchor
    torch::Tensor copy;         // [M, S, V]: logits each anchor adds to each slot's values
    AttentionMemory memory;     // for the slot attention
};

// One batch of samples: the anchor (memory place) and the slot choices of each.
struct Batch {
    std::vector<std::vector<int>> choices;
    std::vector<std::int64_t> anchors;
    std::vector<std::uint8_t> masks; // [B][S][V] allowed values, as the sampler saw them

    void append(const Batch& o)
    {
        choices.insert(choices.end(), o.choices.begin(), o.choices.end());
        anchors.insert(anchors.end(), o.anchors.begin(), o.anchors.end());
        masks.insert(masks.end(), o.masks.begin(), o.masks.end());
    }
    void clear()
    {
        choices.clear();
        anchors.clear();
        masks.clear();
    }
};

} // namespace

struct PpoAgent::Impl {
    const SearchSpace& space;
    PpoOptions options;
    int slots = 0, widest = 0, flatValues = 0, memoryPlaces = 0;
    std::vector<int> offset, count;
    torch::Tensor offsets;    // [S] long
    torch::Tensor valueIndex; // [S, V] long: flat index (0 where padded)
    torch::Tensor features;   // [1, 1, F]
    PolicyNet net{nullptr};
    std::unique_ptr<torch::optim::Adam> adam;
    std::mt19937_64 rng;
    std::vector<EliteEntry> elites;
    double scratch = 0;
    int previousThreads = 1;

    EliteSnapshot snapshot; // of the pending rollout
    Batch pending;          // every sample since the last update
    Batch latest;           // the last sample() call

    Impl(const SearchSpace& sp, const std::vector<float>& feats, const PpoOptions& o, std::uint64_t seed)
        : space(sp), options(o), rng(seed)
    {
        slots = space.slotCount();
        for (const Slot& s : space.slots()) {
            offset.push_back(flatValues);
            count.push_back(static_cast<int>(s.values.size()));
            flatValues += count.back();
            widest = std::max(widest, count.back());
        }
        memoryPlaces = 1 + options.elite;
        offsets = torch::tensor(std::vector<std::int64_t>(offset.begin(), offset.end()), torch::kLong);
        std::vector<std::int64_t> idx(static_cast<size_t>(slots) * widest, 0);
        for (int k = 0; k < slots; ++k)
            for (int v = 0; v < count[k]; ++v)
                idx[static_cast<size_t>(k) * widest + v] = offset[k] + v;
        valueIndex = torch::tensor(idx, torch::kLong).view({slots, widest});
        std::vector<float> f(feats);
        f.resize(kScenarioFeatures, 0.0f);
        features = torch::tensor(f).view({1, 1, kScenarioFeatures});

        std::lock_guard<std::mutex> lock(torchGlobalsMutex());
        torch::manual_seed(seed);
        net = PolicyNet(slots, flatValues, options.elite, kScenarioFeatures, options.hidden, options.heads,
                        static_cast<float>(options.copyInit));
        adam = std::make_unique<torch::optim::Adam>(net->parameters(),
                                                    torch::optim::AdamOptions(options.learningRate));
    }

    EliteSnapshot makeSnapshot() const
    {
        EliteSnapshot s;
        s.count = std::min<int>(options.elite, static_cast<int>(elites.size()));
        s.scratch = scratch;
        std::vector<std::int64_t> flat;
        std::vector<float> rewards;
        std::vector<float> prox(static_cast<size_t>(memoryPlaces) * slots * widest * kProximity, 0.0f);
        std::vector<std::int64_t> present(memoryPlaces, 0);
        present[0] = 1;
        for (int i = 0; i < s.count; ++i) {
            present[1 + i] = 1;
            rewards.push_back(static_cast<float>(elites[i].reward));
            for (int k = 0; k < slots; ++k) {
                const int a = elites[i].choice[k];
                flat.push_back(offset[k] + a);
                for (int v = 0; v < count[k]; ++v) {
                    const int dist = std::abs(v - a);
                    const int c = dist == 0 ? 0 : (space.isOrdered(k) && dist <= 2 ? dist : -1);
                    if (c >= 0)
                        prox[((static_cast<size_t>(1 + i) * slots + k) * widest + v) * kProximity + c] = 1.0f;
                }
            }
        }
        s.flatIndex = torch::tensor(flat, torch::kLong).view({s.count, slots});
        s.reward = torch::tensor(rewards, torch::kFloat).view({s.count, 1});
        s.present = torch::tensor(present, torch::kLong).to(torch::kBool);
        s.proximity = torch::tensor(prox).view({memoryPlaces, slots, widest, kProximity});
        return s;
    }

    Context encode(const EliteSnapshot& s)
    {
        const int d = options.hidden;
        torch::Tensor memory = net->noEliteToken;
        if (options.elite > 0) {
            torch::Tensor tokens = torch::zeros({options.elite, d});
            if (s.count > 0) {
                auto t = net->valueEmbedding->forward(s.flatIndex).sum(1) + net->rewardIn->forward(s.reward)
                    + net->rankEmbedding.index({Slice(0, s.count)});
                t = net->eliteNorm->forward(t);
                tokens = s.count == options.elite ? t : torch::cat({t, tokens.index({Slice(s.count)})}, 0);
            }
            memory = torch::cat({memory, tokens}, 0); // [M, d]
        }
        Context c;
        const auto query = torch::tanh(net->featureIn->forward(features)); // [1, 1, d]
        c.context = query + net->contextAttention->forward(query, net->contextAttention->project(memory, s.present));
        // Detached: the value head learns from the policy's features without steering them.
        c.value = net->valueOut->forward(torch::relu(net->valueHidden->forward(c.context.detach()))).squeeze();
        c.anchorLogits = torch::matmul(net->anchorKey->forward(memory), c.context.view({d})) / std::sqrt(double(d));
        c.anchorLogits = c.anchorLogits.masked_fill(s.present.logical_not(), kMaskedLogit);
        // At least the snapshot's scratch share of the samples start from scratch:
        // exploration the anchor's learning cannot switch off.
        const double floor = s.count > 0 ? s.scratch : 0.0;
        c.anchorProb = torch::softmax(c.anchorLogits, 0) * (1 - floor);
        if (floor > 0) {
            const auto noElite = torch::one_hot(torch::tensor(std::int64_t(0)), memoryPlaces).to(torch::kFloat);
            c.anchorProb = c.anchorProb + noElite * floor;
        }
        c.anchorInput = net->anchorIn->forward(memory);
        c.copy = (s.proximity * net->copyScale.unsqueeze(1)).sum(-1);
        c.memory = net->slotAttention->project(memory, s.present);
        return c;
    }

    // Log-probabilities [B] and entropies [B] of given samples (teacher forcing).
    std::pair<torch::Tensor, torch::Tensor> logProb(const Context& c, const torch::Tensor& anchors,
                                                    const torch::Tensor& actions, const torch::Tensor& mask)
    {
        const int64_t b = actions.size(0);
        const auto anchorLogp = torch::log(c.anchorProb + 1e-12);
        const auto anchorEntropy = -(c.anchorProb * anchorLogp).sum();
        // Exclusive prefix sums of the choices' embeddings: slot k sees slots 0..k-1.
        const auto e = net->valueEmbedding->forward((actions + offsets).index({Slice(), Slice(0, slots - 1)}));
        const auto prefix = torch::cat({torch::zeros({b, 1, options.hidden}), e.cumsum(1)}, 1);
        const auto h = net->decoder(prefix + net->slotPosition + c.context
                                    + c.anchorInput.index_select(0, anchors).unsqueeze(1));
        const auto z = h + net->slotAttention->forward(h, c.memory); // [B, S, d]
        const auto outW = net->outEmbedding.index({valueIndex});    // [S, V, d]
        auto logits = torch::einsum("bsd,svd->bsv", std::vector<torch::Tensor>{z, outW})
            + net->outBias.index({valueIndex}) + c.copy.index_select(0, anchors);
        const auto logp = torch::log_softmax(logits.masked_fill(mask.logical_not(), kMaskedLogit), -1);
        const auto chosen = logp.gather(2, actions.unsqueeze(2)).squeeze(2).sum(1) + anchorLogp.index_select(0, anchors);
        const auto entropy = -(logp.exp() * logp).sum({1, 2}) + anchorEntropy;
        return {chosen, entropy};
    }

    // Decodes n samples: the anchor, then the slots in order (each mask depends on the
    // earlier choices). Greedy: argmax everywhere. The anchor distribution and the first
    // sample's per-slot value probabilities go to `anchorProbs` and `probs` if given.
    Batch decode(const Context& c, int n, bool greedy, std::vector<double>* anchorProbs,
                 std::vector<std::vector<double>>* probs)
    {
        torch::NoGradGuard noGrad;
        Batch out;
        out.choices.assign(n, std::vector<int>(slots, 0));
        out.masks.assign(static_cast<size_t>(n) * slots * widest, 0);
        {
            const auto pa = c.anchorProb.contiguous();
            const float* p = pa.data_ptr<float>();
            std::vector<std::uint8_t> present(memoryPlaces);
            for (int m = 0; m < memoryPlaces; ++m)
                present[m] = c.anchorLogits[m].item<float>() > kMaskedLogit / 2;
            for (int i = 0; i < n; ++i)
                out.anchors.push_back(std::max(0, greedy ? argmaxAllowed(p, present.data(), memoryPlaces)
                                                         : drawAllowed(p, present.data(), memoryPlaces, rng)));
            if (anchorProbs)
                anchorProbs->assign(p, p + memoryPlaces);
        }
        const auto anchors = torch::tensor(out.anchors, torch::kLong);
        const auto base = c.context.view({1, options.hidden}) + c.anchorInput.index_select(0, anchors); // [n, d]
        const auto copy = c.copy.index_select(0, anchors);                                             // [n, S, V]
        const auto outW = net->outEmbedding.index({valueIndex});                                      // [S, V, d]
        const auto outB = net->outBias.index({valueIndex});                                           // [S, V]
        auto prefix = torch::zeros({n, options.hidden});
        std::vector<std::int64_t> chosen(n, 0);
        const int64_t rowStride = static_cast<int64_t>(slots) * widest;
        for (int k = 0; k < slots; ++k) {
            const auto h = net->decoder(prefix + net->slotPosition[k] + base).view({n, 1, options.hidden});
            const auto z = (h + net->slotAttention->forward(h, c.memory)).view({n, options.hidden});
            const auto logits = torch::matmul(z, outW[k].t()) + outB[k] + copy.select(1, k);
            for (int i = 0; i < n; ++i)
                space.mask(k, out.choices[i].data(), out.masks.data() + i * rowStride + k * widest);
            const auto allowed = torch::from_blob(out.masks.data() + k * widest, {n, widest}, {rowStride, 1},
                                                  torch::kUInt8)
                                     .to(torch::kBool);
            const auto p = torch::softmax(logits.masked_fill(allowed.logical_not(), kMaskedLogit), -1).contiguous();
            const float* pp = p.data_ptr<float>();
            for (int i = 0; i < n; ++i) {
                const float* row = pp + static_cast<size_t>(i) * widest;
                const std::uint8_t* ok = out.masks.data() + i * rowStride + k * widest;
                const int pick = greedy ? argmaxAllowed(row, ok, count[k]) : drawAllowed(row, ok, count[k], rng);
                out.choices[i][k] = std::max(pick, 0); // pick < 0 only if the slot has no allowed value
                chosen[i] = offset[k] + out.choices[i][k];
                if (probs)
                    probs->emplace_back(row, row + count[k]);
            }
            prefix = prefix + net->valueEmbedding->forward(torch::tensor(chosen, torch::kLong));
        }
        return out;
    }

    // The value head's loss against the rewards of the learning samples: with
    // topFraction < 1 the pinball loss of the (1 - topFraction) quantile, so the head
    // learns the reward only the batch's best samples beat; otherwise the squared error
    // of the mean reward (plain PPO).
    torch::Tensor valueLoss(const torch::Tensor& value, const torch::Tensor& rewards) const
    {
        const auto err = rewards - value;
        if (options.topFraction >= 1)
            return err.pow(2).mean();
        const double q = 1 - options.topFraction;
        return torch::max(err * q, err * (q - 1)).mean();
    }

    // The pending rollout's samples to learn from, as tensors, with their advantages.
    struct LearningSet {
        torch::Tensor allRewards; // every flagged sample's reward (undefined: none flagged)
        double baseline = 0;
        int n = 0;                // samples in the policy loss
        torch::Tensor actions, anchors, mask, oldLogp, advantage;
    };
    LearningSet learningSet(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn);
    PpoUpdateMetrics update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn);
};

PpoAgent::Impl::LearningSet PpoAgent::Impl::learningSet(const std::vector<double>& rewards,
                                                         const std::vector<std::uint8_t>& learn)
{
    LearningSet ls;
    const int total = std::min<int>(static_cast<int>(rewards.size()), static_cast<int>(pending.choices.size()));
    std::vector<int> flagged; // the samples to learn from (all when `learn` is empty)
    std::vector<float> all;
    for (int i = 0; i < total; ++i)
        if (learn.empty() || (i < static_cast<int>(learn.size()) && learn[i])) {
            flagged.push_back(i);
            all.push_back(static_cast<float>(rewards[i]));
        }
    if (flagged.empty())
        return ls;
    ls.allRewards = torch::tensor(all);
    // The baseline. Plain PPO (topFraction = 1): the value head's estimate for this
    // rollout's elite history. Risk-seeking: the rollout's empirical (1 - topFraction)
    // quantile, and only samples at or above it take part in the policy loss (the rest
    // are neither pushed up nor down). The value head, trained on the quantile's pinball
    // loss, lagged the improving policy too much to serve there (docs/ppo.md).
    if (options.topFraction < 1) {
        std::vector<float> sorted(all);
        std::sort(sorted.begin(), sorted.end(), std::greater<float>());
        ls.baseline = sorted[std::max(1, static_cast<int>(std::ceil(options.topFraction * sorted.size()))) - 1];
    } else {
        torch::NoGradGuard noGrad;
        ls.baseline = encode(snapshot).value.item<double>();
    }
    std::vector<std::int64_t> act, anc;
    std::vector<std::uint8_t> maskBytes;
    std::vector<float> r;
    const size_t stride = static_cast<size_t>(slots) * widest;
    for (size_t j = 0; j < flagged.size(); ++j) {
        if (options.topFraction < 1 && all[j] < ls.baseline)
            continue;
        const int i = flagged[j];
        act.insert(act.end(), pending.choices[i].begin(), pending.choices[i].end());
        anc.push_back(pending.anchors[i]);
        maskBytes.insert(maskBytes.end(), pending.masks.begin() + i * stride, pending.masks.begin() + (i + 1) * stride);
        r.push_back(all[j]);
    }
    ls.n = static_cast<int>(r.size());
    ls.actions = torch::tensor(act, torch::kLong).view({ls.n, slots});
    ls.anchors = torch::tensor(anc, torch::kLong);
    ls.mask = torch::from_blob(maskBytes.data(), {ls.n, slots, widest}, torch::kUInt8).to(torch::kBool);
    if (ls.n > 0) {
        torch::NoGradGuard noGrad;
        ls.oldLogp = logProb(encode(snapshot), ls.anchors, ls.actions, ls.mask).first;
        // Standardized: the step size does not depend on the reward's scale.
        auto a = torch::tensor(r) - static_cast<float>(ls.baseline);
        if (ls.n > 1)
            a = options.topFraction < 1 ? a / (a.std(false) + 1e-8) : (a - a.mean()) / (a.std(false) + 1e-8);
        ls.advantage = a;
    }
    return ls;
}

PpoUpdateMetrics PpoAgent::Impl::update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn)
{
    const LearningSet ls = learningSet(rewards, learn);
    pending.clear();
    PpoUpdateMetrics m;
    if (!ls.allRewards.defined())
        return m;
    const int n = ls.n;
    const double eps = options.clipRange;
    const int mbSize = std::max(1, (n + options.minibatches - 1) / options.minibatches);
    std::vector<std::int64_t> order(n);
    int policySteps = 0;
    for (int epoch = 0; epoch < options.epochs; ++epoch) {
        std::iota(order.begin(), order.end(), 0);
        for (int i = n - 1; i > 0; --i) // Fisher-Yates with the seeded engine: same order everywhere
            std::swap(order[i], order[rng() % static_cast<std::uint64_t>(i + 1)]);
        // With no sample above the baseline the step trains the value head alone (an
        // empty minibatch never reaches the policy loss).
        for (int start = 0; start == 0 || start < n; start += mbSize) {
            const int len = std::max(0, std::min(mbSize, n - start));
            const Context c = encode(snapshot);
            const auto vLoss = valueLoss(c.value, ls.allRewards);
            torch::Tensor loss = options.valueCoef * vLoss;
            torch::Tensor policyLoss, entropyMean, ratio;
            if (len > 0) {
                const auto idx = torch::tensor(
                    std::vector<std::int64_t>(order.begin() + start, order.begin() + start + len), torch::kLong);
                auto [logp, entropy] =
                    logProb(c, ls.anchors.index({idx}), ls.actions.index({idx}), ls.mask.index({idx}));
                const auto adv = ls.advantage.index({idx});
                ratio = torch::exp(logp - ls.oldLogp.index({idx}));
                policyLoss = -torch::min(ratio * adv, torch::clamp(ratio, 1 - eps, 1 + eps) * adv).mean();
                entropyMean = entropy.mean();
                loss = loss + policyLoss - options.entropyCoef * entropyMean;
            }
            adam->zero_grad();
            loss.backward();
            const double gradNorm = torch::nn::utils::clip_grad_norm_(net->parameters(), options.maxGradNorm);
            adam->step();

            torch::NoGradGuard noGrad;
            m.valueLoss += vLoss.item<double>();
            m.gradNorm += gradNorm;
            ++m.minibatches;
            if (len > 0) {
                m.policyLoss += policyLoss.item<double>();
                m.entropy += entropyMean.item<double>();
                m.approxKl += ((ratio - 1) - torch::log(ratio)).mean().item<double>();
                m.clipFraction += ((ratio - 1).abs() > eps).to(torch::kFloat).mean().item<double>();
                ++policySteps;
            }
        }
    }
    m.valueLoss /= std::max(1, m.minibatches);
    m.gradNorm /= std::max(1, m.minibatches);
    if (policySteps > 0) {
        m.policyLoss /= policySteps;
        m.entropy /= policySteps;
        m.approxKl /= policySteps;
        m.clipFraction /= policySteps;
    }
    m.samples = n;
    m.baseline = ls.baseline;
    return m;
}

PpoAgent::PpoAgent(const SearchSpace& space, const std::vector<float>& scenarioFeatures, const PpoOptions& options,
                   std::uint64_t seed)
{
    guarded([&] {
        m_impl = std::make_unique<Impl>(space, scenarioFeatures, options, seed);
        m_impl->previousThreads = torch::get_num_threads();
        torch::set_num_threads(std::max(1, options.threads));
        return 0;
    });
}

PpoAgent::~PpoAgent()
{
    if (m_impl)
        torch::set_num_threads(std::max(1, m_impl->previousThreads));
}

void PpoAgent::setElites(const std::vector<EliteEntry>& elites)
{
    Impl& d = *m_impl;
    d.elites.clear();
    for (const EliteEntry& e : elites)
        if (static_cast<int>(e.choice.size()) == d.slots && static_cast<int>(d.elites.size()) < d.options.elite)
            d.elites.push_back(e);
}

void PpoAgent::setScratchShare(double share) { m_impl->scratch = std::clamp(share, 0.0, 1.0); }

const std::vector<std::vector<int>>& PpoAgent::sample(int n)
{
    return guarded([&]() -> const std::vector<std::vector<int>>& {
        Impl& d = *m_impl;
        if (d.pending.choices.empty())
            d.snapshot = d.makeSnapshot();
        torch::NoGradGuard noGrad;
        d.latest = d.decode(d.encode(d.snapshot), std::max(1, n), false, nullptr, nullptr);
        d.pending.append(d.latest);
        return d.latest.choices;
    });
}

PpoUpdateMetrics PpoAgent::update(const std::vector<double>& rewards, const std::vector<std::uint8_t>& learn)
{
    return guarded([&] { return m_impl->update(rewards, learn); });
}

GreedyView PpoAgent::greedy()
{
    return guarded([&] {
        Impl& d = *m_impl;
        torch::NoGradGuard noGrad;
        GreedyView g;
        const Batch b = d.decode(d.encode(d.makeSnapshot()), 1, true, &g.anchorProbabilities, &g.probabilities);
        g.choice = b.choices[0];
        g.anchor = static_cast<int>(b.anchors[0]);
        g.confidence = g.anchorProbabilities[g.anchor];
        for (int k = 0; k < d.slots; ++k)
            g.confidence *= g.probabilities[k][g.choice[k]];
        return g;
    });
}

} // namespace shardlab::rl
