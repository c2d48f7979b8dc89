// Small scenarios and a brute-force enumerator shared by the search tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "search/search.h"
#include "search/search_space.h"
#include "sim/simulator.h"

namespace shardlab::testing {

// An open loop (Poisson arrivals, or every request at once when infinite) of `requests`
// measured requests.
inline LoadSpec openLoop(double rate, int requests)
{
    LoadSpec l;
    l.protocol = LoadProtocol::RequestRate;
    l.requestRate = rate;
    l.requests = requests;
    return l;
}

// Sanitizer runs (scripts/sanitize.sh sets SHARDLAB_QUICK_TESTS) exercise the same code on
// fewer cases: instrumented code runs 5-20x slower and CI has 90 minutes.
inline bool quickTests() { return qEnvironmentVariableIsSet("SHARDLAB_QUICK_TESTS"); }
inline int scaled(int n) { return quickTests() ? std::max(1, n / 8) : n; }

// A budgeted search's options: the algorithm, its budget and its seed.
inline SearchOptions budgeted(const char* algorithm, int budget, std::uint64_t seed)
{
    SearchOptions o;
    o.algorithm = algorithm;
    o.budget = budget;
    o.seed = seed;
    return o;
}

inline Scenario presetScenario(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

// Qwen3-235B-A22B in FP8 (weights and KV cache) on one node of 8 H100, with `w`.
inline Scenario qwen3Fp8OnH100x8(const WorkloadSpec& w)
{
    auto model = modelPreset("qwen3-235b-a22b");
    auto cluster = clusterPreset("h100-8");
    if (!model.ok() || !cluster.ok())
        qFatal("qwen3-235b-a22b or h100-8 does not load");
    Scenario s;
    s.name = "qwen3-fp8-8xh100";
    s.model = model.value;
    s.model.weightPrecision = s.model.kvPrecision = Precision::FP8;
    s.cluster = cluster.value;
    s.workload = w;
    return s;
}

// A shipped file under resources/ (`rel` relative to it); the test stops with the loader's
// error if it does not load.
inline Scenario resourceScenario(const char* rel)
{
    auto s = loadScenarioFile(std::string(SHARDLAB_RESOURCES) + "/" + rel);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

inline Plan resourcePlan(const char* rel)
{
    auto p = loadPlanFile(std::string(SHARDLAB_RESOURCES) + "/" + rel);
    if (!p.ok())
        qFatal("%s", p.firstError().c_str());
    return p.value;
}

// DeepSeek-V3 on 72 GPUs (256 + 32 redundant experts) and its EP 72 plan, shipped examples.
inline Scenario deepseek72() { return resourceScenario("examples/moe/deepseek-v3-72gpu.json"); }
inline Plan deepseek72Plan() { return resourcePlan("examples/moe/deepseek-v3-72gpu-ep72.plan.json"); }

// A small H100-like cluster of `gpusPerNode` x `nodes` with little memory, so that the KV
// cache limits the batch of the tiny models below. Its per-kernel floor is the isolated 4 us:
// the tiny models' latency limits below were set so that some plans pass and some fail at
// that floor, and a 4-layer model is mostly floors (at the in-step 12 us of the shipped
// profile none of their plans would pass and the searches would have nothing to find).
inline ClusterSpec tinyCluster(int gpusPerNode, int nodes, double hbmGb)
{
    auto c = clusterPreset("h100-8");
    if (!c.ok())
        qFatal("%s", c.firstError().c_str());
    ClusterSpec cl = c.value;
    cl.name = "tiny";
    cl.gpusPerNode = gpusPerNode;
    cl.nodes = nodes;
    cl.gpu.hbmGb = hbmGb;
    cl.gpu.memoryReserveGb = 0.25;
    cl.gpu.kernelOverheadUs = 4;
    return cl;
}

enum class TinyModel { Dense, MoeSharedDense, MlaMoe };

inline ModelSpec tinyModel(TinyModel kind)
{
    ModelSpec m;
    m.name = "tiny";
    m.layers = 4;
    m.hiddenSize = 512;
    m.attentionHeads = 8;
    m.kvHeads = 4;
    m.headDim = 64;
    m.ffnHidden = 1536;
    m.vocabSize = 8192;
    switch (kind) {
    case TinyModel::Dense: break;
    case TinyModel::MoeSharedDense:
        m.moe = {4, 2, 512, 1, 512, 1}; // 4 experts, top-2, one shared, first layer dense
        break;
    case TinyModel::MlaMoe:
        m.attention = AttentionKind::MLA;
        m.mla = {0, 128, 32, 16, 32};
        m.moe = {8, 2, 256, 0, 0, 0};
        m.ffnHidden = 1024; // unused: no dense layer
        break;
    }
    return m;
}

inline Scenario tinyScenario(TinyModel kind, int gpusPerNode, int nodes, double hbmGb, double ttftMs, double tpotMs)
{
    Scenario s;
    s.name = "tiny";
    s.model = tinyModel(kind);
    s.cluster = tinyCluster(gpusPerNode, nodes, hbmGb);
    s.workload = {1024, 256, ttftMs, tpotMs};
    s.workload.maxNumTokens = 1024; // aggregated serving: at most 204 sequences per step
    return s;
}

// Calls f for every plan of the space (slot by slot through the masks).
inline void forEachPlan(const SearchSpace& sp, const std::function<void(const Plan&)>& f)
{
    int choice[SearchSpace::kMaxSlots] = {};
    std::function<void(int)> rec = [&](int slot) {
        if (slot == sp.slotCount()) {
            // One EP rank with redundant slots is dominated by the same plan without them
            // (TestMoeBalance::oneEpRankGainsNothingFromRedundantSlots checks it on the
            // simulator): skipped to keep the enumeration small.
            const Plan p = sp.decode(choice);
            if (p.expertParallel == 1 && p.redundantExperts > 0)
                return;
            f(p);
            return;
        }
        std::vector<std::uint8_t> validBuf(sp.widestSlot());
        std::uint8_t* valid = validBuf.data();
        sp.mask(slot, choice, valid);
        for (size_t i = 0; i < sp.slots()[slot].values.size(); ++i)
            if (valid[i]) {
                choice[slot] = static_cast<int>(i);
                rec(slot + 1);
            }
    };
    rec(0);
}

struct BruteForce {
    long long plans = 0, valid = 0;
    long long validRedundant = 0, validOverlap = 0; // valid plans with redundant experts / overlap
    double best = 0;
    Plan bestPlan;
    void consider(const Plan& p, const SimResult& r)
    {
        ++plans;
        if (!r.valid)
            return;
        ++valid;
        validRedundant += p.redundantExperts > 0;
        validOverlap += p.twoBatchOverlap;
        if (r.tokensPerSPerGpu > best) {
            best = r.tokensPerSPerGpu;
            bestPlan = p;
        }
    }
};

inline BruteForce bruteForce(const Scenario& s, const SearchSpaceOptions& o)
{
    const Simulator sim(s);
    const SearchSpace sp(s, o);
    BruteForce b;
    SimResult r;
    forEachPlan(sp, [&](const Plan& p) {
        sim.evaluate(p, r, false);
        b.consider(p, r);
    });
    return b;
}

// A plan (degrees, options and micro-batches fixed) at its best batches in [lo, hi]: the
// largest valid one by bisection (validity is monotone in the batch: memory, the token
// budget, TTFT and TPOT only grow with it, tst_search_exact::batchPropertyHolds) and both
// sides of every batch where the count of collectives past an engine's all-reduce size
// limit changes (between two changes throughput never falls with the batch). `visit` sees
// every evaluation; `crossed` (if given) is set when some change lies in the valid range.
inline void forBestBatches(const Simulator& sim, Plan p, int lo, int hi,
                           const std::function<void(const Plan&, const SimResult&)>& visit, bool* crossed = nullptr)
{
    SimResult r;
    auto at = [&](int batch) -> const SimResult& {
        p.batch = batch;
        sim.evaluate(p, r, false);
        visit(p, r);
        return r;
    };
    if (lo > hi || !at(lo).valid)
        return;
    int good = lo, bad = hi + 1;
    (at(hi).valid ? good : bad) = hi;
    while (bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        (at(mid).valid ? good : bad) = mid;
    }
    std::function<void(int, int, int, int)> split = [&](int x, int cx, int y, int cy) {
        if (cx == cy)
            return;
        if (y - x == 1) {
            if (crossed)
                *crossed = true;
            at(x);
            at(y);
            return;
        }
        const int mid = x + (y - x) / 2;
        const int cm = at(mid).sizeCappedCollectives;
        split(x, cx, mid, cm);
        split(mid, cm, y, cy);
    };
    const int cLo = at(lo).sizeCappedCollectives;
    split(lo, cLo, good, at(good).sizeCappedCollectives);
}

// Every plan of the space's degrees and options (the space's batch and micro-batch lists are
// ignored) at every micro-batch count 1..PP+1, each at its best batches (forBestBatches).
inline BruteForce bruteForceAllBatches(const Scenario& s, SearchSpaceOptions o)
{
    o.batchValues = {1};
    o.microBatchValues = {1};
    const Simulator sim(s);
    const SearchSpace sp(s, o);
    BruteForce b;
    forEachPlan(sp, [&](const Plan& base) {
        for (int m = 1; m <= base.pipelineParallel + 1; ++m) {
            Plan p = base;
            p.microBatches = m;
            forBestBatches(sim, p, std::max(m, sp.batchMin()), sp.batchMax(),
                           [&](const Plan& q, const SimResult& r) { b.consider(q, r); });
        }
    });
    return b;
}

} // namespace shardlab::testing
