// load-front: the serving curve of a concurrency sweep (core/runner/load_front.h), the
// best plan a search finds at each closed-loop concurrency; this file only reads flags and
// prints.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "cli_signals.h"
#include "io/count_list.h"
#include "runner/load_front.h"

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

// "4,8,16" into concurrencies; false with an error naming the flag.
bool concurrencyList(const Args& a, std::vector<int>& out, std::string& error)
{
    if (!a.has("--concurrencies")) {
        out = defaultFrontConcurrencies();
        return true;
    }
    const std::string text = a.value("--concurrencies");
    if (!parseConcurrencies(text, out, error)) {
        error = "--concurrencies: " + error;
        return false;
    }
    return true;
}

ojson pointJson(const LoadFrontPoint& p, const ModelSpec& model)
{
    ojson j = {{"concurrency", p.concurrency}, {"found", p.found}, {"on_front", p.onFront}, {"calls", p.calls}};
    if (!p.found) {
        j["message"] = p.message;
        return j;
    }
    j["output_tokens_per_s_per_gpu"] = p.tokensPerSPerGpu;
    j["tokens_per_s_per_user"] = p.tokensPerSPerUser;
    j["ttft_ms_p90"] = p.load.ttftP90Ms;
    j["tpot_ms_mean"] = p.load.tpotMeanMs;
    j["tpot_ms_p90"] = p.load.tpotP90Ms;
    j["plan"] = ojson::parse(planToJson(p.plan, model)); // the plan file's fields, the model's operators
    return j;
}

void printFront(std::ostream& out, const Scenario& s, const SearchOptions& o, const LoadFront& f)
{
    out << "Front under load on " << displayText(s.name) << ": output tokens/s per GPU against tokens/s per user (1000 / mean "
        << "TPOT), at each closed-loop concurrency\n"
        << "Each point: " << o.algorithm << ", " << o.budget << " simulator calls, seed " << o.seed
        << ", ranking plans by their run under that loop (p90 TTFT <= " << formatNumber("%g", s.workload.ttftSloMs)
        << " ms, p90 TPOT <= " << formatNumber("%g", s.workload.tpotSloMs) << " ms); searched, not proved\n"
        << "  conc  tok/s/GPU  tok/s/user  TTFT p90 ms  TPOT p90 ms  front  plan\n";
    for (const LoadFrontPoint& p : f.points) {
        out << "  " << padRight(std::to_string(p.concurrency), 6);
        if (!p.found) {
            out << "no plan holds the limits at this concurrency\n";
            continue;
        }
        out << padRight(formatNumber("%.1f", p.tokensPerSPerGpu), 11) << padRight(formatNumber("%.1f", p.tokensPerSPerUser), 12)
            << padRight(formatNumber("%.0f", p.load.ttftP90Ms), 13) << padRight(formatNumber("%.2f", p.load.tpotP90Ms), 13)
            << padRight(p.onFront ? "yes" : "", 7) << planDegreesText(s, p.plan) << "\n";
    }
    out << "Simulator calls: " << f.calls << "; wall " << formatNumber("%.2f", f.wallSeconds) << " s"
        << (f.stopped ? "; stopped: the points so far" : "") << "\n";
}

int runLoadFront(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    SearchOptions o = defaultLoadFrontSearch();
    if (a.has("--algo"))
        o.algorithm = a.value("--algo");
    long long budget = o.budget, seed = static_cast<long long>(o.seed);
    std::string error;
    std::vector<int> concurrencies;
    if (!intValue(a, "--budget", 1, kMaxSearchBudget, budget, error) || !intValue(a, "--seed", 0, 1LL << 62, seed, error)
        || !concurrencyList(a, concurrencies, error))
        return reportErrors(err, {error});
    o.budget = static_cast<int>(budget);
    o.seed = static_cast<std::uint64_t>(seed);
    SearchAlgorithmInfo info;
    if (!findSearchAlgorithm(o.algorithm, info))
        return reportErrors(err, {"--algo: unknown algorithm '" + o.algorithm + "' (known: " + knownSearchAlgorithms()
                                  + ")"});
    if (const FieldErrors bad = validateLoadFront(s.value, concurrencies, o); !bad.empty())
        return reportFieldErrors(err, bad);
    const std::atomic<bool>* stop = installStopSignals();
    if (!knobValues(a, {o.algorithm}, o.extra, error) || !pluginReady(o.algorithm, error))
        return reportErrors(err, {error});
    const bool quiet = a.flag("--quiet");
    const LoadFront f = computeLoadFront(
        s.value, concurrencies, o,
        [&](const LoadFrontPoint& p) {
            if (!quiet)
                err << "load-front: concurrency " << p.concurrency << ": "
                    << (p.found ? formatNumber("%.1f", p.tokensPerSPerGpu) + " tokens/s per GPU" : "no valid plan")
                    << "\n";
        },
        stop);
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (!f.ok)
        return reportErrors(err, {f.message});
    if (a.flag("--csv")) {
        out << loadFrontCsv(f);
    } else if (a.flag("--json")) {
        ojson pts = ojson::array();
        for (const LoadFrontPoint& p : f.points)
            pts.push_back(pointJson(p, s.value.model));
        out << ojson{{"scenario", s.value.name}, {"algorithm", o.algorithm}, {"budget", o.budget}, {"seed", o.seed},
                     {"points", pts}, {"calls", f.calls}, {"wall_seconds", f.wallSeconds}, {"stopped", f.stopped},
                     {"interrupted", interrupted}}
                   .dump(2)
            << "\n";
    } else {
        printFront(out, s.value, o, f);
    }
    return interrupted ? 130 : kExitOk;
}

} // namespace

void addLoadFrontCommand(std::vector<Command>& v)
{
    const std::string budget = std::to_string(defaultLoadFrontSearch().budget);
    v.push_back({{"load-front",
                  "--scenario S.json [--concurrencies 1,2,4,...,1024] [--algo anneal] [--budget " + budget
                      + "] [--seed 0] [--json|--csv] [--quiet]",
                  "the best plan at each closed-loop concurrency: output tokens/s per GPU against tokens/s per user",
                  "At each concurrency the search ranks plans by their run under a closed loop of that many requests "
                  "(search --under-load), p90 TTFT and p90 TPOT within the scenario's limits; the points no faster "
                  "point beats per GPU are marked as the front. Searched, not proved (exact cannot rank by a run). "
                  "The scenario's lengths and seed are kept, and its request and warm-up counts at its own "
                  "concurrency (elsewhere 10 x and 2 x the concurrency), as evaluate --concurrency C keeps them. "
                  "Aggregated serving (docs/choices.md).",
                  withKnobs({kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption,
                             {"--concurrencies", "LIST", "comma-separated concurrencies (default 1,2,4,...,1024)"},
                             {"--algo", "NAME", "search algorithm at each point (default anneal; not exact)"},
                             {"--budget", "N", "simulator calls per point (default " + budget + ")"},
                             {"--seed", "K", "seed of each point's search (default 0)"},
                             kJsonOption,
                             {"--csv", "", "CSV on stdout instead of the table"},
                             {"--quiet", "", "no progress lines on stderr"}}),
                  0, 0},
                 runLoadFront, true});
}

} // namespace shardlab::cli
