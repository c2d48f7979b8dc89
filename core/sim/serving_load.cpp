#include "sim/serving_load.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
    int prefilled = 0;
    double generated = 0; // output tokens out (speculative decoding: the expected count)
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
        // The step is the cycle: TPOT times the tokens a sequence emits per step.
        const double s = std::isfinite(m_scratch.tpotMs) ? m_scratch.tpotMs * m_scratch.tokensPerStep * 1e-3 : std::numeric_limits<double>::infinity();
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

// What a decoding sequence takes and gives per step: its tokens in the step (1 + draft
// tokens with speculative decoding) and the tokens it emits (the expected accepted ones).
struct PerStep {
    int queries = 1;
    double emitted = 1;
};

// The engine loop of one replica (the scheduling described in serving_load.h).
class Replica {
public:
    Replica(const WorkloadSpec& w, const LoadSpec& load, const Share& share, int batch, std::uint64_t seed,
            PerStep perStep)
        : m_w(w), m_load(load), m_share(share), m_batch(std::max(1, batch)), m_perStep(perStep), m_draws(seed),
          m_closed(load.protocol == LoadProtocol::Concurrency), m_total(share.warmup + share.measured)
    {
        m_reqs.reserve(m_total);
        if (m_closed) {
            for (int i = 0; i < std::min(share.concurrency, m_total); ++i)
                issue(0);
            return;
        }
        double t = 0;
        for (int i = 0; i < m_total; ++i) {
            if (std::isfinite(share.rate))
                t += -std::log1p(-m_draws.unit()) / share.rate;
            issue(std::isfinite(share.rate) ? t : 0);
        }
    }

    ReplicaResult run(StepPricer& price)
    {
        ReplicaResult out;
        while (m_finished < m_total) {
            admit();
            if (m_running.empty()) { // idle until the next arrival
                if (m_nextArrival >= m_reqs.size()) {
                    out.error = "the request-level run stalled (no request to serve)";
                    return out;
                }
                m_t = std::max(m_t, m_reqs[m_nextArrival].arrivalS);
                continue;
            }
            const int decoding = compose();
            int chunk = 0;
            for (const auto& c : m_chunks)
                chunk += c.second;
            m_t += price.seconds(decoding, chunk);
            ++out.steps;
            out.sumRunning += static_cast<double>(m_running.size());
            out.sumQueued += static_cast<double>(m_queue.size());
            if (out.steps > kMaxSteps || !std::isfinite(m_t)) {
                out.error = "the request-level run exceeded " + std::to_string(kMaxSteps) + " engine steps";
                return out;
            }
            advance();
        }
        out.durationS = m_t;
        out.firstMeasuredArrivalS = std::numeric_limits<double>::infinity();
        for (const Request& r : m_reqs)
            if (r.measured) {
                out.measured.push_back(r);
                out.firstMeasuredArrivalS = std::min(out.firstMeasuredArrivalS, r.arrivalS);
                out.lastFinishS = std::max(out.lastFinishS, r.finishS);
            }
        return out;
    }

private:
    void issue(double at)
    {
        Request r;
        r.arrivalS = at;
        r.prompt = m_draws.length(m_w.promptTokens, m_load.uniformLengths);
        r.output = m_draws.length(m_w.outputTokens, m_load.uniformLengths);
        r.measured = static_cast<int>(m_reqs.size()) >= m_share.warmup;
        m_reqs.push_back(r);
    }
    // Arrivals up to now join the queue; the queue's head joins the batch while it has room.
    void admit()
    {
        while (m_nextArrival < m_reqs.size() && m_reqs[m_nextArrival].arrivalS <= m_t)
            m_queue.push_back(static_cast<int>(m_nextArrival++));
        while (!m_queue.empty() && static_cast<int>(m_running.size()) < m_batch) {
            m_running.push_back(m_queue.front());
            m_queue.pop_front();
        }
    }
    // One decode token (with speculative decoding: 1 + draft tokens) per sequence past its
    // prompt, then prompt chunks in admission order within the token budget. Returns the
    // decoding sequences; m_chunks gets the chunks.
    int compose()
    {
        int decoding = 0;
        for (int i : m_running)
            decoding += m_reqs[i].prefilled == m_reqs[i].prompt ? 1 : 0;
        int room = std::max(0, std::max(1, m_w.maxNumTokens) - decoding * m_perStep.queries);
        m_chunks.clear();
        for (int i : m_running) {
            const Request& r = m_reqs[i];
            if (r.prefilled < r.prompt && room > 0) {
                const int take = std::min(r.prompt - r.prefilled, room);
                m_chunks.emplace_back(i, take);
                room -= take;
            }
        }
        return decoding;
    }
    void finish(Request& r)
    {
        r.finishS = m_t;
        ++m_finished;
        if (m_closed && static_cast<int>(m_reqs.size()) < m_total)
            issue(m_t); // the client sends its next request as soon as one returns
    }
    // The step's tokens are out: decoders advance, finished prompts give their first token.
    void advance()
    {
        for (int i : m_running) {
            Request& r = m_reqs[i];
            if (r.prefilled == r.prompt && (r.generated += m_perStep.emitted) >= r.output)
                finish(r);
        }
        for (const auto& [i, take] : m_chunks) {
            Request& r = m_reqs[i];
            r.prefilled += take;
            if (r.prefilled == r.prompt) { // the step that ends the prompt yields the first token
                r.firstTokenS = m_t;
                if (++r.generated >= r.output)
                    finish(r);
            }
        }
        m_still.clear();
        for (int i : m_running)
            if (m_reqs[i].finishS < 0)
                m_still.push_back(i);
        m_running.swap(m_still);
    }

