// search, and the options and knobs every search command shares (bench-search: cli_bench_search.cpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "cli_signals.h"
#include "plugin/rl_plugin.h"
#include "report/result_json.h"
#include "runner/latency_floor.h"
#include "runner/run_search.h"
#ifdef SHARDLAB_HAVE_RL
#include "rl/ppo_options.h"
#endif

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

bool knobsAvailable()
{
#ifdef SHARDLAB_HAVE_RL
    return true;
#else
    return false;
#endif
}

// Every knob some algorithm reads from SearchOptions::extra ("ppo.elite, ppo.tau, ...").
std::string knownKnobs()
{
    std::string s;
#ifdef SHARDLAB_HAVE_RL
    for (const auto& [key, info] : rl::ppoOptionTable()) { // keys carry their "ppo." prefix
        if (!s.empty())
            s += ", ";
        s += key;
    }
#endif
    return s.empty() ? std::string("none in this build") : s;
}

// At most `n` points of a curve: the first, the last and evenly spaced ones between.
std::vector<std::pair<int, double>> thin(const std::vector<std::pair<int, double>>& c, size_t n)
{
    if (c.size() <= n)
        return c;
    std::vector<std::pair<int, double>> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(c[i * (c.size() - 1) / (n - 1)]);
    return out;
}

ojson curveJson(const std::vector<std::pair<int, double>>& c)
{
    ojson a = ojson::array();
    for (const auto& [call, v] : c)
        a.push_back({call, v});
    return a;
}

ojson splitsJson(const std::vector<DisaggregatedSplit>& splits)
{
    ojson a = ojson::array();
    for (const DisaggregatedSplit& sp : splits)
        a.push_back({{"prefill_gpus", sp.prefillGpus},
                     {"decode_gpus", sp.decodeGpus},
                     {"searched", sp.searched},
                     {"prefill_found", sp.prefillFound},
                     {"decode_found", sp.decodeFound},
                     {"prefill_output_tokens_per_s", sp.prefillTokensPerS},
                     {"decode_output_tokens_per_s", sp.decodeTokensPerS},
                     {"kv_link_output_tokens_per_s", sp.kvLinkTokensPerS},
                     {"output_tokens_per_s_per_gpu", sp.tokensPerSPerGpu},
                     {"note", sp.note}});
    return a;
}

void printSplits(std::ostream& out, const std::vector<DisaggregatedSplit>& splits)
{
    out << "Splits (prefill + decode GPUs: best tokens/s per GPU):";
    int shown = 0;
    for (const DisaggregatedSplit& sp : splits)
        if (sp.tokensPerSPerGpu > 0 && shown++ < 12)
            out << "  " << sp.prefillGpus << "+" << sp.decodeGpus << ": " << formatNumber("%.1f", sp.tokensPerSPerGpu);
    out << (shown == 0 ? "  none valid" : "") << "\n";
}

// A finished search as `search` reports it: the outcome and what comes with it.
struct SearchReport {
    const Scenario& scenario;
    const SearchOptions& options;
    const SearchAlgorithmInfo& info;
    const SearchOutcome& r;
    const EngineGap& gap;
    const std::optional<TpotFloor>& floor;
    bool interrupted = false;
};

// The search's options from the command line; false with `error` naming the flag.
bool searchOptionsFrom(const Args& a, const Scenario& s, SearchOptions& o, SearchAlgorithmInfo& info, std::string& error)
{
    o.algorithm = a.value("--algo");
    if (o.algorithm.empty()) {
        error = "--algo: required (one of " + knownSearchAlgorithms() + ")";
        return false;
    }
    if (!findSearchAlgorithm(o.algorithm, info)) {
        error = "--algo: unknown algorithm '" + o.algorithm + "' (known: " + knownSearchAlgorithms() + ")";
        return false;
    }
    o.underLoad = a.flag("--under-load");
    if (o.underLoad)
        if (const std::string why = underLoadError(s, o); !why.empty()) {
            error = "--under-load: " + why;
            return false;
        }
    long long budget = o.budget, seed = 0;
    if (!intValue(a, "--budget", 1, kMaxSearchBudget, budget, error) || !intValue(a, "--seed", 0, 1LL << 62, seed, error))
        return false;
    o.budget = static_cast<int>(budget);
    o.seed = static_cast<std::uint64_t>(seed);
    return true;
}

