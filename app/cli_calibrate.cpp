// calibrate: the published rows the simulator is judged on, and the fit to a user's runs.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli_commands.h"
#include "io/presets.h"
#include "sim/calibration.h"

namespace shardlab::cli {
namespace {

const char* metricLabel(CalibrationMetric m)
{
    return m == CalibrationMetric::TpotMs ? "TPOT ms" : m == CalibrationMetric::TtftMs ? "TTFT ms" : "out tok/s";
}

// How the row's benchmark drove the engine: "steady" (max throughput), "QPS 8", "conc 64".
std::string loadLabel(const LoadSpec& l)
{
    char buf[48];
    switch (l.protocol) {
    case LoadProtocol::Steady: return "steady";
    case LoadProtocol::Concurrency: std::snprintf(buf, sizeof buf, "conc %d", l.concurrency); return buf;
    case LoadProtocol::RequestRate:
        if (std::isinf(l.requestRate))
            return "QPS inf";
        std::snprintf(buf, sizeof buf, "QPS %g", l.requestRate);
        return buf;
    }
    return "?";
}

// The fidelity target of a metric: TTFT within 30 %, TPOT and throughput within 20 %.
double tolerance(CalibrationMetric m) { return m == CalibrationMetric::TtftMs ? 0.3 : 0.2; }

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A row predicted under an open loop (a request rate): the rows saturation is judged on.
bool openLoop(const CalibrationRow& r) { return r.error.empty() && r.c.load.protocol == LoadProtocol::RequestRate; }

// An open-loop row's saturation, predicted / published ("yes/yes"); blank for other rows.
std::string saturationLabel(const CalibrationRow& r)
{
    if (!openLoop(r))
        return "";
    return std::string(r.saturated ? "yes" : "no") + "/" + (r.c.publishedSaturated ? "yes" : "no");
}

void printCalibrationRows(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    char line[360];
    std::snprintf(line, sizeof line,
                  "| %-7s | %-16s | %-5s | %-9s | %-11s | %-8s | %-8s | %-9s | %10s | %10s | %5s | %-19s | %-9s |\n",
                  "id", "model", "prec", "GPUs", "in/out", "load", "batch", "metric", "published", "predicted", "ratio",
                  "set", "saturated");
    out << line << "|---------|------------------|-------|-----------|-------------|----------|----------|-----------|-"
                   "-----------|------------|-------|---------------------|-----------|\n";
    for (const auto& r : rows) {
        if (!r.error.empty()) {
            out << "| " << r.c.id << " | " << r.error << " (" << metricLabel(r.c.metric) << " " << r.c.published
                << ", set " << r.c.set << ")\n";
            continue;
        }
        const std::string lens = std::to_string(r.c.promptTokens) + "/" + std::to_string(r.c.outputTokens);
        const std::string batch = r.c.batch == 0 ? "max " + std::to_string(r.batchUsed) : std::to_string(r.batchUsed);
        const std::string gpus = std::to_string(r.c.tensorParallel) + "x " + (r.c.gpu == "h200" ? "H200" : "H100");
        std::snprintf(line, sizeof line,
                      "| %-7s | %-16s | %-5s | %-9s | %-11s | %-8s | %-8s | %-9s | %10.1f | %10.1f | %5.2f | %-19s | %-9s |\n",
                      r.c.id.c_str(), r.c.modelPreset.c_str(), r.precision.c_str(), gpus.c_str(), lens.c_str(),
                      loadLabel(r.c.load).c_str(), batch.c_str(), metricLabel(r.c.metric), r.c.published, r.predicted,
                      r.ratio, r.c.set.c_str(), saturationLabel(r).c_str());
        out << line;
    }
}

// Each set on its own: "fit" chose the knobs, the others were never tuned on. TTFT is judged
// below saturation only; past it the published figure is the run's queue, and the row is
// judged by whether the model reports saturation (and reports none where the run had none).
void printCalibrationSummary(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    char line[320];
    out << "\n| set | metric | rows | within target | median ratio | median |ratio − 1| |\n|---|---|---|---|---|---|\n";
    std::vector<std::string> sets; // in the order the rows first name them
    for (const auto& r : rows)
        if (std::find(sets.begin(), sets.end(), r.c.set) == sets.end())
            sets.push_back(r.c.set);
    for (const std::string& set : sets) {
        for (CalibrationMetric m :
             {CalibrationMetric::OutputTokensPerS, CalibrationMetric::TpotMs, CalibrationMetric::TtftMs}) {
            std::vector<double> ratios, errors;
            for (const auto& r : rows)
                if (r.error.empty() && r.c.set == set && r.c.metric == m
                    && !(m == CalibrationMetric::TtftMs && r.c.publishedSaturated)) {
                    ratios.push_back(r.ratio);
                    errors.push_back(std::fabs(r.ratio - 1));
                }
            if (ratios.empty())
                continue;
            const double tol = tolerance(m);
            const long within = std::count_if(errors.begin(), errors.end(), [&](double e) { return e <= tol; });
            const std::string label = std::string(metricLabel(m)) + (m == CalibrationMetric::TtftMs ? " below saturation" : "");
            std::snprintf(line, sizeof line, "| %s | %s | %zu | %ld of %zu (±%.0f%%) | %.2f | %.2f |\n", set.c_str(),
                          label.c_str(), ratios.size(), within, ratios.size(), tol * 100, median(ratios),
                          median(errors));
            out << line;
        }
        int published = 0, reported = 0, falseAlarms = 0; // one count per open-loop TTFT row
        for (const auto& r : rows)
            if (openLoop(r) && r.c.set == set && r.c.metric == CalibrationMetric::TtftMs) {
                published += r.c.publishedSaturated;
                reported += r.c.publishedSaturated && r.saturated;
                falseAlarms += !r.c.publishedSaturated && r.saturated;
            }
        if (published + falseAlarms > 0) {
            std::snprintf(line, sizeof line, "| %s | saturation | %d | %d of %d reported, %d where the run had none | | |\n",
                          set.c_str(), published, reported, published, falseAlarms);
            out << line;
        }
    }
}

// Where each request-rate sweep turns: the lowest rate the published run saturated at, and
// the lowest the model reports saturated (with its capacity).
void printSweepKnees(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    // A sweep is the open-loop rows named "<sweep>-<rate>..." (a burst's rows are no sweep).
    std::vector<std::string> sweeps;
    for (const auto& r : rows)
        if (openLoop(r) && r.c.id.find('-') != std::string::npos) {
            const std::string sweep = r.c.id.substr(0, r.c.id.find('-'));
            if (std::find(sweeps.begin(), sweeps.end(), sweep) == sweeps.end())
                sweeps.push_back(sweep);
        }
    // The lowest rate of the sweep where `saturated` holds; none when it holds nowhere.
    auto knee = [&](const std::string& sweep, auto saturated) {
        std::optional<double> lowest;
        for (const auto& r : rows)
            if (openLoop(r) && r.c.id.rfind(sweep + "-", 0) == 0 && saturated(r))
                lowest = std::min(lowest.value_or(INFINITY), r.c.load.requestRate);
        if (!lowest)
            return std::string("at no rate of the sweep");
        return std::isinf(*lowest) ? std::string("all at once") : formatNumber("%g", *lowest) + " requests/s";
    };
    for (const std::string& sweep : sweeps) {
        double capacity = 0; // the same plan at every rate of the sweep
        for (const auto& r : rows)
            if (openLoop(r) && r.c.id.rfind(sweep + "-", 0) == 0)
                capacity = r.capacityRequestsPerS;
        out << "\nKnee of sweep " << sweep << ": the published run saturates from "
            << knee(sweep, [](const CalibrationRow& r) { return r.c.publishedSaturated; }) << ", the model from "
            << knee(sweep, [](const CalibrationRow& r) { return r.saturated; }) << " (capacity "
            << formatNumber("%.1f", capacity) << " requests/s).\n";
    }
}

// Rows run with speculative decoding: what the drafts buy in the model, beside what a
// published source measured for the same drafting.
void printSpeculativeSpeedups(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    for (const auto& r : rows)
        if (r.speculativeSpeedup > 0) {
            out << "\nSpeculative decoding in row " << r.c.id << ": TPOT " << formatNumber("%.2f", r.speculativeSpeedup)
                << "x faster than the same plan without drafts";
            if (r.c.publishedSpeculativeSpeedup > 0)
                out << " (published " << formatNumber("%.2f", r.c.publishedSpeculativeSpeedup) << "x: "
                    << r.c.speculativeSpeedupSource << ")";
            out << ".\n";
        }
}

// The trtllm-bench rows again as the benchmark ran them (CalibrationRow::asRunPredicted):
// what a finite run with every request queued at once changes against the steady state at
// the largest batch, per row where the ratio moves by 0.02 or more, and the count in band.
void printBenchAsRun(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    int n = 0, steadyIn = 0, asRunIn = 0;
    std::ostringstream moved;
    for (const auto& r : rows) {
        if (r.benchRequests == 0)
            continue;
        ++n;
        steadyIn += std::fabs(r.ratio - 1) <= 0.2;
        asRunIn += std::fabs(r.asRunRatio - 1) <= 0.2;
        if (std::fabs(r.asRunRatio - r.ratio) >= 0.02)
            moved << "\n  " << r.c.id << " (" << r.c.promptTokens << "/" << r.c.outputTokens << ", " << r.benchRequests
                  << " requests, batch " << r.batchUsed << "): " << formatNumber("%.2f", r.ratio) << " -> "
                  << formatNumber("%.2f", r.asRunRatio);
    }
    if (n == 0)
        return;
    out << "\nMax-throughput rows as trtllm-bench ran them (each row's requests, the page's num_requests, "
           "queued at once through the request-level model; not the table's prediction): "
        << asRunIn << " of " << n << " within ±20 % (steady state: " << steadyIn << " of " << n
        << "). Ratio steady -> as run, where it moves by 0.02 or more:" << moved.str() << "\n";
}

void printCalibrationTable(const std::vector<CalibrationRow>& rows, std::ostream& out)
{
    printCalibrationRows(rows, out);
    printCalibrationSummary(rows, out);
    printSweepKnees(rows, out);
    printSpeculativeSpeedups(rows, out);
    printBenchAsRun(rows, out);
}

int runCalibrate(const Args& a, std::ostream& out, std::ostream& err)
{
    if (a.has("--measurements"))
        return runCalibrateMeasurements(a, out, err);
    if (a.has("--out"))
        return reportErrors(err, {"--out: only with --measurements (the fitted profile is written there)"});
    if (a.has("--out-cluster"))
        return reportErrors(err, {"--out-cluster: only with --measurements (the fitted cluster is written there)"});
    const std::string name = a.value("--cluster", "h100-8");
    auto c = clusterPreset(name);
    if (!c.ok())
        return reportErrors(err, {"--cluster: " + c.errors.front().reason});
    if (FieldErrors errors; !applyProfileArg(a, c.value, errors)) // another kernel profile (docs/profiles.md)
        return reportFieldErrors(err, errors);
    const auto rows = runCalibration(c.value);
    if (a.flag("--json")) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& r : rows)
            j.push_back({{"id", r.c.id}, {"model", r.c.modelPreset}, {"engine", r.c.engine},
                         {"precision", r.precision}, {"tp", r.c.tensorParallel},
                         {"ep", r.c.expertParallel}, {"prompt", r.c.promptTokens}, {"output", r.c.outputTokens},
                         {"batch", r.batchUsed}, {"published", r.c.published}, {"predicted", r.predicted},
                         {"ratio", r.ratio}, {"gpu", r.c.gpu}, {"set", r.c.set}, {"source", r.c.source},
                         {"error", r.error}, {"metric", metricLabel(r.c.metric)},
                         {"load", loadLabel(r.c.load)},
                         {"saturated", r.error.empty() && !r.c.load.steady() ? nlohmann::ordered_json(r.saturated)
                                                                              : nlohmann::ordered_json()},
                         {"published_saturated", r.c.publishedSaturated},
                         {"capacity_requests_per_s", r.capacityRequestsPerS},
                         {"speculative_speedup", r.speculativeSpeedup},
                         {"bench_requests", r.benchRequests}, {"as_run_predicted", r.asRunPredicted},
                         {"as_run_ratio", r.asRunRatio}});
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    printCalibrationTable(rows, out);
    return kExitOk;
}
} // namespace

