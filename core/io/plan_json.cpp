// Plan files (implementing io/scenario_json.h's plan functions): one-pool and disaggregated
// plans read with every problem at its JSON path, the scenario a plan embeds, and the
// plan written back (only the model's operators when the scenario is known).
#include "io/scenario_json.h"

#include <optional>

#include "io/atomic_file.h"
#include "io/format_json.h"
#include "io/json_reader.h"
#include "model/plan_checks.h"

namespace shardlab {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using io::JsonReader;
using io::checkFormat;
using io::parseWith;
using io::scenarioJson;
using io::withFile;
using namespace io::formats;

namespace {
// The plan fields of one object (a plan file's top level, or a pool of a disaggregated
// plan at `prefix`): degrees, batch, micro-batches, operators. `gpus` when given.
void readPlanBody(JsonReader& r, const json& obj, const std::string& prefix, Plan& p, FieldErrors& errors)
{
    applyMegatronSharding(p);
    constexpr long long kDegreeMax = 1 << 20;
    p.tensorParallel = r.integer("tensor_parallel", 1, kDegreeMax);
    p.expertParallel = r.integerOr("expert_parallel", 1, 1, kDegreeMax);
    p.pipelineParallel = r.integer("pipeline_parallel", 1, kDegreeMax);
    p.dataParallel = r.integer("data_parallel", 1, kDegreeMax);
    p.batch = r.integer("batch", 1, kDegreeMax);
    p.microBatches = r.integerOr("micro_batches", 1, 1, kDegreeMax);
    p.redundantExperts = r.integerOr("redundant_experts", 0, 0, kMaxRedundantExperts);
    p.twoBatchOverlap = r.booleanOr("two_batch_overlap", false);
    p.instances = r.integerOr("instances", 1, 1, kDegreeMax);
    const int gpus = r.integerOr("gpus", 0, 1, 1 << 20);
    if (r.has("operators")) {
        JsonReader ops = r.child("operators");
        if (ops.requireObject()) {
            for (auto it = obj["operators"].begin(); it != obj["operators"].end(); ++it) {
                const std::string where = prefix + "operators." + it.key();
                OpId id;
                if (!opFromName(it.key(), id)) {
                    r.fail(where, "unknown operator");
                    continue;
                }
                if (!it->is_string()) {
                    r.fail(where, "must be a string naming a sharding option, got " + io::jsonTypeName(*it));
                    continue;
                }
                const int o = optionFromName(id, it->get<std::string>());
                if (o < 0) {
                    std::string known;
                    for (int i = 0; i < opInfo(id).optionCount; ++i)
                        known += (i ? ", " : "") + std::string(opInfo(id).options[i].name);
                    r.fail(where, "unknown sharding option \"" + it->get<std::string>() + "\" (known: " + known + ")");
                    continue;
                }
                p.setOption(id, o);
            }
        }
    }
    if (!errors.empty())
        return;
    for (FieldError e : validatePlanShape(p)) {
        e.where = prefix + e.where;
        errors.push_back(std::move(e));
    }
    if (gpus > 0 && p.gpus() != gpus)
        errors.push_back({{}, prefix + "tensor_parallel",
                          "tiling: tensor_parallel x pipeline_parallel x data_parallel = " + std::to_string(p.gpus())
                              + " does not tile the plan's " + std::to_string(gpus) + " GPUs"});
}

const std::vector<const char*> kPlanKeys = {"gpus", "tensor_parallel", "expert_parallel", "pipeline_parallel",
                                            "data_parallel", "batch", "micro_batches", "redundant_experts",
                                            "two_batch_overlap", "instances", "operators"};
} // namespace

Parsed<Plan> parsePlan(const std::string& text, const std::string& file)
{
    return parseWith<Plan>(text, file, [](const json& doc, Parsed<Plan>& out) {
        JsonReader r(doc, "", out.errors);
        if (!r.requireObject())
            return;
        if (!checkFormat(r, kPlanFormat, true))
            return;
        if (doc.contains("prefill") || doc.contains("decode")) {
            r.fail("prefill", "a disaggregated plan (a prefill and a decode pool): it needs a scenario whose "
                              "workload.serving is \"disaggregated\"");
            return;
        }
        std::vector<const char*> keys = kPlanKeys;
        keys.insert(keys.end(), {"format", "version", "scenario", "serving", "description"});
        r.rejectUnknownKeys(keys);
        readPlanBody(r, doc, "", out.value, out.errors);
    });
}

Parsed<DisaggregatedPlan> parseDisaggregatedPlan(const std::string& text, const std::string& file)
{
    return parseWith<DisaggregatedPlan>(text, file, [](const json& doc, Parsed<DisaggregatedPlan>& out) {
        JsonReader r(doc, "", out.errors);
        if (!r.requireObject())
            return;
        if (!checkFormat(r, kPlanFormat, true))
            return;
        r.rejectUnknownKeys({"format", "version", "scenario", "serving", "gpus", "prefill", "decode", "description"});
        if (!doc.contains("prefill") || !doc.contains("decode")) {
            r.fail(doc.contains("prefill") ? "decode" : "prefill",
                   "missing: a disaggregated scenario's plan has a \"prefill\" and a \"decode\" pool, each with "
                   "tensor_parallel, pipeline_parallel, data_parallel, batch and operators");
            return;
        }
        for (const char* pool : {"prefill", "decode"}) {
            JsonReader pr = r.child(pool);
            if (!pr.requireObject())
                continue;
            pr.rejectUnknownKeys(kPlanKeys);
            readPlanBody(pr, doc[pool], std::string(pool) + ".",
                         std::string(pool) == "prefill" ? out.value.prefill : out.value.decode, out.errors);
        }
        // What the file says of the whole deployment must agree with its pools.
        if (r.has("serving") && r.stringOr("serving", "") != "disaggregated" && doc["serving"].is_string())
            r.fail("serving", "is \"" + excerpt(doc["serving"].get<std::string>(), 64)
                                  + "\"; a plan with prefill and decode pools is \"disaggregated\"");
        const int gpus = r.integerOr("gpus", 0, 1, 1 << 21);
        const long long pools = out.value.prefill.gpus() + out.value.decode.gpus();
        if (gpus > 0 && out.errors.empty() && pools != gpus)
            r.fail("gpus", "is " + std::to_string(gpus) + ", but the prefill and decode pools hold "
                               + std::to_string(pools) + " GPUs");
    });
}

namespace {
// The scenario a plan file carries (shared by one-pool and disaggregated plans): the
// embedded object, validated, or an older file's name, or nothing.
void readEmbeddedScenario(const std::string& text, const std::string& file, std::optional<Scenario>& scenario,
                          std::string& name, FieldErrors& errors)
{
    json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) // parsed once already; cannot fail here
        return;
    auto it = doc.find("scenario");
    if (it == doc.end() || it->is_null())
        return;
    if (it->is_string()) {
        name = it->get<std::string>(); // a file from before plans embedded theirs
        return;
    }
    if (!it->is_object()) {
        errors.push_back({file, "scenario", "must be the scenario object (or its name), got " + io::jsonTypeName(*it)});
        return;
    }
    Parsed<Scenario> s = parseScenario(it->dump(), file);
    for (FieldError& e : s.errors) {
        e.where = e.where.empty() ? std::string("scenario") : "scenario." + e.where;
        errors.push_back(std::move(e));
    }
    if (errors.empty()) {
        name = s.value.name;
        scenario = std::move(s.value);
    }
}
} // namespace

