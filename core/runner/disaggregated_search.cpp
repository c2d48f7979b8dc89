#include "runner/disaggregated_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "runner/pools_search.h"
#include "search/best_plan_moves.h"
#include "search/budgeted_evaluator.h"
#include "search/search_space.h"

namespace shardlab {

namespace {

using pools::PoolObserver;
using pools::PoolsSearch;
using pools::searchOutcome;

struct RankedSplit {
    int prefillGpus = 0;
    double recipe = 0; // the recipe's deployment tokens/s per GPU (0: invalid)
    DisaggregatedRecipe plan;
    double moved = -1; // the best pools found, moved to this split: tokens/s per GPU (-1: not tried)
};


// One deployment search: the splits examined and ranked by the recipe, then the recipe's
// answer or each split's pool searches, the best pair of pools kept.
class DeploymentSearch {
public:
    DeploymentSearch(const Scenario& s, const SearchOptions& o, SearchObserver* observer, const std::atomic<bool>* stop)
        : m_scenario(s), m_options(o), m_observer(observer), m_stop(stop), m_gpus(s.cluster.totalGpus()),
          m_everySplit(disaggregatedSplits(s))
    {
        m_out.algorithm = o.algorithm;
        SearchAlgorithmInfo info;
        m_budgeted = findSearchAlgorithm(o.algorithm, info) && info.budgeted; // not exact, not the recipe
    }

    SearchOutcome run()
    {
        const FieldErrors errors = problems();
        if (!errors.empty()) {
            m_out.message = errors.front().toString();
            return searchOutcome(m_scenario, m_out);
        }
        m_dsim.emplace(m_scenario); // on a checked scenario only
        rankSplits();
        // Exact starts from the best recipe pair as its incumbent (a valid lower bound; when
        // no pool search beats it, it is the proved optimum). A budgeted search moves its
        // own pool searches' pairs (the recipe's pools are a poor guide to the best split)
        // and takes the recipe pair, which its ranking evaluated, as a floor at the end
        // (keepRecipeFloor).
        const bool recipeIncumbent = exact() || m_options.algorithm == "megatron";
        if (!m_ranked.empty() && m_ranked.front().plan.found && recipeIncumbent)
            offer(m_ranked.front().plan.plan, m_ranked.front().plan.result);
        m_rankingCalls = m_out.calls;
        if (m_options.algorithm == "megatron")
            recipeOnly();
        else if (!searchPools())
            return searchOutcome(m_scenario, m_out); // a pool search could not run
        if (m_splits.size() < m_everySplit.size())
            m_out.message += "; " + std::to_string(m_splits.size()) + " of the cluster's "
                + std::to_string(m_everySplit.size()) + " prefill:decode splits examined, evenly spaced (at most "
                + std::to_string(kMaxDisaggregatedSplits)
                + ", and a budgeted search ranks only as many as half its budget pays for)";
        if (m_out.found) // with both pools' per-operator breakdowns (the searches ran on the fast path)
            m_out.bestResult = m_dsim->evaluate(m_out.best);
        m_out.wallSeconds = elapsed();
        PoolObserver(m_observer, m_out, 1).finish(m_out);
        return searchOutcome(m_scenario, m_out);
    }

private:
    bool exact() const { return m_options.algorithm == "exact"; }
    // exact's floor as the deployment's output tokens/s (0: none).
    double floorTokensPerS() const { return exact() ? std::max(0.0, m_options.exactFloor) * double(m_gpus) : 0.0; }
    bool stopped() const { return m_stop && m_stop->load(std::memory_order_relaxed); }
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(); }

    FieldErrors problems() const
    {
        FieldErrors errors = validateSearchOptions(m_options);
        for (const FieldError& e : validateScenario(m_scenario))
            errors.push_back({{}, "scenario." + e.where, e.reason});
        if (errors.empty() && m_scenario.workload.serving != ServingMode::Disaggregated)
            errors.push_back({{}, "scenario.workload.serving", "not a disaggregated scenario"});
        if (errors.empty() && m_everySplit.empty())
            errors.push_back({{}, "scenario.cluster", "a cluster of one GPU cannot be split into a prefill and a decode pool"});
        if (errors.empty() && exact() && m_everySplit.size() > size_t(kMaxDisaggregatedSplits))
            errors.push_back({{}, "scenario.cluster.nodes",
                              "exact proves its answer over every prefill:decode split; this cluster has "
                                  + std::to_string(m_everySplit.size()) + ", above its bound of "
                                  + std::to_string(kMaxDisaggregatedSplits) + " (use a budgeted algorithm, or fewer nodes)"});
        return errors;
    }

