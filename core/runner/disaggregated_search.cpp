#include "runner/disaggregated_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

namespace shardlab {

namespace {

// The search's running state: the best pair of pools so far and every split's record.
struct PoolsSearch {
    std::string algorithm;
    bool found = false;
    DisaggregatedPlan best;
    DisaggregatedResult bestResult; // with both pools' per-operator breakdowns at the end
    int calls = 0;                  // simulator calls, every pool search and the recipe
    double wallSeconds = 0;
    std::vector<std::pair<int, double>> bestCurve; // (calls, deployment tokens/s per GPU)
    std::string message;
    bool stopped = false;
    bool provedOptimal = false;
    bool provedInfeasible = false;
    bool failed = false; // a pool search could not run (SearchOutcome::failed): message says why
    using Split = DisaggregatedSplit;
    std::vector<Split> splits;
};

// The outcome runSearch reports: the common fields, and the best pools as the deployment.
SearchOutcome searchOutcome(const Scenario& s, const PoolsSearch& in)
{
    SearchOutcome out;
    out.algorithm = in.algorithm;
    out.found = in.found;
    if (in.found)
        out.deployment = deploymentOutcome(s, in.best, in.bestResult);
    out.splits = in.splits;
    out.calls = in.calls;
    out.wallSeconds = in.wallSeconds;
    out.bestCurve = in.bestCurve;
    out.message = in.message;
    out.stopped = in.stopped;
    out.provedOptimal = in.provedOptimal;
    out.provedInfeasible = in.provedInfeasible;
    out.failed = in.failed;
    return out;
}

// Reports a pool search's progress as the deployment search's: calls and fraction over
// the whole run, the best deployment so far (its decode plan as `bestPlan`).
class PoolObserver final : public SearchObserver {
public:
    PoolObserver(SearchObserver* outer, const PoolsSearch& out, int searches)
        : m_outer(outer), m_out(out), m_searches(std::max(1, searches))
    {
    }
    void begin(int index, int callsBefore)
    {
        m_index = index;
        m_callsBefore = callsBefore;
    }
    void progress(const SearchProgress& p) override
    {
        if (!m_outer)
            return;
        SearchProgress q;
        q.calls = m_callsBefore + p.calls;
        q.budget = m_budget;
        q.fraction = std::min(1.0, (m_index + p.fraction) / m_searches);
        q.haveBest = m_out.found;
        q.bestTokensPerSPerGpu = m_out.bestResult.tokensPerSPerGpu;
        q.bestPlan = m_out.best.decode;
        q.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        q.metrics.push_back({"pool search", double(m_index + 1)});
        m_outer->progress(q);
    }
    void finish(const PoolsSearch& out)
    {
        if (!m_outer)
            return;
        SearchProgress q;
        q.calls = out.calls;
        q.budget = m_budget;
        q.fraction = 1;
        q.haveBest = out.found;
        q.bestTokensPerSPerGpu = out.bestResult.tokensPerSPerGpu;
        q.bestPlan = out.best.decode;
        q.elapsedS = out.wallSeconds;
        q.finished = true;
        m_outer->progress(q);
    }
    int m_budget = 0;

private:
    SearchObserver* m_outer;
    const PoolsSearch& m_out;
    int m_searches;
    int m_index = 0, m_callsBefore = 0;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

struct RankedSplit {
    int prefillGpus = 0;
    double recipe = 0; // the recipe's deployment tokens/s per GPU (0: invalid)
    DisaggregatedRecipe plan;
};

} // namespace

SearchOutcome runDisaggregatedSearch(const Scenario& scenario, const SearchOptions& options, SearchObserver* observer,
                                     const std::atomic<bool>* stop)
{
    const auto start = std::chrono::steady_clock::now();
    PoolsSearch out;
    out.algorithm = options.algorithm;
    FieldErrors errors = validateSearchOptions(options);
    for (const FieldError& e : validateScenario(scenario))
        errors.push_back({{}, "scenario." + e.where, e.reason});
    if (errors.empty() && scenario.workload.serving != ServingMode::Disaggregated)
        errors.push_back({{}, "scenario.workload.serving", "not a disaggregated scenario"});
    const std::vector<int> callsForEverySplit = disaggregatedSplits(scenario);
    if (errors.empty() && callsForEverySplit.empty())
        errors.push_back({{}, "scenario.cluster", "a cluster of one GPU cannot be split into a prefill and a decode pool"});
    if (errors.empty() && options.algorithm == "exact" && callsForEverySplit.size() > size_t(kMaxDisaggregatedSplits))
        errors.push_back({{}, "scenario.cluster.nodes",
                          "exact proves its answer over every prefill:decode split; this cluster has "
                              + std::to_string(callsForEverySplit.size()) + ", above its bound of "
                              + std::to_string(kMaxDisaggregatedSplits) + " (use a budgeted algorithm, or fewer nodes)"});
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return searchOutcome(scenario, out);
    }
    auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    const DisaggregatedSimulator dsim(scenario);
    const long long N = scenario.cluster.totalGpus();
    const double osl = std::max(1, scenario.workload.outputTokens);

