// What the policy network reads of a search space, in plain C++ (policy_net.h): the
// hashed names and the meanings of every (slot, value), the batch of samples and its
// masks, the seeded draws over allowed values, and which slots a sample near an elite
// redraws. No LibTorch: policy_net.cpp turns these into tensors.
#include "rl/policy_net.h"

#include <algorithm>
#include <cmath>

#include "search/algorithms.h" // random01: the seeded draw the other searches use

namespace shardlab::rl::net {

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

std::string valueName(const Slot& s, int v)
{
    if (s.kind == SlotKind::Operator)
        return opOption(s.op, v).name;
    return std::to_string(v);
}

} // namespace

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
    L.tokenIndex.assign(static_cast<size_t>(L.slots) * L.widest, 0);
    L.features.assign(static_cast<size_t>(L.slots) * L.widest * kValueFeatures, 0.0f);
    for (int k = 0; k < L.slots; ++k) {
        const Slot& s = space.slots()[k];
        L.count.push_back(static_cast<int>(s.values.size()));
        L.ordered.push_back(space.isOrdered(k));
        L.kind.push_back(static_cast<std::int64_t>(fnv1a(std::string("kind:") + kindName(s.kind)) % kKindBuckets));
        L.slotIndex.push_back(static_cast<std::int64_t>(fnv1a(s.name) % kSlotBuckets));
        for (int v = 0; v < L.count[k]; ++v) {
            const size_t at = static_cast<size_t>(k) * L.widest + v;
            L.tokenIndex[at] = static_cast<std::int64_t>(fnv1a(s.name + "=" + valueName(s, s.values[v])) % kTokenBuckets);
            describeValue(space.scenario(), s, s.values[v], v, L.count[k], L.features.data() + at * kValueFeatures);
        }
    }
    return L;
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

std::vector<std::uint8_t> pathMask(const SearchSpace& space, const SpaceLayout& L, const std::vector<int>& choice)
{
    std::vector<std::uint8_t> m(static_cast<size_t>(L.slots) * L.widest, 0);
    for (int k = 0; k < L.slots; ++k)
        space.mask(k, choice.data(), m.data() + static_cast<size_t>(k) * L.widest);
    return m;
}

NearPlan planNear(const SpaceLayout& L, int n, std::mt19937_64& rng)
{
    NearPlan near;
    std::vector<int> open; // slots with a choice to make
    for (int k = 0; k < L.slots; ++k)
        if (L.count[k] > 1)
            open.push_back(k);
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
    return near;
}

int pickNear(const std::vector<int>& choice, const NearPlan& plan, int i, int k, const SpaceLayout& L,
             const float* row, const std::uint8_t* ok, std::vector<std::uint8_t>& without, std::mt19937_64& rng)
{
    const int keep = choice[k];
    const auto& f = plan.free[i];
    if (k >= plan.redrawFrom[i])
        return -1;
    if (std::find(f.begin(), f.end(), k) == f.end())
        return keep >= 0 && keep < L.count[k] && ok[keep] ? keep : -1;
    std::copy(ok, ok + L.widest, without.begin());
    if (keep >= 0 && keep < L.count[k])
        without[keep] = 0;
    if (std::any_of(without.begin(), without.begin() + L.count[k], [](std::uint8_t v) { return v != 0; }))
        return drawAllowed(row, without.data(), L.count[k], rng);
    return -1;
}

EliteArrays eliteArrays(const SpaceLayout& L, const std::vector<EliteEntry>& elites, int memoryElites)
{
    EliteArrays a;
    const int places = 1 + memoryElites;
    a.count = std::min<int>(memoryElites, static_cast<int>(elites.size()));
    a.proximity.assign(static_cast<size_t>(places) * L.slots * L.widest * kProximity, 0.0f);
    a.present.assign(places, 0);
    a.present[0] = 1;
    for (int i = 0; i < a.count; ++i) {
        a.present[1 + i] = 1;
        a.reward.push_back(static_cast<float>(elites[i].reward));
        for (int k = 0; k < L.slots; ++k) {
            const int e = elites[i].choice[k];
            a.choice.push_back(e);
            for (int v = 0; v < L.count[k]; ++v) {
                const int dist = std::abs(v - e);
                const int c = dist == 0 ? 0 : (L.ordered[k] && dist <= 2 ? dist : -1);
                if (c >= 0)
                    a.proximity[((static_cast<size_t>(1 + i) * L.slots + k) * L.widest + v) * kProximity + c] = 1.0f;
            }
        }
    }
    return a;
}

} // namespace shardlab::rl::net
