// pareto, size, sweep: the choices a serving team makes (docs/choices.md). The
// computations live in core/runner/pareto.h and sizing.h; this file only reads flags and
// prints.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "cli_commands.h"
#include "cli_signals.h"
#include "io/count_list.h"
#include "report/json_figure.h"
#include "report/plan_text.h"
#include "report/load_text.h"
#include "runner/pareto.h"
#include "runner/sizing.h"

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

// One pool's plan as a plan file writes it, or two pools as a disaggregated plan file
// writes them ({"prefill": ..., "decode": ...}), with the model's operators only.
ojson deploymentPlanJson(const Deployment& d, const ModelSpec& model)
{
    ojson j = ojson::parse(d.pools ? disaggregatedPlanToJson(*d.pools, model) : planToJson(d.plan, model), nullptr, false);
    return j.is_discarded() ? ojson(nullptr) : j;
}

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

ojson pointJson(const ParetoPoint& p, const ModelSpec& model)
{
    return {{"tokens_per_s_per_user", finite(p.tokensPerSPerUser)},
            {"output_tokens_per_s_per_gpu", finite(p.outputTokensPerSPerGpu)},
            {"tpot_ms", finite(p.tpotMs)},
            {"ttft_ms", finite(p.ttftMs)},
            {"tpot_limit_ms", finite(p.tpotLimitMs)},
            {"plan", deploymentPlanJson(p.deployment, model)},
            {"proved_optimal", p.provedOptimal}};
}

ojson sizeJson(const ClusterSizePoint& p, bool hasTpot, const ModelSpec& model)
{
    ojson j = {{"gpus", p.gpus},
               {"found", p.found},
               {"proved_optimal", p.provedOptimal},
               {"proved_infeasible", p.provedInfeasible},
               {"output_tokens_per_s_per_gpu", finite(p.tokensPerSPerGpu)},
               {"output_tokens_per_s", finite(p.outputTokensPerS)},
               {"requests_per_s", finite(p.requestsPerS)},
               {"tpot_ms", jsonFigure(p.tpotMs, hasTpot)},
               {"ttft_ms", finite(p.ttftMs)},
               {"seconds", finite(p.seconds)}};
    j["plan"] = p.found ? deploymentPlanJson(p.deployment, model) : ojson(nullptr);
    if (!p.found)
        j["message"] = p.message;
    return j;
}

// The answer's plan under Poisson arrivals at the rate (SizingAtRate).
ojson atRateJson(const SizingAtRate& a, bool hasTpot)
{
    if (!a.ran)
        return {{"ran", false}, {"error", a.error}};
    const LoadFigures& f = a.figures;
    return {{"ran", true},
            {"ttft_ms_mean", finite(f.ttftMeanMs)},
            {"ttft_ms_p90", finite(f.ttftP90Ms)},
            {"tpot_ms_mean", jsonFigure(f.tpotMeanMs, hasTpot)},
            {"tpot_ms_p90", jsonFigure(f.tpotP90Ms, hasTpot)},
            {"saturated", f.saturated},
            {"capacity_requests_per_s", finite(f.capacityRequestsPerS)},
            {"within_limits", a.withinLimits}};
}

void printAtRate(std::ostream& out, const SizingResult& r, double rate, bool hasTpot, const ModelSpec& m)
{
    const SizingAtRate& a = r.atRate;
    if (!a.ran) {
        out << "Queueing: not run (" << a.error << ")\n";
        return;
    }
    const LoadFigures& f = a.figures;
    out << "Queueing: under Poisson arrivals at " << formatNumber("%g", rate) << " requests/s (" << f.requests
        << " requests) the answer's plan gives TTFT mean " << formatNumber("%.1f", f.ttftMeanMs) << " ms, p90 "
        << formatNumber("%.1f", f.ttftP90Ms)
        << (hasTpot ? "; TPOT mean " + formatNumber("%.2f", f.tpotMeanMs) + " ms, p90 " + formatNumber("%.2f", f.tpotP90Ms)
                    : std::string("; no TPOT (one output token)"))
        << (f.saturated ? "; SATURATED" : "") << " -- "
        << (a.withinLimits ? "within the limits (p90)" : "over the limits (p90)") << "\n";
    if (a.withinLimits)
        return;
    if (r.queueingGpus > 0)
        out << "  With queueing: " << r.queueingGpus << " GPUs hold the limits at this rate (p90 TTFT "
            << formatNumber("%.1f", r.queueingAtRate.figures.ttftP90Ms) << " ms, p90 TPOT "
            << formatNumber("%.2f", r.queueingAtRate.figures.tpotP90Ms) << " ms) with " << deploymentDegreesText(m, r.queueingBest.deployment, true)
            << "; the first count from the answer up whose steady optimum does, not proved minimal\n";
    else
        out << "  With queueing: no count up to " << kQueueingCounts
            << " counts above the answer holds the limits at this rate with its steady optimum\n";
}


