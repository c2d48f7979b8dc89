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
#include "sim/megatron.h"

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

bool samePoint(const ParetoPoint& a, const Plan& plan, const SimResult& r)
{
    return a.plan == plan
        || (std::abs(a.outputTokensPerSPerGpu - r.tokensPerSPerGpu) <= 1e-12 * std::max(1.0, r.tokensPerSPerGpu)
            && std::abs(a.tpotMs - r.tpotMs) <= 1e-12 * std::max(1.0, r.tpotMs));
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

// A plan's point under a per-user speed limit u.
ParetoPoint pointOf(const Plan& plan, const SimResult& r, double u, bool proved)
{
    ParetoPoint p;
    p.plan = plan;
    p.outputTokensPerSPerGpu = r.tokensPerSPerGpu;
    p.tpotMs = r.tpotMs;
    p.ttftMs = r.ttftMs;
    p.tokensPerSPerUser = r.tpotMs > 0 ? 1000.0 / r.tpotMs : 0;
    p.tpotLimitMs = 1000.0 / u;
    p.provedOptimal = proved;
    return p;
}
ParetoPoint pointOf(const SearchOutcome& r, double u) { return pointOf(r.best, r.bestResult, u, r.provedOptimal); }

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
            dup = dup || q.plan == results[i].best;
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
    if (s.workload.serving == ServingMode::Disaggregated || s.workload.serving == ServingMode::Prefill)
        e.push_back({{}, "workload.serving",
                     "\"disaggregated\" is not supported here yet: the front, sizing and sweep cover \"aggregated\" "
                     "and \"decode\" serving (search it with `shardlab-cli search`)"});
    for (const FieldError& v : validateScenario(s))
        e.push_back(v);
    for (const FieldError& v : checkConstraints(s))
        e.push_back(v);
    return e;
}

