// validate: what kind of ShardLab file this is and whether it is sound. A plan (one pool or
// two) checked against a scenario is also told whether it keeps the scenario's limits (evaluate's
// outcome) and whether it is in the space the searches consider (the scenario's
// constraints and, for a runnable scenario, its engine's rules), so that validate never
// calls fine a plan that evaluate, search or export would treat otherwise.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "io/hf_import.h"
#include "io/profile_json.h"
#include "model/constraint_checks.h"
#include "model/engine_caps.h"
#include "model/names.h"
#include "report/measurements.h"
#include "search/search_space.h"
#include "sim/deployment.h"
#include "sim/disaggregated.h"
#include "sim/knob_fit.h"
#include "sim/simulator.h"

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

// What validate found: the file's problems (exit 1 when any), else its one-line summary
// and, for a plan checked against a scenario, the scenario's verdicts on it.
struct Validation {
    FieldErrors errors;
    std::string summary;
    std::optional<DeploymentOutcome> limits; // evaluate's outcome
    bool spaceChecked = false;               // the scenario has constraints or is runnable
    FieldErrors outsideSpace;                // why the searches never consider the plan
    std::string runnableWords;               // ", among the plans vLLM 0.11 runs (...)" when runnable
    std::optional<Engine> engine;            // workload.engine of a scenario that is not runnable
    FieldErrors engineRules;                 // the rules of `engine` the plan breaks
};

// The files that tune the simulator rather than describe a deployment: a kernel profile
// and a user's measured rows (read from its path: rows name files beside it).
FieldErrors validateTuningFile(FileKind kind, const std::string& text, const std::string& arg,
                               const std::string& label, std::string& summary)
{
    if (kind == FileKind::Profile) {
        auto p = parseProfile(text, label);
        if (p.ok())
            summary = "kernel profile '" + p.value.name + "'";
        return p.errors;
    }
    auto rows = loadMeasurementsFile(arg);
    if (!rows.ok())
        return rows.errors;
    FieldErrors unusable = checkMeasurementRows(rows.value); // what calibrate refuses
    for (FieldError& e : unusable)
        e.file = label;
    if (unusable.empty())
        summary = "measurements: " + std::to_string(rows.value.size()) + " rows";
    return unusable;
}

// Whether a plan that fits its scenario also keeps the scenario's limits (memory, SLOs, the
// token budget), as evaluate says (`limits`: its outcome, when a scenario was at hand).
std::string limitsWords(const std::optional<DeploymentOutcome>& limits)
{
    if (!limits)
        return {};
    if (limits->valid && !limits->breaksLimitsUnderLoad())
        return "; within the scenario's limits";
    // Valid in the steady state means it is the load run that breaks a limit.
    const bool steadyWithin = limits->valid;
    std::string why;
    for (const std::string& r : steadyWithin ? limits->loadVerdict.reasons : limits->reasons)
        why += (why.empty() ? "" : "; ") + r;
    return (steadyWithin ? "; within the scenario's limits in the steady state, but NOT under its load protocol ("
                         : "; but NOT within the scenario's limits (")
        + why + "): evaluate shows its figures";
}

std::string joinErrors(const FieldErrors& errors)
{
    std::string out;
    for (const FieldError& e : errors)
        out += (out.empty() ? "" : "; ") + e.where + ": " + e.reason;
    return out;
}

// Whether the searches consider the plan and whether the scenario's engine runs it.
std::string spaceWords(const Validation& v)
{
    std::string out;
    if (v.spaceChecked)
        out += v.outsideSpace.empty() ? "; in the space the searches consider" + v.runnableWords
                                      : "; OUTSIDE the space the searches consider, so no search proposes it ("
                + joinErrors(v.outsideSpace) + ")";
    if (v.engine) {
        const std::string name = std::string(engineInfo(*v.engine).label) + " " + engineInfo(*v.engine).version;
        out += v.engineRules.empty() ? "; " + name + " runs it as planned"
                                     : "; " + name + " does NOT run it as planned, so export refuses it ("
                + joinErrors(v.engineRules) + ")";
    }
    return out;
}

