#include "runner/sizing.h"
#include "io/count_list.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>

#include "model/printf_text.h"
#include "runner/pareto.h"

namespace shardlab {

namespace {

constexpr long long kMaxSweepGpus = 1 << 20;
// The queueing check's run lasts at least this many request lifetimes of arrivals.
constexpr double kSizingLifetimes = 20;

ClusterSizePoint searchCount(const Scenario& s, long long gpus, const std::atomic<bool>* stop, bool& stopped)
{
    ClusterSizePoint p;
    p.gpus = gpus;
    Scenario sized;
    std::string why;
    if (!withGpuCount(s, gpus, sized, &why)) {
        p.message = why;
        return p;
    }
    SearchOptions so;
    so.algorithm = "exact";
    const SearchOutcome r = runSearch(sized, so, nullptr, stop);
    stopped = stopped || r.stopped;
    p.found = r.found;
    p.provedOptimal = r.provedOptimal;
    p.provedInfeasible = r.provedInfeasible;
    p.seconds = r.wallSeconds;
    p.message = r.message;
    if (r.found) { // the deployment's figures: one pool's, or two pools' over every split
        const DeploymentOutcome& d = r.deployment;
        p.deployment = d.deployment();
        p.tokensPerSPerGpu = d.tokensPerSPerGpu;
        p.outputTokensPerS = d.outputTokensPerS;
        p.requestsPerS = requestsPerS(s.workload, d.outputTokensPerS);
        p.tpotMs = d.tpotMs;
        p.ttftMs = d.ttftMs;
        p.e2eMs = d.e2eMs;
    }
    return p;
}

// The count's best deployment under Poisson arrivals at `rate` (the scenario's traffic as
// withProtocol keeps it: lengths, seed, an open loop's counts), judged by p90 TTFT and p90 TPOT against its limits: the
// deployment's outcome under that load protocol (one pool or two).
SizingAtRate checkAtRate(const Scenario& s, const ClusterSizePoint& p, double rate)
{
    SizingAtRate a;
    Scenario sized;
    if (!p.found || !withGpuCount(s, p.gpus, sized, &a.error))
        return a;
    const LoadSpec given = withProtocol(s.workload.load, LoadProtocol::RequestRate, 0, rate);
    auto runWith = [&](const LoadSpec& load) {
        sized.workload.load = load;
        const DeploymentOutcome d = evaluateDeployment(sized, p.deployment);
        SizingAtRate r;
        r.ran = d.underLoad && d.loadError.empty();
        r.error = d.loadError;
        r.figures = d.load;
        r.withinLimits = r.ran && d.loadVerdict.withinLimits;
        return r;
    };
    a = runWith(given);
    // The answer is a rate served for good, so a run that holds the limits is run again for
    // at least kSizingLifetimes of a request's steady-state lifetime of arrivals, and must
    // hold them there too: a short run near capacity ends before its queue shows (500
    // requests at 99 % of what a plan sustains kept p90 TTFT at 0.4 s, where 200,000 took
    // it to 30 s). The longer run's figures are reported when it runs.
    const double lifetimeS = p.e2eMs * 1e-3;
    const double sustained = std::ceil(kSizingLifetimes * rate * lifetimeS);
    if (a.withinLimits && std::isfinite(sustained) && sustained > given.measuredRequests()) {
        LoadSpec longer = given;
        longer.requests = static_cast<int>(std::min<double>(kMaxLoadRequests, sustained));
        a = runWith(longer);
    }
    return a;
}

FieldErrors servingErrors(const Scenario& s)
{
    FieldErrors e;
    if (s.workload.serving == ServingMode::Prefill)
        e.push_back({{}, "workload.serving",
                     "\"prefill\" serving (one prefill pool) is not sized: sizing and the sweep cover \"aggregated\", "
                     "\"decode\" and \"disaggregated\" serving"});
    for (const FieldError& v : validateScenario(s))
        e.push_back(v);
    return e;
}

} // namespace

bool withGpuCount(const Scenario& s, long long gpus, Scenario& out, std::string* why)
{
    const long long gpn = s.cluster.gpusPerNode;
    auto fail = [&](const std::string& w) {
        if (why)
            *why = w;
        return false;
    };
    if (gpus < 1 || gpus > kMaxSweepGpus)
        return fail(std::to_string(gpus) + " GPUs: must be between 1 and " + std::to_string(kMaxSweepGpus));
    if (gpn < 1)
        return fail("the cluster has no GPUs per node");
    out = s;
    if (gpus % gpn == 0) {
        out.cluster.nodes = static_cast<int>(gpus / gpn);
    } else if (gpus < gpn) {
        out.cluster.gpusPerNode = static_cast<int>(gpus);
        out.cluster.nodes = 1;
    } else {
        return fail(std::to_string(gpus) + " GPUs: neither whole nodes (a multiple of " + std::to_string(gpn)
                    + " GPUs per node) nor part of one node");
    }
    return true;
}

bool parseGpuCounts(const std::string& text, std::vector<long long>& out, std::string& why)
{
    if (hasEmptyItem(text)) {
        why = emptyItemWords(text) + ": give e.g. 8,16,32";
        return false;
    }
    std::string bad;
    if (parseCountList(text, 1, std::numeric_limits<long long>::max(), out, bad))
        return true;
    why = "'" + bad + "' is not a positive GPU count (give e.g. 8,16,32)";
    return false;
}

FieldErrors validateGpuCounts(const Scenario& s, const std::vector<long long>& gpus)
{
    FieldErrors e = servingErrors(s);
    if (gpus.empty())
        e.push_back({{}, "--gpus", "lists no GPU count (give e.g. 8,16,32)"});
    if (gpus.size() > 256)
        e.push_back({{}, "--gpus", "at most 256 counts"});
    if (const long long* twice = firstRepeat(gpus))
        e.push_back({{}, "--gpus", std::to_string(*twice) + " is listed twice"});
    for (long long g : gpus) {
        Scenario t;
        std::string why;
        if (!withGpuCount(s, g, t, &why)) {
            e.push_back({{}, "--gpus", why});
            break;
        }
    }
    return e;
}

SweepResult sweepClusterSizes(const Scenario& s, const std::vector<long long>& gpus, const ScaleProgressFn& progress,
                              const std::atomic<bool>* stop)
{
    SweepResult out;
    const FieldErrors errors = validateGpuCounts(s, gpus);
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return out;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    for (size_t i = 0; i < gpus.size() && !out.stopped; ++i) {
        ClusterSizePoint p = searchCount(s, gpus[i], stop, out.stopped);
        if (out.stopped)
            break;
        out.points.push_back(std::move(p));
        if (progress)
            progress({static_cast<int>(i + 1), static_cast<int>(gpus.size()), gpus[i], elapsed()});
    }
    out.wallSeconds = elapsed();
    out.ok = !out.stopped;
    if (out.stopped)
        out.message = "stopped on request after " + std::to_string(out.points.size()) + " cluster sizes";
    return out;
}

FieldErrors validateSizingRequest(const Scenario& s, const SizingOptions& o)
{
    FieldErrors e = servingErrors(s);
    if (!(o.requestsPerS > 0) || !std::isfinite(o.requestsPerS) || o.requestsPerS > 1e12)
        e.push_back({{}, "--rate", "must be a positive number of requests per second (at most 1e12)"});
    if (o.maxGpus < 1 || o.maxGpus > kMaxSweepGpus)
        e.push_back({{}, "--max-gpus", "must be between 1 and " + std::to_string(kMaxSweepGpus)});
    return e;
}

namespace {

// The GPU counts a deployment may have, ascending: whole nodes up to --max-gpus, after the
// part-node counts when any count is allowed.
std::vector<long long> candidateCounts(const Scenario& s, const SizingOptions& o)
{
    std::vector<long long> counts;
    const long long gpn = std::max(1, s.cluster.gpusPerNode);
    if (o.anyCount)
        for (long long g = 1; g < gpn && g <= o.maxGpus; ++g)
            counts.push_back(g);
    for (long long g = gpn; g <= o.maxGpus; g += gpn)
        counts.push_back(g);
    return counts;
}

// The candidate counts searched so far, by index: each count is searched once, on first
// use, and reported to `progress`.
class CountSearches {
public:
    CountSearches(const Scenario& s, const std::vector<long long>& counts, const ScaleProgressFn& progress,
                  const std::atomic<bool>* stop)
        : s_(s), counts_(counts), progress_(progress), stop_(stop), t0_(std::chrono::steady_clock::now())
    {
    }
    const ClusterSizePoint& at(size_t i)
    {
        auto it = done_.find(i);
        if (it == done_.end()) {
            it = done_.emplace(i, searchCount(s_, counts_[i], stop_, stopped_)).first;
            if (progress_)
                progress_({static_cast<int>(done_.size()), 0, counts_[i], elapsed()});
        }
        return it->second;
    }
    bool stopped() const { return stopped_; }
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
    const std::map<size_t, ClusterSizePoint>& done() const { return done_; }
    std::vector<ClusterSizePoint> curve() const
    {
        std::vector<ClusterSizePoint> out;
        for (const auto& [i, p] : done_)
            out.push_back(p);
        return out;
    }

private:
    const Scenario& s_;
    const std::vector<long long>& counts_;
    const ScaleProgressFn& progress_;
    const std::atomic<bool>* stop_;
    std::chrono::steady_clock::time_point t0_;
    std::map<size_t, ClusterSizePoint> done_;
    bool stopped_ = false;
};

// The index of the fewest GPUs whose best plan serves `rate`, or -1. Grows from the
// smallest count, each next count the first at least twice the last (1, 2, 4, 8 nodes; or
// 1, 2, 4, 8, 16 GPUs with part-node counts), until the rate is met; then bisects down to
// adjacent counts.
long long fewestMeeting(CountSearches& searches, const std::vector<long long>& counts, double rate)
{
    auto meets = [&](const ClusterSizePoint& p) { return p.found && p.requestsPerS >= rate; };
    long long missed = -1; // the largest index known to miss the rate
    long long hit = -1;
    for (size_t i = 0;;) {
        const ClusterSizePoint& p = searches.at(i);
        if (searches.stopped())
            return -1;
        if (meets(p)) {
            hit = static_cast<long long>(i);
            break;
        }
        missed = static_cast<long long>(i);
        if (i == counts.size() - 1)
            break;
        const auto next = std::lower_bound(counts.begin() + static_cast<long>(i) + 1, counts.end(), 2 * counts[i]);
        i = std::min(static_cast<size_t>(next - counts.begin()), counts.size() - 1);
    }
    while (!searches.stopped() && hit > 0 && hit - missed > 1) {
        const size_t mid = static_cast<size_t>(missed + (hit - missed) / 2);
        if (meets(searches.at(mid)))
            hit = static_cast<long long>(mid);
        else
            missed = static_cast<long long>(mid);
    }
    return hit;
}

// Why no count searched serves the rate: no valid plan on any, or too few requests/s on
// the largest.
std::string notReachedMessage(const Scenario& s, const SizingOptions& o, const std::vector<long long>& counts,
                              const std::map<size_t, ClusterSizePoint>& done)
{
    bool anyPlan = false;
    for (const auto& [i, p] : done)
        anyPlan = anyPlan || p.found;
    const ClusterSizePoint& last = done.rbegin()->second;
    if (!anyPlan)
        return std::string(s.constraints.empty() ? "workload: no plan meets the scenario's limits"
                                                 : "constraints: no plan within them meets the scenario's limits")
            + " on any GPU count searched (" + std::to_string(counts.front()) + " to " + std::to_string(last.gpus)
            + "): " + last.message;
    return "--rate: " + printfText("%g", o.requestsPerS) + " requests/s is not reached with up to "
        + std::to_string(counts.back()) + " GPUs (the best there: "
        + (last.found ? printfText("%.3g", last.requestsPerS) + " requests/s" : std::string("no valid plan"))
        + (o.maxGpus >= kMaxSweepGpus ? "); relax the SLOs (--max-gpus is at its limit)"
                                      : "); raise --max-gpus or relax the SLOs");
}

// The answer run at the rate under the scenario's protocol; when it misses a limit there,
// the next few larger counts are tried for the fewest GPUs that hold it under queueing.
void checkUnderQueueing(const Scenario& s, const SizingOptions& o, CountSearches& searches,
                        const std::vector<long long>& counts, size_t hit, SizingResult& out)
{
    out.atRate = checkAtRate(s, out.best, o.requestsPerS);
    if (out.atRate.ran && out.atRate.withinLimits) {
        out.queueingGpus = out.gpus;
        out.queueingBest = out.best;
        out.queueingAtRate = out.atRate;
        return;
    }
    if (!out.atRate.ran)
        return;
    const size_t last = std::min(counts.size() - 1, hit + kQueueingCounts);
    for (size_t i = hit + 1; i <= last && !searches.stopped(); ++i) {
        const ClusterSizePoint p = searches.at(i);
        const SizingAtRate a = checkAtRate(s, p, o.requestsPerS);
        if (a.withinLimits) {
            out.queueingGpus = p.gpus;
            out.queueingBest = p;
            out.queueingAtRate = a;
            break;
        }
    }
    out.curve = searches.curve();
}

} // namespace

SizingResult sizeCluster(const Scenario& s, const SizingOptions& o, const ScaleProgressFn& progress,
                         const std::atomic<bool>* stop)
{
    SizingResult out;
    const FieldErrors errors = validateSizingRequest(s, o);
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return out;
    }
    const std::vector<long long> counts = candidateCounts(s, o);
    if (counts.empty()) {
        out.message = "--max-gpus: " + std::to_string(o.maxGpus) + " is below one node ("
            + std::to_string(std::max(1, s.cluster.gpusPerNode)) + " GPUs); use --any-count for part of a node";
        return out;
    }
    CountSearches searches(s, counts, progress, stop);
    const long long hit = fewestMeeting(searches, counts, o.requestsPerS);
    out.stopped = searches.stopped();
    out.curve = searches.curve();
    out.wallSeconds = searches.elapsed();
    if (out.stopped) {
        out.message = "stopped on request after " + std::to_string(searches.done().size()) + " cluster sizes";
        return out;
    }
    if (hit < 0) {
        out.message = notReachedMessage(s, o, counts, searches.done());
        return out;
    }
    out.ok = true;
    out.gpus = counts[static_cast<size_t>(hit)];
    out.best = searches.done().at(static_cast<size_t>(hit));
    if (hit > 0) {
        const ClusterSizePoint& smaller = searches.done().at(static_cast<size_t>(hit - 1));
        out.smallerGpus = smaller.gpus;
        out.smallerRequestsPerS = smaller.found ? smaller.requestsPerS : 0;
        out.smallerProved = smaller.found ? smaller.provedOptimal : smaller.provedInfeasible;
    } else {
        out.smallerProved = true; // no smaller count exists
    }
    checkUnderQueueing(s, o, searches, counts, static_cast<size_t>(hit), out);
    out.stopped = searches.stopped();
    out.wallSeconds = searches.elapsed();
    return out;
}

} // namespace shardlab