ParetoFront computeParetoFront(const Scenario& s, const ParetoOptions& o,
                               const std::function<void(const ParetoProgress&)>& progress,
                               const std::atomic<bool>* stop)
{
    ParetoFront out;
    const FieldErrors errors = validateParetoRequest(s, o);
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return out;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const int maxSearches = o.maxSearches > 0 ? o.maxSearches : 4 * o.points + 16;
    std::vector<Known> known;
    std::vector<double> limitsSolved;  // per-user speed limits whose search found a plan
    double infeasibleU = kInf;         // the slowest per-user speed proved out of reach
    bool infeasibleProved = false;
    bool allProved = true;
    std::string stage, infeasibleNote;

    auto stopAsked = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    // One exact search with TPOT <= 1000 / u, examining only plans above `floor`.
    // One exact search with TPOT <= 1000 / u, examining only plans above `floor`. Pure:
    // several may run at once; `merge` records their answers in a fixed order.
    auto search = [&s, stop](double u, double floor) {
        SearchOptions so;
        so.algorithm = "exact";
        so.exactFloor = floor;
        return runSearch(withTpotLimit(s, 1000.0 / u), so, nullptr, stop);
    };
    auto merge = [&](double u, double floor, const SearchOutcome& r) {
        ++out.searches;
        if (r.stopped) {
            out.stopped = true;
        } else if (r.found) {
            limitsSolved.push_back(u);
            allProved = allProved && r.provedOptimal;
            Known* k = nullptr;
            for (Known& kn : known)
                if (samePoint(kn.p, r.best, r.bestResult))
                    k = &kn;
            if (!k) {
                Known n;
                n.p = pointOf(r, u);
                known.push_back(n);
                k = &known.back();
            }
            k->p.provedOptimal = k->p.provedOptimal || r.provedOptimal;
            if (u < k->lowestLimitU) {
                k->lowestLimitU = u;
                k->p.tpotLimitMs = 1000.0 / u;
            }
        } else if (r.provedInfeasible && floor <= 0) {
            infeasibleNote = r.message;
            if (u < infeasibleU) {
                infeasibleU = u;
                infeasibleProved = true;
            }
        } else if (!r.provedInfeasible) {
            allProved = false;
            if (out.message.empty())
                out.message = r.message;
        }
        if (progress) {
            ParetoProgress pr;
            pr.searches = out.searches;
            pr.maxSearches = maxSearches;
            pr.points = static_cast<int>(known.size());
            pr.elapsedS = elapsed();
            pr.lastTpotLimitMs = 1000.0 / u;
            pr.stage = stage;
            progress(pr);
        }
        return r.found;
    };
    auto solve = [&](double u, double floor) { return merge(u, floor, search(u, floor)); };
    auto rightmost = [&]() -> const Known& {
        return *std::max_element(known.begin(), known.end(), [](const Known& a, const Known& b) {
            return a.p.tokensPerSPerUser < b.p.tokensPerSPerUser;
        });
    };

    // 1. The optimum within the scenario's own SLOs: the slow-user end of the front.
    stage = "optimum at the SLO";
    if (!solve(1000.0 / s.workload.tpotSloMs, 0)) {
        out.wallSeconds = elapsed();
        if (!out.stopped && infeasibleProved)
            out.message = s.constraints.empty()
                ? "workload: no plan meets the scenario's limits (proved by exact): " + infeasibleNote
                : "constraints: no plan within them meets the scenario's limits (proved by exact): " + infeasibleNote;
        else if (!out.stopped && out.message.empty())
            out.message = "no plan was found at the scenario's limits";
        out.allProved = false;
        return out;
    }
    // 2. Faster users: 2, 4, 8, ... times the SLO optimum's per-user speed until exact
    // proves no plan reaches one. The limits do not depend on the answers, so as many run
    // at once as threads allow, merged in order: the same limits for any thread count.
    stage = "fastest users";
    const double u0 = rightmost().p.tokensPerSPerUser;
    for (int doubling = 1; !out.stopped && !stopAsked() && out.searches < maxSearches && infeasibleU == kInf
         && u0 > 0 && doubling < 60;) {
        const size_t k = std::min<size_t>(std::clamp(o.threads, 1, 8), maxSearches - out.searches);
        std::vector<double> limits(k);
        for (size_t j = 0; j < k; ++j)
            limits[j] = std::ldexp(u0, doubling++);
        std::vector<SearchOutcome> results(k);
        runAtOnce(0, k, [&](size_t j) { results[j] = search(limits[j], 0); });
        bool probing = true;
        for (size_t j = 0; j < k; ++j)
            if (!merge(limits[j], 0, results[j]) && !out.stopped && infeasibleU == kInf)
                probing = false; // neither a plan nor a proof: stop probing
        if (!probing)
            break;
    }
    // 3. Knees: bisect the gap with the largest normalized box until enough points.
    stage = "knees";
    while (!out.stopped && !stopAsked() && out.searches < maxSearches && static_cast<int>(known.size()) < o.points) {
        std::vector<const Known*> sorted;
        for (const Known& k : known)
            sorted.push_back(&k);
        std::sort(sorted.begin(), sorted.end(), [](const Known* a, const Known* b) {
            return a->p.tokensPerSPerUser < b->p.tokensPerSPerUser;
        });
        const double uLo = sorted.front()->p.tokensPerSPerUser;
        const double uHi = std::isfinite(infeasibleU) ? infeasibleU : sorted.back()->p.tokensPerSPerUser;
        double yMax = 0;
        for (const Known* k : sorted)
            yMax = std::max(yMax, k->p.outputTokensPerSPerGpu);
        const double uSpan = std::max(uHi - uLo, 1e-12), ySpan = std::max(yMax, 1e-12);
        struct Gap {
            double area, u, floor;
        };
        std::vector<Gap> gaps;
        for (size_t i = 0; i < sorted.size(); ++i) {
            const double ui = sorted[i]->p.tokensPerSPerUser, yi = sorted[i]->p.outputTokensPerSPerGpu;
            const bool last = i + 1 == sorted.size();
            if (last && !std::isfinite(infeasibleU))
                break;
            const double loJ = last ? infeasibleU : sorted[i + 1]->lowestLimitU;
            const double yj = last ? 0 : sorted[i + 1]->p.outputTokensPerSPerGpu;
            if (loJ - ui <= kResolvedGap * ui)
                continue;
            const double area = (loJ - ui) / uSpan * (yi - yj) / ySpan;
            if (area >= 1e-6)
                gaps.push_back({area, 0.5 * (ui + loJ), yj * (1 - kFloorMargin)});
        }
        if (gaps.empty())
            break; // every gap is resolved
        // The widest gaps first (ties: the slower one); as many at once as threads allow,
        // never more than the points still wanted. The answers are merged in this order,
        // so the result does not depend on which search finishes first.
        std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.area > b.area; });
        const size_t k = std::min({gaps.size(), static_cast<size_t>(std::clamp(o.threads, 1, 8)),
                                   static_cast<size_t>(o.points - static_cast<int>(known.size())),
                                   static_cast<size_t>(maxSearches - out.searches)});
        std::vector<SearchOutcome> results(k);
        runAtOnce(0, k, [&](size_t j) { results[j] = search(gaps[j].u, gaps[j].floor); });
        for (size_t j = 0; j < k; ++j)
            merge(gaps[j].u, gaps[j].floor, results[j]);
    }

    for (const Known& k : known)
        out.points.push_back(k.p);
    out.points = nonDominated(out.points);
    // The recipe under the same limits (its batch is the largest within each).
    std::vector<ParetoPoint> recipe;
    std::sort(limitsSolved.begin(), limitsSolved.end());
    limitsSolved.erase(std::unique(limitsSolved.begin(), limitsSolved.end()), limitsSolved.end());
    for (double u : limitsSolved) {
        if (stop && stop->load(std::memory_order_relaxed))
            break;
        const Simulator sim(withTpotLimit(s, 1000.0 / u));
        const RecipePlan rp = megatronPlan(sim);
        if (!rp.found)
            continue;
        const ParetoPoint p = pointOf(rp.plan, rp.result, u, false);
        bool dup = false;
        for (const ParetoPoint& q : recipe)
            dup = dup || q.plan == p.plan;
        if (!dup)
            recipe.push_back(p);
    }
    out.megatronPoints = nonDominated(recipe);
    if (const std::optional<Engine> e = engineOfCollectives(s.workload.engine); e && !stopAsked()) {
        out.engineName = std::string(engineInfo(*e).label) + " " + engineInfo(*e).version;
        out.otherRunnable = !s.workload.runnable;
        std::vector<double> limits = limitsSolved;
        if (std::isfinite(infeasibleU))
            limits.push_back(infeasibleU); // the other space may reach what this one cannot
        if (!otherFront(s, limits, o.threads, stop, out.otherPoints))
            out.stopped = true;
    }
    out.stopped = out.stopped || stopAsked();
    out.unreachableTokensPerSPerUser = infeasibleProved ? infeasibleU : 0;
    out.allProved = allProved && infeasibleProved && !out.stopped;
    for (const ParetoPoint& p : out.points)
        out.allProved = out.allProved && p.provedOptimal;
    out.wallSeconds = elapsed();
    out.ok = !out.points.empty();
    if (out.stopped)
        out.message = "stopped on request after " + std::to_string(out.searches) + " exact searches";
    return out;
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