// A scenario's load protocol, where a command answers in the steady state or by a rate of
// its own: said, so its figures are not taken for runs under it ("" without one).
std::string protocolNotRun(const Scenario& s, const std::string& instead)
{
    if (s.workload.load.steady())
        return "";
    return "The scenario's load protocol (" + describeProtocol(s.workload.load) + ") is not run here: " + instead
        + "\n";
}

std::string servingLine(const Scenario& s)
{
    const ServingMode m = s.workload.serving;
    return std::string("Serving: ") + servingModeName(m)
        + (m == ServingMode::Aggregated ? " (in-flight batching, chunked prefill: output tokens/s include every prompt's "
                                          "prefill)"
           : m == ServingMode::Disaggregated
               ? " (a prefill pool and a decode pool, the KV cache sent between them: output tokens/s are the least of "
                 "the two pools' and the KV links' rates, per GPU of both pools)"
               : " (steady decode steps only, prefill left out: an upper bound)");
}

int runPareto(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    ParetoOptions o;
    long long points = o.points, maxSearches = 0, threads = o.threads;
    std::string error;
    if (!intValue(a, "--points", 2, 200, points, error) || !intValue(a, "--max-searches", 0, 10000, maxSearches, error)
        || !intValue(a, "--threads", 1, 8, threads, error))
        return reportErrors(err, {error});
    o.points = static_cast<int>(points);
    o.threads = static_cast<int>(threads);
    o.maxSearches = static_cast<int>(maxSearches);
    const FieldErrors bad = validateParetoRequest(s.value, o);
    if (!bad.empty())
        return reportFieldErrors(err, bad);
    const bool quiet = a.flag("--quiet");
    const ParetoFront f = computeParetoFront(
        s.value, o,
        [&](const ParetoProgress& p) {
            if (!quiet)
                err << "pareto: exact search " << p.searches << " (at most " << p.maxSearches << "), " << p.points
                    << " point" << (p.points == 1 ? "" : "s") << ", " << formatNumber("%.1f", p.elapsedS)
                    << " s  [" << p.stage << ", TPOT limit " << formatNumber("%.3g", p.lastTpotLimitMs) << " ms]\n";
        },
        installStopSignals());
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (!f.ok && !interrupted)
        return reportErrors(err, {f.message});
    if (a.flag("--csv")) {
        out << paretoCsv(f);
    } else if (a.flag("--json")) {
        ojson j = {{"scenario", s.value.name},
                   {"serving", servingModeName(s.value.workload.serving)},
                   {"tpot_slo_ms", s.value.workload.tpotSloMs},
                   {"ttft_slo_ms", s.value.workload.ttftSloMs}};
        ojson pts = ojson::array(), meg = ojson::array();
        for (const ParetoPoint& p : f.points)
            pts.push_back(pointJson(p, s.value.model));
        for (const ParetoPoint& p : f.megatronPoints)
            meg.push_back(pointJson(p, s.value.model));
        j["points"] = pts;
        j["megatron_points"] = meg;
        j["engine_front"] = nullptr;
        if (!f.engineName.empty()) {
            ojson other = ojson::array();
            for (const ParetoPoint& p : f.otherPoints)
                other.push_back(pointJson(p, s.value.model));
            j["engine_front"] = {{"engine", collectiveEngineName(s.value.workload.engine)},
                                 {"engine_label", f.engineName},
                                 {"space", f.otherRunnable ? "runnable" : "per_operator"},
                                 {"points", other},
                                 {"gain_at_slo", finite(paretoGainAtSlo(f))}};
        }
        j["all_proved"] = f.allProved;
        j["unreachable_tokens_per_s_per_user"] = finite(f.unreachableTokensPerSPerUser);
        j["exact_searches"] = f.searches;
        j["wall_seconds"] = finite(f.wallSeconds);
        j["stopped"] = f.stopped;
        j["interrupted"] = interrupted;
        j["message"] = f.message;
        out << j.dump(2) << "\n";
    } else {
        out << "Pareto front on " << displayText(s.value.name) << ": output tokens/s per GPU against tokens/s per user (1000 / TPOT)\n"
            << servingLine(s.value) << "\n"
            << "Each exact point is the certified optimum with TPOT at or below its limit (TTFT limit "
            << formatNumber("%g", s.value.workload.ttftSloMs) << " ms and memory kept; the slowest point is the "
            << "optimum at the scenario's TPOT SLO of " << formatNumber("%g", s.value.workload.tpotSloMs) << " ms).\n";
        if (s.value.workload.serving == ServingMode::Disaggregated)
            out << "Each point is a deployment: the prefill:decode split and both pools' plans, the optimum over "
                   "every split; TPOT is the decode pool's, TTFT the prefill pool's with the KV transfer.\n";
        out << protocolNotRun(s.value, "each point is the steady state at its plan's batch (load-front ranks plans "
                                       "under closed loops; evaluate --plan runs one plan under the protocol)");
        auto table = [&](const std::vector<ParetoPoint>& v, const std::string& title) {
            out << title << "\n  tok/s/user  tok/s/GPU   TPOT ms   TTFT ms  proved  plan\n";
            for (const ParetoPoint& p : v)
                out << "  " << padRight(formatNumber("%.1f", p.tokensPerSPerUser), 11)
                    << padRight(formatNumber("%.1f", p.outputTokensPerSPerGpu), 12)
                    << padRight(formatNumber("%.2f", p.tpotMs), 10) << padRight(formatNumber("%.0f", p.ttftMs), 9)
                    << padRight(p.provedOptimal ? "yes" : "no", 8) << deploymentDegreesText(s.value.model, p.deployment, true) << "\n";
        };
        const std::string runs = "among the plans " + f.engineName + " runs";
        table(f.points, f.engineName.empty() ? std::string("Exact front (certified optima):")
                        : f.otherRunnable    ? std::string("Exact front (certified optima, per-operator):")
                                             : "Exact front (certified optima, " + runs + "):");
        if (!f.engineName.empty()) {
            table(f.otherPoints, f.otherRunnable ? "Exact front " + runs + ", under the same limits:"
                                                 : std::string("Exact per-operator front, under the same limits:"));
            if (const double g = paretoGainAtSlo(f); g > 0)
                out << "At the TPOT SLO the per-operator optimum is " << formatNumber("%.3f", g) << "x the best plan "
                    << f.engineName << " runs.\n";
        }
        table(f.megatronPoints, "Megatron recipe under the same limits (not optimized, not proved):");
        if (f.unreachableTokensPerSPerUser > 0)
            out << "No plan reaches " << formatNumber("%.1f", f.unreachableTokensPerSPerUser)
                << " tokens/s per user (TPOT " << formatNumber("%.3g", 1000 / f.unreachableTokensPerSPerUser)
                << " ms): proved by exact.\n";
        out << f.searches << " exact searches, " << formatNumber("%.2f", f.wallSeconds) << " s; "
            << (f.allProved ? "every point proved optimal" + runnableSpaceWords(s.value)
                : std::all_of(f.points.begin(), f.points.end(), [](const ParetoPoint& p) { return p.provedOptimal; })
                    ? std::string("every point listed proved optimal, but the front is incomplete (no speed per user "
                                  "was proved out of reach: raise --max-searches)")
                    : std::string("NOT every point proved optimal"))
            << "\n";
        if (!f.message.empty())
            out << "Note: " << f.message << "\n";
        if (interrupted)
            out << "Interrupted by a signal: the points found so far are shown.\n";
    }
    if (interrupted)
        return kExitInterrupted;
    return kExitOk;
}

