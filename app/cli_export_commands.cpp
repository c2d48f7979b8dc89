// export: a plan as an engine's launch configuration (core/report/launch_config.h).
#include <algorithm>
#include <ostream>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "io/output_apart.h"
#include "report/launch_config.h"
#include "runner/runnable_plan.h"
#include "sim/simulator.h"

namespace shardlab::cli {

namespace {

// Why export refuses a plan: each engine rule it breaks, and the best runnable plan near it.
std::vector<std::string> refusal(const std::string& planFile, const Scenario& s, const Plan& p,
                                 const FieldErrors& broken, const NearestRunnable& n, Engine e)
{
    const EngineInfo& info = engineInfo(e);
    std::vector<std::string> lines{planFile + ": " + info.label + " " + info.version
                                   + " does not run this plan as planned; export never changes a plan:"};
    for (const FieldError& b : broken)
        lines.push_back("  " + b.where + ": " + b.reason);
    const SimResult mine = Simulator(n.found ? n.scenario : s).evaluate(p); // priced alike
    if (n.found)
        lines.push_back("the best plan " + std::string(info.label) + " runs near it (exact, " + n.kept + " kept): "
                        + planDegreesText(s, n.plan) + ", " + formatNumber("%.1f", n.result.tokensPerSPerGpu)
                        + " tokens/s per GPU (this plan, priced alike with " + info.label + "'s collectives: "
                        + formatNumber("%.1f", mine.tokensPerSPerGpu) + "); --write-nearest exports it instead");
    else
        lines.push_back("no plan " + std::string(info.label) + " runs is valid for this scenario");
    return lines;
}

// The configuration as a shell script on stdout: the command, and everything else (the
// files' contents, the warnings, what was written) as comments, so that `export > run.sh`
// runs the command and nothing a file or a name holds; names are shown as displayText.
void printLaunchConfig(std::ostream& out, const LaunchConfig& lc, const std::string& planFile,
                       const std::string& scenarioName, const std::string& written)
{
    auto comment = [&out](const std::string& text) {
        size_t start = 0;
        while (start < text.size()) {
            const size_t end = std::min(text.find('\n', start), text.size());
            out << "#" << (end > start ? " " : "") << displayText(text.substr(start, end - start)) << "\n";
            start = end + 1;
        }
    };
    const EngineInfo& e = engineInfo(lc.engine);
    out << "# " << e.label << " " << lc.engineVersion << " launch configuration written by ShardLab for "
        << displayText(planFile)
        << " on scenario '" << displayText(scenarioName) << "'\n"
        << launchGuards(lc) << lc.command;
    for (const LaunchFile& f : lc.files) {
        out << "\n# " << displayText(f.name) << ":\n";
        comment(f.contents);
    }
    if (!lc.warnings.empty()) {
        out << "\n# Warnings (what " << e.label << " cannot express, or what to do by hand):\n";
        for (const std::string& w : lc.warnings)
            out << "#   - " << displayText(w) << "\n";
    }
    if (!written.empty()) {
        out << "\n# wrote " << displayText(written);
        for (const LaunchFile& f : lc.files)
            out << " and " << displayText(f.name) << " beside it";
        out << "\n";
    }
}

// The plan export writes: the plan itself when the engine runs it as planned (or when it
// does not fit the scenario: the export's own error says so); with --write-nearest the best
// plan the engine runs near it, `s` and `d` replaced and `replaced` its summary; else the
// refusal's lines.
std::vector<std::string> planToWrite(const Args& a, const std::string& planFile, Engine e, Scenario& s, Deployment& d,
                                     std::string& replaced)
{
    if (d.pools || !validatePlan(d.plan, s).empty())
        return {};
    const FieldErrors broken = engineViolations(e, d.plan, s);
    if (broken.empty())
        return {};
    const NearestRunnable n = nearestRunnablePlan(s, d.plan, e);
    if (!a.flag("--write-nearest") || !n.found)
        return refusal(planFile, s, d.plan, broken, n, e);
    replaced = planDegreesText(s, d.plan);
    s = n.scenario;
    d = Deployment::onePool(n.plan);
    return {};
}

// The export options (--engine, --model, --checkpoint, --max-num-tokens, --memory-fraction,
// --out's companion prefix) into `o`; the errors, each naming its flag.
std::vector<std::string> launchOptions(const Args& a, LaunchOptions& o)
{
    if (!engineFromName(a.value("--engine"), o.engine))
        return {"--engine: unknown engine '" + displayText(a.value("--engine")) + "' (known: " + knownEngines() + ")"};
    o.model = a.value("--model");
    // Given, it names a checkpoint: not empty nor blank (either would be the preset's id
    // silently, or a checkpoint named ' ').
    if (a.has("--model") && o.model.find_first_not_of(" \t") == std::string::npos)
        return {"--model: names no checkpoint (empty or blank); give a HuggingFace id or a path, or leave --model out "
                "for the preset's id"};
    // It goes into JSON and a shell script: UTF-8 text on one line, or refused.
    if (auto why = nameFlagProblem("--model", o.model))
        return {*why};
    o.model = scriptModelPath(o.model);
    if (auto why = nameFlagProblem("--model", o.model)) // the working directory's name joined to it
        return {*why};
    if (a.has("--checkpoint")) {
        const std::string c = a.value("--checkpoint");
        if (c != "bf16" && c != "fp8")
            return {"--checkpoint: must be bf16 or fp8 (how the checkpoint stores its weights), got '" + displayText(c)
                    + "'"};
        o.checkpoint = c == "fp8" ? Precision::FP8 : Precision::BF16;
    }
    long long tokens = 0;
    double memory = 0;
    std::string error;
    if (!intValue(a, "--max-num-tokens", 1, 1 << 24, tokens, error)
        || !numberValue(a, "--memory-fraction", 0.05, 1.0, memory, error))
        return {error};
    o.maxNumTokens = static_cast<int>(tokens);
    o.memoryFraction = memory;
    if (a.has("--out"))
        o.companionPrefix = companionPrefixFor(a.value("--out"));
    o.allowInvalid = a.flag("--allow-invalid");
    o.allowInvalidName = "--allow-invalid";
    return {};
}

int runExport(const Args& a, std::ostream& out, std::ostream& err)
{
    if (!a.has("--plan"))
        return reportErrors(err, {"--plan: required (a plan file, e.g. from search --out)"});
    if (!a.has("--engine"))
        return reportErrors(err, {"--engine: required (one of " + knownEngines() + ")"});
    LaunchOptions o;
    if (const std::vector<std::string> bad = launchOptions(a, o); !bad.empty())
        return reportErrors(err, bad);

    const std::string planFile = inputLabel(a.value("--plan"));
    auto d = loadDeployment(a, a.value("--plan"));
    if (!d.ok())
        return reportFieldErrors(err, d.errors);
    Scenario scenario = d.value.scenario;
    Deployment deployment = d.value.deployment;
    std::string replaced; // the refused plan's summary when --write-nearest exported another
    if (const auto refused = planToWrite(a, planFile, o.engine, scenario, deployment, replaced); !refused.empty())
        return reportErrors(err, refused);
    const Result<LaunchConfig> c = exportLaunchConfig(scenario, deployment, o);
    if (!c.ok()) {
        FieldError e = c.error();
        if (e.file.empty() && e.where.rfind("--", 0) != 0)
            e.file = planFile;
        // An engine's refusal of a pool names that pool's field; an invalid deployment is
        // refused as a whole ("plan"), which --write-nearest would not change.
        if (deployment.pools && a.flag("--write-nearest") && e.where != "plan")
            e.reason += " (--write-nearest covers one-pool plans; for two pools the engine runs, search the scenario "
                        "with --engine " + std::string(engineInfo(o.engine).name) + " --runnable)";
        return reportErrors(err, {e.toString()});
    }
    LaunchConfig lc = c.value();
    if (!replaced.empty())
        lc.warnings.insert(lc.warnings.begin(),
                           "--write-nearest: exported the best plan " + std::string(engineInfo(o.engine).label)
                               + " runs near the plan (" + planDegreesText(scenario, deployment.plan) + ", "
                               + formatNumber("%.1f", Simulator(scenario).evaluate(deployment.plan).tokensPerSPerGpu) + " tokens/s per GPU), not the plan "
                               + "itself (" + replaced + "), which it does not run as planned");
    if (a.has("--out")) {
        // The options files beside the script are outputs too: none may replace an input.
        std::string error;
        const std::vector<std::string> paths = launchConfigPaths(lc, a.value("--out")); // the files, then the script
        for (const std::string& path : paths)
            if (!outputApartFromInputs(a, "--out", path, error)
                || !replaceableOutput("--out", path,
                                      path == paths.back() ? OutputKind::LaunchScript : OutputKind::OptionsFile, error)) {
                err << "shardlab-cli export: " << displayText(error) << "\n"; // as for --out itself
                return kExitUsage;
            }
        const Status st = writeLaunchConfig(lc, a.value("--out"));
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        out << launchConfigToJson(lc, scenario.name);
        return kExitOk;
    }
    printLaunchConfig(out, lc, planFile, scenario.name, a.has("--out") ? a.value("--out") : std::string());
    return kExitOk;
}

} // namespace

void addExportCommands(std::vector<Command>& v)
{
    v.push_back({{"export",
                  "--plan P.json [--scenario S.json] --engine vllm|sglang|trtllm [--model ID|PATH] [--checkpoint bf16|fp8] "
                  "[--max-num-tokens N] [--memory-fraction F] [--write-nearest] [--out FILE] [--json]",
                  "write a plan as a serving engine's launch configuration (vLLM, SGLang, TensorRT-LLM)",
                  "The command line (vLLM 0.11, SGLang 0.5) or the trtllm-serve command plus its "
                  "--extra_llm_api_options YAML (TensorRT-LLM 1.0): model, dtype and quantization, KV-cache dtype, "
                  "tensor/pipeline/data/expert parallel sizes, attention data parallelism, sequences in flight, token "
                  "budget per step, memory fraction. A plan the engine does not run as planned is refused with each "
                  "rule it breaks and the best plan the engine runs near it (docs/engines.md); --write-nearest "
                  "exports that one instead. A plan that breaks the scenario's limits (memory, TTFT, TPOT, token budget) is "
                  "refused with the reasons (--allow-invalid exports it as planned). "
                  "A disaggregated plan (prefill and decode pools) gives one command per pool with the engine's "
                  "disaggregation flags, placed prefill-first, and the engine's router where it ships one. "
                  "The plan's embedded scenario is used unless --scenario is given (it must agree, or "
                  "--ignore-embedded). --out writes a shell script and any options file beside it (docs/launch.md).",
                  {{"--plan", "P.json", "plan file, one-pool or disaggregated (search --out, megatron --out, or the window's "
                                       "Export plan)"},
                   kPlanScenarioOption, kProfileOption,
                   kIgnoreEmbeddedOption,
                   {"--engine", "NAME", "vllm, sglang or trtllm"},
                   {"--write-nearest", "", "when the engine does not run the plan as planned, export the best plan it "
                                           "runs near it (exact under the engine's rules) instead of refusing"},
                   {"--allow-invalid", "", "export a plan that breaks the scenario's limits (memory, TTFT, TPOT, "
                                           "token budget) as planned, with the violations as warnings, instead of refusing it"},
                   {"--model", "ID|PATH", "checkpoint to serve (default: the preset's HuggingFace id)"},
                   {"--checkpoint", "bf16|fp8", "how the checkpoint stores its weights (bf16 with an fp8 plan: quantize "
                                                "on load)"},
                   {"--max-num-tokens", "N", "scheduler token budget per replica step (default: the scenario's workload.max_num_tokens; another value re-prices the plan at it)"},
                   {"--memory-fraction", "F", "engine memory fraction (default: derived from the plan's memory breakdown; one too small for the plan's batch is refused)"},
                   {"--out", "FILE", "write the launch script (and options files beside it), atomically"},
                   kJsonOption},
                  0, 0},
                 runExport});
}

} // namespace shardlab::cli