namespace {
// A plan parsed from `text` (one pool or two) with the scenario the file embeds.
template <typename Doc, typename P>
Parsed<Doc> withEmbeddedScenario(const std::string& text, const std::string& file, Parsed<P> plan)
{
    Parsed<Doc> out;
    out.value.plan = std::move(plan.value);
    out.errors = std::move(plan.errors);
    if (out.errors.empty())
        readEmbeddedScenario(text, file, out.value.scenario, out.value.scenarioName, out.errors);
    return out;
}
} // namespace

Parsed<PlanDocument> parsePlanDocument(const std::string& text, const std::string& file)
{
    return withEmbeddedScenario<PlanDocument>(text, file, parsePlan(text, file));
}

Parsed<DisaggregatedPlanDocument> parseDisaggregatedPlanDocument(const std::string& text, const std::string& file)
{
    return withEmbeddedScenario<DisaggregatedPlanDocument>(text, file, parseDisaggregatedPlan(text, file));
}

bool isDisaggregatedPlanText(const std::string& text)
{
    json doc;
    FieldError perr;
    return io::parseJsonText(text, doc, perr) && doc.is_object() && (doc.contains("prefill") || doc.contains("decode"));
}

Parsed<PlanDocument> loadPlanDocument(const std::string& path)
{
    return io::loadWith<PlanDocument>(path, parsePlanDocument);
}

