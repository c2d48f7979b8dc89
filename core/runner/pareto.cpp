#include "runner/pareto.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <system_error>
#include <thread>

#include "model/engine_caps.h"

namespace shardlab {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// A floor just below the throughput a faster neighbour guarantees: that plan (or a tie)
// is still found, every plan below it is pruned.
constexpr double kFloorMargin = 1e-7;
// Adjacent points closer than this in per-user speed (relative) are a resolved step.
constexpr double kResolvedGap = 1e-3;

struct Known {
    ParetoPoint p;
    double lowestLimitU = kInf; // the slowest per-user speed limit at which it was the answer
};

bool samePoint(const ParetoPoint& a, const DeploymentOutcome& d)
{
    return a.deployment == d.deployment()
        || (std::abs(a.outputTokensPerSPerGpu - d.tokensPerSPerGpu) <= 1e-12 * std::max(1.0, d.tokensPerSPerGpu)
            && std::abs(a.tpotMs - d.tpotMs) <= 1e-12 * std::max(1.0, d.tpotMs));
}

// Sorted by per-user speed, keeping only points no faster point matches in throughput.
std::vector<ParetoPoint> nonDominated(const std::vector<ParetoPoint>& v)
{
    std::vector<std::pair<double, double>> xy;
    for (const ParetoPoint& p : v)
        xy.emplace_back(p.tokensPerSPerUser, p.outputTokensPerSPerGpu);
    std::vector<ParetoPoint> out;
    for (size_t i : nonDominatedIndices(xy))
        out.push_back(v[i]);
    return out;
}

// A deployment's point under a per-user speed limit u (one pool or two: the deployment's
// headline figures, TPOT the decode pool's).
ParetoPoint pointOf(const DeploymentOutcome& d, double u, bool proved)
{
    ParetoPoint p;
    p.deployment = d.deployment();
    p.outputTokensPerSPerGpu = d.tokensPerSPerGpu;
    p.tpotMs = d.tpotMs;
    p.ttftMs = d.ttftMs;
    p.tokensPerSPerUser = d.tpotMs > 0 ? 1000.0 / d.tpotMs : 0;
    p.tpotLimitMs = 1000.0 / u;
    p.provedOptimal = proved;
    return p;
}
ParetoPoint pointOf(const SearchOutcome& r, double u) { return pointOf(r.deployment, u, r.provedOptimal); }

// Runs run(first) .. run(last - 1) at once: the first here, the others on their own
// threads (one after another here when no thread is to be had). Each writes its own slot,
// so the caller merges the answers in index order, whichever finishes first.
void runAtOnce(size_t first, size_t last, const std::function<void(size_t)>& run)
{
    if (first >= last)
        return;
    std::vector<std::thread> workers;
    try {
        for (size_t i = first + 1; i < last; ++i)
            workers.emplace_back(run, i);
    } catch (const std::system_error&) {
        // No thread to be had: the rest run here, one after another.
    }
    run(first);
    for (std::thread& w : workers)
        w.join();
    for (size_t i = first + 1 + workers.size(); i < last; ++i)
        run(i);
}

// The other space's front (ParetoFront::otherPoints): exact with workload.runnable flipped
// at each limit, `threads` at once, answers kept in the limits' order. False when stopped.
bool otherFront(const Scenario& s, const std::vector<double>& limitsU, int threads, const std::atomic<bool>* stop,
                std::vector<ParetoPoint>& out)
{
    Scenario other = s;
    other.workload.runnable = !s.workload.runnable;
    std::vector<SearchOutcome> results(limitsU.size());
    auto run = [&](size_t i) {
        SearchOptions so;
        so.algorithm = "exact";
        results[i] = runSearch(withTpotLimit(other, 1000.0 / limitsU[i]), so, nullptr, stop);
    };
    const size_t k = static_cast<size_t>(std::clamp(threads, 1, 8));
    for (size_t first = 0; first < limitsU.size(); first += k)
        runAtOnce(first, std::min(limitsU.size(), first + k), run);
    bool stopped = false;
    std::vector<ParetoPoint> found;
    for (size_t i = 0; i < results.size(); ++i) {
        stopped = stopped || results[i].stopped;
        bool dup = false;
        for (const ParetoPoint& q : found)
            dup = dup || (results[i].found && q.deployment == results[i].deployment.deployment());
        if (results[i].found && !dup)
            found.push_back(pointOf(results[i], limitsU[i]));
    }
    out = nonDominated(found);
    return !stopped;
}

} // namespace