    // The recipe at one split: the megatron answer, the ranking, exact's first incumbent.
    void rank(int prefillGpus)
    {
        RankedSplit r;
        r.prefillGpus = prefillGpus;
        const int decodeGpus = static_cast<int>(m_gpus - prefillGpus);
        const RecipePlan pre = megatronPlan(m_dsim->pool(PoolRole::Prefill, prefillGpus));
        const RecipePlan dec = megatronPlan(m_dsim->pool(PoolRole::Decode, decodeGpus));
        m_out.calls += pre.evaluations + dec.evaluations + 2;
        r.plan.plan = {pre.plan, dec.plan};
        r.plan.result = m_dsim->evaluate(r.plan.plan);
        r.plan.found = r.plan.result.valid;
        r.recipe = r.plan.found ? r.plan.result.tokensPerSPerGpu : 0;
        r.plan.explanation = "prefill pool: " + pre.explanation + " Decode pool: " + dec.explanation;
        m_ranked.push_back(std::move(r));
    }

    // At most kMaxDisaggregatedSplits splits, evenly spaced (exact was refused above); a
    // budgeted search spends at most half its budget on the ranking (the first split's
    // recipe calls tell what one costs): fewer splits, still evenly spaced. Best recipe
    // first; among equals (none valid) the more balanced split first.
    void rankSplits()
    {
        m_splits = m_everySplit;
        if (m_splits.size() > size_t(kMaxDisaggregatedSplits)) {
            m_splits.clear();
            for (int i = 0; i < kMaxDisaggregatedSplits; ++i)
                m_splits.push_back(m_everySplit[size_t(i) * (m_everySplit.size() - 1) / (kMaxDisaggregatedSplits - 1)]);
        }
        m_candidateSplits = static_cast<long long>(m_splits.size());
        if (!m_splits.empty()) {
            rank(m_splits.front());
            const int perSplit = std::max(1, m_out.calls);
            m_rankCallsPerSplit = perSplit;
            const long long callsForEverySplit = static_cast<long long>(perSplit) * static_cast<long long>(m_splits.size());
            if (m_budgeted && m_splits.size() > 1 && callsForEverySplit > m_options.budget / 2) {
                const size_t keep = std::clamp<size_t>(static_cast<size_t>(m_options.budget / 2 / perSplit), 1, m_splits.size());
                std::vector<int> spaced;
                for (size_t i = 0; i < keep; ++i)
                    spaced.push_back(m_splits[keep == 1 ? 0 : i * (m_splits.size() - 1) / (keep - 1)]);
                m_splits = spaced;
            }
        }
        for (size_t i = 1; i < m_splits.size() && !stopped(); ++i)
            rank(m_splits[i]);
        const long long n = m_gpus;
        std::stable_sort(m_ranked.begin(), m_ranked.end(), [n](const RankedSplit& a, const RankedSplit& b) {
            if (a.recipe != b.recipe)
                return a.recipe > b.recipe;
            return std::abs(2LL * a.prefillGpus - n) < std::abs(2LL * b.prefillGpus - n);
        });
    }

    // A better valid deployment (r: its evaluation) becomes the best; with exact's floor,
    // only one above it (the recipe's pair is offered first and may lie below).
    bool offer(const DisaggregatedPlan& plan, const DisaggregatedResult& r)
    {
        if (r.valid) { // each split's best, whichever step found it (the splits' records)
            double& atSplit = m_bestAtSplit[plan.prefill.gpus()];
            atSplit = std::max(atSplit, r.tokensPerSPerGpu);
        }
        if (r.valid && r.outputTokensPerS > floorTokensPerS()
            && (!m_out.found || r.tokensPerSPerGpu > m_out.bestResult.tokensPerSPerGpu)) {
            m_out.found = true;
            m_out.best = plan;
            m_out.bestResult = r;
            m_out.bestCurve.push_back({m_out.calls, r.tokensPerSPerGpu});
            return true;
        }
        return false;
    }

