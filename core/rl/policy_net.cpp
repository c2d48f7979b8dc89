// The layout-independent policy network (policy_net.h, docs/ppo.md). A LibTorch translation
// unit (compile cost ~30 s).
#include "rl/policy_net.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "search/algorithms.h" // random01: the seeded draw the other searches use

namespace shardlab::rl::net {

using torch::indexing::Slice;

namespace {

std::uint64_t fnv1a(const std::string& s)
{
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : s) {
        h ^= ch;
        h *= 1099511628211ull;
    }
    return h;
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

std::string valueName(const Slot& s, int v)
{
    if (s.kind == SlotKind::Operator)
        return opOption(s.op, v).name;
    return std::to_string(v);
}


} // namespace

const char* kindName(SlotKind k)
{
    switch (k) {
    case SlotKind::TensorParallel: return "tensor_parallel";
    case SlotKind::PipelineParallel: return "pipeline_parallel";
    case SlotKind::ExpertParallel: return "expert_parallel";
    case SlotKind::Batch: return "batch";
    case SlotKind::MicroBatches: return "micro_batches";
    case SlotKind::RedundantExperts: return "redundant_experts";
    case SlotKind::TwoBatchOverlap: return "two_batch_overlap";
    case SlotKind::Instances: return "instances";
    case SlotKind::Operator: return "operator";
    }
    return "unknown";
}

namespace {

// Clamped log2 ratio scaled to about [-1, 1].
float logRatio(double v, double of, double scale = 6)
{
    if (v <= 0 || of <= 0)
        return 0;
    return static_cast<float>(std::clamp(std::log2(v / of), -scale, scale) / scale);
}

// What value `v` (at position `index` of `count`) of `slot` means, in terms every scenario
// shares (docs/ppo.md, "What a value means"): a degree by its size against the cluster, the
// node and the model dimension it divides; an operator option by its layouts and what it
// splits. A slot kind or a value list the network has never seen is still described.
void describeValue(const Scenario& sc, const Slot& slot, int v, int index, int count, float* f)
{
    const ModelSpec& m = sc.model;
    const double gpus = static_cast<double>(std::max(1LL, sc.cluster.totalGpus()));
    const double node = std::max(1, sc.cluster.gpusPerNode);
    if (slot.kind == SlotKind::Operator) {
        const OpOption& o = opOption(slot.op, v);
        f[7] = count > 1 ? float(index) / float(count - 1) : 0.0f;
        f[8 + static_cast<int>(o.in)] = 1;
        f[16 + static_cast<int>(o.out)] = 1;
        f[24 + static_cast<int>(o.split)] = 1;
        return;
    }
    const double x = std::log2(std::max(1, v)) / 12.0;
    f[0] = static_cast<float>(x);
    f[1] = static_cast<float>(x * x);
    f[2] = gpus > 1 ? static_cast<float>(std::log2(std::max(1, v)) / std::log2(gpus)) : 0.0f;
    f[7] = count > 1 ? float(index) / float(count - 1) : 0.0f;
    switch (slot.kind) {
    case SlotKind::TensorParallel:
        f[3] = logRatio(v, node);
        f[4] = logRatio(v, m.attentionHeads);
        f[5] = m.attention == AttentionKind::MLA ? 0.0f : logRatio(v, m.kvHeads);
        f[6] = v == 1;
        break;
    case SlotKind::PipelineParallel:
        f[3] = logRatio(v, node);
        f[4] = logRatio(v, m.layers);
        f[6] = v == 1;
        break;
    case SlotKind::ExpertParallel:
        f[3] = logRatio(v, node);
        f[4] = logRatio(v, std::max(1, m.moe.experts));
        f[6] = v == 1;
        break;
    case SlotKind::Batch:
        f[4] = logRatio(v, 256, 10);
        break;
    case SlotKind::MicroBatches:
        f[6] = v == 1;
        break;
    case SlotKind::RedundantExperts:
        f[4] = m.moe.experts > 0 ? static_cast<float>(std::min(2.0, double(v) / m.moe.experts)) : 0.0f;
        f[6] = v == 0;
        break;
    case SlotKind::TwoBatchOverlap:
        f[6] = v == 0;
        break;
    case SlotKind::Instances:
        f[3] = logRatio(gpus / std::max(1, v), node);
        f[6] = v == 1;
        break;
    case SlotKind::Operator:
        break;
    }
}

} // namespace

SpaceLayout makeLayout(const SearchSpace& space)
{
    SpaceLayout L;
    L.slots = space.slotCount();
    L.widest = std::max(1, space.widestSlot());
    std::vector<std::int64_t> token(static_cast<size_t>(L.slots) * L.widest, 0), kind, slot;
    std::vector<float> features(static_cast<size_t>(L.slots) * L.widest * kValueFeatures, 0.0f);
    for (int k = 0; k < L.slots; ++k) {
        const Slot& s = space.slots()[k];
        L.count.push_back(static_cast<int>(s.values.size()));
        L.ordered.push_back(space.isOrdered(k));
        kind.push_back(static_cast<std::int64_t>(fnv1a(std::string("kind:") + kindName(s.kind)) % kKindBuckets));
        slot.push_back(static_cast<std::int64_t>(fnv1a(s.name) % kSlotBuckets));
        for (int v = 0; v < L.count[k]; ++v) {
            const size_t at = static_cast<size_t>(k) * L.widest + v;
            token[at] = static_cast<std::int64_t>(fnv1a(s.name + "=" + valueName(s, s.values[v])) % kTokenBuckets);
            describeValue(space.scenario(), s, s.values[v], v, L.count[k], features.data() + at * kValueFeatures);
        }
    }
    L.tokenIndex = torch::tensor(token, torch::kLong).view({L.slots, L.widest});
    L.features = torch::tensor(features).view({L.slots, L.widest, kValueFeatures});
    L.kind = torch::tensor(kind, torch::kLong);
    L.slotIndex = torch::tensor(slot, torch::kLong);
    return L;
}

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

void Batch::append(const Batch& o)
{
    choices.insert(choices.end(), o.choices.begin(), o.choices.end());
    anchors.insert(anchors.end(), o.anchors.begin(), o.anchors.end());
    masks.insert(masks.end(), o.masks.begin(), o.masks.end());
    temperature.insert(temperature.end(), o.temperature.begin(), o.temperature.end());
}

void Batch::clear()
{
    choices.clear();
    anchors.clear();
    masks.clear();
    temperature.clear();
}

EliteSnapshot makeSnapshot(const SpaceLayout& L, const std::vector<EliteEntry>& elites, int memoryElites,
                           double scratch)
{
    EliteSnapshot s;
    const int places = 1 + memoryElites;
    s.count = std::min<int>(memoryElites, static_cast<int>(elites.size()));
    s.scratch = scratch;
    std::vector<std::int64_t> choice;
    std::vector<float> rewards;
    std::vector<float> prox(static_cast<size_t>(places) * L.slots * L.widest * kProximity, 0.0f);
    std::vector<std::int64_t> present(places, 0);
    present[0] = 1;
    for (int i = 0; i < s.count; ++i) {
        present[1 + i] = 1;
        rewards.push_back(static_cast<float>(elites[i].reward));
        for (int k = 0; k < L.slots; ++k) {
            const int a = elites[i].choice[k];
            choice.push_back(a);
            for (int v = 0; v < L.count[k]; ++v) {
                const int dist = std::abs(v - a);
                const int c = dist == 0 ? 0 : (L.ordered[k] && dist <= 2 ? dist : -1);
                if (c >= 0)
                    prox[((static_cast<size_t>(1 + i) * L.slots + k) * L.widest + v) * kProximity + c] = 1.0f;
            }
        }
    }
    s.choice = torch::tensor(choice, torch::kLong).view({s.count, L.slots});
    s.reward = torch::tensor(rewards, torch::kFloat).view({s.count, 1});
    s.present = torch::tensor(present, torch::kLong).to(torch::kBool);
    s.proximity = torch::tensor(prox).view({places, L.slots, L.widest, kProximity});
    return s;
}

Context encode(PolicyNet& net, const SpaceLayout& L, const torch::Tensor& features, const EliteSnapshot& s,
               int memoryElites)
{
    const int d = net->hidden;
    const int places = 1 + memoryElites;
    Context c;
    c.tokens = net->tokenTable->forward(L.tokenIndex) + net->valueIn->forward(L.features)
        + net->kindTable->forward(L.kind).unsqueeze(1); // [S, V, d]
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
    const auto query = torch::tanh(net->featureIn->forward(features)); // [1, 1, d]
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
    c.copy = (s.proximity * net->copyTable->forward(L.slotIndex).unsqueeze(1)).sum(-1); // [M, S, V]
    c.slotInput = net->slotTable->forward(L.slotIndex);
    // A value's output direction: its name's row plus what it means.
    c.outW = net->outTable->forward(L.tokenIndex) + net->valueOut->forward(L.features);
    c.outB = net->outBiasTable->forward(L.tokenIndex).squeeze(-1);
    c.memory = net->slotAttention->project(memory, s.present);
    return c;
}

std::pair<torch::Tensor, torch::Tensor> logProb(PolicyNet& net, const SpaceLayout& L, const Context& c,
                                                const torch::Tensor& anchors, const torch::Tensor& actions,
                                                const torch::Tensor& mask, const torch::Tensor& temperature)
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

namespace {

// The slots of `out`'s n samples in order, each drawn from the policy given the anchors in
// out.anchors and the earlier choices. With `near`, sample i keeps near->choice's value at
// every slot but its free ones (where the mask still allows it) and draws each free slot
// from the policy without near->choice's own value there (when another is allowed); from
// slot redrawFrom[i] on, every slot is drawn from the policy given the new prefix.
struct Near {
    const std::vector<int>* choice = nullptr;
    std::vector<std::vector<int>> free; // per sample: its free slots
    std::vector<int> redrawFrom;        // per sample: the first slot drawn afresh (slots: none)
};

void decodeSlots(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, Batch& out,
                 bool greedy, std::mt19937_64& rng, std::vector<std::vector<double>>* probs, float temperature,
                 const Near* near)
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
            int pick = -1;
            if (near) {
                const int keep = (*near->choice)[k];
                const auto& f = near->free[i];
                if (k >= near->redrawFrom[i]) {
                    pick = -1;
                } else if (std::find(f.begin(), f.end(), k) == f.end()) {
                    pick = keep >= 0 && keep < L.count[k] && ok[keep] ? keep : -1;
                } else {
                    std::copy(ok, ok + L.widest, without.begin());
                    if (keep >= 0 && keep < L.count[k])
                        without[keep] = 0;
                    if (std::any_of(without.begin(), without.begin() + L.count[k], [](std::uint8_t v) { return v != 0; }))
                        pick = drawAllowed(row, without.data(), L.count[k], rng);
                }
            }
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

Batch decode(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, int n, bool greedy,
             std::mt19937_64& rng, std::vector<double>* anchorProbs, std::vector<std::vector<double>>* probs,
             float temperature)
{
    torch::NoGradGuard noGrad;
    const int places = static_cast<int>(c.anchorProb.size(0));
    Batch out = emptyBatch(L, n, temperature);
    {
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
    }
    decodeSlots(net, space, L, c, out, greedy, rng, probs, temperature, nullptr);
    return out;
}

Batch decodeNear(PolicyNet& net, const SearchSpace& space, const SpaceLayout& L, const Context& c, int place,
                 const std::vector<int>& choice, int n, std::mt19937_64& rng, float temperature)
{
    torch::NoGradGuard noGrad;
    Batch out = emptyBatch(L, n, temperature);
    const int places = static_cast<int>(c.anchorProb.size(0));
    out.anchors.assign(n, std::clamp(place, 0, places - 1));
    std::vector<int> open; // slots with a choice to make
    for (int k = 0; k < L.slots; ++k)
        if (L.count[k] > 1)
            open.push_back(k);
    Near near;
    near.choice = &choice;
    near.free.resize(n);
    near.redrawFrom.assign(n, L.slots);
    for (int i = 0; i < n && !open.empty(); ++i) {
        // One sample in three changes one slot and lets the policy redraw every slot after it
        // given the change: values that only pay together (an expert-parallel degree with its
        // redundant experts and engine instances) move as one step, the policy choosing them.
        // The others change one slot, or a pair that only pays together, and keep the rest.
        if (rng() % 3 == 0) {
            const int k = open[rng() % open.size()];
            near.free[i].push_back(k);
            near.redrawFrom[i] = k + 1;
            continue;
        }
        const int count = 1 + static_cast<int>(rng() % 2);
        for (int j = 0; j < count; ++j)
            near.free[i].push_back(open[rng() % open.size()]);
    }
    decodeSlots(net, space, L, c, out, false, rng, nullptr, temperature, &near);
    return out;
}

std::vector<std::uint8_t> pathMask(const SearchSpace& space, const SpaceLayout& L, const std::vector<int>& choice)
{
    std::vector<std::uint8_t> m(static_cast<size_t>(L.slots) * L.widest, 0);
    for (int k = 0; k < L.slots; ++k)
        space.mask(k, choice.data(), m.data() + static_cast<size_t>(k) * L.widest);
    return m;
}

} // namespace shardlab::rl::net