Scenario withTpotLimit(const Scenario& s, double tpotMs)
{
    Scenario t = s;
    t.workload.tpotSloMs = tpotMs;
    return t;
}

std::vector<size_t> nonDominatedIndices(const std::vector<std::pair<double, double>>& xy)
{
    std::vector<size_t> order(xy.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return xy[a].first < xy[b].first || (xy[a].first == xy[b].first && xy[a].second > xy[b].second);
    });
    std::vector<size_t> out;
    double bestRight = -1;
    for (size_t k = order.size(); k-- > 0;) {
        if (xy[order[k]].second > bestRight) {
            out.push_back(order[k]);
            bestRight = xy[order[k]].second;
        }
    }
    std::reverse(out.begin(), out.end());
    return out;
}

FieldErrors validateParetoRequest(const Scenario& s, const ParetoOptions& o)
{
    FieldErrors e;
    if (o.points < 2 || o.points > 200)
        e.push_back({{}, "--points", "must be between 2 and 200 (got " + std::to_string(o.points) + ")"});
    if (o.maxSearches < 0 || o.maxSearches > 10000)
        e.push_back({{}, "--max-searches", "must be between 0 (automatic) and 10000"});
    if (s.workload.serving == ServingMode::Prefill)
        e.push_back({{}, "workload.serving",
                     "\"prefill\" serving has no TPOT to trade against: the front covers \"aggregated\", \"decode\" "
                     "and \"disaggregated\" serving"});
    else if (!hasTpot(s.workload))
        e.push_back({{}, "workload.output_tokens",
                     "a request of one output token has no TPOT to trade against (no second token): search for "
                     "the best plan instead"});
    for (const FieldError& v : validateScenario(s))
        e.push_back(v);
    for (const FieldError& v : checkConstraints(s))
        e.push_back(v);
    return e;
}

namespace {

// One front: exact searches at per-user speed limits chosen in three stages (the optimum at
// the SLO, faster users until none is reachable, the knees), merged in a fixed order; then
// the recipe and the other space under the same limits.
class FrontBuilder {
public:
    FrontBuilder(const Scenario& s, const ParetoOptions& o, const std::function<void(const ParetoProgress&)>& progress,
                 const std::atomic<bool>* stop)
        : m_s(s), m_o(o), m_progress(progress), m_stop(stop),
          m_maxSearches(o.maxSearches > 0 ? o.maxSearches : 4 * o.points + 16)
    {
    }

    ParetoFront build()
    {
        // 1. The optimum within the scenario's own SLOs: the slow-user end of the front.
        m_stage = "optimum at the SLO";
        if (!merge(1000.0 / m_s.workload.tpotSloMs, 0, search(1000.0 / m_s.workload.tpotSloMs, 0)))
            return nothingAtSlo();
        m_stage = "fastest users";
        fastestUsers();
        m_stage = "knees";
        knees();
        for (const Known& k : m_known)
            m_out.points.push_back(k.p);
        m_out.points = nonDominated(m_out.points);
        recipeFront();
        if (const std::optional<Engine> e = engineOfCollectives(m_s.workload.engine); e && !stopAsked()) {
            m_out.engineName = std::string(engineInfo(*e).label) + " " + engineInfo(*e).version;
            m_out.otherRunnable = !m_s.workload.runnable;
            std::vector<double> limits = m_limitsSolved;
            if (std::isfinite(m_infeasibleU))
                limits.push_back(m_infeasibleU); // the other space may reach what this one cannot
            if (!otherFront(m_s, limits, m_o.threads, m_stop, m_out.otherPoints))
                m_out.stopped = true;
        }
        m_out.stopped = m_out.stopped || stopAsked();
        m_out.unreachableTokensPerSPerUser = m_infeasibleProved ? m_infeasibleU : 0;
        m_out.allProved = m_allProved && m_infeasibleProved && !m_out.stopped;
        for (const ParetoPoint& p : m_out.points)
            m_out.allProved = m_out.allProved && p.provedOptimal;
        m_out.wallSeconds = elapsed();
        m_out.ok = !m_out.points.empty();
        if (m_out.stopped)
            m_out.message = "stopped on request after " + std::to_string(m_out.searches) + " exact searches";
        return m_out;
    }

private:
    bool stopAsked() const { return m_stop && m_stop->load(std::memory_order_relaxed); }
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count(); }
    bool searching() const { return !m_out.stopped && !stopAsked() && m_out.searches < m_maxSearches; }

