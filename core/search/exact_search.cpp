// `exact`: the best valid plan of the search space under the simulator, with a proof.
//
// 1. Every coarse configuration (TP, PP, EP, batch, micro-batches) the space's masks admit
//    gets an upper bound on its throughput: per operator group (exact_model.h), the
//    smallest decode time, prefill time and memory any choice of the group can reach,
//    summed, give lower bounds on TPOT, TTFT and memory (the simulator's figures are
//    monotone in each sum). Configurations whose bounds already break a limit are out.
// 2. Configurations are examined in decreasing bound order until the bound falls below
//    the best valid plan found. Inside one, for each pair of norm options (the only
//    layouts the groups share), a depth-first branch and bound picks one choice per
//    group: Pareto-dominated choices are dropped, partial sums plus the smallest
//    remaining contributions bound every branch.
// 3. The best candidates are evaluated with Simulator::evaluate; only its verdict counts.
//    A disagreement between the decomposition and the simulator is reported and the
//    result is then not claimed optimal.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "search/algorithms.h"
#include "search/budgeted_evaluator.h"
#include "search/exact_model.h"

namespace shardlab {

namespace {

using namespace exact;

// Relative slack for the decomposition's rounding: it sums the same terms as the
// simulator in another order (differences ~1e-15, tst_search_exact checks < 1e-12).
// Bounds and limits are relaxed by kSlack; a verified plan whose prediction is off by more
// than kMismatchTolerance (well inside the slack) counts as a disagreement, so whatever
// the slack absorbs is also checked.
constexpr double kSlack = 1e-9;
constexpr double kMismatchTolerance = 1e-10;

struct Config {
    Coarse coarse;
    double bound = 0; // upper bound on tokens/s per GPU
    int order = 0;    // enumeration index, the tie-break
};

struct Candidate {
    double predicted = 0;
    bool strict = false; // within the limits without slack
    Plan plan;
};

// Keeps only the choices no other choice matches or beats in every channel, sorted by
// their decode cost weighted by how often it occurs.
void paretoFilter(OpGroup& g, const std::array<double, 4>& weight)
{
    std::vector<Combo>& c = g.combos;
    auto key = [&](const Combo& x) {
        return weight[0] * x.cost.dec[0] + weight[1] * x.cost.dec[1] + weight[2] * x.cost.dec[2]
            + weight[3] * x.cost.dec[3];
    };
    std::stable_sort(c.begin(), c.end(), [&](const Combo& a, const Combo& b) { return key(a) < key(b); });
    std::vector<Combo> kept;
    kept.reserve(c.size());
    for (const Combo& x : c) {
        bool dominated = false;
        for (const Combo& k : kept)
            if (x.cost.dominatedBy(k.cost)) {
                dominated = true;
                break;
            }
        if (!dominated)
            kept.push_back(x);
    }
    c.swap(kept);
}

CostVec groupMin(const OpGroup& g)
{
    CostVec m = g.combos.front().cost;
    for (const Combo& c : g.combos)
        m = componentMin(m, c.cost);
    return m;
}

class ExactSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override;

private:
    double bestValue() const { return m_ev->bestValue(); }
    void search(int gi, const CostVec& partial);
    bool examine(const Config& cfg, bool trustPredictions);
    bool verify(const Candidate& c);
    void bound(Config& cfg);
    bool boundAll(std::vector<Config>& configs);
    std::string explainInfeasible() const;