    // --algo megatron: the recipe on each pool at every split ranked.
    void recipeOnly()
    {
        for (const RankedSplit& r : m_ranked) {
            PoolsSearch::Split sp;
            sp.prefillGpus = r.prefillGpus;
            sp.decodeGpus = static_cast<int>(m_gpus - r.prefillGpus);
            sp.searched = true;
            sp.prefillFound = r.plan.result.prefill.valid;
            sp.decodeFound = r.plan.result.decode.valid;
            sp.prefillTokensPerS = r.plan.result.prefill.valid ? outputTokensPerS(m_scenario.workload, r.plan.result.prefillRequestsPerS) : 0;
            sp.decodeTokensPerS = r.plan.result.decode.valid ? outputTokensPerS(m_scenario.workload, r.plan.result.decodeRequestsPerS) : 0;
            sp.kvLinkTokensPerS = outputTokensPerS(m_scenario.workload, r.plan.result.kvLinkRequestsPerS);
            sp.tokensPerSPerGpu = r.recipe;
            m_out.splits.push_back(sp);
        }
        m_out.message = m_out.found ? "the recipe on each pool; the best of " + std::to_string(m_ranked.size())
                + " splits: " + m_ranked.front().plan.explanation
                                    : "the recipe gives no valid pair of pools at any of the "
                + std::to_string(m_ranked.size()) + " splits";
    }

    // The deployment search cannot run (a budget short of the ranking, a pool search that
    // failed): the outcome says why, with nothing found.
    void fail(const std::string& message)
    {
        m_out = PoolsSearch{};
        m_out.algorithm = m_options.algorithm;
        m_out.failed = true;
        m_out.message = message;
        m_out.wallSeconds = elapsed();
        PoolObserver(m_observer, m_out, 1).finish(m_out);
    }

    bool searchPools();
    bool searchSplit(int i, PoolObserver& obs, int& searches);
    void moveBestPools(int searched);
    void finishBestPools();
    Plan movedPool(PoolRole role, int gpus, const Plan& p) const;
    void poolsMessage();

