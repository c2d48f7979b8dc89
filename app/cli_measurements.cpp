// calibrate --measurements FILE: the simulator's scalar knobs fitted to the user's own runs
// (core/sim/knob_fit.h; file format in core/report/measurements.h and docs/simulator.md §8).
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "cli_commands.h"
#include "io/output_apart.h"
#include "io/atomic_file.h"
#include "io/profile_json.h"
#include "model/names.h"
#include "report/measurements.h"

namespace shardlab::cli {

namespace {
const char* metricName(CalibrationMetric m)
{
    return m == CalibrationMetric::TpotMs ? "tpot_ms" : m == CalibrationMetric::TtftMs ? "ttft_ms" : "output_tokens_per_s";
}
} // namespace

int runCalibrateMeasurements(const Args& a, std::ostream& out, std::ostream& err)
{
    const std::string file = a.value("--measurements");
    auto rows = loadMeasurementsFile(file);
    if (!rows.ok())
        return reportFieldErrors(err, rows.errors);
    if (FieldErrors bad = checkMeasurementRows(rows.value); !bad.empty()) {
        for (FieldError& e : bad)
            e.file = inputLabel(file);
        return reportFieldErrors(err, bad);
    }
    // The fit prices every row at each trial of the knobs (about 60 ms a row here): a long
    // file says so first instead of sitting silent for minutes.
    constexpr size_t kQuietRows = 200;
    if (rows.value.size() > kQuietRows)
        err << "calibrate: fitting the knobs to " << rows.value.size() << " rows (about "
            << (rows.value.size() * 6 + 99) / 100 << " s on one core at 60 ms a row)...\n";
    // An output never replaces a scenario or plan file a row names.
    std::vector<std::string> named;
    for (const MeasurementRow& r : rows.value)
        named.insert(named.end(), r.files.begin(), r.files.end());
    for (const char* flag : {"--out", "--out-cluster"}) {
        std::string error;
        if (a.has(flag) && !outputApartFrom(named, flag, a.value(flag), error)) {
            err << "shardlab-cli calibrate: " << displayText(error) << "\n"; // as for the measurements file itself
            return kExitUsage;
        }
    }
    const KnobFitResult fit = fitKnobs(rows.value);
    if (a.has("--out")) {
        // The first row's kernel profile with the fitted knobs (docs/profiles.md): a scenario
        // names it with "profile", or --profile / the window's "Load profile" apply it.
        const ClusterSpec& c0 = rows.value.front().scenario.cluster;
        KernelProfile p = profileOf(c0);
        GpuSpec g = c0.gpu;
        applyKnobs(fit.after, g);
        p.knobs = g.efficiency;
        p.kernelOverheadUs = g.kernelOverheadUs;
        char rms[96];
        std::snprintf(rms, sizeof rms, "%zu rows, rms log error %.3f -> %.3f", rows.value.size(), fit.rmsLogBefore,
                      fit.rmsLogAfter);
        for (int i = 0; i < Knobs::kCount; ++i) {
            std::string& src = p.sources[std::string("knobs.") + Knobs::name(i)];
            src = fit.determined[i] ? "fitted by shardlab-cli calibrate --measurements " + displayText(file) + " (" + rms + ")"
                                    : "not determined by the rows of " + displayText(file) + ", kept: " + src;
        }
        p.description = "Profile " + p.name + " with its scalar knobs fitted to " + displayText(file) + ". " + p.description;
        p.name += "-fitted";
        const Status st = writeFileAtomically(a.value("--out"), profileToJson(p));
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.has("--out-cluster")) {
        // The first row's cluster with the fitted knobs: a cluster file a scenario can use.
        ClusterSpec c = rows.value.front().scenario.cluster;
        applyKnobs(fit.after, c.gpu);
        c.name = nameWithinLimit(c.name + " (fitted to " + displayText(std::filesystem::path(file).filename().string()) + ")");
        const Status st = writeFileAtomically(a.value("--out-cluster"), clusterToJson(c) + "\n");
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        nlohmann::ordered_json j;
        j["measurements"] = file;
        nlohmann::ordered_json fitted = nlohmann::ordered_json::object(), before = nlohmann::ordered_json::object();
        nlohmann::ordered_json undetermined = nlohmann::ordered_json::array(), atBound = nlohmann::ordered_json::array();
        for (int i = 0; i < Knobs::kCount; ++i) {
            fitted[Knobs::name(i)] = fit.after.at(i);
            before[Knobs::name(i)] = fit.before.at(i);
            if (!fit.determined[i])
                undetermined.push_back(Knobs::name(i));
            if (fit.atBound[i])
                atBound.push_back(Knobs::name(i));
        }
        j["fitted"] = fitted;
        j["before"] = before;
        j["not_determined"] = undetermined;
        j["at_bound"] = atBound;
        j["rms_log_error_before"] = fit.rmsLogBefore;
        j["rms_log_error_after"] = fit.rmsLogAfter;
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (size_t i = 0; i < rows.value.size(); ++i) {
            const MeasurementRow& r = rows.value[i];
            list.push_back({{"row", r.label},
                            {"metric", metricName(r.metric)},
                            {"measured", r.measured},
                            {"predicted_before", fit.predictedBefore[i]},
                            {"predicted_after", fit.predictedAfter[i]},
                            {"ratio_before", fit.predictedBefore[i] / r.measured},
                            {"ratio_after", fit.predictedAfter[i] / r.measured}});
        }
        j["rows"] = list;
        if (a.has("--out"))
            j["out"] = a.value("--out");
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    char line[320];
    out << "Fitted to " << rows.value.size() << " measured rows of " << file
        << " (least squares on log(predicted / measured), knobs shared by every row)\n\n";
    out << "| knob | before | fitted |\n|---|---|---|\n";
    for (int i = 0; i < Knobs::kCount; ++i) {
        std::snprintf(line, sizeof line, "| %s | %.4g | %.4g%s |\n", Knobs::name(i), fit.before.at(i), fit.after.at(i),
                      !fit.determined[i] ? " (not determined by these rows: unchanged)"
                      : fit.atBound[i] ? " (at its bound: the rows ask for something the model lacks)"
                                       : "");
        out << line;
    }
    out << "\n| row | metric | measured | before | ratio | after | ratio |\n|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < rows.value.size(); ++i) {
        const MeasurementRow& r = rows.value[i];
        std::snprintf(line, sizeof line, "| %s | %s | %.4g | %.4g | %.2f | %.4g | %.2f |\n", r.label.c_str(),
                      metricName(r.metric), r.measured, fit.predictedBefore[i], fit.predictedBefore[i] / r.measured,
                      fit.predictedAfter[i], fit.predictedAfter[i] / r.measured);
        out << line;
    }
    std::snprintf(line, sizeof line, "\nRMS of log(predicted / measured): %.4f before, %.4f after.\n", fit.rmsLogBefore,
                  fit.rmsLogAfter);
    out << line;
    if (a.has("--out"))
        out << "Wrote the first row's kernel profile with the fitted knobs to " << a.value("--out")
            << " (use it with --profile, or \"profile\" in a scenario)\n";
    if (a.has("--out-cluster"))
        out << "Wrote the first row's cluster with the fitted knobs to " << a.value("--out-cluster") << "\n";
    return kExitOk;
}

} // namespace shardlab::cli