    // The recipe at every split: the megatron answer, the ranking, exact's first incumbent.
    std::vector<RankedSplit> ranked;
    // At most kMaxDisaggregatedSplits of them, evenly spaced (exact was refused above).
    std::vector<int> splits = callsForEverySplit;
    if (splits.size() > size_t(kMaxDisaggregatedSplits)) {
        splits.clear();
        for (int i = 0; i < kMaxDisaggregatedSplits; ++i)
            splits.push_back(callsForEverySplit[size_t(i) * (callsForEverySplit.size() - 1) / (kMaxDisaggregatedSplits - 1)]);
    }
    auto rank = [&](int gp) {
        RankedSplit r;
        r.prefillGpus = gp;
        const int gd = static_cast<int>(N - gp);
        const RecipePlan pre = megatronPlan(dsim.pool(PoolRole::Prefill, gp));
        const RecipePlan dec = megatronPlan(dsim.pool(PoolRole::Decode, gd));
        out.calls += pre.evaluations + dec.evaluations + 2;
        r.plan.plan = {pre.plan, dec.plan};
        r.plan.result = dsim.evaluate(r.plan.plan);
        r.plan.found = r.plan.result.valid;
        r.recipe = r.plan.found ? r.plan.result.tokensPerSPerGpu : 0;
        r.plan.explanation = "prefill pool: " + pre.explanation + " Decode pool: " + dec.explanation;
        ranked.push_back(std::move(r));
    };
    // A budgeted search spends at most half its budget on the ranking (the first split's
    // recipe calls tell what one costs): fewer splits, still evenly spaced.
    SearchAlgorithmInfo info;
    const bool budgeted = findSearchAlgorithm(options.algorithm, info) && info.budgeted; // not exact, not the recipe
    if (!splits.empty()) {
        rank(splits.front());
        const int perSplit = std::max(1, out.calls);
        const long long callsForEverySplit = static_cast<long long>(perSplit) * static_cast<long long>(splits.size());
        if (budgeted && splits.size() > 1 && callsForEverySplit > options.budget / 2) {
            const size_t keep = std::clamp<size_t>(static_cast<size_t>(options.budget / 2 / perSplit), 1, splits.size());
            std::vector<int> spaced;
            for (size_t i = 0; i < keep; ++i)
                spaced.push_back(splits[keep == 1 ? 0 : i * (splits.size() - 1) / (keep - 1)]);
            splits = spaced;
        }
    }
    for (size_t i = 1; i < splits.size() && !stopped(); ++i)
        rank(splits[i]);
    // Best recipe first; among equals (none valid) the more balanced split first.
    std::stable_sort(ranked.begin(), ranked.end(), [&](const RankedSplit& a, const RankedSplit& b) {
        if (a.recipe != b.recipe)
            return a.recipe > b.recipe;
        return std::abs(2LL * a.prefillGpus - N) < std::abs(2LL * b.prefillGpus - N);
    });
    auto offer = [&](const DisaggregatedPlan& plan) {
        DisaggregatedResult r = dsim.evaluate(plan);
        if (r.valid && (!out.found || r.tokensPerSPerGpu > out.bestResult.tokensPerSPerGpu)) {
            out.found = true;
            out.best = plan;
            out.bestResult = r;
            out.bestCurve.push_back({out.calls, r.tokensPerSPerGpu});
            return true;
        }
        return false;
    };
    // Exact starts from the best recipe pair as its incumbent (a valid lower bound; when no
    // pool search beats it, it is the proved optimum). The other algorithms report only
    // what their own pool searches found: the recipe's plan is not theirs.
    const bool exactSearch = options.algorithm == "exact";
    if (!ranked.empty() && ranked.front().plan.found && (exactSearch || options.algorithm == "megatron"))
        offer(ranked.front().plan.plan);

