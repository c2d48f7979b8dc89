// bench-search: search algorithms against exact's optimum over a directory of scenarios.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <set>
#include <sstream>

#include "cli_commands.h"
#include "cli_signals.h"
#include "io/count_list.h"
#include "report/json_figure.h"
#include "runner/run_search.h"
#ifdef SHARDLAB_HAVE_RL
#include "rl/pretrained_policy.h"
#endif

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

// Calls needed to reach 99% of the run's final best (-1 when nothing was found).
int callsTo99(bool found, const std::vector<std::pair<int, double>>& bestCurve)
{
    if (!found || bestCurve.empty())
        return -1;
    const double target = 0.99 * bestCurve.back().second;
    for (const auto& [call, v] : bestCurve)
        if (v >= target)
            return call;
    return bestCurve.back().first;
}

// One bench run, of one pool's plan or, for a disaggregated scenario, of the whole
// deployment (its split and both pools' plans; tokens/s per GPU of every GPU).
struct BenchRun {
    bool found = false, provedOptimal = false;
    double tokensPerSPerGpu = 0, wallSeconds = 0;
    int calls = 0, calls99 = -1;
    std::string message;
};

BenchRun benchRun(const Scenario& s, const SearchOptions& o, const std::atomic<bool>* stop)
{
    const SearchOutcome r = runSearch(s, o, nullptr, stop);
    return {r.found, r.provedOptimal, r.bestTokensPerSPerGpu(), r.wallSeconds, r.calls, callsTo99(r.found, r.bestCurve),
            r.message};
}

double median(std::vector<double> v)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct AlgoRow {
    std::string name;
    std::vector<double> ratios, calls99, wall;
    int found = 0;
};

} // namespace