    // One exact search with TPOT <= 1000 / u, examining only plans above `floor`. Pure:
    // several may run at once; merge records their answers in a fixed order.
    SearchOutcome search(double u, double floor) const
    {
        SearchOptions so;
        so.algorithm = "exact";
        so.exactFloor = floor;
        return runSearch(withTpotLimit(m_s, 1000.0 / u), so, nullptr, m_stop);
    }

    // Records one search's answer: a point (new, or a known one at a slower limit), a proof
    // that the speed is out of reach, or why there is neither. True when it found a plan.
    bool merge(double u, double floor, const SearchOutcome& r)
    {
        ++m_out.searches;
        if (r.stopped) {
            m_out.stopped = true;
        } else if (r.found) {
            m_limitsSolved.push_back(u);
            m_allProved = m_allProved && r.provedOptimal;
            Known* k = nullptr;
            for (Known& kn : m_known)
                if (samePoint(kn.p, r.deployment))
                    k = &kn;
            if (!k) {
                Known n;
                n.p = pointOf(r, u);
                m_known.push_back(n);
                k = &m_known.back();
            }
            k->p.provedOptimal = k->p.provedOptimal || r.provedOptimal;
            if (u < k->lowestLimitU) {
                k->lowestLimitU = u;
                k->p.tpotLimitMs = 1000.0 / u;
            }
        } else if (r.provedInfeasible && floor <= 0) {
            m_infeasibleNote = r.message;
            if (u < m_infeasibleU) {
                m_infeasibleU = u;
                m_infeasibleProved = true;
            }
        } else if (!r.provedInfeasible) {
            m_allProved = false;
            if (m_out.message.empty())
                m_out.message = r.message;
        }
        if (m_progress) {
            ParetoProgress pr;
            pr.searches = m_out.searches;
            pr.maxSearches = m_maxSearches;
            pr.points = static_cast<int>(m_known.size());
            pr.elapsedS = elapsed();
            pr.lastTpotLimitMs = 1000.0 / u;
            pr.stage = m_stage;
            m_progress(pr);
        }
        return r.found;
    }

    // No plan at the scenario's own limits: the front is empty, and the message says
    // whether exact proved it.
    ParetoFront nothingAtSlo()
    {
        m_out.wallSeconds = elapsed();
        if (!m_out.stopped && m_infeasibleProved)
            m_out.message = m_s.constraints.empty()
                ? "workload: no plan meets the scenario's limits (proved by exact): " + m_infeasibleNote
                : "constraints: no plan within them meets the scenario's limits (proved by exact): " + m_infeasibleNote;
        else if (!m_out.stopped && m_out.message.empty())
            m_out.message = "no plan was found at the scenario's limits";
        m_out.allProved = false;
        return m_out;
    }

    // 2. Faster users: 2, 4, 8, ... times the SLO optimum's per-user speed until exact
    // proves no plan reaches one. The limits do not depend on the answers, so as many run
    // at once as threads allow, merged in order: the same limits for any thread count.
    void fastestUsers()
    {
        const double u0 = std::max_element(m_known.begin(), m_known.end(), [](const Known& a, const Known& b) {
                              return a.p.tokensPerSPerUser < b.p.tokensPerSPerUser;
                          })->p.tokensPerSPerUser;
        for (int doubling = 1; searching() && m_infeasibleU == kInf && u0 > 0 && doubling < 60;) {
            const size_t k = std::min<size_t>(std::clamp(m_o.threads, 1, 8), m_maxSearches - m_out.searches);
            std::vector<double> limits(k);
            for (size_t j = 0; j < k; ++j)
                limits[j] = std::ldexp(u0, doubling++);
            std::vector<SearchOutcome> results(k);
            runAtOnce(0, k, [&](size_t j) { results[j] = search(limits[j], 0); });
            bool probing = true;
            for (size_t j = 0; j < k; ++j)
                if (!merge(limits[j], 0, results[j]) && !m_out.stopped && m_infeasibleU == kInf)
                    probing = false; // neither a plan nor a proof: stop probing
            if (!probing)
                return;
        }
    }

