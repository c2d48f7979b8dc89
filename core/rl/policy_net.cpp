// The policy network itself (policy_net.h, docs/ppo.md): its modules, the encoding of a
// scenario and an elite history, sampling, log-probabilities, and the PPO and imitation
// updates. The one LibTorch translation unit of core/rl (compile cost ~30 s): every tensor,
// module and optimizer stays in this file, behind Scene, History and Policy.
#include "rl/policy_net.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <numeric>
#include <stdexcept>

namespace shardlab::rl::net {

using torch::indexing::Slice;

namespace {

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

EliteAttentionImpl::EliteAttentionImpl(int d, int h) : m_heads(h), m_dh(d / h)
{
    q = register_module("q", torch::nn::Linear(d, d));
    k = register_module("k", torch::nn::Linear(d, d));
    v = register_module("v", torch::nn::Linear(d, d));
    o = register_module("o", torch::nn::Linear(d, d));
}

EliteAttentionImpl::Memory EliteAttentionImpl::project(const torch::Tensor& memory, const torch::Tensor& present)
{
    const int64_t m = memory.size(0);
    Memory out;
    out.keys = k->forward(memory).view({m, m_heads, m_dh}).transpose(0, 1);
    out.values = v->forward(memory).view({m, m_heads, m_dh}).transpose(0, 1);
    out.bias = torch::zeros({m}).masked_fill(present.logical_not(), kMaskedLogit);
    return out;
}

// Many queries over a small memory shared by the batch: batch and query positions are
// folded into one matrix per head (a few large products instead of B x H tiny ones).
torch::Tensor EliteAttentionImpl::forward(const torch::Tensor& query, const Memory& mem)
{
    const int64_t b = query.size(0), l = query.size(1);
    const auto qh = q->forward(query).view({b * l, m_heads, m_dh}).transpose(0, 1); // [H, BL, dh]
    const auto scores = torch::bmm(qh, mem.keys.transpose(1, 2)) / std::sqrt(double(m_dh)) + mem.bias;
    const auto ctx = torch::bmm(torch::softmax(scores, -1), mem.values);
    return o->forward(ctx.transpose(0, 1).reshape({b, l, m_heads * m_dh}));
}

PolicyNetImpl::PolicyNetImpl(int d, int h, float copyInit) : hidden(d), heads(h)
{
    featureIn = register_module("feature_in", torch::nn::Linear(PpoAgent::kScenarioFeatures, d));
    tokenTable = register_module("token_table", torch::nn::Embedding(kTokenBuckets, d));
    torch::nn::init::normal_(tokenTable->weight, 0.0, 0.3);
    slotTable = register_module("slot_table", torch::nn::Embedding(kSlotBuckets, d));
    torch::nn::init::normal_(slotTable->weight, 0.0, 0.1);
    kindTable = register_module("kind_table", torch::nn::Embedding(kKindBuckets, d));
    torch::nn::init::normal_(kindTable->weight, 0.0, 0.1);
    valueIn = register_module("value_in", torch::nn::Linear(kValueFeatures, d));
    rankEmbedding = register_parameter("rank_embedding", torch::randn({kMaxElite, d}) * 0.1);
    noEliteToken = register_parameter("no_elite", torch::randn({1, d}) * 0.1);
    rewardIn = register_module("reward_in", torch::nn::Linear(1, d));
    eliteNorm = register_module("elite_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    contextAttention = register_module("context_attention", EliteAttention(d, h));
    slotAttention = register_module("slot_attention", EliteAttention(d, h));
    anchorKey = register_module("anchor_key", torch::nn::Linear(d, d));
    // Zero: the anchor starts uniform over "from scratch" and the elites present.
    torch::nn::init::zeros_(anchorKey->weight);
    torch::nn::init::zeros_(anchorKey->bias);
    anchorIn = register_module("anchor_in", torch::nn::Linear(d, d));
    decoderIn = register_module("decoder_in", torch::nn::Linear(d, d));
    decoderOut = register_module("decoder_out", torch::nn::Linear(d, d));
    outTable = register_module("out_table", torch::nn::Embedding(kTokenBuckets, d));
    torch::nn::init::normal_(outTable->weight, 0.0, 0.05);
    outBiasTable = register_module("out_bias_table", torch::nn::Embedding(kTokenBuckets, 1));
    torch::nn::init::zeros_(outBiasTable->weight);
    // The values' meaning as output directions: starts at zero (the logits start as the
    // name tables alone), learns which meanings the decoder state prefers.
    valueOut = register_module("value_out", torch::nn::Linear(kValueFeatures, d));
    torch::nn::init::zeros_(valueOut->weight);
    torch::nn::init::zeros_(valueOut->bias);
    // Copy strength per slot (keyed by its name) for: the anchor's value, one and two steps
    // from it on ordered slots. Starts strong, so an untrained policy proposes mutations of
    // its anchor elite, a few slots at a time (docs/ppo.md).
    copyTable = register_module("copy_table", torch::nn::Embedding(kSlotBuckets, kProximity));
    {
        torch::NoGradGuard g;
        copyTable->weight.copy_(torch::tensor({copyInit, copyInit / 4, copyInit / 13}).repeat({kSlotBuckets, 1}));
    }
}

torch::Tensor PolicyNetImpl::decoder(const torch::Tensor& x)
{
    return x + decoderOut->forward(torch::relu(decoderIn->forward(x)));
}

EliteSnapshot makeSnapshot(const SpaceLayout& L, const std::vector<EliteEntry>& elites, int memoryElites, double scratch)
{
    const EliteArrays a = eliteArrays(L, elites, memoryElites);
    EliteSnapshot s;
    s.count = a.count;
    s.scratch = scratch;
    s.choice = torch::tensor(a.choice, torch::kLong).view({s.count, L.slots});
    s.reward = torch::tensor(a.reward, torch::kFloat).view({s.count, 1});
    s.present = torch::tensor(a.present, torch::kLong).to(torch::kBool);
    s.proximity = torch::tensor(a.proximity).view({1 + memoryElites, L.slots, L.widest, kProximity});
    return s;
}

} // namespace

struct Scene::Data {
    const SearchSpace* space = nullptr;
    SpaceLayout L;
    torch::Tensor tokenIndex; // [S, V] long
    torch::Tensor features;   // [S, V, kValueFeatures]: what each value means
    torch::Tensor kind;       // [S] long
    torch::Tensor slotIndex;  // [S] long
    torch::Tensor scenario;   // [1, 1, kScenarioFeatures]
};

struct History::Data {
    EliteSnapshot s;
    int memoryElites = 0;
};

namespace {

Context encode(PolicyNet& net, const Scene::Data& sc, const EliteSnapshot& s, int memoryElites)
{
    const SpaceLayout& L = sc.L;
    const int d = net->hidden;
    const int places = 1 + memoryElites;
    Context c;
    c.tokens = net->tokenTable->forward(sc.tokenIndex) + net->valueIn->forward(sc.features)
        + net->kindTable->forward(sc.kind).unsqueeze(1); // [S, V, d]
    torch::Tensor memory = net->noEliteToken;
    if (memoryElites > 0) {
        torch::Tensor tokens = torch::zeros({memoryElites, d});
        if (s.count > 0) {
            const auto slotIdx = torch::arange(L.slots, torch::kLong).unsqueeze(0).expand({s.count, L.slots});
            auto t = c.tokens.index({slotIdx, s.choice}).sum(1) + net->rewardIn->forward(s.reward)
                + net->rankEmbedding.index({Slice(0, s.count)});
            t = net->eliteNorm->forward(t);
            tokens = s.count == memoryElites ? t : torch::cat({t, tokens.index({Slice(s.count)})}, 0);
        }
        memory = torch::cat({memory, tokens}, 0); // [M, d]
    }
    const auto query = torch::tanh(net->featureIn->forward(sc.scenario)); // [1, 1, d]
    const auto ctxMem = net->contextAttention->project(memory, s.present);
    c.context = query + net->contextAttention->forward(query, ctxMem);
    {
        torch::NoGradGuard g;
        const int dh = d / net->heads;
        const auto qh = net->contextAttention->q->forward(query).view({1, net->heads, dh}).transpose(0, 1);
        const auto scores = torch::bmm(qh, ctxMem.keys.transpose(1, 2)) / std::sqrt(double(dh)) + ctxMem.bias;
        c.attention = torch::softmax(scores, -1).mean(0).view({places});
    }
    c.anchorLogits = torch::matmul(net->anchorKey->forward(memory), c.context.view({d})) / std::sqrt(double(d));
    c.anchorLogits = c.anchorLogits.masked_fill(s.present.logical_not(), kMaskedLogit);
    // At least the snapshot's scratch share of the samples start from scratch: exploration
    // the anchor's learning cannot switch off.
    const double floor = s.count > 0 ? s.scratch : 0.0;
    c.anchorProb = torch::softmax(c.anchorLogits, 0) * (1 - floor);
    if (floor > 0)
        c.anchorProb = c.anchorProb + torch::one_hot(torch::tensor(std::int64_t(0)), places).to(torch::kFloat) * floor;
    c.anchorInput = net->anchorIn->forward(memory);
    c.copy = (s.proximity * net->copyTable->forward(sc.slotIndex).unsqueeze(1)).sum(-1); // [M, S, V]
    c.slotInput = net->slotTable->forward(sc.slotIndex);
    // A value's output direction: its name's row plus what it means.
    c.outW = net->outTable->forward(sc.tokenIndex) + net->valueOut->forward(sc.features);
    c.outB = net->outBiasTable->forward(sc.tokenIndex).squeeze(-1);
    c.memory = net->slotAttention->project(memory, s.present);
    return c;
}

std::pair<torch::Tensor, torch::Tensor> logProb(PolicyNet& net, const SpaceLayout& L, const Context& c,
                                                const torch::Tensor& anchors, const torch::Tensor& actions,
                                                const torch::Tensor& mask, const torch::Tensor& temperature = {})
{
    const int64_t b = actions.size(0);
    const auto anchorLogp = torch::log(c.anchorProb + 1e-12);
    const auto anchorEntropy = -(c.anchorProb * anchorLogp).sum();
    const auto slotIdx = torch::arange(L.slots, torch::kLong).unsqueeze(0).expand({b, L.slots});
    const auto e = c.tokens.index({slotIdx, actions}); // [B, S, d]
    // Exclusive prefix sums of the choices' embeddings: slot k sees slots 0..k-1.
    const auto prefix = torch::cat({torch::zeros({b, 1, net->hidden}), e.index({Slice(), Slice(0, L.slots - 1)}).cumsum(1)}, 1);
    const auto h = net->decoder(prefix + c.slotInput + c.context + c.anchorInput.index_select(0, anchors).unsqueeze(1));
    const auto z = h + net->slotAttention->forward(h, c.memory); // [B, S, d]
    auto logits = torch::einsum("bsd,svd->bsv", std::vector<torch::Tensor>{z, c.outW}) + c.outB
        + c.copy.index_select(0, anchors);
    if (temperature.defined())
        logits = logits / temperature.view({b, 1, 1});
    const auto logp = torch::log_softmax(logits.masked_fill(mask.logical_not(), kMaskedLogit), -1);
    const auto chosen = logp.gather(2, actions.unsqueeze(2)).squeeze(2).sum(1) + anchorLogp.index_select(0, anchors);
    const auto entropy = -(logp.exp() * logp).sum({1, 2}) + anchorEntropy;
    return {chosen, entropy};
}

// The slots of `out`'s n samples in order, each drawn from the policy given the anchors in
// out.anchors and the earlier choices. With `near`, sample i keeps nearChoice's value at
// every slot but its free ones (where the mask still allows it) and draws each free slot
// from the policy without nearChoice's own value there (when another is allowed); from
// slot near->redrawFrom[i] on, every slot is drawn from the policy given the new prefix.
void decodeSlots(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, Batch& out,
                 bool greedy, std::mt19937_64& rng, std::vector<std::vector<double>>* probs, float temperature,
                 const std::vector<int>* nearChoice, const NearPlan* near)
{
    const int n = static_cast<int>(out.anchors.size());
    const auto anchors = torch::tensor(out.anchors, torch::kLong);
    const auto base = c.context.view({1, net->hidden}) + c.anchorInput.index_select(0, anchors); // [n, d]
    const auto copy = c.copy.index_select(0, anchors);                                           // [n, S, V]
    auto prefix = torch::zeros({n, net->hidden});
    std::vector<std::int64_t> chosen(n, 0);
    std::vector<std::uint8_t> without(L.widest);
    const int64_t rowStride = static_cast<int64_t>(L.slots) * L.widest;
    for (int k = 0; k < L.slots; ++k) {
        const auto h = net->decoder(prefix + c.slotInput[k] + base).view({n, 1, net->hidden});
        const auto z = (h + net->slotAttention->forward(h, c.memory)).view({n, net->hidden});
        auto logits = torch::matmul(z, c.outW[k].t()) + c.outB[k] + copy.select(1, k);
        if (temperature != 1.0f)
            logits = logits / temperature;
        for (int i = 0; i < n; ++i)
            space.mask(k, out.choices[i].data(), out.masks.data() + i * rowStride + k * L.widest);
        const auto allowed =
            torch::from_blob(out.masks.data() + k * L.widest, {n, L.widest}, {rowStride, 1}, torch::kUInt8).to(torch::kBool);
        const auto p = torch::softmax(logits.masked_fill(allowed.logical_not(), kMaskedLogit), -1).contiguous();
        const float* pp = p.data_ptr<float>();
        for (int i = 0; i < n; ++i) {
            const float* row = pp + static_cast<size_t>(i) * L.widest;
            const std::uint8_t* ok = out.masks.data() + i * rowStride + k * L.widest;
            int pick = near ? pickNear(*nearChoice, *near, i, k, L, row, ok, without, rng) : -1;
            if (pick < 0)
                pick = greedy ? argmaxAllowed(row, ok, L.count[k]) : drawAllowed(row, ok, L.count[k], rng);
            out.choices[i][k] = std::max(pick, 0); // pick < 0 only if the slot has no allowed value
            chosen[i] = out.choices[i][k];
            if (probs && i == 0)
                probs->emplace_back(row, row + L.count[k]);
        }
        prefix = prefix + c.tokens[k].index_select(0, torch::tensor(chosen, torch::kLong));
    }
}

Batch emptyBatch(const SpaceLayout& L, int n, float temperature)
{
    Batch out;
    out.choices.assign(n, std::vector<int>(L.slots, 0));
    out.masks.assign(static_cast<size_t>(n) * L.slots * L.widest, 0);
    out.temperature.assign(n, temperature);
    return out;
}

} // namespace

int setThreads(int threads)
{
    return guarded([&] {
        const int previous = torch::get_num_threads();
        torch::set_num_threads(std::max(1, threads));
        return previous;
    });
}

Scene::Scene(const SearchSpace& space, const std::vector<float>& features) : m_data(std::make_unique<Data>())
{
    guarded([&] {
        Data& d = *m_data;
        d.space = &space;
        d.L = makeLayout(space);
        d.tokenIndex = torch::tensor(d.L.tokenIndex, torch::kLong).view({d.L.slots, d.L.widest});
        d.features = torch::tensor(d.L.features).view({d.L.slots, d.L.widest, kValueFeatures});
        d.kind = torch::tensor(d.L.kind, torch::kLong);
        d.slotIndex = torch::tensor(d.L.slotIndex, torch::kLong);
        std::vector<float> f(features);
        f.resize(PpoAgent::kScenarioFeatures, 0.0f);
        d.scenario = torch::tensor(f).view({1, 1, PpoAgent::kScenarioFeatures});
    });
}
Scene::~Scene() = default;
const SpaceLayout& Scene::layout() const { return m_data->L; }

History::History() : m_data(std::make_unique<Data>()) {}
History::History(const Scene& scene, const std::vector<EliteEntry>& elites, int memoryElites, double scratch)
    : m_data(std::make_unique<Data>())
{
    guarded([&] {
        m_data->s = makeSnapshot(scene.layout(), elites, memoryElites, scratch);
        m_data->memoryElites = memoryElites;
    });
}
History::~History() = default;
History::History(History&&) noexcept = default;
History& History::operator=(History&&) noexcept = default;
int History::count() const { return m_data->s.count; }

struct Policy::Impl {
    PolicyNet net{nullptr};
    std::unique_ptr<torch::optim::Adam> adam;