ojson searchJson(const SearchReport& rep)
{
    const SearchOutcome& r = rep.r;
    const Scenario& s = rep.scenario;
    ojson j = {{"scenario", s.name},
               {"serving", servingModeName(s.workload.serving)},
               {"algorithm", r.algorithm},
               {"seed", rep.options.seed},
               {"budget", rep.info.budgeted ? rep.options.budget : 0},
               {"objective", r.underLoad ? "load" : "steady"},
               {"log10_space_size", r.log10SpaceSize},
               {"found", r.found},
               {"proved_optimal", r.provedOptimal},
               {"proved_infeasible", r.provedInfeasible},
               {"stopped", r.stopped},
               {"interrupted", rep.interrupted},
               {"out_of_memory", r.outOfMemory},
               {"message", r.message},
               {"stop_reason", r.stopReason},
               {"calls", r.calls},
               {"wall_seconds", r.wallSeconds},
               {"best_curve", curveJson(r.bestCurve)}};
    if (s.workload.serving == ServingMode::Disaggregated)
        j["splits"] = splitsJson(r.splits);
    if (r.refinement.ran)
        // first_call numbers the refinement's first call as the text and the best curve do
        // (null when it made none).
        j["refinement"] = {{"first_call", r.refinement.calls > 0 ? ojson(r.refinement.firstCall + 1) : ojson(nullptr)},
                           {"calls", r.refinement.calls},
                           {"from_batch", r.refinement.fromBatch}, {"to_batch", r.refinement.toBatch},
                           {"from_tokens_per_s_per_gpu", r.refinement.fromValue},
                           {"to_tokens_per_s_per_gpu", r.refinement.toValue}};
    if (rep.floor)
        j["tpot_floor"] = {{"reached", rep.floor->reached}, {"reached_ms", rep.floor->reachedMs},
                           {"unreachable_ms", rep.floor->unreachableMs}, {"proved", rep.floor->proved},
                           {"searches", rep.floor->searches},
                           {"message", describeTpotFloor(*rep.floor, s.workload.tpotSloMs)}};
    j["engine_gap"] = rep.gap.applies ? ojson::parse(engineGapToJson(rep.gap)) : ojson(nullptr);
    j["evaluation"] = nullptr;
    if (r.found) {
        ojson ev = ojson::parse(deploymentToJson(r.deployment), nullptr, false);
        if (!ev.is_discarded())
            j["evaluation"] = ev;
    }
    return j;
}

// The batch refinement's line: what the search's last step did with the best plan's batch.
// It makes no call when the budget is spent, or when the evaluator has already priced the
// larger batches it would try.
void printRefinement(std::ostream& out, const BatchRefinement& f, bool budgetSpent)
{
    if (f.calls > 0)
        out << "Batch refinement (the last step, calls " << f.firstCall + 1 << "-" << f.firstCall + f.calls << "): ";
    else if (budgetSpent)
        out << "Batch refinement (the last step, no calls left in the budget): ";
    else
        out << "Batch refinement (the last step, no new call: the larger batches were priced already): ";
    if (f.improved())
        out << "batch " << f.fromBatch << " -> " << f.toBatch << ", " << formatNumber("%.1f", f.fromValue) << " -> "
            << formatNumber("%.1f", f.toValue) << " tokens/s per GPU";
    else
        out << "batch " << f.fromBatch << " is already the largest valid";
    out << ", " << f.calls << " simulator call" << (f.calls == 1 ? "" : "s") << "\n";
}

void printSearchText(std::ostream& out, const SearchReport& rep, const Args& a)
{
    const SearchOutcome& r = rep.r;
    const Scenario& s = rep.scenario;
    const bool pools = s.workload.serving == ServingMode::Disaggregated;
    out << "Search '" << r.algorithm << "' on " << displayText(s.name);
    if (pools)
        out << " (disaggregated: the prefill:decode split and each pool's plan)";
    else
        out << ": search space of 10^" << formatNumber("%.1f", r.log10SpaceSize) << " plans";
    if (rep.info.budgeted)
        out << ", budget " << rep.options.budget << " simulator calls, seed " << rep.options.seed;
    out << "\n";
    if (r.found)
        printDeployment(out, r.deployment, false, "Best plan");
    else
        out << "No valid plan.\n";
    out << "Simulator calls: " << r.calls << "; wall " << formatNumber("%.3f", r.wallSeconds) << " s"
        << (r.provedOptimal ? "; proved optimal" + runnableSpaceWords(s) : "") << "\n";
    if (!r.bestCurve.empty()) {
        out << "Best so far (call: tokens/s per GPU" << (r.underLoad ? " under load" : "") << "):";
        for (const auto& [call, v] : thin(r.bestCurve, 12))
            out << "  " << call << ": " << formatNumber("%.1f", v);
        out << "\n";
    }
    if (r.refinement.ran)
        printRefinement(out, r.refinement, r.calls >= rep.options.budget);
    if (pools)
        printSplits(out, r.splits);
    if (!r.message.empty())
        out << "Note: " << r.message << "\n";
    printEngineGap(out, rep.gap);
    if (rep.floor && rep.floor->reached)
        out << "TPOT: " << describeTpotFloor(*rep.floor, s.workload.tpotSloMs) << " (" << rep.floor->searches
            << " exact searches)\n";
    if (rep.interrupted)
        out << "Interrupted by a signal after " << r.calls << " simulator calls: "
            << (r.found ? "the best plan found so far is shown" : "no valid plan had been found") << ".\n";
    if (r.found && a.has("--out"))
        out << "wrote " << displayText(a.value("--out")) << "\n";
}