int runBenchSearch(const Args& a, std::ostream& out, std::ostream& err)
{
    const std::string dir = a.value("--scenarios");
    if (dir.empty())
        return reportErrors(err, {"--scenarios: required (a directory of scenario files)"});
    const Parsed<std::vector<ScenarioFile>> loaded = loadScenarioDirectory(dir);
    if (!loaded.ok()) {
        std::vector<std::string> lines;
        for (const FieldError& e : loaded.errors)
            lines.push_back("--scenarios: " + e.toString());
        return reportErrors(err, lines);
    }
    const std::vector<ScenarioFile>& scenarios = loaded.value;
    std::vector<std::string> algos;
    {
        std::stringstream ss(a.value("--algos", "megatron,random,anneal,genetic"));
        std::string name;
        while (std::getline(ss, name, ',')) {
            SearchAlgorithmInfo info;
            if (name.empty() || !findSearchAlgorithm(name, info))
                return reportErrors(err, {"--algos: unknown algorithm '" + name + "' (known: "
                                          + knownSearchAlgorithms() + ")"});
            std::string error;
            if (!pluginReady(name, error))
                return reportErrors(err, {error});
            algos.push_back(name);
        }
        if (algos.empty())
            return reportErrors(err, {"--algos: names no algorithm (known: " + knownSearchAlgorithms() + ")"});
        if (const std::string* twice = firstRepeat(algos))
            return reportErrors(err, {"--algos: '" + *twice + "' is listed twice"});
    }
#ifdef SHARDLAB_HAVE_RL
    // Stale weights still search, less well than the benchmarks they were shipped with.
    if (std::find(algos.begin(), algos.end(), "ppo") != algos.end())
        if (const std::string stale = rl::policyStaleness(rl::pretrainedPolicyInfo()); !stale.empty())
            err << "shardlab-cli: note: " << stale << "\n";
#endif
    long long seeds = 5, budget = SearchOptions{}.budget;
    std::string error;
    if (!intValue(a, "--seeds", 1, 1000, seeds, error) || !intValue(a, "--budget", 1, kMaxSearchBudget, budget, error))
        return reportErrors(err, {error});
    std::map<std::string, double> knobs;
    if (!knobValues(a, algos, knobs, error))
        return reportErrors(err, {error});

    ojson jr = {{"budget", budget}, {"seeds", seeds}, {"scenarios", ojson::array()}};
    const bool json = a.flag("--json");
    // Ctrl-C stops the current run; only the scenarios completed before it are reported.
    const std::atomic<bool>* stop = installStopSignals();
    size_t completed = 0;
    if (!json) {
        out << "Median over " << seeds << " seeds (1.." << seeds << "), budget " << budget
            << " simulator calls (an algorithm that uses no seed runs once); best/exact = best valid tokens/s per "
               "GPU over exact's.\n\n";
        out << padRight("scenario", 22) << padRight("algorithm", 10) << padRight("best/exact", 12) << padRight("[min, max]", 16)
            << padRight("calls to 99%", 14) << padRight("wall s", 9) << "valid runs\n";
    }
    for (size_t si = 0; si < scenarios.size(); ++si) {
        const Scenario& s = scenarios[si].scenario;
        SearchOptions eo;
        eo.algorithm = "exact";
        const BenchRun ex = benchRun(s, eo, stop);
        const double ref = ex.tokensPerSPerGpu;
        std::vector<AlgoRow> rows;
        for (const std::string& name : algos) {
            AlgoRow row;
            row.name = name;
            // An algorithm that does not use the seed finds the same plan every run: it runs
            // once, and the reference algorithm's run is reused as it is.
            SearchAlgorithmInfo info;
            findSearchAlgorithm(name, info);
            const int runs = info.stochastic ? static_cast<int>(seeds) : 1;
            for (int k = 0; k < runs; ++k) {
                BenchRun r = ex;
                if (name != eo.algorithm) {
                    SearchOptions o;
                    o.algorithm = name;
                    o.budget = static_cast<int>(budget);
                    o.seed = static_cast<std::uint64_t>(k + 1);
                    o.extra = knobs;
                    r = benchRun(s, o, stop);
                }
                row.found += r.found;
                row.ratios.push_back(r.found && ref > 0 ? r.tokensPerSPerGpu / ref : 0.0);
                if (r.found)
                    row.calls99.push_back(r.calls99);
                row.wall.push_back(r.wallSeconds);
            }
            rows.push_back(row);
        }
        if (stopSignalled())
            break; // this scenario's runs were cut short: its medians would mislead
        ++completed;
        if (json) {
            ojson js = {{"name", s.name},
                        {"file", displayText(std::filesystem::path(scenarios[si].path).filename().string())},
                        {"exact",
                         {{"found", ex.found},
                          {"proved_optimal", ex.provedOptimal},
                          {"tokens_per_s_per_gpu", ref},
                          {"calls", ex.calls},
                          {"wall_seconds", ex.wallSeconds},
                          {"message", ex.message}}},
                        {"algorithms", ojson::array()}};
            for (const AlgoRow& row : rows) {
                js["algorithms"].push_back(
                    {{"name", row.name},
                     {"runs", row.ratios.size()},
                     {"valid_runs", row.found},
                     {"median_ratio_to_exact", jsonFigure(ref > 0 ? median(row.ratios) : std::nan(""))},
                     {"min_ratio_to_exact", jsonFigure(ref > 0 ? *std::min_element(row.ratios.begin(), row.ratios.end())
                                                        : std::nan(""))},
                     {"max_ratio_to_exact", jsonFigure(ref > 0 ? *std::max_element(row.ratios.begin(), row.ratios.end())
                                                        : std::nan(""))},
                     {"median_calls_to_99pct", jsonFigure(median(row.calls99))},
                     {"median_wall_seconds", jsonFigure(median(row.wall))}});
            }
            jr["scenarios"].push_back(js);
            continue;
        }
        for (const AlgoRow& row : rows) {
            std::string ratio = "-", range = "-", calls = "-";
            if (ref > 0) {
                ratio = formatNumber("%.3f", median(row.ratios));
                range = "[" + formatNumber("%.3f", *std::min_element(row.ratios.begin(), row.ratios.end())) + ", "
                    + formatNumber("%.3f", *std::max_element(row.ratios.begin(), row.ratios.end())) + "]";
            }
            if (!row.calls99.empty())
                calls = formatNumber("%.0f", median(row.calls99));
            out << padRight(displayText(s.name), std::max<size_t>(22, displayText(s.name).size() + 2)) << padRight(row.name, 10) << padRight(ratio, 12) << padRight(range, 16) << padRight(calls, 14)
                << padRight(formatNumber("%.3f", median(row.wall)), 9) << row.found << "/" << row.ratios.size() << "\n";
        }
        out << padRight(displayText(s.name), std::max<size_t>(22, displayText(s.name).size() + 2)) << padRight("(exact", 10) << padRight(ex.found ? formatNumber("%.1f", ref) : std::string("none"), 12)
            << padRight("tokens/s/GPU,", 16) << padRight(std::to_string(ex.calls) + " calls,", 14)
            << padRight(formatNumber("%.3f", ex.wallSeconds), 9) << (ex.provedOptimal ? "proved optimal)" : "NOT proved optimal)")
            << "\n";
        if (!ex.found && !ex.message.empty())
            out << "  exact: " << ex.message << "\n";
    }
    const bool interrupted = stopSignalled();
    if (json) {
        jr["interrupted"] = interrupted;
        jr["scenarios_completed"] = completed;
        out << jr.dump(2) << "\n";
    } else if (interrupted) {
        out << "Interrupted by a signal: " << completed << " of " << scenarios.size()
            << " scenarios completed (shown above).\n";
    }
    return interrupted ? kExitInterrupted : kExitOk;
}

} // namespace shardlab::cli