bool gpuList(const Args& a, std::vector<long long>& out, std::string& error)
{
    if (parseGpuCounts(a.value("--gpus"), out, error))
        return true; // "--gpus ," lists nothing: validateGpuCounts says so
    error = "--gpus: " + error;
    return false;
}

int runSweep(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    if (!a.has("--gpus"))
        return reportErrors(err, {"--gpus: required (comma-separated GPU counts, e.g. --gpus 8,16,32)"});
    std::vector<long long> gpus;
    std::string error;
    if (!gpuList(a, gpus, error))
        return reportErrors(err, {error});
    const FieldErrors bad = validateGpuCounts(s.value, gpus);
    if (!bad.empty())
        return reportFieldErrors(err, bad);
    const bool quiet = a.flag("--quiet");
    const SweepResult r = sweepClusterSizes(
        s.value, gpus,
        [&](const ScaleProgress& p) {
            if (!quiet)
                err << "sweep: " << p.searches << "/" << p.plannedSearches << " cluster sizes (" << p.gpus
                    << " GPUs done), " << formatNumber("%.1f", p.elapsedS) << " s\n";
        },
        installStopSignals());
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (!r.ok && !interrupted)
        return reportErrors(err, {r.message});
    if (a.flag("--csv")) {
        out << clusterSizesCsv(r.points);
    } else if (a.flag("--json")) {
        ojson pts = ojson::array();
        for (const ClusterSizePoint& p : r.points)
            pts.push_back(sizeJson(p, hasTpot(s.value.workload), s.value.model));
        ojson j = {{"scenario", s.value.name}, {"serving", servingModeName(s.value.workload.serving)}, {"points", pts}};
        j["wall_seconds"] = finite(r.wallSeconds);
        j["interrupted"] = interrupted;
        out << j.dump(2) << "\n";
    } else {
        out << "Scaling sweep on " << displayText(s.value.name) << " (" << displayText(s.value.cluster.gpu.name) << ", "
            << s.value.cluster.gpusPerNode << " GPUs per node, the same links): the certified best plan per GPU count\n"
            << servingLine(s.value) << "\n"
            << protocolNotRun(s.value, "each count's figures are the steady state at its plan's batch (evaluate "
                                       "--plan runs one plan under the protocol)")
            << "     GPUs  tok/s/GPU  vs first  requests/s  proved  plan\n";
        double first = 0;
        for (const ClusterSizePoint& p : r.points) {
            if (first == 0 && p.found)
                first = p.tokensPerSPerGpu;
            const std::string gpus = std::to_string(p.gpus);
            out << "  " << padRight(gpus, 7) << (gpus.size() >= 7 ? " " : ""); // a 7-digit count stays apart
            if (!p.found) {
                out << "no valid plan" << (p.provedInfeasible ? " (proved)" : "") << "\n";
                continue;
            }
            out << padRight(formatNumber("%.1f", p.tokensPerSPerGpu), 11)
                << padRight(formatNumber("%.2f", first > 0 ? p.tokensPerSPerGpu / first : 0), 10)
                << padRight(formatNumber("%.2f", p.requestsPerS), 12) << padRight(p.provedOptimal ? "yes" : "no", 8)
                << deploymentDegreesText(s.value.model, p.deployment, true) << "\n";
        }
        out << "tok/s/GPU: output tokens/s per GPU of the best plan; 'vs first': relative to the first count with a "
               "plan (below 1: diminishing returns).\n"
            << "Wall " << formatNumber("%.2f", r.wallSeconds) << " s\n";
        if (interrupted)
            out << "Interrupted by a signal: the sizes completed so far are shown.\n";
    }
    return interrupted ? kExitInterrupted : kExitOk;
}