int runSearchCommand(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    std::vector<std::string> loadErrors;
    if (!applyLoadArgs(a, s.value, loadErrors))
        return reportErrors(err, loadErrors);
    SearchOptions o;
    SearchAlgorithmInfo info;
    std::string error;
    if (!searchOptionsFrom(a, s.value, o, info, error))
        return reportErrors(err, {error});
    // Before the plugin loads (LibTorch takes a while): a Ctrl-C then still gets a report.
    const std::atomic<bool>* stop = installStopSignals();
    if (!knobValues(a, {o.algorithm}, o.extra, error) || !pluginReady(o.algorithm, error))
        return reportErrors(err, {error});

    // Ctrl-C (or SIGTERM) ends the search through its stop token; what it found is
    // still printed and saved, marked as interrupted.
    const SearchOutcome r = runSearch(s.value, o, nullptr, stop);
    // A scenario that names an engine: the best plan it runs beside the per-operator
    // optimum (the other side from exact), so both answers come with every result.
    const EngineGap gap = r.failed ? EngineGap{} : engineGapFor(a, s.value, &r, stop);
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (r.failed) { // it did not run as asked: an error, and no plan is this search's
        if (a.flag("--json"))
            out << ojson{{"scenario", s.value.name}, {"algorithm", r.algorithm}, {"found", false},
                         {"error", r.message}, {"calls", r.calls}}.dump(2)
                << "\n";
        return reportErrors(err, {r.message});
    }
    // Proved infeasible: where the TPOT limit is out of reach, by how much (proved).
    std::optional<TpotFloor> floor;
    if (r.provedInfeasible && !interrupted)
        floor = shortestTpot(s.value, s.value.workload.tpotSloMs, 0.01, 24, stop);
    if (r.found && a.has("--out")) {
        Status st = saveDeploymentFile(a.value("--out"), r.deployment.deployment(), s.value);
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    const SearchReport report{s.value, o, info, r, gap, floor, interrupted};
    if (a.flag("--json"))
        out << searchJson(report).dump(2) << "\n";
    else
        printSearchText(out, report, a);
    if (interrupted)
        return kExitInterrupted;
    return r.found ? kExitOk : kExitInvalid;
}


} // namespace

// Knobs of registered algorithms (SearchOptions::extra), e.g. the ppo hyperparameters.
std::vector<OptionSpec> withKnobs(std::vector<OptionSpec> v, const std::vector<OptionSpec>& more)
{
    v.insert(v.end(), more.begin(), more.end());
    v.push_back({"--set", "K=V[,K=V...]", "algorithm knobs by name, e.g. ppo.elite=0,ppo.lr=0.003 (docs/ppo.md)"});
#ifdef SHARDLAB_HAVE_RL
    v.push_back({"--ppo-config", "FILE.json", "ppo hyperparameters from a JSON object (docs/ppo.md); --set wins"});
#endif
    return v;
}

// An algorithm from a plugin (ppo) is loaded before the run, so a missing or broken
// plugin is an error naming the plugin, not a search that finds nothing.
bool pluginReady(const std::string& algorithm, std::string& error)
{
    for (const SearchAlgorithmInfo& a : pluginSearchAlgorithms()) {
        if (a.name != algorithm)
            continue;
        const auto api = loadRlPlugin();
        if (!api.ok()) {
            error = "--algo " + algorithm + ": " + api.error().toString();
            return false;
        }
    }
    return true;
}

