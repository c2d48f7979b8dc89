// The exact search's view of the cost model (internal to core/search).
//
// For fixed degrees (TP, PP, EP, DP), micro-batches m and batch B, Simulator::evaluate is
// a monotone function of additive sums (LayerSums): the time of one dense layer, of one
// MoE layer, of the embedding (first stage) and of the LM head (last stage), per phase,
// and the bytes each holds. The per-operator options enter those sums through groups of
// operators that the operator graph connects once the two norms' options are fixed (the
// norms are the only operators whose layouts several groups share): attention
// (qkv_proj, attention, out_proj), the dense FFN, the MoE block, the embedding, the LM
// head, joined where an edge crosses them. GroupTables derives the groups from the graph
// (model/op_graph.h) and prices every option of every group with the cost model's own
// functions (sim/cost_model.h): there is no second copy of any formula. The tables price
// with the engines' all-reduce size limits lifted (CostModel::withSizeCapsLifted): no price
// is above the simulator's and none jumps with the batch, so every figure derived from
// them bounds the simulator's; where a limit is crossed the two differ and exact evaluates
// the plan itself (exact_search.cpp, "batch segments").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "search/search_space.h"
#include "sim/simulator.h"

namespace shardlab::exact {

// The plan fields exact enumerates before the batch: the degrees, the redundant experts and
// two-batch overlap (they change the phase context, so every price). A range of redundant
// counts (redundant, redundant + EP, ..., redundantHigh) is priced by the cost model's
// phase floor (CostModel::phaseFloor): every figure is then a bound over the range, not
// one plan's.
struct Degrees {
    int tp = 1, pp = 1, ep = 1, dp = 1;
    int instances = 1;
    int redundant = 0;
    int redundantHigh = 0;
    bool tbo = false;
    // A runnable scenario's engine mode (model/engine_caps.h): operators take only its
    // options. -1: no engine, every option.
    int mode = -1;
    bool isRange() const { return redundantHigh > redundant; }
};

// The degrees as a plan with the recipe's options, `micro` micro-batches and batch `batch`.
Plan planOfDegrees(const Degrees& d, int micro, int batch);

// A decode term of a combo: the price at `index` of DecodeTable::values, added to channel
// `target` of LayerSums::dec (0-3) or, from kPartTarget on, to overlap part
// target - kPartTarget of LayerSums::moeDec (the MoE layer's terms by overlap part; their
// prefill twins are in Combo::fixed.moePre).
struct Term {
    static constexpr std::uint8_t kPartTarget = 4;
    // Speculative decoding's drafting pass (LayerSums::draftLayer, draftFixed, draftParts).
    static constexpr std::uint8_t kDraftLayerTarget = kPartTarget + kOverlapParts;
    static constexpr std::uint8_t kDraftFixedTarget = kDraftLayerTarget + 1;
    static constexpr std::uint8_t kDraftPartTarget = kDraftFixedTarget + 1;
    std::uint8_t target = 0;
    std::uint16_t index = 0;
};

// One choice of options for every operator of a group. Its options and decode terms live
// in the group's flat arrays (one allocation per group, not per combo: a solve builds
// thousands of combos and prunes most of them at once).
struct Combo {
    LayerSums fixed;                   // prefill and weights: independent of the batch
    std::uint32_t firstTerm = 0, termCount = 0; // into OpGroup::terms
    bool hasKv = false;                // the group holds attention: kv of option kvOption
    std::uint8_t kvOption = 0;
    std::array<std::uint8_t, 2> kvChannels{}; // channels (dense, MoE) whose layers hold the KV
    std::uint8_t kvChannelCount = 0;
};

struct OpGroup {
    std::vector<OpId> ops;
    std::vector<Combo> combos;
    std::vector<std::uint8_t> options; // combo i's option of ops[j] at i * ops.size() + j
    std::vector<Term> terms;
    int option(size_t combo, size_t op) const { return options[combo * ops.size() + op]; }
};

// Decode-phase prices at one (micro-batches, batch): every allowed option of every
// operator and every edge conversion, and the KV bytes per attention option.
struct DecodeTable {
    std::vector<double> values;
    std::array<double, kMaxOptions> kvPerLayer{};
    PhaseContext dec;
    // Speculative decoding: the drafting pass's phase and the cache its block holds per
    // attention option (its prices are in `values`, from GroupTables' draft base).
    std::array<double, kMaxOptions> draftKvPerLayer{};
    PhaseContext draft;
};

class GroupTables {
public:
    GroupTables(const Simulator& sim, const SearchSpace& space);

    // Prepares the degrees: the options each operator may take, prefill prices, weights,
    // pipeline stages. Decode tables are computed per (micro, batch) on demand.
    void setDegrees(const Degrees& d);
    const Degrees& degrees() const { return m_d; }
    const std::vector<int>& allowed(OpId id) const { return m_allowed[static_cast<int>(id)]; }
    bool empty() const; // some present operator has no allowed option

    // The groups for norm options (a, f), combos with their fixed parts and decode terms.
    void buildGroups(int a, int f, std::vector<OpGroup>& out) const;
    // The norms' own costs for (a, f), as a one-combo group.
    LayerSums normSums(int a, int f, const DecodeTable& t) const;

    // Decode prices at (micro, batch), cached for the current degrees (bounded cache).
    const DecodeTable& decodeAt(int micro, int batch);
    LayerSums comboSums(const OpGroup& g, const Combo& c, const DecodeTable& t) const;