Validation validateScenarioFile(const std::string& text, const std::string& path)
{
    Validation v;
    auto s = parseScenario(text, path);
    v.errors = s.errors;
    if (!s.ok())
        return v;
    v.errors = checkConstraints(s.value); // whether the constraints together leave a plan
    if (v.errors.empty())
        if (std::optional<FieldError> tooBig = weightsExceedCluster(s.value)) // whether any plan can fit
            v.errors.push_back(std::move(*tooBig));
    for (FieldError& e : v.errors)
        e.file = path;
    if (!v.errors.empty())
        return v;
    const WorkloadSpec& w = s.value.workload;
    v.summary = "scenario '" + s.value.name + "': " + s.value.model.name + " on "
        + std::to_string(s.value.cluster.totalGpus()) + " GPUs";
    if (!kvLinkInEffect(w.serving) && w.kvTransfer != KvLink::InterNode)
        v.summary += std::string("; workload.kv_transfer (") + kvLinkName(w.kvTransfer) + ") is kept but not in effect: "
            "it prices disaggregated serving only, and this scenario's is " + servingModeName(w.serving);
    return v;
}

// Each error of `errors` with its path under `role` ("decode.operators.embedding"), or as
// it is for the one pool of a deployment (`role` empty).
void appendUnder(FieldErrors& to, const FieldErrors& errors, const std::string& role)
{
    for (FieldError e : errors) {
        if (!role.empty())
            e.where = role + (e.where.empty() ? "" : "." + e.where);
        to.push_back(e);
    }
}

// The plans of a deployment, each with the scenario it is priced on and, for two pools,
// its role: one pool is the scenario's; a pool of two is priced on its pool's scenario
// (poolScenario), as evaluate, the searches and export take it.
struct PoolPlan {
    std::string role; // "", "prefill" or "decode"
    Plan plan;
    Scenario priced;
};
std::vector<PoolPlan> poolPlans(const Deployment& d, const Scenario& s)
{
    if (!d.pools)
        return {{"", d.plan, s}};
    std::vector<PoolPlan> out;
    for (const PoolRole role : {PoolRole::Prefill, PoolRole::Decode}) {
        const Plan& p = role == PoolRole::Prefill ? d.pools->prefill : d.pools->decode;
        out.push_back({poolRoleName(role), p, poolScenario(s, role, static_cast<int>(p.gpus()))});
    }
    return out;
}

// Whether the deployment fits the scenario as evaluate requires, and whether its shape (one
// pool or two) suits the scenario's serving (shapeProblem): one pool's degrees on the
// cluster and model, then its shape; two pools' sizes on the cluster
// (validateDisaggregatedPlan) and their shape, then each pool's degrees on its pool's scenario.
FieldErrors fitErrors(const Deployment& d, const Scenario& s, const std::string& label)
{
    FieldErrors e;
    if (d.pools) {
        e = validateDisaggregatedPlan(*d.pools, s);
        for (FieldError& x : e)
            x.file = label;
    } else {
        e = checkPlanAgainstScenario(d.plan, s, label);
    }
    if (d.pools || e.empty())
        if (std::optional<FieldError> bad = shapeProblem(s, d, label))
            e.push_back(*bad);
    if (d.pools && e.empty())
        for (const PoolPlan& pool : poolPlans(d, s))
            appendUnder(e, checkPlanAgainstScenario(pool.plan, pool.priced, label), pool.role);
    return e;
}