    // Mean negative log-likelihood (nats per plan) of the optimum from every anchor present.
    torch::Tensor exampleLoss(const ImitationExample& x, int memoryElites)
    {
        const Scene::Data& sc = x.scene->data();
        const SpaceLayout& L = sc.L;
        const EliteSnapshot s = makeSnapshot(L, x.elites, memoryElites, 0.0);
        const Context c = encode(net, sc, s, memoryElites);
        const int b = 1 + s.count;
        const auto anchors = torch::arange(b, torch::kLong);
        const auto actions = torch::tensor(std::vector<std::int64_t>(x.target->begin(), x.target->end()), torch::kLong)
                                 .unsqueeze(0)
                                 .expand({b, L.slots});
        const auto targetMask =
            torch::from_blob(const_cast<std::uint8_t*>(x.targetMask->data()), {L.slots, L.widest}, torch::kUInt8)
                .to(torch::kBool);
        const auto mask = targetMask.unsqueeze(0).expand({b, L.slots, L.widest});
        const auto logp =
            logProb(net, L, c, anchors, actions, mask).first - torch::log(c.anchorProb + 1e-12).index_select(0, anchors);
        return -logp.mean();
    }
};

Policy::Policy(int hidden, int heads, float copyInit, const std::uint64_t* seed) : m_impl(std::make_unique<Impl>())
{
    guarded([&] {
        std::lock_guard<std::mutex> lock(torchGlobalsMutex());
        if (seed)
            torch::manual_seed(*seed);
        m_impl->net = PolicyNet(hidden, heads, copyInit);
    });
}

Policy::~Policy() = default;

std::vector<NamedValues> Policy::parameters() const
{
    return guarded([&] {
        std::vector<NamedValues> out;
        for (const auto& p : m_impl->net->named_parameters(true)) {
            const torch::Tensor t = p.value().detach().contiguous().to(torch::kFloat);
            out.push_back({p.key(), std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel())});
        }
        return out;
    });
}

std::vector<std::pair<std::string, size_t>> Policy::parameterSizes() const
{
    return guarded([&] {
        std::vector<std::pair<std::string, size_t>> out;
        for (const auto& p : m_impl->net->named_parameters(true))
            out.emplace_back(p.key(), static_cast<size_t>(p.value().numel()));
        return out;
    });
}

bool Policy::assign(const std::string& name, const std::vector<float>& values)
{
    return guarded([&] {
        auto params = m_impl->net->named_parameters(true);
        torch::Tensor* t = params.find(name);
        if (!t || t->numel() != static_cast<std::int64_t>(values.size()))
            return false;
        torch::NoGradGuard g;
        t->copy_(torch::tensor(values).view(t->sizes()));
        return true;
    });
}

void Policy::makeOptimizer(double learningRate)
{
    guarded([&] {
        m_impl->adam = std::make_unique<torch::optim::Adam>(m_impl->net->parameters(),
                                                            torch::optim::AdamOptions(learningRate));
    });
}

Batch Policy::decode(const Scene& scene, const History& h, int n, bool greedy, std::mt19937_64& rng,
                     std::vector<double>* anchorProbs, std::vector<std::vector<double>>* probs, float temperature,
                     std::vector<double>* attention)
{
    return guarded([&] {
        torch::NoGradGuard noGrad;
        const Scene::Data& sc = scene.data();
        const Context c = encode(m_impl->net, sc, h.data().s, h.data().memoryElites);
        const int places = static_cast<int>(c.anchorProb.size(0));
        Batch out = emptyBatch(sc.L, n, temperature);
        const auto pa = c.anchorProb.contiguous();
        const float* p = pa.data_ptr<float>();
        const auto la = c.anchorLogits.contiguous();
        const float* lp = la.data_ptr<float>();
        std::vector<std::uint8_t> present(places);
        for (int m = 0; m < places; ++m)
            present[m] = lp[m] > kMaskedLogit / 2;
        for (int i = 0; i < n; ++i)
            out.anchors.push_back(std::max(0, greedy ? argmaxAllowed(p, present.data(), places)
                                                     : drawAllowed(p, present.data(), places, rng)));
        if (anchorProbs)
            anchorProbs->assign(p, p + places);
        decodeSlots(m_impl->net, *sc.space, sc.L, c, out, greedy, rng, probs, temperature, nullptr, nullptr);
        if (attention) {
            const auto att = c.attention.contiguous();
            attention->assign(att.data_ptr<float>(), att.data_ptr<float>() + att.numel());
        }
        return out;
    });
}

Batch Policy::decodeNear(const Scene& scene, const History& h, int place, const std::vector<int>& choice, int n,
                         std::mt19937_64& rng, float temperature)
{
    return guarded([&] {
        torch::NoGradGuard noGrad;
        const Scene::Data& sc = scene.data();
        const Context c = encode(m_impl->net, sc, h.data().s, h.data().memoryElites);
        Batch out = emptyBatch(sc.L, n, temperature);
        const int places = static_cast<int>(c.anchorProb.size(0));
        out.anchors.assign(n, std::clamp(place, 0, places - 1));
        const NearPlan near = planNear(sc.L, n, rng);
        decodeSlots(m_impl->net, *sc.space, sc.L, c, out, false, rng, nullptr, temperature, &choice, &near);
        return out;
    });
}

PpoUpdateMetrics Policy::ppoUpdate(const Scene& scene, const History& h, const LearningSamples& s,
                                   const PpoOptions& options, std::mt19937_64& rng)
{
    return guarded([&] {
        if (!m_impl->adam)
            throw std::logic_error("Policy::ppoUpdate before makeOptimizer");
        PpoUpdateMetrics m;
        m.baseline = s.baseline;
        const int n = s.n;
        if (n == 0)
            return m;
        const Scene::Data& sc = scene.data();
        const SpaceLayout& L = sc.L;
        PolicyNet& net = m_impl->net;
        const auto encodeFrozen = [&] { return encode(net, sc, h.data().s, h.data().memoryElites); };
        const auto actions = torch::tensor(s.actions, torch::kLong).view({n, L.slots});
        const auto anchors = torch::tensor(s.anchors, torch::kLong);
        const auto temperature = torch::tensor(s.temperature);
        const auto mask =
            torch::from_blob(const_cast<std::uint8_t*>(s.masks.data()), {n, L.slots, L.widest}, torch::kUInt8)
                .to(torch::kBool);
        torch::Tensor oldLogp, advantage;
        {
            torch::NoGradGuard noGrad;
            oldLogp = logProb(net, L, encodeFrozen(), anchors, actions, mask, temperature).first;
            // Standardized: the step size does not depend on the reward's scale.
            auto a = torch::tensor(s.reward) - static_cast<float>(s.baseline);
            if (n > 1)
                a = a / (a.std(false) + 1e-8);
            advantage = a;
        }
        const double eps = options.clipRange;
        const int mbSize = std::max(1, (n + options.minibatches - 1) / options.minibatches);
        std::vector<std::int64_t> order(n);
        for (int epoch = 0; epoch < options.epochs; ++epoch) {
            std::iota(order.begin(), order.end(), 0);
            for (int i = n - 1; i > 0; --i) // Fisher-Yates with the seeded engine: same order everywhere
                std::swap(order[i], order[rng() % static_cast<std::uint64_t>(i + 1)]);
            for (int start = 0; start < n; start += mbSize) {
                const int len = std::min(mbSize, n - start);
                const Context c = encodeFrozen();
                const auto idx = torch::tensor(
                    std::vector<std::int64_t>(order.begin() + start, order.begin() + start + len), torch::kLong);
                auto [logp, entropy] = logProb(net, L, c, anchors.index({idx}), actions.index({idx}),
                                               mask.index({idx}), temperature.index({idx}));
                const auto adv = advantage.index({idx});
                const auto ratio = torch::exp(logp - oldLogp.index({idx}));
                const auto policyLoss = -torch::min(ratio * adv, torch::clamp(ratio, 1 - eps, 1 + eps) * adv).mean();
                const auto entropyMean = entropy.mean();
                const auto loss = policyLoss - options.entropyCoef * entropyMean;
                m_impl->adam->zero_grad();
                loss.backward();
                const double gradNorm = torch::nn::utils::clip_grad_norm_(net->parameters(), options.maxGradNorm);
                m_impl->adam->step();

                torch::NoGradGuard noGrad;
                m.gradNorm += gradNorm;
                m.policyLoss += policyLoss.item<double>();
                m.entropy += entropyMean.item<double>();
                m.approxKl += ((ratio - 1) - torch::log(ratio)).mean().item<double>();
                m.clipFraction += ((ratio - 1).abs() > eps).to(torch::kFloat).mean().item<double>();
                ++m.minibatches;
            }
        }
        const double k = std::max(1, m.minibatches);
        for (double* mean : {&m.gradNorm, &m.policyLoss, &m.entropy, &m.approxKl, &m.clipFraction})
            *mean /= k;
        m.samples = n;
        return m;
    });
}

double Policy::imitationStep(const std::vector<ImitationExample>& examples, int memoryElites)
{
    return guarded([&] {
        if (!m_impl->adam)
            throw std::logic_error("Policy::imitationStep before makeOptimizer");
        m_impl->adam->zero_grad();
        torch::Tensor loss = torch::zeros({});
        for (const ImitationExample& x : examples)
            loss = loss + m_impl->exampleLoss(x, memoryElites);
        loss = loss / double(std::max<size_t>(1, examples.size()));
        loss.backward();
        torch::nn::utils::clip_grad_norm_(m_impl->net->parameters(), 1.0);
        m_impl->adam->step();
        return loss.item<double>();
    });
}

double Policy::imitationLoss(const ImitationExample& example, int memoryElites)
{
    return guarded([&] {
        torch::NoGradGuard g;
        return m_impl->exampleLoss(example, memoryElites).item<double>();
    });
}

} // namespace shardlab::rl::net