    if (options.algorithm == "megatron") {
        for (const RankedSplit& r : ranked) {
            PoolsSearch::Split sp;
            sp.prefillGpus = r.prefillGpus;
            sp.decodeGpus = static_cast<int>(N - r.prefillGpus);
            sp.searched = true;
            sp.prefillFound = r.plan.result.prefill.valid;
            sp.decodeFound = r.plan.result.decode.valid;
            sp.prefillTokensPerS = r.plan.result.prefill.valid ? r.plan.result.prefillRequestsPerS * osl : 0;
            sp.decodeTokensPerS = r.plan.result.decode.valid ? r.plan.result.decodeRequestsPerS * osl : 0;
            sp.kvLinkTokensPerS = r.plan.result.kvLinkRequestsPerS * osl;
            sp.tokensPerSPerGpu = r.recipe;
            out.splits.push_back(sp);
        }
        out.message = out.found ? "the recipe on each pool; the best of " + std::to_string(ranked.size()) + " splits: "
                + ranked.front().plan.explanation
                            : "the recipe gives no valid pair of pools at any of the " + std::to_string(ranked.size())
                + " splits";
    } else {
        const bool exact = options.algorithm == "exact";
        const int S = static_cast<int>(ranked.size());
        int K = S;
        int poolBudget = options.budget;
        if (budgeted) {
            // The recipe's ranking is charged: the pool searches share what it left.
            const int remaining = options.budget - out.calls;
            if (remaining < 2) {
                const int ranking = out.calls;
                out = PoolsSearch{};
                out.algorithm = options.algorithm;
                out.failed = true;
                out.message = "budget: " + std::to_string(options.budget) + " simulator calls do not cover the "
                    + std::to_string(ranking) + " the recipe spends ranking the " + std::to_string(S)
                    + " prefill:decode splits plus one per pool search; give at least " + std::to_string(ranking + 2)
                    + " (or --algo megatron for the recipe alone)";
                out.wallSeconds = elapsed();
                PoolObserver(observer, out, 1).finish(out);
                return searchOutcome(scenario, out);
            }
            K = std::clamp(remaining / 1000, 1, S);
            poolBudget = std::max(1, remaining / (2 * K));
        }
        PoolObserver obs(observer, out, 2 * K);
        obs.m_budget = budgeted ? options.budget : 0;
        bool proof = exact;
        int searches = 0;
        for (int i = 0; i < S; ++i) {
            const RankedSplit& r = ranked[i];
            PoolsSearch::Split sp;
            sp.prefillGpus = r.prefillGpus;
            sp.decodeGpus = static_cast<int>(N - r.prefillGpus);
            const Simulator& ps = dsim.pool(PoolRole::Prefill, sp.prefillGpus);
            sp.kvLinkTokensPerS = kvLinkRequestsPerS(ps.costs(), sp.prefillGpus, sp.decodeGpus) * osl;
            if (i >= K) {
                sp.note = "not searched: below the " + std::to_string(K) + " splits the budget covers";
                out.splits.push_back(sp);
                continue;
            }
            if (stopped()) {
                proof = false;
                sp.note = "not searched: stopped";
                out.splits.push_back(sp);
                continue;
            }
            const double incumbent = out.found ? out.bestResult.outputTokensPerS : 0;
            if (exact && sp.kvLinkTokensPerS <= incumbent) {
                sp.note = "the KV links alone carry no more than the best deployment";
                out.splits.push_back(sp);
                continue;
            }
            SearchOutcome pools[2];
            bool skip = false;
            // Decode first: the scarcer pool in most deployments, so the floor prunes early.
            for (int k = 0; k < 2 && !skip; ++k) {
                const PoolRole role = k == 0 ? PoolRole::Decode : PoolRole::Prefill;
                const int gpus = role == PoolRole::Prefill ? sp.prefillGpus : sp.decodeGpus;
                SearchOptions o = options;
                o.budget = poolBudget;
                o.seed = options.seed + static_cast<std::uint64_t>(i);
                if (exact)
                    o.exactFloor = incumbent / gpus;
                obs.begin(searches++, out.calls);
                SearchOutcome& so = pools[role == PoolRole::Prefill ? 0 : 1];
                so = runSearch(dsim.pool(role, gpus).scenario(), o, &obs, stop);
                out.calls += so.calls;
                if (so.failed) { // the same for every pool: the deployment search cannot run
                    out = PoolsSearch{};
                    out.algorithm = options.algorithm;
                    out.failed = true;
                    out.message = so.message;
                    out.wallSeconds = elapsed();
                    PoolObserver(observer, out, 1).finish(out);
                    return searchOutcome(scenario, out);
                }
                (role == PoolRole::Prefill ? sp.prefillFound : sp.decodeFound) = so.found;
                const double tokens = so.found ? so.bestResult.outputTokensPerS : 0;
                (role == PoolRole::Prefill ? sp.prefillTokensPerS : sp.decodeTokensPerS) = tokens;
                if (exact && !(so.provedOptimal || so.provedInfeasible))
                    proof = false; // stopped, or the tables disagreed with the simulator
                if (!so.found || (exact && tokens <= incumbent)) {
                    skip = true;
                    sp.note = std::string(poolRoleName(role)) + " pool: "
                        + (so.found || o.exactFloor > 0 ? "no plan beats the best deployment so far"
                                                        : "no valid plan (" + so.message + ")");
                }
            }
            sp.searched = true;
            if (!skip) {
                const DisaggregatedPlan plan{pools[0].best, pools[1].best};
                const DisaggregatedResult res = dsim.evaluate(plan);
                sp.tokensPerSPerGpu = res.valid ? res.tokensPerSPerGpu : 0;
                offer(plan);
            }
            out.splits.push_back(sp);
        }
        out.stopped = stopped();
        out.provedOptimal = proof && out.found && !out.stopped;
        out.provedInfeasible = proof && !out.found && !out.stopped;
        std::ostringstream msg;
        if (out.stopped)
            msg << "stopped on request after " << out.calls << " simulator calls; ";
        if (exact) {
            int searched = 0;
            for (const auto& s : out.splits)
                searched += s.searched;
            if (out.provedOptimal)
                msg << "optimal over every split (" << S << ") and every pair of plans the simulator accepts"
                    << runnableSpaceWords(scenario) << " (" << searched
                    << " splits searched, the others proved worse by a bound)";
            else if (out.provedInfeasible)
                msg << "no valid pair of pools exists at any of the " << S << " splits";
            else if (!out.stopped)
                msg << "NOT CERTIFIED: a pool search could not prove its result";
        } else {
            msg << K << " of " << S << " splits searched (ranked by the recipe's deployment), " << poolBudget
                << " calls per pool search";
            if (!out.found)
                msg << "; no valid pair of pools found";
        }
        out.message = msg.str();
    }
    if (splits.size() < callsForEverySplit.size())
        out.message += "; " + std::to_string(splits.size()) + " of the cluster's " + std::to_string(callsForEverySplit.size())
            + " prefill:decode splits examined, evenly spaced (at most " + std::to_string(kMaxDisaggregatedSplits)
            + ", and a budgeted search ranks only as many as half its budget pays for)";
    if (out.found) {
        // With both pools' per-operator breakdowns (the searches ran on the fast path).
        out.bestResult = dsim.evaluate(out.best);
    }
    out.wallSeconds = elapsed();
    PoolObserver(observer, out, 1).finish(out);
    return searchOutcome(scenario, out);
}

} // namespace shardlab
