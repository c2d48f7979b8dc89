// JSON files of ShardLab: scenario, plan, model and cluster, each with a format tag and
// version. Loaders report every problem with its JSON path; savers write atomically.
#pragma once

#include <string>

#include "io/input_file.h"
#include "model/error.h"
#include "model/plan.h"
#include "model/specs.h"

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

enum class FileKind { Scenario, Plan, Model, Cluster, HuggingFaceConfig, Unknown };
const char* fileKindName(FileKind k);

// Guesses what a JSON text is from its "format" field (or HF config fields). Text that does
// not parse is Unknown, and `parseError` (if given) says why.
FileKind detectFileKind(const std::string& text, FieldError* parseError = nullptr);

// `file` labels errors; parse* never throw. Semantic validation is included.
Parsed<Scenario> parseScenario(const std::string& text, const std::string& file);
Parsed<Plan> parsePlan(const std::string& text, const std::string& file);
Parsed<ModelSpec> parseModel(const std::string& text, const std::string& file);
Parsed<ClusterSpec> parseCluster(const std::string& text, const std::string& file);

Parsed<Scenario> loadScenarioFile(const std::string& path);
Parsed<Plan> loadPlanFile(const std::string& path);

// Scenario/plan checked together (plan against the scenario's cluster and model).
FieldErrors checkPlanAgainstScenario(const Plan& plan, const Scenario& s, const std::string& planFile);

std::string scenarioToJson(const Scenario& s);
std::string modelToJson(const ModelSpec& m);
std::string clusterToJson(const ClusterSpec& c);
// With a scenario, only the model's operators are written and the GPU count is recorded.
std::string planToJson(const Plan& p, const Scenario* context = nullptr);

Status saveScenarioFile(const std::string& path, const Scenario& s);
Status savePlanFile(const std::string& path, const Plan& p, const Scenario* context = nullptr);

} // namespace shardlab
