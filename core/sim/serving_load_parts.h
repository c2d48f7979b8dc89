// The pieces of a request-level run (sim/serving_load.h) that the aggregated engine and
// the disaggregated pools share: the request record, the step prices, the deterministic
// draws and the figures over the measured requests. Internal to sim/serving_load*.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/serving_load.h"

namespace shardlab::load_detail {

// Engine steps one replica may simulate: far beyond any benchmark (10 x 65536 requests of
// a few thousand tokens), short of an endless loop.
constexpr long long kMaxSteps = 50'000'000;

struct Request {
    double arrivalS = 0;
    int prompt = 0, output = 0;
    int prefilled = 0;
    double generated = 0; // output tokens out (speculative decoding: the expected count)
    double firstTokenS = -1, finishS = -1;
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
        return m_cache.emplace(key, price(StepLoad{double(seqs), double(chunk)})).first->second;
    }
    // The step of a lock-step group whose busiest replica carries `chunk` prompt tokens
    // beside `seqs` decoding sequences, the group's replicas `groupChunk` in all
    // (StepLoad::groupChunkTokens).
    double groupSeconds(int seqs, int chunk, long long groupChunk)
    {
        if (groupChunk == 0)
            return seconds(seqs, 0); // no prompt tokens anywhere: every replica's step alike
        const auto key = std::make_tuple(seqs, chunk, groupChunk);
        auto it = m_groupCache.find(key);
        if (it != m_groupCache.end())
            return it->second;
        StepLoad load{double(seqs), double(chunk)};
        load.groupChunkTokens = double(groupChunk);
        return m_groupCache.emplace(key, price(load)).first->second;
    }
    long long priced() const { return static_cast<long long>(m_cache.size() + m_groupCache.size()); }

private:
    // The step is the cycle (unbounded when some figure overflowed).
    double price(const StepLoad& load)
    {
        m_sim.evaluate(m_plan, m_scratch, false, &load);
        return !m_scratch.unbounded && std::isfinite(m_scratch.cycleMs) ? m_scratch.cycleMs * 1e-3
                                                                         : std::numeric_limits<double>::infinity();
    }
    const Simulator& m_sim;
    Plan m_plan;
    SimResult m_scratch;
    std::unordered_map<std::uint64_t, double> m_cache;
    std::map<std::tuple<int, int, long long>, double> m_groupCache;
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

// What a decoding sequence takes and gives per step: its tokens in the step (1 + draft
// tokens with speculative decoding) and the tokens it emits (the expected accepted ones);
// the share of the replica's token budget a prompt's owner has for its pieces
// (promptOwnerShare: a token-split rank's 1/TP, else 1).
struct PerStep {
    int queries = 1;
    double emitted = 1;
    double ownerShare = 1;
    const CostModel* costs = nullptr; // prices the owner's room (promptRoom) when ownerShare < 1
};

struct ReplicaResult {
    std::vector<Request> measured;
    double firstArrivalS = 0, lastFinishS = 0;
    double windowTokens = 0; // output tokens emitted in that window (collectMeasured)
    double durationS = 0;
    long long steps = 0;
    double sumRunning = 0, sumQueued = 0;
    std::string error;
};

// Weighted nearest-rank percentiles of (value, weight) pairs.
inline double percentile(std::vector<std::pair<double, double>> v, double q)
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


// The measured requests of every replica group, weighted by the group's replicas.
struct Totals {
    std::vector<std::pair<double, double>> ttft, tpot; // (ms, weight)
    double e2eSum = 0, weightSum = 0, outputTokensPerS = 0, span = 0, stepsW = 0, runW = 0, queueW = 0;

