// export: a plan as an engine's launch configuration (core/report/launch_config.h).
#include <ostream>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "model/names.h"
#include "report/launch_config.h"

namespace shardlab::cli {

namespace {

int runExport(const Args& a, std::ostream& out, std::ostream& err)
{
    if (!a.has("--plan"))
        return reportErrors(err, {"--plan: required (a plan file, e.g. from search --out)"});
    if (!a.has("--engine"))
        return reportErrors(err, {"--engine: required (one of " + knownEngines() + ")"});
    LaunchOptions o;
    if (!engineFromName(a.value("--engine"), o.engine))
        return reportErrors(err, {"--engine: unknown engine '" + displayText(a.value("--engine")) + "' (known: "
                                  + knownEngines() + ")"});
    o.model = a.value("--model");
    // It goes into JSON and a shell script: UTF-8 text on one line, or refused.
    if (displayText(o.model) != o.model)
        return reportErrors(err, {"--model: must be UTF-8 text without control characters (got '"
                                  + excerpt(displayText(o.model)) + "')"});
    if (auto why = nameProblem(o.model))
        return reportErrors(err, {"--model: " + *why});
    if (a.has("--checkpoint")) {
        const std::string c = a.value("--checkpoint");
        if (c != "bf16" && c != "fp8")
            return reportErrors(err, {"--checkpoint: must be bf16 or fp8 (how the checkpoint stores its weights), got '"
                                      + displayText(c) + "'"});
        o.checkpoint = c == "fp8" ? Precision::FP8 : Precision::BF16;
    }
    long long tokens = 0;
    double memory = 0;
    std::string error;
    if (!intValue(a, "--max-num-tokens", 1, 1 << 24, tokens, error)
        || !numberValue(a, "--memory-fraction", 0.05, 1.0, memory, error))
        return reportErrors(err, {error});
    o.maxNumTokens = static_cast<int>(tokens);
    o.memoryFraction = memory;
    if (a.has("--out"))
        o.companionPrefix = companionPrefixFor(a.value("--out"));

    const std::string planFile = inputLabel(a.value("--plan"));
    auto d = loadDeployment(a, a.value("--plan"));
    if (!d.ok())
        return reportFieldErrors(err, d.errors);
    const Scenario& scenario = d.value.scenario;
    const Result<LaunchConfig> c = exportLaunchConfig(scenario, d.value.deployment, o);
    if (!c.ok()) {
        FieldError e = c.error();
        if (e.file.empty() && e.where.rfind("--", 0) != 0)
            e.file = planFile;
        return reportErrors(err, {e.toString()});
    }
    const LaunchConfig& lc = c.value();
    if (a.has("--out")) {
        const Status st = writeLaunchConfig(lc, a.value("--out"));
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        out << launchConfigToJson(lc, scenario.name);
        return kExitOk;
    }
    const EngineInfo& e = engineInfo(lc.engine);
    out << "# " << e.label << " " << lc.engineVersion << " launch configuration for " << displayText(planFile)
        << " on scenario '" << displayText(scenario.name) << "'\n"
        << lc.command;
    for (const LaunchFile& f : lc.files)
        out << "\n# " << f.name << ":\n" << f.contents;
    if (!lc.warnings.empty()) {
        out << "\nWarnings (what " << e.label << " cannot express, or what to do by hand):\n";
        for (const std::string& w : lc.warnings)
            out << "  - " << displayText(w) << "\n";
    }
    if (a.has("--out")) {
        out << "\nwrote " << displayText(a.value("--out"));
        for (const LaunchFile& f : lc.files)
            out << " and " << f.name << " beside it";
        out << "\n";
    }
    return kExitOk;
}

} // namespace

void addExportCommands(std::vector<Command>& v)
{
    v.push_back({{"export",
                  "--plan P.json [--scenario S.json] --engine vllm|sglang|trtllm [--model ID|PATH] [--checkpoint bf16|fp8] "
                  "[--max-num-tokens N] [--memory-fraction F] [--out FILE] [--json]",
                  "write a plan as a serving engine's launch configuration (vLLM, SGLang, TensorRT-LLM)",
                  "The command line (vLLM 0.11, SGLang 0.5) or the trtllm-serve command plus its "
                  "--extra_llm_api_options YAML (TensorRT-LLM 1.0): model, dtype and quantization, KV-cache dtype, "
                  "tensor/pipeline/data/expert parallel sizes, attention data parallelism, sequences in flight, token "
                  "budget per step, memory fraction. Plan choices the engine cannot express are listed as warnings. "
                  "A disaggregated plan (prefill and decode pools) gives one command per pool with the engine's "
                  "disaggregation flags, placed prefill-first, and the engine's router where it ships one. "
                  "The plan's embedded scenario is used unless --scenario is given (it must agree, or "
                  "--ignore-embedded). --out writes a shell script and any options file beside it (docs/launch.md).",
                  {{"--plan", "P.json", "plan file, one-pool or disaggregated (search --out, megatron --out, or the window's "
                                       "Export plan)"},
                   kPlanScenarioOption, kProfileOption,
                   kIgnoreEmbeddedOption,
                   {"--engine", "NAME", "vllm, sglang or trtllm"},
                   {"--model", "ID|PATH", "checkpoint to serve (default: the preset's HuggingFace id)"},
                   {"--checkpoint", "bf16|fp8", "how the checkpoint stores its weights (bf16 with an fp8 plan: quantize "
                                                "on load)"},
                   {"--max-num-tokens", "N", "scheduler token budget per step (default 8192)"},
                   {"--memory-fraction", "F", "engine memory fraction (default: from the plan's memory budget)"},
                   {"--out", "FILE", "write the launch script (and options files beside it), atomically"},
                   kJsonOption},
                  0, 0},
                 runExport});
}

} // namespace shardlab::cli
