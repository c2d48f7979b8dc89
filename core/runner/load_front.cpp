#include "runner/load_front.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "io/count_list.h"
#include "runner/pareto.h"

namespace shardlab {

std::vector<int> defaultFrontConcurrencies()
{
    std::vector<int> v;
    for (int c = 1; c <= 1024; c *= 2)
        v.push_back(c);
    return v;
}

SearchOptions defaultLoadFrontSearch()
{
    SearchOptions o;
    o.algorithm = "anneal";
    o.budget = 2000;
    o.seed = 0;
    return o;
}

bool parseConcurrencies(const std::string& text, std::vector<int>& out, std::string& why)
{
    if (hasEmptyItem(text)) {
        why = emptyItemWords(text) + ": give e.g. 1,4,16";
        return false;
    }
    std::vector<long long> v;
    std::string bad;
    const bool ok = parseCountList(text, 1, kMaxLoadConcurrency, v, bad);
    for (long long c : v)
        out.push_back(static_cast<int>(c));
    if (!ok)
        why = "'" + bad + "' is not a concurrency (1.." + std::to_string(kMaxLoadConcurrency) + ")";
    return ok;
}

std::string concurrencyListError(const std::vector<int>& concurrencies)
{
    if (concurrencies.empty() || concurrencies.size() > 64)
        return "give 1 to 64 concurrencies";
    for (int c : concurrencies)
        if (c < 1 || c > kMaxLoadConcurrency)
            return std::to_string(c) + " is out of range (1.." + std::to_string(kMaxLoadConcurrency) + ")";
    if (const int* twice = firstRepeat(concurrencies))
        return std::to_string(*twice) + " is listed twice";
    return {};
}

FieldErrors validateLoadFront(const Scenario& s, const std::vector<int>& concurrencies, const SearchOptions& o)
{
    FieldErrors e;
    if (const std::string why = concurrencyListError(concurrencies); !why.empty())
        e.push_back({{}, "--concurrencies", why});
    Scenario probe = s;
    probe.workload.load.protocol = LoadProtocol::Concurrency;
    probe.workload.load.concurrency = 1;
    SearchOptions under = o;
    under.underLoad = true;
    if (const std::string why = underLoadError(probe, under); !why.empty())
        e.push_back({{}, o.algorithm == "exact" ? "--algo" : "workload.serving", why});
    if (s.workload.serving != ServingMode::Prefill && !hasTpot(s.workload))
        e.push_back({{}, "workload.output_tokens",
                     "a request of one output token has no speed per user (no second token): evaluate or search "
                     "under a load protocol instead"});
    for (const FieldError& x : validateSearchOptions(o))
        e.push_back(x);
    return e;
}

LoadFront computeLoadFront(const Scenario& s, std::vector<int> concurrencies, const SearchOptions& o,
                           const std::function<void(const LoadFrontPoint&)>& progress, const std::atomic<bool>* stop)
{
    LoadFront f;
    const auto start = std::chrono::steady_clock::now();
    if (const FieldErrors bad = validateLoadFront(s, concurrencies, o); !bad.empty()) {
        f.message = bad.front().toString();
        return f;
    }
    std::sort(concurrencies.begin(), concurrencies.end()); // distinct: validateLoadFront refused repeats
    SearchOptions under = o;
    under.underLoad = true;
    for (int c : concurrencies) {
        if (stop && stop->load()) {
            f.stopped = true;
            break;
        }
        Scenario at = s;
        at.workload.load = withProtocol(s.workload.load, LoadProtocol::Concurrency, c, 0);
        const SearchOutcome r = runSearch(at, under, nullptr, stop);
        LoadFrontPoint p;
        p.concurrency = c;
        p.calls = r.calls;
        p.message = r.message;
        p.found = r.found; // ranked under load: found means the run holds the limits
        if (p.found) {
            p.plan = r.best;
            p.load = r.deployment.load;
            p.tokensPerSPerGpu = r.deployment.load.tokensPerSPerGpu;
            p.tokensPerSPerUser = r.deployment.load.tpotMeanMs > 0 ? 1000 / r.deployment.load.tpotMeanMs : 0;
        }
        f.calls += r.calls;
        f.stopped = f.stopped || r.stopped;
        f.points.push_back(p);
        if (progress)
            progress(p);
    }
    std::vector<std::pair<double, double>> xy;
    std::vector<size_t> at;
    for (size_t i = 0; i < f.points.size(); ++i)
        if (f.points[i].found) {
            xy.emplace_back(f.points[i].tokensPerSPerUser, f.points[i].tokensPerSPerGpu);
            at.push_back(i);
        }
    for (size_t k : nonDominatedIndices(xy))
        f.points[at[k]].onFront = true;
    f.ok = true;
    f.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return f;
}

std::string loadFrontCsv(const LoadFront& f)
{
    std::string out = "concurrency,found,on_front,output_tokens_per_s_per_gpu,tokens_per_s_per_user,ttft_ms_p90,"
                      "tpot_ms_mean,tpot_ms_p90,tp,ep,pp,dp,batch\n";
    char buf[512];
    for (const LoadFrontPoint& p : f.points) {
        std::snprintf(buf, sizeof buf, "%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%d,%d,%d,%d\n", p.concurrency, p.found ? 1 : 0,
                      p.onFront ? 1 : 0, p.tokensPerSPerGpu, p.tokensPerSPerUser, p.load.ttftP90Ms, p.load.tpotMeanMs,
                      p.load.tpotP90Ms, p.plan.tensorParallel, p.plan.expertParallel, p.plan.pipelineParallel,
                      p.plan.dataParallel, p.plan.batch);
        out += buf;
    }
    return out;
}

} // namespace shardlab
