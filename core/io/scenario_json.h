// JSON files of ShardLab: scenario, plan, model and cluster, each with a format tag and
// version. Loaders report every problem with its JSON path; savers write atomically.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/input_file.h"
#include "model/error.h"
#include "model/plan.h"
#include "model/specs.h"
#include "model/disaggregated_plan.h"

namespace shardlab {

constexpr int kFormatVersion = 1;

template <typename T>
struct Parsed {
    T value{};
    FieldErrors errors; // empty when value is usable
    bool ok() const { return errors.empty(); }
    // First error as one line, file name included.
    std::string firstError() const { return errors.empty() ? std::string() : errors.front().toString(); }
};

enum class FileKind { Scenario, Plan, Model, Cluster, HuggingFaceConfig, Profile, Measurements, Unknown };
const char* fileKindName(FileKind k);

// Guesses what a JSON text is from its "format" field (or HF config fields). Text that does
// not parse is Unknown, and `parseError` (if given) says why.
FileKind detectFileKind(const std::string& text, FieldError* parseError = nullptr);
// The "format" tags detectFileKind knows, for a message: "\"shardlab-scenario\", ... or
// \"shardlab-measurements\"".
std::string knownFormatsText();

// `file` labels errors; parse* never throw. Semantic validation is included.
Parsed<Scenario> parseScenario(const std::string& text, const std::string& file);
Parsed<Plan> parsePlan(const std::string& text, const std::string& file);
Parsed<ModelSpec> parseModel(const std::string& text, const std::string& file);
Parsed<ClusterSpec> parseCluster(const std::string& text, const std::string& file);

Parsed<Scenario> loadScenarioFile(const std::string& path);
// The scenario files (*.json) of a directory, sorted by name, each loaded as
// loadScenarioFile does. Errors: the directory (no such directory, unreadable, no .json
// files; file = the directory) or the first file that does not load, with its fields.
struct ScenarioFile {
    std::string path;
    Scenario scenario;
};
Parsed<std::vector<ScenarioFile>> loadScenarioDirectory(const std::string& dir);
Parsed<Plan> loadPlanFile(const std::string& path);

// A plan file with the scenario it was made for. Plans written by search --out, megatron
// --out and the window embed the whole scenario ("scenario": {...}), so evaluate --plan P
// alone reproduces the figure; older files carry only its name ("scenario": "NAME") or
// nothing, and still load.
struct PlanDocument {
    Plan plan;
    std::optional<Scenario> scenario; // the embedded scenario, validated
    std::string scenarioName;         // the embedded scenario's name, or an older file's name
};
// Errors inside the embedded scenario are reported at "scenario.<path>".
Parsed<PlanDocument> parsePlanDocument(const std::string& text, const std::string& file);
Parsed<PlanDocument> loadPlanDocument(const std::string& path);

// A disaggregated scenario's plan: {"prefill": {plan fields}, "decode": {plan fields}},
// each pool's GPUs its tensor x pipeline x data parallel; the scenario embedded as above.
struct DisaggregatedPlanDocument {
    DisaggregatedPlan plan;
    std::optional<Scenario> scenario;
    std::string scenarioName;
};
Parsed<DisaggregatedPlan> parseDisaggregatedPlan(const std::string& text, const std::string& file);
Parsed<DisaggregatedPlanDocument> parseDisaggregatedPlanDocument(const std::string& text, const std::string& file);
// True when the text is a JSON object with a "prefill" or "decode" pool.
bool isDisaggregatedPlanText(const std::string& text);
std::string disaggregatedPlanToJson(const DisaggregatedPlan& p, const Scenario* context = nullptr);
// A deployment's plan inside another report (pareto, size, sweep, load-front points): the
// plan file's fields with only the model's operators, as a plan file written with its
// scenario has them, without the scenario, which the report names once.
std::string planToJson(const Plan& p, const ModelSpec& model);
std::string disaggregatedPlanToJson(const DisaggregatedPlan& p, const ModelSpec& model);
Status saveDisaggregatedPlanFile(const std::string& path, const DisaggregatedPlan& p,
                                 const Scenario* context = nullptr);

// One field where two scenarios differ: its JSON path and each side's value as JSON text
// ("(absent)" where a side has none).
struct ScenarioDifference {
    std::string path;
    std::string first, second;
    std::string text() const { return path + ": " + first + " vs " + second; } // "cluster.nodes: 32 vs 8"
};
// Where two scenarios differ in anything the simulator reads, by JSON path. Names and
// descriptions are not compared: a renamed copy of a scenario gives the same figures.
// Empty when they agree.
std::vector<ScenarioDifference> scenarioFieldDifferences(const Scenario& a, const Scenario& b);
// The same, one line each (ScenarioDifference::text).
std::vector<std::string> scenarioDifferences(const Scenario& a, const Scenario& b);

// Scenario/plan checked together (plan against the scenario's cluster and model).
FieldErrors checkPlanAgainstScenario(const Plan& plan, const Scenario& s, const std::string& planFile);

std::string scenarioToJson(const Scenario& s);
std::string modelToJson(const ModelSpec& m);
std::string clusterToJson(const ClusterSpec& c);
// With a scenario, only the model's operators are written, the GPU count is recorded and
// the whole scenario is embedded (PlanDocument).
std::string planToJson(const Plan& p, const Scenario* context = nullptr);

Status saveScenarioFile(const std::string& path, const Scenario& s);
Status savePlanFile(const std::string& path, const Plan& p, const Scenario* context = nullptr);

} // namespace shardlab