int runSize(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    if (!a.has("--rate"))
        return reportErrors(err, {"--rate: required (requests per second, e.g. --rate 50)"});
    SizingOptions o;
    long long maxGpus = o.maxGpus;
    std::string error;
    if (!numberValue(a, "--rate", 1e-9, 1e12, o.requestsPerS, error) || !intValue(a, "--max-gpus", 1, 1 << 20, maxGpus, error))
        return reportErrors(err, {error});
    o.maxGpus = maxGpus;
    o.anyCount = a.flag("--any-count");
    const FieldErrors bad = validateSizingRequest(s.value, o);
    if (!bad.empty())
        return reportFieldErrors(err, bad);
    const bool quiet = a.flag("--quiet");
    const SizingResult r = sizeCluster(
        s.value, o,
        [&](const ScaleProgress& p) {
            if (!quiet)
                err << "size: " << p.searches << " cluster sizes searched (" << p.gpus << " GPUs just now), "
                    << formatNumber("%.1f", p.elapsedS) << " s\n";
        },
        installStopSignals());
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (!r.ok && !interrupted)
        return reportErrors(err, {r.message});
    if (a.flag("--csv")) {
        out << clusterSizesCsv(r.curve);
    } else if (a.flag("--json")) {
        ojson curve = ojson::array();
        for (const ClusterSizePoint& p : r.curve)
            curve.push_back(sizeJson(p, hasTpot(s.value.workload), s.value.model));
        ojson j = {{"scenario", s.value.name},
                   {"serving", servingModeName(s.value.workload.serving)},
                   {"rate", o.requestsPerS},
                   {"any_count", o.anyCount},
                   {"gpus", r.gpus},
                   {"requests_per_s", finite(r.best.requestsPerS)},
                   {"output_tokens_per_s_per_gpu", finite(r.best.tokensPerSPerGpu)},
                   {"proved_optimal", r.best.provedOptimal}};
        j["plan"] = r.ok ? deploymentPlanJson(r.best.deployment, s.value.model) : ojson(nullptr);
        j["smaller_gpus"] = r.smallerGpus;
        j["smaller_requests_per_s"] = finite(r.smallerRequestsPerS);
        j["minimality_proved"] = r.ok && r.smallerProved;
        j["at_rate"] = atRateJson(r.atRate, hasTpot(s.value.workload));
        j["queueing_gpus"] = r.queueingGpus;
        j["queueing_plan"] = r.queueingGpus > 0 ? deploymentPlanJson(r.queueingBest.deployment, s.value.model) : ojson(nullptr);
        j["curve"] = curve;
        j["wall_seconds"] = finite(r.wallSeconds);
        j["interrupted"] = interrupted;
        out << j.dump(2) << "\n";
    } else {
        out << "Sizing on " << displayText(s.value.name) << ": the fewest GPUs ("
            << (o.anyCount ? "any count up to one node, then whole nodes" : "whole nodes of "
                                 + std::to_string(s.value.cluster.gpusPerNode) + " GPUs")
            << ") whose best plan serves " << formatNumber("%g", o.requestsPerS) << " requests/s of "
            << s.value.workload.promptTokens << " prompt and " << s.value.workload.outputTokens
            << " output tokens within TTFT " << formatNumber("%g", s.value.workload.ttftSloMs) << " ms and TPOT "
            << formatNumber("%g", s.value.workload.tpotSloMs) << " ms\n"
            << servingLine(s.value) << "\n";
        if (s.value.workload.load.protocol == LoadProtocol::Concurrency)
            out << protocolNotRun(s.value, "the answer is checked under Poisson arrivals at --rate, with the "
                                           "scenario's lengths and seed");
        if (r.ok) {
            out << "Answer: " << r.gpus << " GPUs serve " << formatNumber("%.2f", r.best.requestsPerS)
                << " requests/s (" << formatNumber("%.1f", r.best.tokensPerSPerGpu) << " output tokens/s per GPU) with "
                << deploymentDegreesText(s.value.model, r.best.deployment, true) << "\n";
            if (r.smallerGpus > 0 && r.smallerRequestsPerS > 0)
                out << "Minimal: with " << r.smallerGpus << " GPUs the best plan serves "
                    << formatNumber("%.2f", r.smallerRequestsPerS) << " requests/s"
                    << (r.smallerProved ? " (exact proved no plan there does better)" : " (NOT proved)") << "\n";
            else if (r.smallerGpus > 0)
                out << "Minimal: " << r.smallerGpus << " GPUs have no valid plan"
                    << (r.smallerProved ? " (proved by exact)" : " (NOT proved)") << "\n";
            else if (o.anyCount)
                out << "Minimal: it is the smallest count there is.\n";
            else
                out << "Minimal: it is one whole node, the smallest count searched (--any-count also searches part "
                       "of a node).\n";
            printAtRate(out, r, o.requestsPerS, hasTpot(s.value.workload), s.value.model);
        }
        out << "Curve (best requests/s per GPU count searched; requests/s = output tokens/s / "
            << s.value.workload.outputTokens << "):\n";
        for (const ClusterSizePoint& p : r.curve)
            out << "  " << padRight(std::to_string(p.gpus), 7)
                << (p.found ? formatNumber("%.2f", p.requestsPerS) + " requests/s, "
                                  + formatNumber("%.1f", p.tokensPerSPerGpu) + " tok/s/GPU" + (p.provedOptimal ? "" : " (not proved)")
                            : std::string("no valid plan") + (p.provedInfeasible ? " (proved)" : ""))
                << "\n";
        out << "Wall " << formatNumber("%.2f", r.wallSeconds) << " s\n";
        if (interrupted)
            out << "Interrupted by a signal: no answer yet.\n";
    }
    if (interrupted)
        return kExitInterrupted;
    return kExitOk;
}