// --ppo-config, then --set, into `extra`, for a run of `algorithms`; false with an error
// that names the flag.
bool knobValues(const Args& a, const std::vector<std::string>& algorithms, std::map<std::string, double>& extra,
                std::string& error)
{
#ifdef SHARDLAB_HAVE_RL
    if (a.has("--ppo-config")) {
        const std::string file = a.value("--ppo-config");
        const auto text = readTextFile(file); // regular files (or -) only, size-limited
        if (!text.ok()) {
            error = "--ppo-config: " + text.error().toString();
            return false;
        }
        const FieldErrors e = rl::ppoExtraFromJson(text.value(), inputLabel(file), extra);
        if (!e.empty()) {
            error = "--ppo-config: " + e.front().toString();
            return false;
        }
    }
#endif
    std::stringstream list(a.value("--set"));
    std::string item;
    std::set<std::string> seen;
    while (std::getline(list, item, ',')) {
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq);
        if (!seen.insert(key).second) {
            error = "--set: " + key + ": given more than once";
            return false;
        }
        const std::string prefix = key.substr(0, key.find('.'));
        SearchAlgorithmInfo info;
        if (eq == std::string::npos || key.find('.') == std::string::npos || !findSearchAlgorithm(prefix, info)) {
            error = "--set: '" + item + "' is not ALGORITHM.KNOB=VALUE (algorithms: " + knownSearchAlgorithms() + ")";
            return false;
        }
        // Only ppo reads knobs by name (core/rl/ppo_options.h); anneal and genetic take
        // theirs as fields of SearchOptions, so "anneal.restarts=4" would be silently
        // ignored: refuse it and list what is read.
        if (prefix != "ppo" || !knobsAvailable()) {
            error = "--set: '" + key + "': no algorithm reads this knob (" + prefix + " takes no knobs by name; known: "
                + knownKnobs() + ")";
            return false;
        }
        const std::string text = item.substr(eq + 1);
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v)) {
            error = "--set: " + key + ": '" + text + "' is not a number";
            return false;
        }
        extra[key] = v;
    }
#ifdef SHARDLAB_HAVE_RL
    rl::PpoOptions ppo;
    const FieldErrors e = rl::parsePpoOptions(extra, ppo);
    if (!e.empty()) {
        error = "--set: " + e.front().toString();
        return false;
    }
#endif
    // ppo's are the only knobs read by name: given to a run without ppo they would do nothing.
    if (!extra.empty() && std::find(algorithms.begin(), algorithms.end(), "ppo") == algorithms.end()) {
        error = std::string(a.has("--set") ? "--set" : "--ppo-config") + ": ppo knobs, but "
            + (algorithms.size() == 1 ? "--algo " + algorithms.front() + " does not read them"
                                      : std::string("no algorithm of --algos reads them (ppo is not among them)"));
        return false;
    }
    return true;
}

void addSearchCommands(std::vector<Command>& v)
{
    const std::string algorithms = knownSearchAlgorithms(); // the registry's, ppo included
    const std::string budget = std::to_string(SearchOptions{}.budget);
    v.push_back({{"search", "--scenario S.json --algo NAME [--budget " + budget + "] [--seed 0] [--out P.json] [--under-load "
                            "[--concurrency N]] [--json]",
                  "search for the best plan with one algorithm: " + algorithms,
                  "Prints the best valid plan, its evaluation, the simulator calls used, wall seconds and the "
                  "best-so-far curve. Exits 1 when no valid plan was found (exact then says why none exists). "
                  "Ctrl-C (SIGINT) or SIGTERM stops the search: the best plan so far is printed (and written "
                  "with --out), marked as interrupted, and the exit code is 130; a second signal exits at once.",
                  withKnobs({kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption, kNoEngineGapOption,
                   {"--algo", "NAME", "search algorithm (" + algorithms + ")"},
                   budgetOption(),
                   {"--seed", "K", "seed of the stochastic algorithms (default 0)"},
                   {"--out", "P.json", "write the best plan with its scenario embedded (evaluate and export read it alone)"},
                   {"--under-load", "", "rank plans by their run under the load protocol (a closed loop: --concurrency "
                                        "or the scenario's workload.load), p90 TTFT and TPOT within the limits"},
                   kJsonOption}, loadOptions()),
                  0, 0},
                 runSearchCommand, true});
    v.push_back({{"bench-search",
                  "--scenarios DIR [--algos megatron,random,anneal,genetic] [--seeds 5] [--budget " + budget + "] [--json]",
                  "compare search algorithms with the exact optimum over a directory of scenarios",
                  "Per scenario and algorithm: the median over seeds 1..K of the best tokens/s per GPU as a ratio to "
                  "exact's, the calls needed to reach 99% of each run's final best, and wall seconds. Exact runs "
                  "once per scenario. A disaggregated scenario is searched as a deployment (the split and both "
                  "pools' plans; tokens/s per GPU of every GPU), as search does. Ctrl-C (SIGINT) or SIGTERM stops it: the scenarios completed so far are "
                  "reported, marked as interrupted, and the exit code is 130.",
                  withKnobs({{"--scenarios", "DIR", "directory of scenario files (*.json)"},
                   {"--algos", "LIST", "comma-separated algorithms of " + algorithms + " (default megatron,random,anneal,genetic)"},
                   {"--seeds", "K", "runs per stochastic algorithm, seeds 1..K (default 5)"},
                   budgetOption(),
                   kJsonOption}),
                  0, 0},
                 runBenchSearch, true});
}

} // namespace shardlab::cli