    const Scenario& m_scenario;
    const SearchOptions& m_options;
    SearchObserver* m_observer;
    const std::atomic<bool>* m_stop;
    const std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    std::optional<DisaggregatedSimulator> m_dsim; // once the scenario is checked
    const long long m_gpus;
    const std::vector<int> m_everySplit; // every prefill:decode split of the cluster
    bool m_budgeted = false;
    long long m_candidateSplits = 0;   // the splits a deployment search may rank (before the budget's cut)
    long long m_rankCallsPerSplit = 1; // what the recipe's ranking of one split costs
    bool m_poolSearchEndedEarly = false; // a budgeted pool search used less than its share
    std::map<long long, double> m_bestAtSplit; // prefill GPUs -> the best valid deployment offered there
    std::vector<int> m_splits;           // those examined
    std::vector<RankedSplit> m_ranked;   // by the recipe's deployment, best first
    PoolsSearch m_out;
    // The pool searches: splits searched (the first K ranked), calls per pool search, and
    // whether exact's proof still holds.
    int m_searchedSplits = 0, m_poolBudget = 0;
    // The finishing step (finishBestPools): its calls, and whether it kept a better pair.
    int m_finishCalls = 0;
    bool m_finishKept = false;
    int m_rankingCalls = 0;      // the calls the ranking spent (where it evaluated the recipe pair)
    bool m_recipeAnswer = false; // a budgeted search answered with the recipe pair (keepRecipeFloor)
    void keepRecipeFloor();
    bool m_proof = false;
};

// Each of the first K ranked splits: both pools searched (budgeted: the budget the ranking
// left, shared), the pair evaluated as a deployment. False when a pool search could not run.
bool DeploymentSearch::searchPools()
{
    const int S = static_cast<int>(m_ranked.size());
    m_searchedSplits = S;
    m_poolBudget = m_options.budget;
    if (m_budgeted) {
        // The recipe's ranking is charged: the pool searches share what it left.
        const int remaining = m_options.budget - m_out.calls;
        if (remaining < 2) {
            const int ranking = m_out.calls;
            fail("budget: " + std::to_string(m_options.budget) + " simulator calls do not cover the "
                 + std::to_string(ranking) + " the recipe spends ranking the " + std::to_string(S)
                 + " prefill:decode splits plus one per pool search; give at least " + std::to_string(ranking + 2)
                 + " (or --algo megatron for the recipe alone)");
            return false;
        }
        m_searchedSplits = std::clamp(remaining / 1000, 1, S);
        // After each split's pool searches the best pools are moved to the other splits
        // (moveBestPools): one deployment evaluation, two calls, per split.
        const int moves = 2 * (S - 1) * m_searchedSplits;
        m_poolBudget = std::max(1, (remaining - moves) / (2 * m_searchedSplits));
    }
    PoolObserver obs(m_observer, m_out, 2 * m_searchedSplits);
    obs.m_budget = m_budgeted ? m_options.budget : 0;
    m_proof = exact();
    int searches = 0;
    for (int i = 0; i < S; ++i) {
        if (!searchSplit(i, obs, searches))
            return false;
        if (m_budgeted && i < m_searchedSplits)
            moveBestPools(i);
    }
    if (m_budgeted) {
        finishBestPools();
        keepRecipeFloor();
    }
    // A split's record gives the best deployment evaluated there by any step (its pool
    // searches, the best pools moved to it, the finishing moves), so the answer's split
    // shows the answer's figure.
    for (PoolsSearch::Split& sp : m_out.splits) {
        const auto it = m_bestAtSplit.find(sp.prefillGpus);
        if (it == m_bestAtSplit.end() || it->second <= sp.tokensPerSPerGpu)
            continue;
        // The record's pool figures are its own searches'; the note says where the
        // deployment figure comes from.
        std::ostringstream came;
        if (m_recipeAnswer && sp.prefillGpus == m_out.best.prefill.gpus()
            && it->second == m_out.bestResult.tokensPerSPerGpu) // keepRecipeFloor's answer
            came << "the recipe's deployment, which the ranking of the splits evaluated: " << it->second
                 << " tokens/s per GPU";
        else
            came << "the best deployment evaluated here by any step (pool searches, pools moved from another split, "
                 << "the finishing moves): " << it->second << " tokens/s per GPU";
        sp.note += (sp.note.empty() ? "" : "; ") + came.str();
        sp.tokensPerSPerGpu = it->second;
    }
    m_out.stopped = stopped();
    m_out.provedOptimal = m_proof && m_out.found && !m_out.stopped;
    m_out.provedInfeasible = m_proof && !m_out.found && !m_out.stopped; // with a floor: none above it
    poolsMessage();
    return true;
}

// Split i of the ranking: its record, and its pools searched when it is among those the
// budget covers and may beat the best deployment (decode first: the scarcer pool in most
// deployments, so exact's floor prunes early). False when a pool search could not run.
bool DeploymentSearch::searchSplit(int i, PoolObserver& obs, int& searches)
{
    const RankedSplit& r = m_ranked[i];
    PoolsSearch::Split sp;
    sp.prefillGpus = r.prefillGpus;
    sp.decodeGpus = static_cast<int>(m_gpus - r.prefillGpus);
    const Simulator& ps = m_dsim->pool(PoolRole::Prefill, sp.prefillGpus);
    sp.kvLinkTokensPerS =
        outputTokensPerS(m_scenario.workload, kvLinkRequestsPerS(ps.costs(), sp.prefillGpus, sp.decodeGpus));
    // exact examines only deployments above the best so far, or above the caller's floor
    // (SearchOptions::exactFloor, tokens/s per GPU of the whole cluster) before there is one.
    const double incumbent = m_out.found ? m_out.bestResult.outputTokensPerS : floorTokensPerS();
    if (i >= m_searchedSplits) {
        sp.note = "not searched: below the " + std::to_string(m_searchedSplits) + " splits the budget covers";
        if (r.moved >= 0) {
            std::ostringstream moved;
            moved << "; the best pools found, moved here: " << r.moved << " tokens/s per GPU";
            sp.note += r.moved > 0 ? moved.str() : "; the best pools found are not valid here";
        }
    } else if (stopped()) {
        m_proof = false;
        sp.note = "not searched: stopped";
    } else if (exact() && sp.kvLinkTokensPerS <= incumbent) {
        sp.note = "the KV links alone carry no more than the best deployment";
    }
    if (!sp.note.empty()) {
        m_out.splits.push_back(sp);
        return true;
    }
    SearchOutcome pools[2];
    bool skip = false;
    for (int k = 0; k < 2 && !skip; ++k) {
        const PoolRole role = k == 0 ? PoolRole::Decode : PoolRole::Prefill;
        const int gpus = role == PoolRole::Prefill ? sp.prefillGpus : sp.decodeGpus;
        SearchOptions o = m_options;
        o.budget = m_poolBudget;
        o.seed = m_options.seed + static_cast<std::uint64_t>(i);
        if (exact())
            o.exactFloor = incumbent / gpus;
        obs.begin(searches++, m_out.calls);
        SearchOutcome& so = pools[role == PoolRole::Prefill ? 0 : 1];
        so = runSearch(m_dsim->pool(role, gpus).scenario(), o, &obs, m_stop);
        m_out.calls += so.calls;
        m_poolSearchEndedEarly |= m_budgeted && so.calls < o.budget;
        if (so.failed) { // the same for every pool: the deployment search cannot run
            fail(so.message);
            return false;
        }
        (role == PoolRole::Prefill ? sp.prefillFound : sp.decodeFound) = so.found;
        const double tokens = so.found ? so.bestResult.outputTokensPerS : 0;
        (role == PoolRole::Prefill ? sp.prefillTokensPerS : sp.decodeTokensPerS) = tokens;
        if (exact() && !(so.provedOptimal || so.provedInfeasible))
            m_proof = false; // stopped, or the tables disagreed with the simulator
        if (!so.found || (exact() && tokens <= incumbent)) {
            skip = true;
            m_poolSearchEndedEarly |= m_budgeted && k == 0; // the split's other pool is not searched
            sp.note = std::string(poolRoleName(role)) + " pool: "
                + (so.found || o.exactFloor > 0 ? "no plan beats the best deployment so far"
                                                : "no valid plan (" + so.message + ")");
        }
    }
    sp.searched = true;
    if (!skip) {
        const DisaggregatedPlan plan{pools[0].best, pools[1].best};
        const DisaggregatedResult res = m_dsim->evaluate(plan);
        sp.tokensPerSPerGpu = res.valid ? res.tokensPerSPerGpu : 0;
        offer(plan, res);
    }
    m_out.splits.push_back(sp);
    return true;
}

// A budgeted search, after the pool searches of ranked split `searched`: the best pair of
// pools so far moved to every other split (movedPool) and evaluated as a deployment, a
// better one kept. The recipe's pools are a poor guide to the best split (docs/search.md),
// so the splits not yet searched are searched next in the order the moved pools rank them
// (the valid first, the recipe's order among equals).
void DeploymentSearch::moveBestPools(int searched)
{
    if (!m_out.found)
        return;
    const DisaggregatedPlan from = m_out.best;
    for (RankedSplit& r : m_ranked) {
        if (stopped() || m_out.calls + 2 > m_options.budget)
            break;
        if (r.prefillGpus == from.prefill.gpus())
            continue;
        const int decodeGpus = static_cast<int>(m_gpus - r.prefillGpus);
        const DisaggregatedPlan plan{movedPool(PoolRole::Prefill, r.prefillGpus, from.prefill),
                                     movedPool(PoolRole::Decode, decodeGpus, from.decode)};
        m_out.calls += 2;
        const DisaggregatedResult res = m_dsim->evaluate(plan);
        r.moved = std::max(r.moved, res.valid ? res.tokensPerSPerGpu : 0.0);
        offer(plan, res);
    }
    std::stable_sort(m_ranked.begin() + searched + 1, m_ranked.end(),
                     [](const RankedSplit& a, const RankedSplit& b) { return a.moved > b.moved; });
}

// A budgeted search ranked the splits by the recipe's deployment at each, within its
// budget: when its pool searches, moves and finish found nothing better (or nothing valid),
// the best of those deployments is its answer, never "no valid plan" beside it. Its curve
// then shows it at the call the ranking had spent.
void DeploymentSearch::keepRecipeFloor()
{
    if (m_ranked.empty() || stopped())
        return;
    const auto best = std::max_element(m_ranked.begin(), m_ranked.end(), [](const RankedSplit& a, const RankedSplit& b) {
        return a.recipe < b.recipe;
    });
    if (!best->plan.found || (m_out.found && m_out.bestResult.tokensPerSPerGpu >= best->recipe))
        return;
    m_out.found = true;
    m_out.best = best->plan.plan;
    m_out.bestResult = best->plan.result;
    auto& curve = m_out.bestCurve; // (call, tokens/s per GPU), rising: the recipe pair is above every point
    curve.erase(std::remove_if(curve.begin(), curve.end(), [&](const auto& pt) { return pt.first >= m_rankingCalls; }),
                curve.end());
    curve.push_back({m_rankingCalls, best->recipe});
    double& atSplit = m_bestAtSplit[best->prefillGpus]; // the answer's split record shows it
    atSplit = std::max(atSplit, best->recipe);
    m_recipeAnswer = true;
}

// A budgeted search's last step, with the calls the pool searches and moves left: each of
// the best deployment's pools, the one that limits the deployment first, raised to its
// largest valid batch, then moved to a better micro-batch count and better operators
// (search/best_plan_moves.h). A pool moved to another split keeps the batch and
// micro-batches its search found at the old one (choiceNear), seldom the best its new
// split holds. Each pool is priced on its own simulator (one call per plan tried; the
// pool's own result, known from the deployment, costs none) and combined with the other
// pool's result as it stands; the pair is kept when the deployment serves more.
void DeploymentSearch::finishBestPools()
{
    if (!m_out.found)
        return;
    const PoolRole first = m_out.bestResult.prefillRequestsPerS <= m_out.bestResult.decodeRequestsPerS
        ? PoolRole::Prefill
        : PoolRole::Decode;
    for (const PoolRole role : {first, first == PoolRole::Prefill ? PoolRole::Decode : PoolRole::Prefill}) {
        const int left = m_options.budget - m_out.calls;
        if (left < 1 || stopped())
            return;
        const DisaggregatedPlan from = m_out.best;
        const bool prefill = role == PoolRole::Prefill;
        const Plan& pool = prefill ? from.prefill : from.decode;
        const Simulator& sim = m_dsim->pool(role, static_cast<int>(pool.gpus()));
        const SearchSpace space(sim.scenario(), m_options.space);
        BudgetedEvaluator ev(sim, left, StopToken(m_stop), nullptr);
        ev.recordExternal(pool, prefill ? m_out.bestResult.prefill : m_out.bestResult.decode, 0);
        raiseBatchThroughEvaluator(ev, pool, space.batchMax());
        moveMicroBatches(ev, space);
        moveOperators(ev, space);
        m_out.calls += ev.calls();
        m_finishCalls += ev.calls();
        if (!ev.haveBest() || ev.best() == pool)
            continue;
        const int gp = static_cast<int>(from.prefill.gpus()), gd = static_cast<int>(from.decode.gpus());
        DisaggregatedPlan plan = from;
        (prefill ? plan.prefill : plan.decode) = ev.best();
        const Simulator& ps = m_dsim->pool(PoolRole::Prefill, gp);
        m_finishKept |= offer(plan, combinePools(m_scenario, ps.costs(), prefill ? ev.bestResult() : m_out.bestResult.prefill,
                                                prefill ? m_out.bestResult.decode : ev.bestResult(), gp, gd));
    }
}

// `p` moved to the `role` pool of `gpus` GPUs: resized (resizedForPool), then taken into
// the space that pool's search uses (choiceNear: the same TP, PP, batch and options where
// that space has them); where that space has no such expert groups, the plan as it was is
// taken there instead (its TP, EP and instances as near as the space allows). Where the
// resizing narrowed TP, that fallback at the narrowed TP and batch was measured worse:
// random's and annealing's 4000-call searches on DeepSeek-V3 and Kimi-K2 lost 0.13-0.15.
Plan DeploymentSearch::movedPool(PoolRole role, int gpus, const Plan& p) const
{
    const SearchSpace space(m_dsim->pool(role, gpus).scenario(), m_options.space);
    const Plan want = resizedForPool(p, gpus);
    const Plan resized = space.decode(space.choiceNear(want).data());
    if (resized.expertParallel == want.expertParallel && resized.instances == want.instances)
        return resized;
    return space.decode(space.choiceNear(p).data());
}

// What the pool searches established: exact's proof (or why there is none), or how much
// of the ranking a budgeted search covered.
void DeploymentSearch::poolsMessage()
{
    const int S = static_cast<int>(m_ranked.size());
    std::ostringstream msg;
    if (m_out.stopped)
        msg << "stopped on request after " << m_out.calls << " simulator calls; ";
    if (exact()) {
        int searched = 0;
        for (const auto& s : m_out.splits)
            searched += s.searched;
        if (m_out.provedOptimal)
            msg << "optimal over every split (" << S << ") and every pair of plans the simulator accepts"
                << runnableSpaceWords(m_scenario) << " (" << searched
                << " splits searched, the others proved worse by a bound)";
        else if (m_out.provedInfeasible && floorTokensPerS() > 0)
            msg << "no valid pair of pools exceeds " << m_options.exactFloor << " tokens/s per GPU at any of the " << S
                << " splits";
        else if (m_out.provedInfeasible)
            msg << "no valid pair of pools exists at any of the " << S << " splits";
        else if (!m_out.stopped)
            msg << "NOT CERTIFIED: a pool search could not prove its result";
    } else {
        msg << m_searchedSplits << " of " << S << " splits searched (the first as the recipe's deployment ranks them, "
            << "then as the best pools found, moved to each split, rank them), " << m_poolBudget
            << " calls per pool search";
        if (m_finishCalls > 0)
            msg << "; the best deployment's pools finished (batch, micro-batches, operators) in " << m_finishCalls
                << " of the calls left" << (m_finishKept ? ", serving more" : ", no better pair found");
        if (!m_out.found)
            msg << "; no valid pair of pools found";
        else if (m_recipeAnswer)
            msg << "; the answer is the recipe's deployment, which the ranking of the splits evaluated: the pool "
                   "searches found no better pair";
        const bool splitsLeft = S < m_candidateSplits || m_searchedSplits < S;
        if (!m_out.stopped && m_out.calls < m_options.budget && (splitsLeft || m_poolSearchEndedEarly)) {
            // Why calls are left: splits the budget does not cover (a larger budget searches
            // them), or pool searches that ended before their shares.
            const long long every = m_candidateSplits;
            std::ostringstream why;
            why << "ended after " << m_out.calls << " of " << m_options.budget << " simulator calls";
            if (splitsLeft)
                why << ": the budget ranks " << S << " and searches " << m_searchedSplits << " of the " << every
                    << " prefill:decode splits (a split's two pool searches per 1000 calls left after the ranking); "
                    << "about " << every * m_rankCallsPerSplit + every * 1000 + 2 * (every - 1) * every
                    << " calls search every split";
            if (m_poolSearchEndedEarly)
                why << (splitsLeft ? "; " : ": ")
                    << "a pool search ended before its share of the budget (it stalled, or found no valid plan, "
                       "and then its split's other pool was not searched)";
            m_out.stopReason = why.str();
            msg << "; " << m_out.stopReason;
        }
    }
    m_out.message = msg.str();
}

} // namespace

SearchOutcome runDisaggregatedSearch(const Scenario& scenario, const SearchOptions& options, SearchObserver* observer,
                                     const std::atomic<bool>* stop)
{
    return DeploymentSearch(scenario, options, observer, stop).run();
}

} // namespace shardlab