    // A lower bound of every plan's sums at (micro, batch): per operator and per edge
    // the cheapest allowed choice, independently (with two-batch overlap, the MoE layer's
    // overlapped time at the best pair of dispatch/combine options, as parts).
    // With a >= 0 and f >= 0, the norms take those options only (a solve's norm pair).
    LayerSums lowerBound(int micro, int batch, int a = -1, int f = -1);

    PipelineFigures figures(int micro, int batch, const PhaseContext& dec, const LayerSums& s) const;
    bool within(const PipelineFigures& f, double slack) const { return m_cm.withinLimits(f, slack); }

    // The plan for the current degrees with these options.
    Plan makePlan(int micro, int batch, int a, int f, const std::vector<OpGroup>& groups, const int* pick) const;

private:
    struct EdgeRef {
        GraphEdge edge;
        int channel = 0;   // 0 dense layer, 1 MoE layer, 2 first stage, 3 last stage
        int base = 0;      // index of its [from option][to option] block in the tables
    };
    // The current degrees with this batch and micro-batches, the recipe's options.
    Plan degreesPlan(int micro, int batch) const;
    int opIndex(OpId id, int option) const { return m_opBase[static_cast<int>(id)] + option; }
    // An option's compute/memory time (OpCost::timeS) and its own collective, apart: the
    // overlap parts of an MoE layer (cost_model.h, OverlapPart).
    int computeIndex(OpId id, int option) const { return m_computeBase + opIndex(id, option); }
    int ownIndex(OpId id, int option) const { return m_ownBase + opIndex(id, option); }
    // Speculative decoding: a price of the drafting pass (value index `vi` at the draft
    // phase), and the MTP input projection's time by qkv_proj's option.
    int draftIndex(int vi) const { return m_draftBase + vi; }
    int projIndex(int qkvOption) const { return m_projBase + qkvOption; }
    // The drafting pass's terms of operator `id` at option `o` (value index vi) into a
    // combo: the draft layer's price, parts and weights, the fixed parts' prices.
    void addDraftTerms(Combo& c, OpId id, int o, int vi, const std::function<void(int, int)>& term) const;
    // Adds the draft-phase parts of `id`'s option `o` to `parts`.
    void addDraftParts(OpId id, int o, const std::vector<double>& v, std::array<double, kOverlapParts>& parts) const;
    // The drafting pass's share of a lower bound (lowerBound's, per operator and edge).
    void draftLowerBound(const DecodeTable& t, LayerSums& s) const;
    // The drafting pass's prices at (micro, batch) into `t` (decodeAt's, with drafts).
    void fillDraftPrices(const Plan& p, DecodeTable& t);
    // Adds operator `id`'s option `o` to the parts of an MoE layer (values from `v`).
    void addParts(OpId id, int o, const std::vector<double>& v, std::array<double, kOverlapParts>& parts) const;
    int edgeIndex(const EdgeRef& e, int from, int to) const { return e.base + from * kMaxOptions + to; }
    void addCombo(OpGroup& g, const std::vector<const EdgeRef*>& edges, const std::array<int, kOpCount>& option) const;

    const Simulator& m_sim;
    const CostModel m_cm; // the simulator's with the size caps lifted: every price a floor
    const SearchSpace& m_space;
    bool m_present[kOpCount] = {};
    std::vector<std::vector<OpId>> m_groupOps; // groups of the graph (norms excluded)
    std::vector<EdgeRef> m_edges;              // every edge of the present layer kinds + fixed
    std::array<int, kOpCount> m_opChannels{}; // per op: bit mask of the channels its costs go to
    std::array<int, kOpCount> m_opBase{};
    int m_computeBase = 0, m_ownBase = 0;
    int m_values = 0;
    // Speculative decoding (the cost model's draftPasses() > 0): the drafting pass's prices
    // follow the decode prices (m_draftBase, the same layout) and the projection's times
    // (m_projBase); the draft block is a layer of channel m_draftChannel (the last kind).
    bool m_drafts = false;
    int m_draftChannel = 0, m_draftBase = 0, m_projBase = 0;
    std::array<double, kMaxOptions> m_projWeights{}; // the projection's weights by qkv_proj's option

    Degrees m_d;
    StageShapes m_stages;
    PhaseContext m_pre;
    std::array<std::vector<int>, kOpCount> m_allowed;
    std::vector<double> m_preValues, m_weights; // per op option / edge pair
    std::map<std::pair<int, int>, DecodeTable> m_cache;
};

// Ascending redundant counts as maximal runs in steps of `step`: (first, last) of each.
std::vector<std::pair<int, int>> countRanges(const std::vector<int>& counts, int step);
// Largest b in [lo, hi] with ok(b) > 0, for ok positive on a prefix; 0 when none. ok(b) < 0
// says b fails and no batch below it is wanted either (its bound is already below the best
// plan): the search stops with 0. `hint`: where the answer is expected (a branch's child
// near its parent's batch, a micro-batch count near the previous one's); the search
// gallops from there before bisecting. Without one (-1) it bisects [lo, hi].
int largestFeasible(int lo, int hi, const std::function<int(int)>& ok, int hint = -1);


// The engine modes an entry of these degrees is solved in: each mode the space's engine
// runs them in (their operators' options differ), or -1 (every option) without an engine.
std::vector<int> entryModes(const SearchSpace& space, const Degrees& d);

} // namespace shardlab::exact
