// evaluate, megatron, bench-sim.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <random>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "io/presets.h"
#include "io/profile_json.h"
#include "report/result_json.h"
#include "search/search_space.h"
#include "sim/calibration.h"
#include "sim/megatron.h"

namespace shardlab::cli {

namespace {

} // namespace

bool applyProfileArg(const Args& a, ClusterSpec& c, FieldErrors& errors)
{
    if (!a.has("--profile"))
        return true;
    auto p = loadProfileArg(a.value("--profile"));
    if (!p.ok()) {
        for (FieldError e : p.errors) {
            if (e.file.empty())
                e.where = "--profile" + (e.where.empty() ? std::string() : ": " + e.where);
            errors.push_back(std::move(e));
        }
        return false;
    }
    applyProfile(c, std::make_shared<const KernelProfile>(std::move(p.value)));
    if (const std::string w = profileGpuMismatch(c); !w.empty())
        std::cerr << "warning: --profile: " << w << "\n";
    return true;
}

namespace {
Parsed<Scenario> loadScenarioArgBare(const Args& a)
{
    const std::string v = a.value("--scenario");
    Parsed<Scenario> r;
    if (v.empty()) {
        r.errors.push_back({{}, "--scenario", "required (a scenario file or preset name)"});
        return r;
    }
    switch (classifyScenarioArg(v)) {
    case ScenarioArg::File: return loadScenarioFile(v);
    case ScenarioArg::Preset: return scenarioPreset(v);
    case ScenarioArg::Unknown: break;
    }
    r.errors.push_back({{}, "--scenario", "no such file, and no scenario preset named '" + v + "' (presets: "
                                              + knownNames(scenarioPresetFiles()) + ")"});
    return r;
}
} // namespace

const OptionSpec kEngineScenarioOption{
    "--engine", "NAME", "the serving engine whose collectives and kernel floor price the plans (workload.engine: "
                        "nccl, vllm, vllm_eager, sglang, trtllm)"};
const OptionSpec kRunnableOption{
    "--runnable", "", "only plans the scenario's engine runs (workload.runnable; docs/engines.md): every search, "
                      "exact's proof and the recipe"};

namespace {
// --engine and --runnable over the scenario's workload; false with a message naming the flag.
bool applyEngineArgs(const Args& a, Scenario& s, FieldErrors& errors)
{
    if (a.has("--engine") && !collectiveEngineFromName(a.value("--engine"), s.workload.engine)) {
        errors.push_back({{}, "--engine", "unknown engine '" + displayText(a.value("--engine")) + "' (known: "
                                              + knownCollectiveEngines() + ")"});
        return false;
    }
    if (a.flag("--runnable"))
        s.workload.runnable = true;
    if (s.workload.runnable && s.workload.engine == CollectiveEngine::Nccl) {
        errors.push_back({{}, "--runnable", "needs a serving engine: the scenario's workload.engine is nccl (give "
                                            "--engine vllm, sglang or trtllm)"});
        return false;
    }
    return true;
}
} // namespace

Parsed<Scenario> loadScenarioArg(const Args& a)
{
    Parsed<Scenario> r = loadScenarioArgBare(a);
    if (r.ok() && !applyEngineArgs(a, r.value, r.errors))
        return r;
    if (r.ok()) {
        r.errors = checkConstraints(r.value); // whether the constraints together leave a plan
        for (FieldError& e : r.errors)
            e.file = displayText(a.value("--scenario"));
    }
    if (r.ok())
        applyProfileArg(a, r.value.cluster, r.errors);
    return r;
}

const OptionSpec kPlanScenarioOption{
    "--scenario", "S.json",
    "scenario file or preset name; default: the scenario embedded in the plan (it must agree with it)"};
const OptionSpec kIgnoreEmbeddedOption{
    "--ignore-embedded", "", "use --scenario even where it differs from the scenario embedded in the plan"};

Parsed<Scenario> scenarioForPlan(const Args& a, const PlanDocument& plan, const std::string& planFile)
{
    Parsed<Scenario> r;
    const std::string shownPlan = displayText(planFile);
    if (!a.has("--scenario")) {
        if (plan.scenario) {
            r.value = *plan.scenario;
            applyProfileArg(a, r.value.cluster, r.errors);
            return r;
        }
        r.errors.push_back({{}, "--scenario",
                            "required: plan " + shownPlan + " carries no scenario (written before plans embedded theirs"
                                + (plan.scenarioName.empty() ? std::string() : "; it names '" + plan.scenarioName + "'")
                                + "); pass the scenario it was made for"});
        return r;
    }
    r = loadScenarioArgBare(a);
    auto withProfile = [&]() -> Parsed<Scenario>& {
        if (r.ok())
            applyProfileArg(a, r.value.cluster, r.errors);
        return r;
    };
    if (!r.ok() || !plan.scenario || a.flag("--ignore-embedded"))
        return withProfile();
    const std::vector<std::string> diff = scenarioDifferences(*plan.scenario, r.value);
    if (diff.empty())
        return withProfile();
    std::string list;
    for (size_t i = 0; i < diff.size() && i < 6; ++i)
        list += (i ? "; " : "") + diff[i];
    if (diff.size() > 6)
        list += "; and " + std::to_string(diff.size() - 6) + " more";
    r.errors.push_back({{}, "--scenario",
                        a.value("--scenario") + " differs from the scenario '" + plan.scenarioName
                            + "' embedded in plan " + shownPlan + " (plan's vs --scenario: " + list
                            + "); drop --scenario to use the plan's own, or add --ignore-embedded to use --scenario"});
    return r;
}

namespace {

std::vector<OptionSpec> withOptions(std::vector<OptionSpec> v, const std::vector<OptionSpec>& more)
{
    v.insert(v.end(), more.begin(), more.end());
    return v;
}

int runEvaluate(const Args& a, std::ostream& out, std::ostream& err)
{
    if (!a.has("--plan"))
        return reportErrors(err, {"--plan: required (a plan file)"});
    auto d = loadDeployment(a, a.value("--plan"));
    if (!d.ok())
        return reportFieldErrors(err, d.errors);
    if (std::vector<std::string> errors; !applyLoadArgs(a, d.value.scenario, errors))
        return reportErrors(err, errors);
    const DeploymentOutcome o = evaluateDeployment(d.value.scenario, d.value.deployment);
    if (a.flag("--json"))
        out << deploymentToJson(o) << "\n";
    else
        printDeployment(out, o, true);
    return kExitOk; // an invalid plan is a result, not an input error; "valid" says which
}

int runMegatron(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    const DeploymentRecipe rp = megatronDeployment(s.value);
    const EngineGap gap = engineGapFor(a, s.value, nullptr, nullptr);
    // No valid recipe plan (within the constraints): the reason, exit 1, nothing written.
    if (!rp.found)
        err << "error: the recipe has no valid plan for this scenario"
            << (a.has("--out") ? " (--out not written)" : "") << ": " << rp.explanation << "\n";
    if (a.has("--out") && rp.found) {
        Status st = saveDeploymentFile(a.value("--out"), rp.deployment, s.value);
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        out << "{\"explanation\": " << nlohmann::json(rp.explanation).dump() << ", \"found\": "
            << (rp.found ? "true" : "false") << ", \"evaluation\": " << deploymentToJson(rp.outcome);
        out << ", \"engine_gap\": " << engineGapToJson(gap) << "}\n";
    } else {
        out << "Megatron recipe for " << displayText(s.value.name) << ": " << rp.explanation << "\n\n";
        printDeployment(out, rp.outcome, true);
        if (gap.applies)
            out << "\n";
        printEngineGap(out, gap);
        if (a.has("--out") && rp.found)
            out << "\nwrote " << displayText(a.value("--out")) << "\n";
    }
    return rp.found ? kExitOk : kExitInvalid;
}

int runBenchSim(const Args& a, std::ostream& out, std::ostream& err)
{
    auto s = loadScenarioArg(a);
    if (!s.ok())
        return reportFieldErrors(err, s.errors);
    double seconds = 2.0;
    long long seed = 1;
    std::string error;
    if (!numberValue(a, "--seconds", 0.05, 600, seconds, error) || !intValue(a, "--seed", 0, 1LL << 62, seed, error))
        return reportErrors(err, {error});
    const Simulator sim(s.value);
    const SearchSpace space(s.value);
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::vector<Plan> plans;
    plans.reserve(4096);
    for (int i = 0; i < 4096; ++i)
        plans.push_back(space.randomPlan(rng));
    int valid = 0;
    for (const Plan& p : plans) {
        SimResult quick;
        sim.evaluate(p, quick, false);
        const SimResult full = sim.evaluate(p);
        if (quick.tokensPerSPerGpu != full.tokensPerSPerGpu || quick.valid != full.valid)
            return reportErrors(err, {"internal: fast and full evaluations disagree"});
        valid += full.valid;
    }
    // Two modes: the searches' fast path (no per-operator breakdown) and the full result
    // the GUI and `evaluate` show. Half the time each.
    auto measure = [&](bool breakdown, long long& evals, double& checksum) {
        SimResult r;
        const auto t0 = std::chrono::steady_clock::now();
        double elapsed = 0;
        while (elapsed < seconds / 2) {
            for (const Plan& p : plans) {
                sim.evaluate(p, r, breakdown);
                checksum += r.tokensPerSPerGpu;
            }
            evals += static_cast<long long>(plans.size());
            elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        return evals / elapsed;
    };
    long long fastEvals = 0, fullEvals = 0;
    double fastSum = 0, fullSum = 0;
    const double fast = measure(false, fastEvals, fastSum);
    const double full = measure(true, fullEvals, fullSum);
    if (a.flag("--json")) {
        out << "{\"scenario\": " << nlohmann::json(s.value.name).dump() << ", \"plans\": " << plans.size()
            << ", \"valid_plans\": " << valid << ", \"evaluations_per_s\": " << fast
            << ", \"evaluations_per_s_with_breakdown\": " << full << "}\n";
    } else {
        out << displayText(s.value.name) << ": " << plans.size() << " random structurally valid plans (" << valid
            << " also fit memory and SLOs), one thread:\n  " << formatNumber("%.0f", fast)
            << " evaluations/s (search fast path, no per-operator breakdown)\n  " << formatNumber("%.0f", full)
            << " evaluations/s (with the per-operator breakdown)\n";
    }
    return kExitOk;
}

} // namespace

void addCalibrationCommand(std::vector<Command>& v);
void addCollectiveCommand(std::vector<Command>& v); // cli_collective_commands.cpp

void addSimCommands(std::vector<Command>& v)
{
    v.push_back({{"evaluate", "--plan P.json [--scenario S.json] [--ignore-embedded] [--concurrency N | --request-rate R] [--json]",
                  "simulate a plan: validity, throughput, TTFT, TPOT, memory, per-operator breakdown",
                  "The plan is evaluated on the scenario embedded in it (search --out, megatron --out and the window "
                  "write it there); --scenario must then agree with it, or --ignore-embedded says to use --scenario "
                  "instead. Older plans without an embedded scenario need --scenario. An invalid plan is reported "
                  "with every violated constraint and exits 0; unreadable or malformed input, or a scenario that "
                  "differs from the plan's, exits 1. Under a load protocol (the scenario's workload.load, or "
                  "--concurrency / --request-rate) the plan is also run request by request: TTFT and TPOT mean and "
                  "percentiles, throughput, and saturation (JSON: load).",
                  withOptions({{"--plan", "P.json", "plan file (shardlab-plan format; - for standard input)"},
                               kPlanScenarioOption, kProfileOption, kIgnoreEmbeddedOption, kJsonOption},
                              loadOptions()),
                  0, 0},
                 runEvaluate});
    v.push_back({{"megatron", "--scenario S.json [--out P.json] [--json]",
                  "build and evaluate the Megatron-recipe plan (a starting point)", "",
                  {kScenarioOption, kProfileOption, kEngineScenarioOption, kRunnableOption, kNoEngineGapOption,
                   {"--out", "P.json", "write the plan, its scenario embedded (atomically)"}, kJsonOption},
                  0, 0},
                 runMegatron});
    v.push_back({{"bench-sim", "--scenario S.json [--seconds 2] [--seed 1] [--json]",
                  "simulator speed: single-threaded evaluations per second over random valid plans", "",
                  {kScenarioOption, kProfileOption, {"--seconds", "SEC", "how long to measure (default 2)"},
                   {"--seed", "N", "seed of the random plans (default 1)"}, kJsonOption},
                  0, 0},
                 runBenchSim});
    addCalibrationCommand(v);
    addCollectiveCommand(v);
}

} // namespace shardlab::cli
