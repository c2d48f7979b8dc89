#include "report/measurements.h"

#include <filesystem>

#include "io/format_json.h"
#include "io/input_file.h"
#include "io/json_reader.h"
#include "io/presets.h"

namespace shardlab {

namespace {

constexpr int kMaxRows = 10000;

std::string relativeTo(const std::string& file, const std::string& path)
{
    const std::filesystem::path p(path);
    if (p.is_absolute() || file == "-")
        return path;
    return (std::filesystem::path(file).parent_path() / p).string();
}

// An inline object read as a file of its kind: the format line may be left out.
std::string asDocument(nlohmann::json obj, const char* format)
{
    if (!obj.contains("format"))
        obj["format"] = format;
    if (!obj.contains("version"))
        obj["version"] = 1;
    return obj.dump();
}

void addAll(FieldErrors& to, const FieldErrors& from)
{
    to.insert(to.end(), from.begin(), from.end());
}

// A measured run used its plan, so the plan must tile the scenario (whether it fits in
// memory is the simulator's to say: checkMeasurementRows, core/sim/knob_fit.h).
void checkMeasuredPlan(const MeasurementRow& m, const std::string& at, FieldErrors& errors)
{
    FieldErrors fit = validatePlan(m.plan, m.scenario);
    for (FieldError& fe : fit)
        fe.where = at + (fe.where.empty() ? "" : "." + fe.where);
    addAll(errors, fit);
}

} // namespace

Parsed<std::vector<MeasurementRow>> loadMeasurementsFile(const std::string& path)
{
    Parsed<std::vector<MeasurementRow>> out;
    const std::string label = inputLabel(path);
    auto text = readTextFile(path);
    if (!text.ok()) {
        out.errors.push_back(text.error());
        return out;
    }
    nlohmann::json doc;
    FieldError parseError;
    if (!io::parseJsonText(text.value(), doc, parseError)) {
        parseError.file = label;
        out.errors.push_back(parseError);
        return out;
    }
    FieldErrors errors;
    io::JsonReader r(doc, "", errors);
    if (r.requireObject()) {
        r.rejectUnknownKeys({"format", "version", "rows", "description"});
        if (r.string("format") != io::formats::kMeasurementsFormat && errors.empty())
            r.fail("format", std::string("expected \"") + io::formats::kMeasurementsFormat + "\"");
        r.integer("version", 1, 1);
        const nlohmann::json* rows = doc.contains("rows") ? &doc["rows"] : nullptr;
        if (!rows || !rows->is_array() || rows->empty())
            r.fail("rows", "a non-empty array of measured rows is required");
        else if (rows->size() > size_t(kMaxRows))
            r.fail("rows", "at most " + std::to_string(kMaxRows) + " rows");
        else
            for (size_t i = 0; i < rows->size(); ++i) {
                const std::string at = "rows[" + std::to_string(i) + "]";
                const nlohmann::json& row = (*rows)[i];
                io::JsonReader rr(row, at, errors);
                if (!rr.requireObject())
                    continue;
                rr.rejectUnknownKeys({"scenario", "plan", "metric", "value", "note"});
                MeasurementRow m;
                m.label = rr.stringOr("note", at);
                const std::string metric = rr.string("metric");
                if (metric == "tpot_ms")
                    m.metric = CalibrationMetric::TpotMs;
                else if (metric == "ttft_ms")
                    m.metric = CalibrationMetric::TtftMs;
                else if (metric == "output_tokens_per_s")
                    m.metric = CalibrationMetric::OutputTokensPerS;
                else if (row.contains("metric") && row["metric"].is_string()) // else said by string()
                    rr.fail(rr.path("metric"), "unknown metric \"" + excerpt(metric, 64)
                                                   + "\" (one of tpot_ms, ttft_ms, output_tokens_per_s)");
                m.measured = rr.number("value", 1e-9, 1e15);
                // The scenario: a shipped name, a file, or an object.
                bool haveScenario = false;
                if (!row.contains("scenario"))
                    rr.fail(rr.path("scenario"), "required (a shipped scenario's name, a scenario file or an object)");
                else if (row["scenario"].is_string()) {
                    const std::string s = row["scenario"].get<std::string>();
                    Parsed<Scenario> sc = scenarioPreset(s);
                    if (!sc.ok()) {
                        sc = loadScenarioFile(relativeTo(path, s));
                        m.files.push_back(relativeTo(path, s));
                    }
                    if (sc.ok()) {
                        m.scenario = sc.value;
                        haveScenario = true;
                    } else {
                        FieldErrors e = sc.errors;
                        for (FieldError& fe : e)
                            fe.reason = "(" + rr.path("scenario") + ") " + fe.reason;
                        addAll(errors, e);
                    }
                } else if (row["scenario"].is_object()) {
                    Parsed<Scenario> sc = parseScenario(asDocument(row["scenario"], io::formats::kScenarioFormat),
                                                        label + " " + rr.path("scenario"));
                    haveScenario = sc.ok();
                    m.scenario = sc.value;
                    addAll(errors, sc.errors);
                } else
                    rr.fail(rr.path("scenario"), "must be a name, a file path or an object");
                // The plan: a file or an object.
                bool havePlan = false;
                if (!row.contains("plan"))
                    rr.fail(rr.path("plan"), "required (a plan file or an object)");
                else if (row["plan"].is_string()) {
                    Parsed<Plan> p = loadPlanFile(relativeTo(path, row["plan"].get<std::string>()));
                    m.files.push_back(relativeTo(path, row["plan"].get<std::string>()));
                    havePlan = p.ok();
                    m.plan = p.value;
                    for (FieldError& fe : p.errors)
                        fe.reason = "(" + rr.path("plan") + ") " + fe.reason;
                    addAll(errors, p.errors);
                } else if (row["plan"].is_object()) {
                    Parsed<Plan> p = parsePlan(asDocument(row["plan"], io::formats::kPlanFormat), label + " " + rr.path("plan"));
                    havePlan = p.ok();
                    m.plan = p.value;
                    addAll(errors, p.errors);
                } else
                    rr.fail(rr.path("plan"), "must be a file path or an object");
                if (haveScenario && m.scenario.workload.serving == ServingMode::Disaggregated)
                    rr.fail(rr.path("scenario") + ".workload.serving",
                            "disaggregated rows cannot be calibrated: a row is one engine's run; give each pool's "
                            "measurement as its own row (serving \"aggregated\" or \"decode\")");
                else if (haveScenario && havePlan)
                    checkMeasuredPlan(m, rr.path("plan"), errors);
                out.value.push_back(std::move(m));
            }
    }
    for (FieldError& e : errors)
        if (e.file.empty())
            e.file = label;
    out.errors = std::move(errors);
    if (!out.errors.empty())
        out.value.clear();
    return out;
}

} // namespace shardlab