const OptionSpec kCsv{"--csv", "", "CSV on stdout instead of the table"};
const OptionSpec kQuiet{"--quiet", "", "no progress lines on stderr"};

} // namespace

void addChoicesCommands(std::vector<Command>& v)
{
    v.push_back({{"pareto", "--scenario S.json [--points 16] [--max-searches N] [--threads 2] [--json|--csv] [--quiet]",
                  "the front of output tokens/s per GPU against tokens/s per user, every point proved optimal",
                  "Each point is exact's certified optimum with TPOT at or below a limit; the limits start at the "
                  "scenario's TPOT SLO, tighten until exact proves no plan meets them, and then bisect the widest "
                  "gaps of the front (its knees) in tokens/s per user (docs/choices.md). The Megatron recipe's front "
                  "under the same limits is printed beside it. Progress goes to stderr; Ctrl-C stops it and prints "
                  "the points so far (exit 130). Aggregated, decode and disaggregated serving (each point of a "
                  "disaggregated scenario is a deployment: its prefill:decode split and both pools' plans).",
                  {kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption,
                   {"--points", "N", "distinct front points wanted, 2..200 (default 16)"},
                   {"--max-searches", "N", "exact searches at most (default 4 x points + 16)"},
                   {"--threads", "N", "exact searches run at once while resolving knees, 1..8 (default 2)"},
                   kJsonOption, kCsv, kQuiet},
                  0, 0},
                 runPareto, true});
    v.push_back({{"size", "--scenario S.json --rate R [--any-count] [--max-gpus 16384] [--json|--csv] [--quiet]",
                  "the fewest GPUs whose best plan serves R requests/s within the SLOs, minimality proved",
                  "R is requests per second at the scenario's prompt and output lengths; a count's rate is its best "
                  "plan's output tokens/s divided by the output tokens per request. Counts are whole nodes (with "
                  "--any-count also 1 .. GPUs per node - 1); the count doubles until R is met, then bisects; exact "
                  "proves that one node (or GPU) fewer cannot serve R. The curve lists every count searched.",
                  {kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption,
                   {"--rate", "R", "requests per second to serve (positive)"},
                   {"--any-count", "", "also counts that are part of one node"},
                   {"--max-gpus", "N", "largest GPU count tried (default 16384)"},
                   kJsonOption, kCsv, kQuiet},
                  0, 0},
                 runSize, true});
    v.push_back({{"sweep", "--scenario S.json --gpus 8,16,... [--json|--csv] [--quiet]",
                  "best tokens/s per GPU and its plan at each cluster size (same GPU and links)",
                  "For each GPU count (whole nodes, or part of one node) exact finds the certified best plan: where "
                  "returns diminish and which degrees change.",
                  {kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption,
                   {"--gpus", "LIST", "comma-separated GPU counts"},
                   kJsonOption, kCsv, kQuiet},
                  0, 0},
                 runSweep, true});
}

} // namespace shardlab::cli