    void add(const ReplicaResult& r, int replicas, LoadFigures& f)
    {
        const double wgt = replicas;
        for (const Request& q : r.measured) {
            ttft.emplace_back((q.firstTokenS - q.arrivalS) * 1e3, wgt);
            if (q.output > 1)
                tpot.emplace_back((q.finishS - q.firstTokenS) * 1e3 / (q.output - 1), wgt);
            e2eSum += (q.finishS - q.arrivalS) * 1e3 * wgt;
            weightSum += wgt;
        }
        const double window = r.lastFinishS - r.firstArrivalS;
        if (window > 0)
            outputTokensPerS += wgt * r.windowTokens / window; // these replicas' output rate
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

// Starts a run's figures from the plan's steady state: the protocol; the capacity (the
// steady request rate at the protocol's mean output length) and, for an open loop, the
// offered rate and whether it exceeds the capacity. Returns why the plan cannot be run
// request by request ("" when it can): the steady state is no protocol, and a plan whose
// degrees do not tile or divide, or whose batch does not fit in memory (any of
// `violations`, one SimResult's bits per pool), has nothing to run.
inline std::string startFigures(LoadFigures& f, const LoadSpec& load, const WorkloadSpec& w,
                                double steadyOutputTokensPerS, std::initializer_list<std::uint32_t> violations)
{
    f.protocol = load.protocol;
    if (load.steady())
        return "the steady state is not a request-level run";
    const std::uint32_t blocking = (1u << static_cast<int>(Violation::Tiling))
        | (1u << static_cast<int>(Violation::Divisibility)) | (1u << static_cast<int>(Violation::Memory));
    for (std::uint32_t v : violations)
        if (v & blocking)
            return "the plan does not fit the scenario (its degrees, or its batch in memory)";
    const double meanOutput = load.uniformLengths ? 0.9 * w.outputTokens : double(w.outputTokens);
    f.capacityRequestsPerS = steadyOutputTokensPerS / std::max(1.0, meanOutput);
    if (load.protocol == LoadProtocol::RequestRate) {
        f.offeredRequestsPerS = load.requestRate;
        f.saturated = load.requestRate > f.capacityRequestsPerS;
    }
    return "";
}

// Ends a run's figures once Totals::finish has set them: output per GPU of the whole
// deployment, the step compositions priced, and a closed loop's request rate (its
// concurrency over the mean end-to-end time).
inline void endFigures(LoadFigures& f, const LoadSpec& load, long long gpus, long long pricedSteps)
{
    f.tokensPerSPerGpu = f.outputTokensPerS / double(std::max<long long>(1, gpus));
    f.pricedSteps = pricedSteps;
    if (load.protocol == LoadProtocol::Concurrency)
        f.offeredRequestsPerS = f.e2eMeanMs > 0 ? load.concurrency / (f.e2eMeanMs * 1e-3) : 0;
}

// A request arriving at `at`, its lengths drawn for the protocol (after the arrival's own
// draw: the order keeps runs reproducible).
inline Request drawRequest(Draws& d, const WorkloadSpec& w, const LoadSpec& load, double at)
{
    Request r;
    r.arrivalS = at;
    r.prompt = d.length(w.promptTokens, load.uniformLengths);
    r.output = d.length(w.outputTokens, load.uniformLengths);
    return r;
}

// The Poisson arrival after one at `t` for an open loop at `rate`; every request at t = 0
// when the rate is infinite.
inline double nextArrival(Draws& d, double t, double rate)
{
    return std::isfinite(rate) ? t - std::log1p(-d.unit()) / rate : 0.0;
}

// A run's requests, all of them measured, the window from the first one's arrival to the
// last one's finish, and the output tokens they emit in it. The benchmark's warm-up
// requests (LoadSpec::warmup) are not among them: the tools run them to the end before the
// measured run starts on an idle engine, and nothing the model prices carries over.
inline void collectMeasured(const std::vector<Request>& reqs, ReplicaResult& out)
{
    out.firstArrivalS = std::numeric_limits<double>::infinity();
    for (const Request& r : reqs) {
        out.measured.push_back(r);
        out.firstArrivalS = std::min(out.firstArrivalS, r.arrivalS);
        out.lastFinishS = std::max(out.lastFinishS, r.finishS);
        out.windowTokens += r.output;
    }
}

// A run at the protocol's load and, for an open loop offering 0.8-1.25 of the capacity, the
// mean TTFT of the same run at 0.9 and 1.1 times the rate (how sharply the queue answers
// the load there). `runAt` runs one protocol.
template <class RunAt>
LoadRun runWithSensitivity(const LoadSpec& load, RunAt runAt)
{
    LoadRun run = runAt(load);
    if (!run.ok())
        return run;
    LoadFigures& f = run.figures;
    const double rho = f.capacityRequestsPerS > 0 ? load.requestRate / f.capacityRequestsPerS : 0;
    if (load.protocol == LoadProtocol::RequestRate && std::isfinite(load.requestRate) && rho >= 0.8 && rho <= 1.25) {
        for (double k : {0.9, 1.1}) {
            LoadSpec near = load;
            near.requestRate = load.requestRate * k;
            const LoadRun other = runAt(near);
            (k < 1 ? f.ttftAt90Ms : f.ttftAt110Ms) = other.ok() ? other.figures.ttftMeanMs : 0;
        }
    }
    return run;
}

} // namespace shardlab::load_detail