namespace shardlab {

std::string clusterSizesCsv(const std::vector<ClusterSizePoint>& points)
{
    auto num = [](double v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(v) ? v : 0.0);
        return std::string(buf);
    };
    std::string out = "gpus,found,proved,output_tokens_per_s_per_gpu,output_tokens_per_s,requests_per_s,tpot_ms,"
                      "ttft_ms,tensor_parallel,expert_parallel,pipeline_parallel,data_parallel,batch,micro_batches,"
                      "redundant_experts,two_batch_overlap,instances,pool,pool_gpus\n";
    // One row per pool: a disaggregated count is two rows with the same figures; a count
    // without a plan, one row without degrees.
    for (const ClusterSizePoint& p : points) {
        const std::string figures = std::to_string(p.gpus) + "," + (p.found ? "true" : "false") + ","
            + ((p.found ? p.provedOptimal : p.provedInfeasible) ? "true" : "false") + "," + num(p.tokensPerSPerGpu)
            + "," + num(p.outputTokensPerS) + "," + num(p.requestsPerS) + "," + num(p.tpotMs) + "," + num(p.ttftMs);
        if (!p.found)
            out += figures + ",,,,,,,,,,,\n";
        else
            for (const std::string& pool : poolCsvFields(p.deployment))
                out += figures + "," + pool + "\n";
    }
    return out;
}

} // namespace shardlab
