#include "search/scenario_generator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "io/presets.h"
#include "model/disaggregated_plan.h"

namespace shardlab {

namespace {

// splitmix64: independent streams per (seed, index) from one 64-bit state.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

class Draw {
public:
    explicit Draw(std::uint64_t state) : m_rng(state) {}
    double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
    double logUniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
    int below(int n) { return static_cast<int>(m_rng() % static_cast<std::uint64_t>(std::max(1, n))); }
    template <typename T, size_t N>
    T pick(const T (&a)[N])
    {
        return a[below(static_cast<int>(N))];
    }
    bool chance(double p) { return unit() < p; }

private:
    double unit() { return static_cast<double>(m_rng() >> 11) * 0x1.0p-53; }
    std::mt19937_64 m_rng;
};

int roundTo(double v, int step) { return std::max(step, static_cast<int>(std::lround(v / step)) * step); }

ModelSpec drawModel(Draw& d)
{
    ModelSpec m;
    const int kind = d.below(3); // 0 dense GQA, 1 MoE GQA, 2 MoE MLA
    const int hiddens[] = {2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 16384};
    m.hiddenSize = d.pick(hiddens);
    m.layers = roundTo(d.uniform(16, 128), 2);
    m.headDim = 128;
    m.attentionHeads = m.hiddenSize / 128;
    const int kvChoices[] = {1, 2, 4, 8, 8, 16};
    m.kvHeads = std::min(m.attentionHeads, d.pick(kvChoices));
    while (m.attentionHeads % m.kvHeads != 0)
        m.kvHeads /= 2;
    m.ffnHidden = roundTo(m.hiddenSize * d.uniform(2.5, 4.0), 256);
    const int vocabs[] = {32000, 32768, 128256, 129280, 151936};
    m.vocabSize = d.pick(vocabs);
    m.weightPrecision = d.chance(0.35) ? Precision::FP8 : Precision::BF16;
    m.kvPrecision = d.chance(0.25) ? Precision::FP8 : Precision::BF16;
    if (kind == 0) {
        m.name = "gen-dense";
        return m;
    }
    const int experts[] = {8, 16, 32, 60, 64, 128, 160, 256, 384};
    m.moe.experts = d.pick(experts);
    const int topk[] = {1, 2, 4, 6, 8};
    m.moe.expertsPerToken = std::min(m.moe.experts, d.pick(topk));
    m.moe.expertFfnHidden = roundTo(m.hiddenSize * (m.moe.experts <= 16 ? d.uniform(2.5, 3.5) : d.uniform(0.2, 0.8)), 128);
    m.moe.sharedExperts = m.moe.experts <= 16 ? 0 : d.below(3);
    m.moe.sharedExpertFfnHidden = m.moe.sharedExperts > 0 ? m.moe.expertFfnHidden : 0;
    m.moe.denseLayers = d.below(4);
    if (kind == 2) {
        m.name = "gen-mla-moe";
        m.attention = AttentionKind::MLA;
        m.mla.qLoraRank = d.chance(0.7) ? 1536 : 0;
        m.mla.kvLoraRank = 512;
        m.mla.qkNopeHeadDim = 128;
        m.mla.qkRopeHeadDim = 64;
        m.mla.vHeadDim = 128;
    } else {
        m.name = "gen-moe";
    }
    return m;
}

// The preset GPUs and NVLink domains (gpus_per_node).
struct ClusterKind {
    const char* preset;
    int domain;
};

ClusterSpec drawCluster(Draw& d, double weightBytes, const ScenarioGeneratorOptions& o)
{
    static const ClusterKind kinds[] = {{"h100-8", 8}, {"h100-8", 8}, {"h200-8", 8}, {"a100-8", 8},
                                        {"b200-8", 8}, {"gb200-nvl72", 72}, {"h100-8", 4}};
    const ClusterKind k = d.pick(kinds);
    ClusterSpec c = clusterPreset(k.preset).value;
    c.gpusPerNode = k.domain;
    // Enough GPUs for the weights with room for a KV cache (1.3-20x), within the range.
    const double perGpu = (c.gpu.hbmGb - c.gpu.memoryReserveGb) * 1e9;
    const double least = std::max<double>(o.minGpus, weightBytes * 1.3 / perGpu);
    const double most = std::max(least, std::min<double>(o.maxGpus, weightBytes * 20 / perGpu));
    const double want = d.logUniform(std::max(1.0, least), std::max(1.0, most) + 1e-9);
    if (want <= c.gpusPerNode) {
        int g = 1;
        while (g < want - 1e-9)
            g *= 2;
        c.gpusPerNode = std::min(c.gpusPerNode, g);
        c.nodes = 1;
    } else {
        int nodes = 1;
        while (static_cast<double>(nodes) * c.gpusPerNode < want - 1e-9)
            nodes *= 2;
        c.nodes = std::max(1, std::min(nodes, o.maxGpus / c.gpusPerNode));
    }
    c.name = std::string("gen-") + k.preset + "-" + std::to_string(c.totalGpus());
    return c;
}

WorkloadSpec drawWorkload(Draw& d)
{
    WorkloadSpec w;
    w.promptTokens = roundTo(d.logUniform(128, 32768), 16);
    w.outputTokens = roundTo(d.logUniform(64, 4096), 16);
    w.tpotSloMs = std::round(d.logUniform(8, 200));
    w.ttftSloMs = std::round(d.logUniform(300, 20000));
    w.serving = d.chance(0.75) ? ServingMode::Aggregated : ServingMode::Decode;
    const CollectiveEngine engines[] = {CollectiveEngine::Nccl, CollectiveEngine::TrtLlm, CollectiveEngine::Vllm,
                                        CollectiveEngine::Sglang};
    w.engine = d.pick(engines);
    return w;
}

} // namespace

Scenario generateScenario(std::uint64_t seed, int index, const ScenarioGeneratorOptions& options)
{
    Draw d(mix(mix(seed) ^ static_cast<std::uint64_t>(index)));
    Scenario s;
    for (int attempt = 0;; ++attempt) {
        s.model = drawModel(d);
        const double params = countParameters(s.model).total;
        if ((params >= options.minParameters && params <= options.maxParameters) || attempt > 200)
            break;
    }
    s.cluster = drawCluster(d, weightBytes(s.model), options);
    s.workload = drawWorkload(d);
    char buf[96];
    std::snprintf(buf, sizeof buf, "gen-%llu-%d", static_cast<unsigned long long>(seed), index);
    s.name = buf;
    std::snprintf(buf, sizeof buf, "%.0f B %s on %lld GPUs", countParameters(s.model).total / 1e9,
                  s.model.name.c_str(), s.cluster.totalGpus());
    s.description = std::string("Generated scenario: ") + buf;
    return s;
}

Scenario generatedPool(const Scenario& s, std::uint64_t seed, int index)
{
    const long long total = s.cluster.totalGpus();
    std::vector<int> sizes;
    for (int g : disaggregatedSplits(s))
        if (4LL * g >= total)
            sizes.push_back(g);
    if (sizes.empty())
        return poolScenario(s, PoolRole::Prefill, static_cast<int>(total));
    // A stream of its own, so the pool's draw leaves generateScenario's unchanged.
    const std::uint64_t r = mix(mix(seed ^ 0x706F6F6Cull) ^ static_cast<std::uint64_t>(index));
    const PoolRole role = (r & 1) ? PoolRole::Decode : PoolRole::Prefill;
    return poolScenario(s, role, sizes[(r >> 1) % sizes.size()]);
}

} // namespace shardlab