void addCalibrationCommand(std::vector<Command>& v)
{
    v.push_back({{"calibrate", "[--cluster h100-8] [--measurements FILE [--out PROFILE.json] [--out-cluster CLUSTER.json]] [--json]",
                  "predict published H100 measurements and print the ratios, or fit the knobs to your own runs",
                  "Without --measurements: the published rows of docs/simulator.md §8 and a summary per set. With "
                  "--measurements FILE (format in docs/simulator.md §8): compute, HBM, NVLink and inter-node "
                  "efficiency and the kernel floor fitted to your rows by least squares on log(predicted / "
                  "measured), every row's error before and after; --out writes the first row's kernel profile with "
                  "the fitted knobs (docs/profiles.md), --out-cluster its cluster. JSON: fitted (by knob name), before, not_determined, rms_log_error_before/after, "
                  "rows.",
                  {{"--cluster", "PRESET", "cluster preset whose GPU and efficiencies to use (default h100-8)"},
                   {"--measurements", "FILE", "your measured rows (shardlab-measurements JSON)"},
                   {"--out", "PROFILE.json", "with --measurements: write the fitted kernel profile (atomically)"},
                   {"--out-cluster", "CLUSTER.json", "with --measurements: write the fitted cluster (atomically)"},
                   kProfileOption,
                   {"--json", "", "machine-readable JSON on stdout"}},
                  0, 0},
                 runCalibrate});
}
} // namespace shardlab::cli