Parsed<Plan> loadPlanFile(const std::string& path)
{
    return io::loadWith<Plan>(path, parsePlan);
}

FieldErrors checkPlanAgainstScenario(const Plan& plan, const Scenario& s, const std::string& planFile)
{
    FieldErrors e = validatePlan(plan, s);
    withFile(e, planFile);
    return e;
}

namespace {
// A plan's degrees and operator options (only the model's operators when the scenario is
// known): the body of a one-pool plan file and of each pool of a disaggregated one.
void writePlanBody(ojson& j, const Plan& p, const ModelSpec* model)
{
    j["tensor_parallel"] = p.tensorParallel;
    j["expert_parallel"] = p.expertParallel;
    j["pipeline_parallel"] = p.pipelineParallel;
    j["data_parallel"] = p.dataParallel;
    j["batch"] = p.batch;
    j["micro_batches"] = p.microBatches;
    // Written only when set (or for an MoE model): dense plans stay as they were.
    const bool moe = model ? model->isMoe() : (p.redundantExperts != 0 || p.twoBatchOverlap || p.instances != 1);
    if (moe || p.redundantExperts != 0)
        j["redundant_experts"] = p.redundantExperts;
    if (moe || p.twoBatchOverlap)
        j["two_batch_overlap"] = p.twoBatchOverlap;
    if (moe || p.instances != 1)
        j["instances"] = p.instances;
    ojson ops = ojson::object();
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (model && !opPresent(*model, id))
            continue;
        ops[opName(id)] = opInfo(id).options[p.option(id)].name;
    }
    j["operators"] = ops;
}

ojson planBodyJson(const Plan& p, const ModelSpec* model)
{
    ojson j;
    j["gpus"] = p.gpus();
    writePlanBody(j, p, model);
    return j;
}

const ModelSpec* modelOf(const Scenario* context) { return context ? &context->model : nullptr; }
} // namespace

namespace {
// A plan file's fields; "gpus" when known (the cluster's with a scenario, the plan's own
// inside a report).
ojson planFileJson(const Plan& p, const ModelSpec* model, std::optional<long long> gpus)
{
    ojson j;
    j["format"] = kPlanFormat;
    j["version"] = kFormatVersion;
    if (gpus)
        j["gpus"] = *gpus;
    writePlanBody(j, p, model);
    return j;
}

ojson disaggregatedFileJson(const DisaggregatedPlan& p, const ModelSpec* model)
{
    ojson j;
    j["format"] = kPlanFormat;
    j["version"] = kFormatVersion;
    j["serving"] = servingModeName(ServingMode::Disaggregated);
    j["gpus"] = p.prefill.gpus() + p.decode.gpus();
    j["prefill"] = planBodyJson(p.prefill, model);
    j["decode"] = planBodyJson(p.decode, model);
    return j;
}
} // namespace

std::string planToJson(const Plan& p, const Scenario* context)
{
    ojson j = planFileJson(p, modelOf(context),
                           context ? std::optional<long long>(context->cluster.totalGpus()) : std::nullopt);
    if (context)
        j["scenario"] = scenarioJson(*context); // evaluate --plan P alone reproduces the figure
    return j.dump(2) + "\n";
}

std::string planToJson(const Plan& p, const ModelSpec& model) { return planFileJson(p, &model, p.gpus()).dump(2) + "\n"; }

std::string disaggregatedPlanToJson(const DisaggregatedPlan& p, const Scenario* context)
{
    ojson j = disaggregatedFileJson(p, modelOf(context));
    if (context)
        j["scenario"] = scenarioJson(*context);
    return j.dump(2) + "\n";
}

std::string disaggregatedPlanToJson(const DisaggregatedPlan& p, const ModelSpec& model)
{
    return disaggregatedFileJson(p, &model).dump(2) + "\n";
}

Status saveDisaggregatedPlanFile(const std::string& path, const DisaggregatedPlan& p, const Scenario* context)
{
    return writeFileAtomically(path, disaggregatedPlanToJson(p, context));
}

Status savePlanFile(const std::string& path, const Plan& p, const Scenario* context)
{
    return writeFileAtomically(path, planToJson(p, context));
}

} // namespace shardlab