    SearchContext* m_ctx = nullptr;
    BudgetedEvaluator* m_ev = nullptr;
    CostModel* m_model = nullptr;
    // Branch and bound state for one (configuration, norm options).
    std::vector<OpGroup> m_groups;
    std::vector<CostVec> m_suffixMin;
    std::vector<int> m_pick;
    int m_a = 0, m_f = 0;
    double m_localBest = 0;
    bool m_trust = true;
    std::vector<Candidate> m_candidates;
    long long m_nodes = 0;
    long long m_total = 0; // coarse configurations of the space
    double m_minMemGb = std::numeric_limits<double>::infinity(); // smallest bounds seen, for
    double m_minTtftMs = m_minMemGb, m_minTpotMs = m_minMemGb;   // "no valid plan" messages
    int m_mismatches = 0;
    std::string m_mismatchExample;
};

void ExactSearch::search(int gi, const CostVec& partial)
{
    ++m_nodes;
    const Figures f = m_model->figures(partial + m_suffixMin[gi]);
    if (!m_model->withinLimits(f, kSlack))
        return;
    const double threshold = std::max(bestValue(), m_trust ? m_localBest : 0.0) * (1 - kSlack);
    if (f.tokensPerSPerGpu < threshold)
        return;
    if (gi == static_cast<int>(m_groups.size())) {
        Candidate c;
        c.predicted = f.tokensPerSPerGpu;
        c.strict = m_model->withinLimits(f, -kSlack);
        c.plan = m_model->makePlan(m_a, m_f, m_groups, m_pick.data());
        if (c.strict)
            m_localBest = std::max(m_localBest, c.predicted);
        m_candidates.push_back(c);
        return;
    }
    const OpGroup& g = m_groups[gi];
    for (size_t i = 0; i < g.combos.size(); ++i) {
        m_pick[gi] = static_cast<int>(i);
        search(gi + 1, partial + g.combos[i].cost);
    }
}

// Evaluates a candidate with the simulator; true when the simulator disagrees with the
// prediction (value off, or a plan predicted within the limits found invalid).
bool ExactSearch::verify(const Candidate& c)
{
    SimResult r;
    Evaluation e;
    if (!m_ev->evaluate(c.plan, e, &r))
        return false;
    const bool disagree = r.valid ? std::abs(r.tokensPerSPerGpu - c.predicted) > kMismatchTolerance * r.tokensPerSPerGpu
                                  : c.strict;
    if (disagree) {
        if (m_mismatches++ == 0) {
            std::ostringstream os;
            os << "TP " << c.plan.tensorParallel << " PP " << c.plan.pipelineParallel << " EP "
               << c.plan.expertParallel << " batch " << c.plan.batch << ": predicted " << c.predicted
               << " tokens/s per GPU, simulator " << (r.valid ? r.tokensPerSPerGpu : 0.0)
               << (r.valid ? "" : " (invalid)");
            m_mismatchExample = os.str();
        }
    }
    return disagree;
}

// Branch and bound over one configuration; false when verification contradicted a
// prediction the pruning relied on (the caller then re-examines without trusting them).
bool ExactSearch::examine(const Config& cfg, bool trustPredictions)
{
    m_model->setCoarse(cfg.coarse);
    const ModelSpec& m = m_ctx->scenario.model;
    const std::array<double, 4> weight{double(m.denseLayerCount()), double(m.moeLayers()), 1, 1};
    m_trust = trustPredictions;
    m_localBest = 0;
    m_candidates.clear();
    for (int a : m_model->allowed(OpId::AttnNorm))
        for (int f : m_model->allowed(OpId::FfnNorm)) {
            m_model->buildGroups(a, f, m_groups);
            bool empty = false;
            for (OpGroup& g : m_groups) {
                empty = empty || g.combos.empty();
                if (!g.combos.empty())
                    paretoFilter(g, weight);
            }
            if (empty)
                continue;
            m_suffixMin.assign(m_groups.size() + 1, CostVec{});
            for (int i = static_cast<int>(m_groups.size()) - 1; i >= 0; --i)
                m_suffixMin[i] = m_suffixMin[i + 1] + groupMin(m_groups[i]);
            m_pick.assign(m_groups.size(), 0);
            m_a = a;
            m_f = f;
            search(0, CostVec{});
        }
    std::stable_sort(m_candidates.begin(), m_candidates.end(),
                     [](const Candidate& x, const Candidate& y) { return x.predicted > y.predicted; });
    bool contradicted = false;
    for (const Candidate& c : m_candidates) {
        if (c.predicted < bestValue() * (1 - kSlack))
            break;
        // A strict candidate may have raised the local bound that pruned other branches.
        if (verify(c) && c.strict && m_trust)
            contradicted = true;
    }
    return !contradicted;
}

// Upper bound of one configuration: the best over the norm options of the throughput
// with every group at its smallest contributions (0 when even those break a limit).
void ExactSearch::bound(Config& cfg)
{
    m_model->setCoarse(cfg.coarse);
    for (int a : m_model->allowed(OpId::AttnNorm))
        for (int f : m_model->allowed(OpId::FfnNorm)) {
            m_model->buildGroups(a, f, m_groups);
            CostVec lb;
            bool empty = false;
            for (const OpGroup& g : m_groups) {
                if (g.combos.empty()) {
                    empty = true;
                    break;
                }
                lb += groupMin(g);
            }
            if (empty)
                continue;
            const Figures fig = m_model->figures(lb);
            m_minMemGb = std::min(m_minMemGb, fig.memoryGb);
            m_minTtftMs = std::min(m_minTtftMs, fig.ttftMs);
            m_minTpotMs = std::min(m_minTpotMs, fig.tpotMs);
            if (m_model->withinLimits(fig, kSlack))
                cfg.bound = std::max(cfg.bound, fig.tokensPerSPerGpu);
        }
}

// Pass 1: every coarse configuration the space's masks admit, with its bound; those
// whose bound already breaks a limit are dropped. False when stopped.
bool ExactSearch::boundAll(std::vector<Config>& configs)
{
    const SearchSpace& space = m_ctx->space;
    const long long N = m_ctx->scenario.cluster.totalGpus();
    const auto& slots = space.slots();
    int choice[SearchSpace::kMaxSlots] = {};
    const size_t w = static_cast<size_t>(space.widestSlot());
    std::vector<std::uint8_t> tpBuf(w), ppBuf(w), epBuf(w), mbBuf(w);
    std::uint8_t *tpOk = tpBuf.data(), *ppOk = ppBuf.data(), *epOk = epBuf.data(), *mbOk = mbBuf.data();
    space.mask(space.tpSlot(), choice, tpOk);
    for (size_t ti = 0; ti < slots[0].values.size(); ++ti) {
        if (!tpOk[ti])
            continue;
        choice[0] = static_cast<int>(ti);
        space.mask(space.ppSlot(), choice, ppOk);
        for (size_t pi = 0; pi < slots[1].values.size(); ++pi) {
            if (!ppOk[pi])
                continue;
            choice[1] = static_cast<int>(pi);
            space.mask(space.epSlot(), choice, epOk);
            for (size_t ei = 0; ei < slots[2].values.size(); ++ei) {
                if (!epOk[ei])
                    continue;
                if (m_ev->stopRequested())
                    return false;
                choice[2] = static_cast<int>(ei);
                for (size_t bi = 0; bi < slots[3].values.size(); ++bi) {
                    choice[3] = static_cast<int>(bi);
                    space.mask(space.microSlot(), choice, mbOk);
                    for (size_t mi = 0; mi < slots[4].values.size(); ++mi) {
                        if (!mbOk[mi])
                            continue;
                        Config cfg;
                        cfg.coarse.tp = slots[0].values[ti];
                        cfg.coarse.pp = slots[1].values[pi];
                        cfg.coarse.ep = slots[2].values[ei];
                        cfg.coarse.dp = static_cast<int>(N / (static_cast<long long>(cfg.coarse.tp) * cfg.coarse.pp));
                        cfg.coarse.batch = slots[3].values[bi];
                        cfg.coarse.micro = slots[4].values[mi];
                        cfg.order = static_cast<int>(m_total++);
                        bound(cfg);
                        if (cfg.bound > 0)
                            configs.push_back(cfg);
                    }
                }
                m_ev->setFraction(0.5 * (ti + double(pi) / slots[1].values.size()) / slots[0].values.size());
                m_ev->tick();
            }
        }
    }
    return true;
}

std::string ExactSearch::explainInfeasible() const
{
    const Scenario& s = m_ctx->scenario;
    const WorkloadSpec& w = s.workload;
    std::ostringstream why;
    if (m_minMemGb > s.cluster.gpu.hbmGb)
        why << "every plan needs at least " << std::round(m_minMemGb * 10) / 10 << " GB per GPU, the GPU has "
            << s.cluster.gpu.hbmGb << " GB";
    else if (m_minTtftMs > w.ttftSloMs)
        why << "the shortest time to first token any plan reaches is " << std::round(m_minTtftMs) << " ms, the SLO is "
            << w.ttftSloMs << " ms";
    else if (m_minTpotMs > w.tpotSloMs)
        why << "the shortest time per output token any plan reaches is " << std::round(m_minTpotMs * 100) / 100
            << " ms, the SLO is " << w.tpotSloMs << " ms";
    else
        why << "no plan meets the memory, TTFT and TPOT limits at the same time";
    return why.str();
}

AlgorithmReport ExactSearch::run(SearchContext& ctx)
{
    m_ctx = &ctx;
    m_ev = &ctx.evaluator;
    CostModel model(ctx.simulator, ctx.space);
    m_model = &model;
    AlgorithmReport report;

    std::vector<Config> configs;
    if (!boundAll(configs))
        return report;

    // Pass 2: examine in decreasing bound order until no bound can beat the best.
    std::stable_sort(configs.begin(), configs.end(), [](const Config& x, const Config& y) {
        return x.bound > y.bound || (x.bound == y.bound && x.order < y.order);
    });
    size_t examined = 0;
    for (const Config& cfg : configs) {
        if (cfg.bound < bestValue() * (1 - kSlack))
            break;
        if (m_ev->stopRequested())
            return report;
        ++examined;
        if (!examine(cfg, true))
            examine(cfg, false);
        m_ev->setFraction(0.5 + 0.5 * double(examined) / configs.size());
        m_ev->tick();
    }

    std::ostringstream note;
    if (!m_ev->haveBest()) {
        report.provedInfeasible = m_mismatches == 0;
        note << "no valid plan exists in the search space: " << explainInfeasible() << " (" << m_total
             << " coarse configurations checked)";
    } else {
        report.provedOptimal = m_mismatches == 0;
        note << "optimal over " << m_total << " coarse configurations (" << configs.size()
             << " within the limits' bounds, " << examined << " examined in detail, " << m_nodes
             << " branch-and-bound nodes)";
    }
    if (m_mismatches > 0)
        note << "; NOT CERTIFIED: the exact search's cost model disagrees with the simulator on " << m_mismatches
             << " plan(s), e.g. " << m_mismatchExample << " (core/search/exact_model.cpp must mirror the simulator)";
    report.note = note.str();
    return report;
}

} // namespace

std::unique_ptr<SearchAlgorithm> makeExactSearch() { return std::make_unique<ExactSearch>(); }

} // namespace shardlab