// A deployment's verdicts from the scenario it was checked against: its limits, the search
// space (constraints, a runnable scenario's engine) and a named engine's rules, each pool's
// paths under its role.
void judgeAgainstScenario(const Deployment& d, const Scenario& s, Validation& v)
{
    v.limits = evaluateDeployment(s, d);
    v.spaceChecked = !s.constraints.empty() || runnableEngine(s).has_value();
    v.runnableWords = runnableSpaceWords(s);
    if (!runnableEngine(s))
        v.engine = engineOfCollectives(s.workload.engine);
    for (const PoolPlan& pool : poolPlans(d, s)) {
        if (v.spaceChecked)
            appendUnder(v.outsideSpace, SearchSpace(pool.priced).outsideConstraints(pool.plan), pool.role);
        if (v.engine)
            appendUnder(v.engineRules, engineViolations(*v.engine, pool.plan, pool.priced), pool.role);
    }
}

// Whether a plan has degrees only an MoE model's plan has (the expert figures are worded
// only for one).
bool hasExpertDegrees(const Plan& p)
{
    return p.expertParallel > 1 || p.redundantExperts > 0 || p.twoBatchOverlap || p.instances > 1;
}

// The plan's degrees as every report words them, for the scenario's model; a plan file read
// alone is worded as an MoE model's plan when it has expert degrees, else as a dense one's.
std::string deploymentSummary(const Deployment& d, const std::optional<ModelSpec>& scenarioModel)
{
    ModelSpec m = scenarioModel.value_or(ModelSpec{});
    if (!scenarioModel && (d.pools ? hasExpertDegrees(d.pools->prefill) || hasExpertDegrees(d.pools->decode)
                                   : hasExpertDegrees(d.plan)))
        m.moe.experts = 1; // only whether the model is MoE is read
    return std::string(d.pools ? "disaggregated plan: " : "plan: ") + deploymentDegreesText(m, d, false, "; ");
}

// A plan file of either shape: checked against its own embedded scenario, or --scenario
// (which must agree with it unless --ignore-embedded), as evaluate and export check it.
Validation validatePlanFile(const Args& a, const std::string& text, const std::string& path)
{
    Validation v;
    auto doc = parseDeploymentText(text, path);
    v.errors = doc.errors;
    const Deployment& d = doc.value.deployment;
    const PlanDocument& embedded = doc.value.embedded;
    std::string against;
    std::optional<ModelSpec> model;
    if (doc.ok() && (a.has("--scenario") || embedded.scenario)) {
        auto s = scenarioForPlan(a, embedded, path);
        if (s.ok())
            model = s.value.model;
        v.errors = s.ok() ? fitErrors(d, s.value, path) : s.errors;
        if (v.errors.empty())
            judgeAgainstScenario(d, s.value, v);
        against = a.has("--scenario") ? " (checked against " + a.value("--scenario") + ")"
                                      : " (checked against its embedded scenario '" + embedded.scenarioName + "')";
    }
    if (v.errors.empty())
        v.summary = deploymentSummary(d, model) + against;
    return v;
}

// A model, cluster or HuggingFace config: parsed, and summarised by its size.
Validation validateModelOrCluster(FileKind kind, const std::string& text, const std::string& path)
{
    Validation v;
    if (kind == FileKind::Cluster) {
        auto c = parseCluster(text, path);
        v.errors = c.errors;
        if (c.ok())
            v.summary = "cluster '" + c.value.name + "': " + std::to_string(c.value.totalGpus()) + " GPUs";
        return v;
    }
    auto m = kind == FileKind::Model ? parseModel(text, path) : importHfConfig(text, path);
    v.errors = m.errors;
    if (m.ok())
        v.summary = std::string(kind == FileKind::Model ? "model '" : "HuggingFace config '") + m.value.name + "': "
            + formatCount(countParameters(m.value).total) + " parameters";
    return v;
}

