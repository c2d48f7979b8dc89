// The simulator's cost, decomposed for the exact search (internal to core/search).
//
// Simulator::evaluate is, for fixed coarse degrees, a monotone function of a few sums:
// the time of one dense layer, of one MoE layer, of the embedding (first stage) and of the
// LM head (last stage), per phase, and the bytes each of those holds. The per-operator
// choices enter those sums through groups that interact only via the two norms' layouts:
//   attention: qkv_proj, attention, out_proj (+ both norms' own costs), every layer;
//   ffn:       gate_up, down (dense layers; with lm_head when there is no MoE layer);
//   moe:       shared_expert, router, dispatch, expert_up, expert_down, combine;
//   embedding, lm_head.
// CostModel reproduces the simulator's formulas per group so that a group's choices can be
// compared (Pareto) and bounded without evaluating whole plans. It MIRRORS
// core/sim/simulator.cpp: a change there must be repeated here; tst_search_exact checks
// the two agree on random plans, and the exact search re-evaluates every plan it returns
// with Simulator::evaluate and reports any disagreement.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "search/search_space.h"
#include "sim/simulator.h"

namespace shardlab::exact {

// Conversion edges of the operator graph (see Simulator::evalLayer), for CostModel's
// conversion table.
enum Edge : int {
    kAttnNormQkv,
    kQkvAttention,
    kAttentionOut,
    kOutFfnNorm,
    kFfnNormGateUp,
    kGateUpDown,
    kDownAttnNorm,
    kFfnNormShared,
    kFfnNormRouter,
    kRouterDispatch,
    kDispatchExpertUp,
    kExpertUpDown,
    kExpertDownCombine,
    kSharedJoin,
    kCombineAttnNorm,
    kEmbeddingAttnNorm,
    kLastHead,
};

struct Coarse {
    int tp = 1, pp = 1, ep = 1, dp = 1, batch = 1, micro = 1;
};

// Additive contributions, index 0: per dense layer, 1: per MoE layer, 2: first stage
// only, 3: last stage only. dec/pre in seconds (decode step / prefill), mem in bytes.
struct CostVec {
    std::array<double, 4> dec{}, pre{}, mem{};
    CostVec& operator+=(const CostVec& o);
    bool dominatedBy(const CostVec& o) const; // o <= this in every channel
};
CostVec operator+(CostVec a, const CostVec& b);
CostVec componentMin(const CostVec& a, const CostVec& b);

// What Simulator::evaluate would report for a total cost.
struct Figures {
    double cycleS = 0;
    double tpotMs = 0;
    double ttftMs = 0;
    double memoryGb = 0;
    double tokensPerSPerGpu = 0;
    bool finite = true;
};

constexpr int kMaxGroupOps = 7;

// One choice for every operator of a group, with its cost.
struct Combo {
    CostVec cost;
    std::array<std::uint8_t, kMaxGroupOps> options{};
};

struct OpGroup {
    std::vector<OpId> ops;
    std::vector<Combo> combos;
};

class CostModel {
public:
    CostModel(const Simulator& sim, const SearchSpace& space);

    // Prepares op-time and conversion tables for one coarse configuration; the options
    // allowed per operator are the space's (slot values the mask admits).
    void setCoarse(const Coarse& c);
    const Coarse& coarse() const { return m_c; }
    // Options of operator `id` the space allows under the current coarse configuration.
    const std::vector<int>& allowed(OpId id) const { return m_allowed[static_cast<int>(id)]; }

    // Groups given attn_norm option a and ffn_norm option f; groups of operators the model
    // lacks are left out, a group whose options the space all rejects has no combos.
    void buildGroups(int a, int f, std::vector<OpGroup>& out);
    Figures figures(const CostVec& total) const;
    // True when the figures meet the scenario's limits, each relaxed by (1 + slack).
    bool withinLimits(const Figures& f, double slack) const;

    // The plan of the space for the current coarse configuration with these choices.
    Plan makePlan(int a, int f, const std::vector<OpGroup>& groups, const int* comboIndex) const;

    // Prediction for a whole plan through the same decomposition (tests; the plan's
    // degrees must match a configuration of the space's shape, options any).
    Figures predict(const Plan& p);

private:
    // Mirror of Simulator::Phase.
    struct Phase {
        bool prefill = false;
        double tokens = 0, seqs = 0, ctx = 0, batchSeqs = 0, maxCtx = 0;
        int tp = 1, etp = 1, ep = 1, moeRanks = 1;
        Group tpGroup, etpGroup, moeGroup;
        double routedPerEpRank = 0, localExperts = 0, activeLocalExperts = 0;
    };
    struct Stage {
        int dense = 0, moe = 0, count = 0;
        bool first = false, last = false;
    };
    static constexpr int kEdges = kLastHead + 1;
    static constexpr int kLayouts = 8;

    void fillPhase(bool prefill, Phase& ph) const;
    double opTime(OpId id, int option, const Phase& ph, double& weightRank) const;
    double conv(int phase, int edge, Layout from, Layout to);
    double kvBytes(int attentionOption) const;
    void addAttention(int a, int f, std::vector<OpGroup>& out);
    void addFfn(int a, int f, std::vector<OpGroup>& out);
    void addMoe(int a, int f, std::vector<OpGroup>& out);
    void addEmbedding(int a, std::vector<OpGroup>& out);
    void addHead(std::vector<OpGroup>& out);

    const Simulator& m_sim;
    const SearchSpace& m_space;
    Coarse m_c;
    int m_nd = 0, m_nm = 0;
    bool m_shared = false;
    double m_peakBf16 = 0, m_peakFp8 = 0, m_hbm = 0, m_overheadS = 0, m_hiddenBytes = 0;
    LinkModel m_link;

    // Per coarse configuration.
    std::array<Phase, 2> m_phase; // 0 decode step (one micro-batch), 1 prefill
    std::array<std::vector<int>, kOpCount> m_allowed;
    std::array<std::array<std::array<double, kMaxOptions>, kOpCount>, 2> m_time{}; // [phase][op][option]
    std::array<std::array<double, kMaxOptions>, kOpCount> m_weight{};              // bytes per GPU
    std::vector<Stage> m_stages; // distinct pipeline stages with their multiplicity
    double m_p2pDec = 0, m_p2pPre = 0, m_activationBytes = 0;
    // Conversion costs per (phase, edge, from, to), filled on first use per configuration.
    std::array<std::array<std::array<std::array<double, kLayouts>, kLayouts>, kEdges>, 2> m_conv{};
    std::array<std::array<std::array<std::array<std::uint32_t, kLayouts>, kLayouts>, kEdges>, 2> m_convStamp{};
    std::uint32_t m_stamp = 0;
};

} // namespace shardlab::exact
