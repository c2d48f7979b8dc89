#include "sim/serving_load.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <unordered_map>
#include <vector>

namespace shardlab {

namespace {

// Engine steps one replica may simulate: far beyond any benchmark (10 x 65536 requests of
// a few thousand tokens), short of an endless loop.
constexpr long long kMaxSteps = 50'000'000;

struct Request {
    double arrivalS = 0;
    int prompt = 0, output = 0;
    int prefilled = 0, generated = 0;
    double firstTokenS = -1, finishS = -1;
    bool measured = false;
};

// The cost model's price of one replica's engine step with `seqs` decoding sequences and
// `chunk` prompt tokens; compositions repeat, so each is priced once.
class StepPricer {
public:
    StepPricer(const Simulator& sim, const Plan& plan) : m_sim(sim), m_plan(plan) {}
    double seconds(int seqs, int chunk)
    {
        const std::uint64_t key = (std::uint64_t(seqs) << 32) | std::uint32_t(chunk);
        auto it = m_cache.find(key);
        if (it != m_cache.end())
            return it->second;
        const StepLoad load{double(seqs), double(chunk)};
        m_sim.evaluate(m_plan, m_scratch, false, &load);
        const double s = std::isfinite(m_scratch.tpotMs) ? m_scratch.tpotMs * 1e-3 : 1e300;
        m_cache.emplace(key, s);
        return s;
    }
    long long priced() const { return static_cast<long long>(m_cache.size()); }

private:
    const Simulator& m_sim;
    Plan m_plan;
    SimResult m_scratch;
    std::unordered_map<std::uint64_t, double> m_cache;
};

// Deterministic draws (the standard distributions' algorithms are the library's choice).
struct Draws {
    std::mt19937_64 rng;
    explicit Draws(std::uint64_t seed) : rng(seed) {}
    double unit() { return (rng() >> 11) * 0x1.0p-53; } // [0, 1)
    int length(int l, bool uniform)
    {
        if (!uniform || l <= 1)
            return l;
        const int lo = std::max(1, static_cast<int>(std::ceil(0.8 * l)));
        return lo + static_cast<int>(rng() % std::uint64_t(l - lo + 1));
    }
};

// One replica's share of the protocol: requests in flight (closed) or arrival rate (open),
// and how many it sends before and while measuring.
struct Share {
    int concurrency = 0;
    double rate = 0;
    int warmup = 0, measured = 0;
};

struct ReplicaResult {
    std::vector<Request> measured;
    double firstMeasuredArrivalS = 0, lastFinishS = 0;
    double durationS = 0;
    long long steps = 0;
    double sumRunning = 0, sumQueued = 0;
    std::string error;
};

// The engine loop of one replica (the scheduling described in serving_load.h).
ReplicaResult runReplica(StepPricer& price, const WorkloadSpec& w, const LoadSpec& load, const Share& share,
                         int batch, std::uint64_t seed)
{
    ReplicaResult out;
    Draws draws(seed);
    const bool closed = load.protocol == LoadProtocol::Concurrency;
    const int total = share.warmup + share.measured;
    std::vector<Request> reqs;
    reqs.reserve(total);
    auto issue = [&](double at) {
        Request r;
        r.arrivalS = at;
        r.prompt = draws.length(w.promptTokens, load.uniformLengths);
        r.output = draws.length(w.outputTokens, load.uniformLengths);
        r.measured = static_cast<int>(reqs.size()) >= share.warmup;
        reqs.push_back(r);
    };
    if (closed) {
        for (int i = 0; i < std::min(share.concurrency, total); ++i)
            issue(0);
    } else {
        double t = 0;
        for (int i = 0; i < total; ++i) {
            if (std::isfinite(share.rate))
                t += -std::log1p(-draws.unit()) / share.rate;
            issue(std::isfinite(share.rate) ? t : 0);
        }
    }
    std::deque<int> queue;
    std::vector<int> running, still;
    size_t nextArrival = 0;
    int finished = 0;
    double t = 0;
    const int budget = std::max(1, w.maxNumTokens);
    auto finish = [&](Request& r) {
        r.finishS = t;
        ++finished;
        if (closed && static_cast<int>(reqs.size()) < total)
            issue(t); // the client sends its next request as soon as one returns
    };
    while (finished < total) {
        while (nextArrival < reqs.size() && reqs[nextArrival].arrivalS <= t)
            queue.push_back(static_cast<int>(nextArrival++));
        while (!queue.empty() && static_cast<int>(running.size()) < batch) {
            running.push_back(queue.front());
            queue.pop_front();
        }
        if (running.empty()) { // idle until the next arrival
            if (nextArrival >= reqs.size()) {
                out.error = "the request-level run stalled (no request to serve)";
                return out;
            }
            t = std::max(t, reqs[nextArrival].arrivalS);
            continue;
        }
        // Decode tokens first, then prompt chunks in admission order within the budget.
        int decoding = 0;
        for (int i : running)
            decoding += reqs[i].prefilled == reqs[i].prompt ? 1 : 0;
        int room = std::max(0, budget - decoding), chunk = 0;
        still.clear();
        std::vector<std::pair<int, int>> chunks; // (request, tokens)
        for (int i : running) {
            Request& r = reqs[i];
            if (r.prefilled < r.prompt && room > 0) {
                const int take = std::min(r.prompt - r.prefilled, room);
                chunks.emplace_back(i, take);
                room -= take;
                chunk += take;
            }
        }
        t += price.seconds(decoding, chunk);
        ++out.steps;
        out.sumRunning += static_cast<double>(running.size());
        out.sumQueued += static_cast<double>(queue.size());
        if (out.steps > kMaxSteps || !std::isfinite(t)) {
            out.error = "the request-level run exceeded " + std::to_string(kMaxSteps) + " engine steps";
            return out;
        }
        for (int i : running) {
            Request& r = reqs[i];
            if (r.prefilled == r.prompt && ++r.generated >= r.output)
                finish(r);
        }
        for (const auto& [i, take] : chunks) {
            Request& r = reqs[i];
            r.prefilled += take;
            if (r.prefilled == r.prompt) { // the step that ends the prompt yields the first token
                r.firstTokenS = t;
                if (++r.generated >= r.output)
                    finish(r);
            }
        }
        for (int i : running)
            if (reqs[i].finishS < 0)
                still.push_back(i);
        running.swap(still);
    }
    out.durationS = t;
    out.firstMeasuredArrivalS = 1e300;
    for (const Request& r : reqs)
        if (r.measured) {
            out.measured.push_back(r);
            out.firstMeasuredArrivalS = std::min(out.firstMeasuredArrivalS, r.arrivalS);
            out.lastFinishS = std::max(out.lastFinishS, r.finishS);
        }
    return out;
}

// Weighted nearest-rank percentiles of (value, weight) pairs.
double percentile(std::vector<std::pair<double, double>> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    double total = 0;
    for (const auto& x : v)
        total += x.second;
    double seen = 0;
    for (const auto& x : v) {
        seen += x.second;
        if (seen >= q * total - 1e-9)
            return x.first;
    }
    return v.back().first;
}

} // namespace

LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady)
{
    return simulateLoad(sim, plan, steady, sim.scenario().workload.load);
}

LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load)
{
    LoadRun run;
    LoadFigures& f = run.figures;
    const Scenario& sc = sim.scenario();
    const WorkloadSpec& w = sc.workload;
    f.protocol = load.protocol;
    if (load.steady()) {
        run.error = "the steady state is not a request-level run";
        return run;
    }
    if (w.serving != ServingMode::Aggregated) {
        run.error = std::string("a load protocol is modelled for aggregated serving only (this is ")
            + servingModeName(w.serving) + ")";
        return run;
    }
    const std::uint32_t blocking = (1u << static_cast<int>(Violation::Tiling))
        | (1u << static_cast<int>(Violation::Divisibility)) | (1u << static_cast<int>(Violation::Memory));
    if (steady.violations & blocking) {
        run.error = "the plan does not fit the scenario (its degrees, or its batch in memory)";
        return run;
    }
    const int dp = std::max(1, plan.dataParallel);
    const double meanOutput = load.uniformLengths ? 0.9 * w.outputTokens : double(w.outputTokens);
    f.capacityRequestsPerS = steady.outputTokensPerS / std::max(1.0, meanOutput);
    const int measuredTotal = load.measuredRequests(), warmupTotal = load.warmup();

    // The replicas' shares: a closed loop's C requests split C / DP and C / DP + 1.
    struct Group {
        Share share;
        int replicas = 0;
    };
    std::vector<Group> groups;
    auto split = [&](int n, int k) { return (n + dp - 1 - k) / dp; }; // the k-th replica's share of n
    if (load.protocol == LoadProtocol::Concurrency) {
        const int q = load.concurrency / dp, extra = load.concurrency % dp;
        for (int part = 0; part < 2; ++part) {
            const int replicas = part == 0 ? extra : dp - extra;
            const int c = part == 0 ? q + 1 : q;
            if (replicas == 0 || c == 0)
                continue;
            Group g;
            g.replicas = replicas;
            g.share.concurrency = c;
            // Each client's requests in proportion to its concurrency.
            g.share.measured = std::max(1, static_cast<int>(std::llround(double(measuredTotal) * c / load.concurrency)));
            g.share.warmup = static_cast<int>(std::llround(double(warmupTotal) * c / load.concurrency));
            groups.push_back(g);
        }
        f.offeredRequestsPerS = 0;
    } else {
        Group g;
        g.replicas = dp;
        g.share.rate = load.requestRate / dp;
        g.share.measured = std::max(1, split(measuredTotal, 0));
        g.share.warmup = split(warmupTotal, 0);
        groups.push_back(g);
        f.offeredRequestsPerS = load.requestRate;
        f.saturated = load.requestRate > f.capacityRequestsPerS;
    }

    StepPricer price(sim, plan);
    std::vector<std::pair<double, double>> ttft, tpot;
    double e2eSum = 0, weightSum = 0, outputTokens = 0, span = 0, stepsW = 0, runW = 0, queueW = 0;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        ReplicaResult r = runReplica(price, w, load, g.share, std::max(1, plan.batch), load.seed + 7919 * gi);
        if (!r.error.empty()) {
            run.error = r.error;
            return run;
        }
        const double wgt = g.replicas;
        double tokens = 0;
        for (const Request& q : r.measured) {
            const double ttftMs = (q.firstTokenS - q.arrivalS) * 1e3;
            ttft.emplace_back(ttftMs, wgt);
            if (q.output > 1)
                tpot.emplace_back((q.finishS - q.firstTokenS) * 1e3 / (q.output - 1), wgt);
            e2eSum += (q.finishS - q.arrivalS) * 1e3 * wgt;
            weightSum += wgt;
            tokens += q.output;
        }
        const double window = r.lastFinishS - r.firstMeasuredArrivalS;
        if (window > 0)
            outputTokens += wgt * tokens / window; // this group's replicas' output rate
        span = std::max(span, r.durationS);
        f.steps = std::max(f.steps, r.steps);
        stepsW += wgt * r.steps;
        runW += wgt * r.sumRunning;
        queueW += wgt * r.sumQueued;
        f.requests += static_cast<int>(r.measured.size()) * g.replicas;
    }
    auto mean = [](const std::vector<std::pair<double, double>>& v) {
        double s = 0, n = 0;
        for (const auto& x : v) {
            s += x.first * x.second;
            n += x.second;
        }
        return n > 0 ? s / n : 0.0;
    };
    f.ttftMeanMs = mean(ttft);
    f.ttftP50Ms = percentile(ttft, 0.5);
    f.ttftP90Ms = percentile(ttft, 0.9);
    f.ttftP99Ms = percentile(ttft, 0.99);
    f.tpotMeanMs = mean(tpot);
    f.tpotP50Ms = percentile(tpot, 0.5);
    f.tpotP90Ms = percentile(tpot, 0.9);
    f.tpotP99Ms = percentile(tpot, 0.99);
    f.e2eMeanMs = weightSum > 0 ? e2eSum / weightSum : 0;
    f.outputTokensPerS = outputTokens;
    f.tokensPerSPerGpu = outputTokens / std::max(1, sc.cluster.totalGpus());
    f.meanRunning = stepsW > 0 ? runW / stepsW : 0;
    f.meanQueued = stepsW > 0 ? queueW / stepsW : 0;
    f.durationS = span;
    f.pricedSteps = price.priced();
    if (load.protocol == LoadProtocol::Concurrency)
        f.offeredRequestsPerS = f.e2eMeanMs > 0 ? load.concurrency / (f.e2eMeanMs * 1e-3) : 0;
    return run;
}

} // namespace shardlab