std::string paretoCsv(const ParetoFront& f)
{
    std::string out = "front,tokens_per_s_per_user,output_tokens_per_s_per_gpu,tpot_ms,ttft_ms,tpot_limit_ms,"
                      "proved_optimal,tensor_parallel,expert_parallel,pipeline_parallel,data_parallel,batch,"
                      "micro_batches,redundant_experts,two_batch_overlap,instances\n";
    auto rows = [&](const std::vector<ParetoPoint>& v, const char* name) {
        for (const ParetoPoint& p : v)
            out += std::string(name) + "," + num(p.tokensPerSPerUser) + "," + num(p.outputTokensPerSPerGpu) + ","
                + num(p.tpotMs) + "," + num(p.ttftMs) + "," + num(p.tpotLimitMs) + ","
                + (p.provedOptimal ? "true" : "false") + "," + std::to_string(p.plan.tensorParallel) + ","
                + std::to_string(p.plan.expertParallel) + "," + std::to_string(p.plan.pipelineParallel) + ","
                + std::to_string(p.plan.dataParallel) + "," + std::to_string(p.plan.batch) + ","
                + std::to_string(p.plan.microBatches) + "," + std::to_string(p.plan.redundantExperts) + ","
                + (p.plan.twoBatchOverlap ? "true" : "false") + "," + std::to_string(p.plan.instances) + "\n";
    };
    rows(f.points, "exact");
    rows(f.megatronPoints, "megatron");
    rows(f.otherPoints, f.otherRunnable ? "runnable" : "per_operator");
    return out;
}

} // namespace shardlab