Validation validateText(const Args& a, FileKind kind, const std::string& text, const std::string& path,
                        const FieldError& parseError)
{
    switch (kind) {
    case FileKind::Scenario:
        return validateScenarioFile(text, path);
    case FileKind::Plan:
        return validatePlanFile(a, text, path);
    case FileKind::Model:
    case FileKind::Cluster:
    case FileKind::HuggingFaceConfig:
        return validateModelOrCluster(kind, text, path);
    case FileKind::Profile:
    case FileKind::Measurements: {
        Validation v;
        v.errors = validateTuningFile(kind, text, a.positional.at(0), path, v.summary);
        return v;
    }
    case FileKind::Unknown:
        break;
    }
    // Text that does not parse gets the parser's error (malformed, duplicate key, too deep);
    // parsed JSON of no known kind is told what is missing.
    Validation v;
    if (!parseError.reason.empty()) {
        v.errors = {parseError};
        v.errors.front().file = path;
    } else
        v.errors = {{path, "format",
                     "not a ShardLab file: expected \"format\": " + knownFormatsText() + ", or a HuggingFace config.json"}};
    return v;
}

// Each error as {file, path, reason}; a scenario's rule as {path, reason}; a plan's engine
// rule as {field, reason}, as engine_gap.rules_broken writes it.
ojson errorsJson(const FieldErrors& errors, const char* key, bool withFile)
{
    ojson out = ojson::array();
    for (const FieldError& e : errors) {
        ojson x = ojson::object();
        if (withFile)
            x["file"] = displayText(e.file);
        x[key] = displayText(e.where);
        x["reason"] = displayText(e.reason);
        out.push_back(x);
    }
    return out;
}

// The JSON answer: valid and errors; then the summary and the scenario's verdicts.
ojson validationJson(const std::string& path, FileKind kind, const Validation& v)
{
    ojson j = {{"file", displayText(path)}, {"kind", fileKindName(kind)}};
    j["valid"] = v.errors.empty();
    j["errors"] = errorsJson(v.errors, "path", true);
    if (!v.errors.empty())
        return j;
    j["summary"] = displayText(v.summary + limitsWords(v.limits) + spaceWords(v));
    if (v.limits) {
        // Within the limits in the steady state and, when the scenario has a load
        // protocol, under it too. The steady state's violations and reasons, and the run's
        // verdict, under evaluate --json's names and meanings.
        const DeploymentOutcome& l = *v.limits;
        j["within_limits"] = l.valid && !l.breaksLimitsUnderLoad();
        std::uint32_t mask = 0;
        for (const PoolOutcome& pool : l.pools)
            mask |= pool.result.violations;
        j["violations"] = violationNames(mask);
        j["reasons"] = ojson::array();
        for (const std::string& r : l.reasons)
            j["reasons"].push_back(displayText(r));
        if (l.underLoad && l.loadError.empty()) {
            ojson reasons = ojson::array();
            for (const std::string& r : l.loadVerdict.reasons)
                reasons.push_back(displayText(r));
            j["load"] = {{"within_limits", l.loadVerdict.withinLimits}, {"limit_reasons", reasons}};
        }
    }
    if (v.spaceChecked)
        j["search_space"] = {{"within", v.outsideSpace.empty()}, {"outside", errorsJson(v.outsideSpace, "path", false)}};
    if (v.engine)
        j["engine"] = {{"name", engineInfo(*v.engine).name},
                       {"runs_as_planned", v.engineRules.empty()},
                       {"rules_broken", errorsJson(v.engineRules, "field", false)}};
    return j;
}

} // namespace

int runValidate(const Args& a, std::ostream& out, std::ostream& err)
{
    const std::string path = inputLabel(a.positional.at(0)); // "-" reads standard input
    auto text = readTextFile(a.positional.at(0));
    if (!text.ok())
        return reportErrors(err, {text.error().toString()});
    FieldError parseError;
    const FileKind kind = detectFileKind(text.value(), &parseError);
    const Validation v = validateText(a, kind, text.value(), path, parseError);
    if (a.flag("--json")) {
        out << validationJson(path, kind, v).dump(2) << "\n";
        return v.errors.empty() ? kExitOk : kExitInvalid;
    }
    if (!v.errors.empty())
        return reportFieldErrors(err, v.errors);
    out << displayText("OK: " + path + ": " + v.summary + limitsWords(v.limits) + spaceWords(v)) << "\n";
    return kExitOk;
}

} // namespace shardlab::cli