    struct Gap {
        double area, u, floor;
    };

    // The unresolved gaps between adjacent points (and from the fastest point to the
    // proved-unreachable speed), each with its box (speed gap x throughput gap, normalized),
    // the speed that bisects it and the floor its faster neighbour guarantees.
    std::vector<Gap> gaps() const
    {
        std::vector<const Known*> sorted;
        for (const Known& k : m_known)
            sorted.push_back(&k);
        std::sort(sorted.begin(), sorted.end(), [](const Known* a, const Known* b) {
            return a->p.tokensPerSPerUser < b->p.tokensPerSPerUser;
        });
        const double uLo = sorted.front()->p.tokensPerSPerUser;
        const double uHi = std::isfinite(m_infeasibleU) ? m_infeasibleU : sorted.back()->p.tokensPerSPerUser;
        double yMax = 0;
        for (const Known* k : sorted)
            yMax = std::max(yMax, k->p.outputTokensPerSPerGpu);
        const double uSpan = std::max(uHi - uLo, 1e-12), ySpan = std::max(yMax, 1e-12);
        std::vector<Gap> out;
        for (size_t i = 0; i < sorted.size(); ++i) {
            const double ui = sorted[i]->p.tokensPerSPerUser, yi = sorted[i]->p.outputTokensPerSPerGpu;
            const bool last = i + 1 == sorted.size();
            if (last && !std::isfinite(m_infeasibleU))
                break;
            const double loJ = last ? m_infeasibleU : sorted[i + 1]->lowestLimitU;
            const double yj = last ? 0 : sorted[i + 1]->p.outputTokensPerSPerGpu;
            if (loJ - ui <= kResolvedGap * ui)
                continue;
            const double area = (loJ - ui) / uSpan * (yi - yj) / ySpan;
            if (area >= 1e-6)
                out.push_back({area, 0.5 * (ui + loJ), yj * (1 - kFloorMargin)});
        }
        return out;
    }

    // 3. Knees: bisect the gap with the largest normalized box until enough points.
    void knees()
    {
        while (searching() && static_cast<int>(m_known.size()) < m_o.points) {
            std::vector<Gap> g = gaps();
            if (g.empty())
                return; // every gap is resolved
            // The widest gaps first (ties: the slower one); as many at once as threads
            // allow, never more than the points still wanted. The answers are merged in this
            // order, so the result does not depend on which search finishes first.
            std::stable_sort(g.begin(), g.end(), [](const Gap& a, const Gap& b) { return a.area > b.area; });
            const size_t k = std::min({g.size(), static_cast<size_t>(std::clamp(m_o.threads, 1, 8)),
                                       static_cast<size_t>(m_o.points - static_cast<int>(m_known.size())),
                                       static_cast<size_t>(m_maxSearches - m_out.searches)});
            std::vector<SearchOutcome> results(k);
            runAtOnce(0, k, [&](size_t j) { results[j] = search(g[j].u, g[j].floor); });
            for (size_t j = 0; j < k; ++j)
                merge(g[j].u, g[j].floor, results[j]);
        }
    }

    // The recipe under the same limits (its batch is the largest within each; two pools:
    // the recipe on each pool at its best split).
    void recipeFront()
    {
        std::vector<ParetoPoint> recipe;
        std::sort(m_limitsSolved.begin(), m_limitsSolved.end());
        m_limitsSolved.erase(std::unique(m_limitsSolved.begin(), m_limitsSolved.end()), m_limitsSolved.end());
        for (double u : m_limitsSolved) {
            if (stopAsked())
                break;
            const DeploymentRecipe rp = megatronDeployment(withTpotLimit(m_s, 1000.0 / u));
            if (!rp.found)
                continue;
            const ParetoPoint p = pointOf(rp.outcome, u, false);
            bool dup = false;
            for (const ParetoPoint& q : recipe)
                dup = dup || q.deployment == p.deployment;
            if (!dup)
                recipe.push_back(p);
        }
        m_out.megatronPoints = nonDominated(recipe);
    }

