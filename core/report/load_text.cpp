#include "report/load_text.h"

#include "model/engine_caps.h"
#include "model/printf_text.h"

#include <algorithm>
#include <cmath>

namespace shardlab {

namespace {
// A rate as people write it: three significant figures below 1,000 requests/s (8, 2.5,
// 0.125), whole numbers above it (12346, not 1.23e+04), "inf" for every request at once.
std::string rateText(double r)
{
    if (std::isinf(r))
        return "inf";
    return r >= 999.5 ? printfText("%.0f", r) : printfText("%.3g", r); // (999.5 rounds to "1e+03" in %.3g)
}
} // namespace

std::string describeProtocol(const LoadSpec& l)
{
    const int n = l.measuredRequests();
    if (l.protocol == LoadProtocol::Concurrency)
        return printfText("concurrency %d (closed loop, all started at once), %d requests after %d warm-up",
                          l.concurrency, n, l.warmup())
            + (l.uniformLengths ? ", lengths uniform in [0.8 L, L]" : "");
    if (l.protocol == LoadProtocol::RequestRate)
        return (std::isinf(l.requestRate) ? std::string("every request at once")
                                          : printfText("%s requests/s (Poisson)", rateText(l.requestRate).c_str()))
            + printfText(", %d requests", n) + (l.warmup() > 0 ? printfText(" after %d warm-up", l.warmup()) : "")
            + (l.uniformLengths ? ", lengths uniform in [0.8 L, L]" : "");
    return "steady state";
}

std::vector<std::string> describeLoad(const DeploymentOutcome& o)
{
    std::vector<std::string> lines;
    if (!o.underLoad || o.pools.empty())
        return lines;
    const LoadSpec& spec = o.pools.front().scenario.workload.load;
    lines.push_back("Under load: " + describeProtocol(spec));
    if (!o.loadError.empty()) {
        lines.push_back("  not run: " + o.loadError);
        return lines;
    }
    const LoadFigures& f = o.load;
    if (f.requests != spec.measuredRequests()) // the run's count, as --json's "requests" gives it
        lines.push_back(printfText("  measured %d requests, not the %d asked: the replicas' shares are whole "
                                   "requests, at least one each",
                                   f.requests, spec.measuredRequests()));
    lines.push_back(printfText("  TTFT  mean %.1f ms, p50 %.1f, p90 %.1f, p99 %.1f", f.ttftMeanMs, f.ttftP50Ms,
                               f.ttftP90Ms, f.ttftP99Ms));
    if (o.hasTpot())
        lines.push_back(printfText("  TPOT  mean %.2f ms, p50 %.2f, p90 %.2f, p99 %.2f  ((end-to-end - TTFT) / (output - 1))",
                                   f.tpotMeanMs, f.tpotP50Ms, f.tpotP90Ms, f.tpotP99Ms));
    else
        lines.push_back("  TPOT  none (one output token: no gap between tokens)");
    if (f.pools) {
        const double waits = f.prefillWaitMeanMs + f.kvTransferMeanMs + f.decodeWaitMeanMs;
        // An engine that streams the prefill's token takes no decode step before it.
        const bool prefillToken = streamsPrefillFirstToken(o.pools.front().scenario.workload.engine);
        lines.push_back(printfText("  TTFT's parts (means): %.1f ms waiting for a prefill pass, %.1f ms KV transfer "
                                   "(waiting for the links included), %.1f ms waiting to join a decode step; %s the "
                                   "other %.1f ms",
                                   f.prefillWaitMeanMs, f.kvTransferMeanMs, f.decodeWaitMeanMs,
                                   prefillToken ? "the prefill pass (the decode engine streams the token it computed)"
                                                : "the prefill pass and that first decode step",
                                   std::max(0.0, f.ttftMeanMs - waits)));
        lines.push_back(printfText("  output %.1f tokens/s (%.2f per GPU of both pools); %.1f sequences running and %.1f "
                                   "queued per decode replica step",
                                   f.outputTokensPerS, f.tokensPerSPerGpu, f.meanRunning, f.meanQueued));
    } else {
        lines.push_back(printfText("  output %.1f tokens/s (%.2f per GPU); %.1f sequences running and %.1f queued per "
                                   "replica step",
                                   f.outputTokensPerS, f.tokensPerSPerGpu, f.meanRunning, f.meanQueued));
    }
    if (f.saturated)
        lines.push_back(printfText("  SATURATED: %s requests/s offered, capacity %s requests/s (steady state at this "
                                   "plan's batch); TTFT grows without bound as a longer run goes on (the figures above "
                                   "are this run's %d requests)",
                                   rateText(f.offeredRequestsPerS).c_str(), rateText(f.capacityRequestsPerS).c_str(),
                                   f.requests));
    else if (spec.protocol == LoadProtocol::RequestRate)
        lines.push_back(printfText("  load %.0f%% of capacity (%s requests/s)",
                                   100 * f.offeredRequestsPerS / f.capacityRequestsPerS,
                                   rateText(f.capacityRequestsPerS).c_str()));
    if (f.ttftAt90Ms > 0 || f.ttftAt110Ms > 0)
        lines.push_back(printfText("  near capacity: mean TTFT %.1f ms at 0.9x this rate, %.1f ms at 1.1x",
                                   f.ttftAt90Ms, f.ttftAt110Ms));
    if (o.loadVerdict.withinLimits)
        lines.push_back("  within the limits under load (p90 TTFT and p90 TPOT)");
    for (const std::string& r : o.loadVerdict.reasons)
        lines.push_back("  breaks a limit under load: " + r);
    return lines;
}

std::string deploymentVerdict(const DeploymentOutcome& o, bool brief)
{
    if (!o.valid)
        return "INVALID";
    if (o.breaksLimitsUnderLoad())
        return brief ? "Valid in the steady state, NOT under load"
                     : "Valid in the steady state, but NOT under load: it breaks a limit under the protocol (below)";
    return "Valid";
}

std::string summarizeLoad(const DeploymentOutcome& o)
{
    if (!o.underLoad || o.pools.empty())
        return "";
    const LoadSpec& spec = o.pools.front().scenario.workload.load;
    const std::string head = "Under load (" + describeProtocol(spec) + "): ";
    if (!o.loadError.empty())
        return head + "not run: " + o.loadError;
    const LoadFigures& f = o.load;
    std::string line = head
        + printfText("%.1f output tokens/s per GPU · TTFT mean %.1f ms, p99 %.1f ms · ", f.tokensPerSPerGpu, f.ttftMeanMs,
                     f.ttftP99Ms)
        + (o.hasTpot() ? printfText("TPOT mean %.2f ms, p99 %.2f ms", f.tpotMeanMs, f.tpotP99Ms)
                            : std::string("no TPOT (one output token)"));
    if (f.pools)
        line += printfText(" (prefill wait %.1f ms, KV transfer %.1f ms)", f.prefillWaitMeanMs, f.kvTransferMeanMs);
    if (f.saturated)
        return line + printfText(" · SATURATED (%s requests/s offered, capacity %s)", rateText(f.offeredRequestsPerS).c_str(),
                                 rateText(f.capacityRequestsPerS).c_str());
    if (spec.protocol == LoadProtocol::RequestRate && f.capacityRequestsPerS > 0)
        line += printfText(" · %.0f%% of capacity", 100 * f.offeredRequestsPerS / f.capacityRequestsPerS);
    return line + (o.loadVerdict.withinLimits ? " · p90s within the limits" : " · p90 beyond a limit");
}

namespace {

// One side of a comparison under load: "240.0 tokens/s per GPU · TTFT mean 83.0 ms, p90
// 116.4 · TPOT mean 34.55 ms, p90 35.72 · 31% of capacity · within the limits".
std::string loadSide(const DeploymentOutcome& o)
{
    if (!o.loadError.empty())
        return "not run: " + o.loadError;
    const LoadFigures& f = o.load;
    std::string line = printfText("%.1f tokens/s per GPU · TTFT mean %.1f ms, p90 %.1f · ", f.tokensPerSPerGpu,
                                  f.ttftMeanMs, f.ttftP90Ms)
        + (o.hasTpot() ? printfText("TPOT mean %.2f ms, p90 %.2f", f.tpotMeanMs, f.tpotP90Ms)
                            : std::string("no TPOT (one output token)"));
    if (f.saturated)
        line += printfText(" · SATURATED (capacity %s requests/s)", rateText(f.capacityRequestsPerS).c_str());
    else if (f.protocol == LoadProtocol::RequestRate && f.capacityRequestsPerS > 0)
        line += printfText(" · %.0f%% of capacity", 100 * f.offeredRequestsPerS / f.capacityRequestsPerS);
    return line + (o.loadVerdict.withinLimits ? " · within the limits" : " · beyond a limit");
}

bool ranUnderLoad(const DeploymentOutcome& o) { return o.underLoad && o.loadError.empty(); }

} // namespace

LoadComparison compareUnderLoad(const DeploymentOutcome& a, const DeploymentOutcome& b, const std::string& aName,
                                const std::string& bName)
{
    LoadComparison c;
    if (!a.underLoad || !b.underLoad || a.pools.empty())
        return c;
    c.lines.push_back("Under the scenario's load, " + describeProtocol(a.pools.front().scenario.workload.load) + ":");
    c.lines.push_back("  " + aName + ": " + loadSide(a));
    c.lines.push_back("  " + bName + ": " + loadSide(b));
    if (!ranUnderLoad(a) || !ranUnderLoad(b) || b.load.tokensPerSPerGpu <= 0)
        return c;
    const LoadFigures &fa = a.load, &fb = b.load;
    auto times = [](double x, double y) { return y > 0 ? printfText("%.3gx", x / y) : std::string("—"); };
    std::string line;
    if (servesOfferedLoad(fa) && servesOfferedLoad(fb)) {
        // Neither saturates the rate: both serve what is offered, and the runs' output per
        // GPU differs only by their samples, so the latencies are what tells them apart.
        c.ratio = 1;
        line = printfText("  both serve the offered %s requests/s (neither saturates it: 1x); %s's p90 TTFT is ",
                          rateText(fa.offeredRequestsPerS).c_str(), aName.c_str());
    } else {
        c.ratio = fa.tokensPerSPerGpu / fb.tokensPerSPerGpu;
        line = printfText("  %s serves %.3fx %s's output tokens per GPU under this load; its p90 TTFT is ", aName.c_str(),
                          c.ratio, bName.c_str());
    }
    line += times(fa.ttftP90Ms, fb.ttftP90Ms) + " and its p90 TPOT " + times(fa.tpotP90Ms, fb.tpotP90Ms) + " " + bName
        + "'s";
    if (a.loadVerdict.withinLimits != b.loadVerdict.withinLimits)
        line += "; only " + (a.loadVerdict.withinLimits ? aName : bName) + " holds the limits under it";
    c.lines.push_back(line);
    return c;
}

} // namespace shardlab