    const WorkloadSpec& m_w;
    const LoadSpec& m_load;
    Share m_share;
    int m_batch;
    PerStep m_perStep;
    Draws m_draws;
    bool m_closed;
    int m_total;
    std::vector<Request> m_reqs; // indices stay valid: reserved for every request
    std::deque<int> m_queue;
    std::vector<int> m_running, m_still;
    std::vector<std::pair<int, int>> m_chunks; // (request, prompt tokens this step)
    size_t m_nextArrival = 0;
    int m_finished = 0;
    double m_t = 0;
};

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

namespace {

// The measured requests of every replica group, weighted by the group's replicas.
struct Totals {
    std::vector<std::pair<double, double>> ttft, tpot; // (ms, weight)
    double e2eSum = 0, weightSum = 0, outputTokensPerS = 0, span = 0, stepsW = 0, runW = 0, queueW = 0;

    void add(const ReplicaResult& r, int replicas, LoadFigures& f)
    {
        const double wgt = replicas;
        double tokens = 0;
        for (const Request& q : r.measured) {
            ttft.emplace_back((q.firstTokenS - q.arrivalS) * 1e3, wgt);
            if (q.output > 1)
                tpot.emplace_back((q.finishS - q.firstTokenS) * 1e3 / (q.output - 1), wgt);
            e2eSum += (q.finishS - q.arrivalS) * 1e3 * wgt;
            weightSum += wgt;
            tokens += q.output;
        }
        const double window = r.lastFinishS - r.firstMeasuredArrivalS;
        if (window > 0)
            outputTokensPerS += wgt * tokens / window; // these replicas' output rate
        span = std::max(span, r.durationS);
        f.steps = std::max<long long>(f.steps, r.steps);
        stepsW += wgt * r.steps;
        runW += wgt * r.sumRunning;
        queueW += wgt * r.sumQueued;
        f.requests += static_cast<int>(r.measured.size()) * replicas;
    }

    static double mean(const std::vector<std::pair<double, double>>& v)
    {
        double s = 0, n = 0;
        for (const auto& x : v) {
            s += x.first * x.second;
            n += x.second;
        }
        return n > 0 ? s / n : 0.0;
    }