    const Scenario& m_s;
    const ParetoOptions& m_o;
    const std::function<void(const ParetoProgress&)>& m_progress;
    const std::atomic<bool>* m_stop;
    const int m_maxSearches;
    const std::chrono::steady_clock::time_point m_t0 = std::chrono::steady_clock::now();
    ParetoFront m_out;
    std::vector<Known> m_known;
    std::vector<double> m_limitsSolved; // per-user speed limits whose search found a plan
    double m_infeasibleU = kInf;        // the slowest per-user speed proved out of reach
    bool m_infeasibleProved = false;
    bool m_allProved = true;
    std::string m_stage, m_infeasibleNote;
};

} // namespace

ParetoFront computeParetoFront(const Scenario& s, const ParetoOptions& o,
                               const std::function<void(const ParetoProgress&)>& progress,
                               const std::atomic<bool>* stop)
{
    const FieldErrors errors = validateParetoRequest(s, o);
    if (!errors.empty()) {
        ParetoFront out;
        out.message = errors.front().toString();
        return out;
    }
    return FrontBuilder(s, o, progress, stop).build();
}

} // namespace shardlab

namespace shardlab {

namespace {
std::string num(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(v) ? v : 0.0);
    return buf;
}
} // namespace

double paretoGainAtSlo(const ParetoFront& f)
{
    if (f.engineName.empty() || f.points.empty() || f.otherPoints.empty())
        return 0;
    // The slowest point of each front is the optimum at the SLO: the most tokens/s per GPU.
    const double own = f.points.front().outputTokensPerSPerGpu, other = f.otherPoints.front().outputTokensPerSPerGpu;
    const double perOperator = f.otherRunnable ? own : other, runnable = f.otherRunnable ? other : own;
    return runnable > 0 ? perOperator / runnable : 0;
}

std::vector<std::string> poolCsvFields(const Deployment& d)
{
    auto fields = [](const Plan& p, const char* pool) {
        return std::to_string(p.tensorParallel) + "," + std::to_string(p.expertParallel) + ","
            + std::to_string(p.pipelineParallel) + "," + std::to_string(p.dataParallel) + ","
            + std::to_string(p.batch) + "," + std::to_string(p.microBatches) + ","
            + std::to_string(p.redundantExperts) + "," + (p.twoBatchOverlap ? "true" : "false") + ","
            + std::to_string(p.instances) + "," + pool + "," + std::to_string(p.gpus());
    };
    if (d.pools)
        return {fields(d.pools->prefill, "prefill"), fields(d.pools->decode, "decode")};
    return {fields(d.plan, "plan")};
}

std::string paretoCsv(const ParetoFront& f)
{
    std::string out = "front,tokens_per_s_per_user,output_tokens_per_s_per_gpu,tpot_ms,ttft_ms,tpot_limit_ms,"
                      "proved_optimal,tensor_parallel,expert_parallel,pipeline_parallel,data_parallel,batch,"
                      "micro_batches,redundant_experts,two_batch_overlap,instances,pool,gpus\n";
    // One row per pool: a disaggregated point is two rows with the same figures.
    auto rows = [&](const std::vector<ParetoPoint>& v, const char* name) {
        for (const ParetoPoint& p : v)
            for (const std::string& pool : poolCsvFields(p.deployment))
                out += std::string(name) + "," + num(p.tokensPerSPerUser) + "," + num(p.outputTokensPerSPerGpu) + ","
                    + num(p.tpotMs) + "," + num(p.ttftMs) + "," + num(p.tpotLimitMs) + ","
                    + (p.provedOptimal ? "true" : "false") + "," + pool + "\n";
    };
    rows(f.points, "exact");
    rows(f.megatronPoints, "megatron");
    rows(f.otherPoints, f.otherRunnable ? "runnable" : "per_operator");
    return out;
}

} // namespace shardlab