    void finish(LoadFigures& f) const
    {
        f.ttftMeanMs = mean(ttft);
        f.ttftP50Ms = percentile(ttft, 0.5);
        f.ttftP90Ms = percentile(ttft, 0.9);
        f.ttftP99Ms = percentile(ttft, 0.99);
        f.tpotMeanMs = mean(tpot);
        f.tpotP50Ms = percentile(tpot, 0.5);
        f.tpotP90Ms = percentile(tpot, 0.9);
        f.tpotP99Ms = percentile(tpot, 0.99);
        f.e2eMeanMs = weightSum > 0 ? e2eSum / weightSum : 0;
        f.outputTokensPerS = outputTokensPerS;
        f.meanRunning = stepsW > 0 ? runW / stepsW : 0;
        f.meanQueued = stepsW > 0 ? queueW / stepsW : 0;
        f.durationS = span;
    }
};

// Replicas that run the same share of the protocol, and how many of them there are: a
// closed loop's C requests split C / DP and C / DP + 1 per replica (each client's requests
// in proportion to its concurrency); an open loop's rate and requests 1 / DP each.
struct ReplicaGroup {
    Share share;
    int replicas = 0;
};
std::vector<ReplicaGroup> replicaGroups(const LoadSpec& load, int dp)
{
    const int measuredTotal = load.measuredRequests(), warmupTotal = load.warmup();
    std::vector<ReplicaGroup> groups;
    if (load.protocol == LoadProtocol::Concurrency) {
        const int q = load.concurrency / dp, extra = load.concurrency % dp;
        for (int part = 0; part < 2; ++part) {
            const int replicas = part == 0 ? extra : dp - extra;
            const int c = part == 0 ? q + 1 : q;
            if (replicas == 0 || c == 0)
                continue;
            ReplicaGroup g;
            g.replicas = replicas;
            g.share.concurrency = c;
            g.share.measured = std::max(1, static_cast<int>(std::llround(double(measuredTotal) * c / load.concurrency)));
            g.share.warmup = static_cast<int>(std::llround(double(warmupTotal) * c / load.concurrency));
            groups.push_back(g);
        }
        return groups;
    }
    ReplicaGroup g;
    g.replicas = dp;
    g.share.rate = load.requestRate / dp;
    g.share.measured = std::max(1, (measuredTotal + dp - 1) / dp);
    g.share.warmup = (warmupTotal + dp - 1) / dp;
    groups.push_back(g);
    return groups;
}

LoadRun runAtRate(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load)
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

    const std::vector<ReplicaGroup> groups = replicaGroups(load, dp);
    if (load.protocol == LoadProtocol::RequestRate) {
        f.offeredRequestsPerS = load.requestRate;
        f.saturated = load.requestRate > f.capacityRequestsPerS;
    }

    StepPricer price(sim, plan);
    const PerStep perStep{static_cast<int>(sim.costs().queriesPerSequence()), sim.costs().tokensPerStep()};
    Totals totals;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const ReplicaGroup& g = groups[gi];
        ReplicaResult r = Replica(w, load, g.share, plan.batch, load.seed + 7919 * gi, perStep).run(price);
        if (!r.error.empty()) {
            run.error = r.error;
            return run;
        }
        totals.add(r, g.replicas, f);
    }
    totals.finish(f);
    f.tokensPerSPerGpu = f.outputTokensPerS / double(std::max<long long>(1, sc.cluster.totalGpus()));
    f.pricedSteps = price.priced();
    if (load.protocol == LoadProtocol::Concurrency)
        f.offeredRequestsPerS = f.e2eMeanMs > 0 ? load.concurrency / (f.e2eMeanMs * 1e-3) : 0;
    return run;
}

} // namespace

LoadRun simulateLoad(const Simulator& sim, const Plan& plan, const SimResult& steady, const LoadSpec& load)
{
    LoadRun run = runAtRate(sim, plan, steady, load);
    if (!run.ok())
        return run;
    LoadFigures& f = run.figures;
    const double rho = f.capacityRequestsPerS > 0 ? load.requestRate / f.capacityRequestsPerS : 0;
    if (load.protocol == LoadProtocol::RequestRate && std::isfinite(load.requestRate) && rho >= 0.8 && rho <= 1.25) {
        for (double k : {0.9, 1.1}) {
            LoadSpec near = load;
            near.requestRate = load.requestRate * k;
            near.protocol = LoadProtocol::RequestRate;
            const LoadRun other = runAtRate(sim, plan, steady, near);
            (k < 1 ? f.ttftAt90Ms : f.ttftAt110Ms) = other.ok() ? other.figures.ttftMeanMs : 0;
        }
    }
    return run;
}

} // namespace shardlab
