// presets, import-hf, gen-scenarios (validate runs from cli_validate.cpp).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <ostream>

#include "cli_commands.h"
#include "io/atomic_file.h"
#include "io/hf_import.h"
#include "io/input_file.h"
#include "io/presets.h"
#include "runner/run_search.h"
#include "search/scenario_generator.h"

#include <filesystem>

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

// A table column: padded to its width, then one space.
std::string column(std::string s, size_t n) { return padRight(std::move(s), n) + " "; }

ojson modelSummaryJson(const std::string& preset, const ModelSpec& m)
{
    const ParameterCounts c = countParameters(m);
    return {{"preset", preset},
            {"name", m.name},
            {"kind", m.isMoe() ? "moe" : "dense"},
            {"attention", m.attention == AttentionKind::MLA ? "mla" : "gqa"},
            {"layers", m.layers},
            {"experts", m.moe.experts},
            {"total_parameters", c.total},
            {"active_parameters", c.active},
            {"weight_precision", precisionName(m.weightPrecision)}};
}

int runPresets(const Args& a, std::ostream& out, std::ostream& err)
{
    ojson j = {{"models", ojson::array()}, {"clusters", ojson::array()}, {"scenarios", ojson::array()}};
    std::vector<std::string> problems;
    for (const PresetFile& f : modelPresetFiles()) {
        auto m = modelPreset(f.name);
        if (!m.ok()) {
            problems.push_back(m.firstError());
            continue;
        }
        j["models"].push_back(modelSummaryJson(f.name, m.value));
    }
    for (const PresetFile& f : clusterPresetFiles()) {
        auto c = clusterPreset(f.name);
        if (!c.ok()) {
            problems.push_back(c.firstError());
            continue;
        }
        j["clusters"].push_back({{"preset", f.name},
                                 {"name", c.value.name},
                                 {"gpu", c.value.gpu.name},
                                 {"gpus", c.value.totalGpus()},
                                 {"gpus_per_node", c.value.gpusPerNode},
                                 {"nodes", c.value.nodes}});
    }
    for (const PresetFile& f : scenarioPresetFiles()) {
        auto s = scenarioPreset(f.name);
        if (!s.ok()) {
            problems.push_back(s.firstError());
            continue;
        }
        const Scenario& sc = s.value;
        j["scenarios"].push_back({{"preset", f.name},
                                  {"model", sc.model.name},
                                  {"cluster", sc.cluster.name},
                                  {"gpus", sc.cluster.totalGpus()},
                                  {"prompt_tokens", sc.workload.promptTokens},
                                  {"output_tokens", sc.workload.outputTokens},
                                  {"ttft_slo_ms", sc.workload.ttftSloMs},
                                  {"tpot_slo_ms", sc.workload.tpotSloMs}});
    }
    if (!problems.empty())
        return reportErrors(err, problems); // a broken shipped preset is a build defect

    if (a.flag("--json")) {
        out << j.dump(2) << "\n";
        return kExitOk;
    }
    out << "Models\n  " << column("preset", 18) << column("name", 18) << column("kind", 6) << column("total", 10)
        << column("active", 10) << "weights\n";
    for (const auto& m : j["models"])
        out << "  " << column(m["preset"], 18) << column(m["name"], 18) << column(m["kind"], 6)
            << column(formatCount(m["total_parameters"]), 10) << column(formatCount(m["active_parameters"]), 10)
            << m["weight_precision"].get<std::string>() << "\n";
    out << "\nClusters\n  " << column("preset", 18) << column("GPUs", 6) << "name\n";
    for (const auto& c : j["clusters"])
        out << "  " << column(c["preset"], 18) << column(std::to_string(c["gpus"].get<long long>()), 6)
            << c["name"].get<std::string>() << "\n";
    out << "\nScenarios\n  " << column("preset", 22) << column("model", 16) << column("GPUs", 6) << "workload\n";
    for (const auto& s : j["scenarios"]) {
        char w[128];
        std::snprintf(w, sizeof w, "%d in / %d out, TTFT <= %g ms, TPOT <= %g ms", s["prompt_tokens"].get<int>(),
                      s["output_tokens"].get<int>(), s["ttft_slo_ms"].get<double>(), s["tpot_slo_ms"].get<double>());
        out << "  " << column(s["preset"], 22) << column(s["model"], 16)
            << column(std::to_string(s["gpus"].get<long long>()), 6) << w << "\n";
    }
    return kExitOk;
}

void printModel(std::ostream& out, const ModelSpec& m)
{
    const ParameterCounts c = countParameters(m);
    out << displayText(m.name) << ": " << (m.isMoe() ? "MoE" : "dense") << ", " << m.layers << " layers, hidden "
        << m.hiddenSize << ", " << m.attentionHeads << " heads";
    if (m.attention == AttentionKind::MLA)
        out << " (MLA, kv_lora_rank " << m.mla.kvLoraRank << ")";
    else
        out << " / " << m.kvHeads << " KV heads x " << m.headDim;
    out << ", vocab " << m.vocabSize << "\n";
    if (m.isMoe())
        out << "  experts " << m.moe.experts << " (top-" << m.moe.expertsPerToken << ", ffn "
            << m.moe.expertFfnHidden << "), shared " << m.moe.sharedExperts << ", dense layers "
            << m.moe.denseLayers << "\n";
    if (m.denseLayerCount() > 0)
        out << "  dense FFN " << m.ffnHidden << "\n";
    out << "  parameters: " << formatCount(c.total) << " total, " << formatCount(c.active) << " active; weights "
        << precisionName(m.weightPrecision);
    if (m.isMoe() && m.routedExpertPrecision() != m.weightPrecision) // gpt-oss: MXFP4 experts beside BF16
        out << " (routed experts " << precisionName(m.routedExpertPrecision()) << ")";
    out << ", KV cache " << precisionName(m.kvPrecision) << "\n";
}

int runImportHf(const Args& a, std::ostream& out, std::ostream& err)
{
    auto imported = importHfModel(a.positional.at(0));
    if (!imported.ok())
        return reportFieldErrors(err, imported.errors);
    // Approximations (a 4-bit checkpoint modelled as FP8, float32 as 2 bytes) are said, on
    // stderr so --json stays a model file.
    for (const std::string& w : imported.value.warnings)
        err << "warning: " << displayText(w) << "\n";
    Parsed<ModelSpec> m;
    m.value = imported.value.model;
    if (a.has("--name")) {
        // The name goes into JSON, which must be UTF-8; refuse rather than guess an encoding.
        const std::string name = a.value("--name");
        if (const auto problem = nameFlagProblem("--name", name))
            return reportErrors(err, {*problem});
        m.value.name = name;
    }
    if (a.has("--out")) {
        Status st = writeFileAtomically(a.value("--out"), modelToJson(m.value));
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        out << modelToJson(m.value);
        return kExitOk;
    }
    printModel(out, m.value);
    if (a.has("--out"))
        out << "wrote " << displayText(a.value("--out")) << "\n";
    return kExitOk;
}

// Scenarios from the generator the pretrained ppo policy was trained on (docs/ppo.md): the
// held-out benchmark set is one of these with a seed never used for training.
int runGenerateScenarios(const Args& a, std::ostream& out, std::ostream& err)
{
    long long seed = 0, count = 0, first = 0;
    std::string error;
    if (!intValue(a, "--seed", 0, (1LL << 53), seed, error) || !intValue(a, "--count", 1, 100000, count, error)
        || !intValue(a, "--first", 0, 1LL << 30, first, error))
        return reportErrors(err, {error});
    if (!a.has("--seed") || !a.has("--count") || !a.has("--out"))
        return reportErrors(err, {"--seed, --count and --out are required"});
    const std::string dir = a.value("--out");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        return reportErrors(err, {"--out: " + displayText(dir) + ": cannot create the directory"
                                  + (ec ? " (" + ec.message() + ")" : std::string())});
    // A file of the same name that holds anything but what the generator writes (a user's
    // edit) is never replaced: refused before anything is written.
    std::vector<Scenario> scenarios;
    for (long long i = first; i < first + count; ++i) {
        const Scenario& s = scenarios.emplace_back(generateScenario(static_cast<std::uint64_t>(seed), static_cast<int>(i)));
        const std::string path = dir + "/" + s.name + ".json";
        if (!std::filesystem::exists(path, ec))
            continue;
        auto text = readTextFile(path);
        if (!text.ok() || text.value() != scenarioToJson(s))
            return reportErrors(err, {"--out: " + displayText(path) + " exists and is not the scenario seed "
                                      + std::to_string(seed) + " generates there (edited, or another file); nothing was "
                                      "written: move it or write into another directory"});
    }
    const bool feasibleOnly = a.flag("--feasible-only");
    int written = 0, skipped = 0;
    for (const Scenario& s : scenarios) {
        if (feasibleOnly) {
            SearchOptions o;
            o.algorithm = "exact";
            if (!runSearch(s, o).found) {
                ++skipped;
                continue;
            }
        }
        const std::string path = dir + "/" + s.name + ".json";
        const Status st = writeFileAtomically(path, scenarioToJson(s));
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
        out << displayText(path) << ": " << displayText(s.description) << "\n";
        ++written;
    }
    out << written << " scenarios written" << (feasibleOnly ? ", " + std::to_string(skipped) + " without a valid plan skipped" : "")
        << "\n";
    return kExitOk;
}

} // namespace

void addScenarioCommands(std::vector<Command>& v)
{
    v.push_back({{"presets", "[--json]", "list the shipped models (with parameter counts), clusters and scenarios",
                  "", {kJsonOption}, 0, 0},
                 runPresets});
    v.push_back({{"validate", "FILE|- [--scenario S.json|PRESET] [--ignore-embedded] [--json]",
                  "check a scenario, plan, model, cluster or HuggingFace config file",
                  "The kind of file is read from its \"format\" field. A plan is checked against the scenario embedded "
                  "in it, or against --scenario (a file or a shipped scenario's name), or on its own. FILE - "
                  "reads standard input. Every problem is reported as FILE: JSON.PATH: reason; the exit code is 1 "
                  "if there is any. A plan that is well formed for its scenario but breaks the scenario's limits "
                  "(memory, TTFT, TPOT, token budget) is not a problem of the file: it exits 0 and is said to be "
                  "NOT within the limits (JSON: within_limits; violations and reasons, as evaluate --json names "
                  "them; load, the run under a load protocol). Nor is a plan outside the scenario's search space (its constraints; a runnable scenario's engine rules), which no search proposes "
                  "(JSON: search_space.within, search_space.outside), or one the scenario's workload.engine does "
                  "not run as planned, which export refuses (JSON: engine.runs_as_planned, engine.rules_broken).",
                  {{"--scenario", "S.json", "check a plan against this scenario (file or preset name); it must agree "
                                            "with the plan's embedded scenario"},
                   kIgnoreEmbeddedOption, kJsonOption},
                  1, 1},
                 runValidate});
    v.push_back({{"import-hf", "CONFIG.json|MODEL_DIR [--out MODEL.json] [--name NAME] [--json]",
                  "read a HuggingFace model (config.json, or the folder holding it) into a ShardLab model spec",
                  std::string("Families (model_type): ") + kHfFamilies + ". "
                  "Precisions come from the checkpoint: torch_dtype, quantization_config (e.g. DeepSeek-V3's FP8), and "
                  "a ModelOpt hf_quant_config.json beside config.json (quant_algo for the weights, kv_cache_quant_algo "
                  "for the KV cache). 4-bit weights (NVFP4, MXFP4, INT4 such as AWQ) are modelled as themselves; a "
                  "4-bit KV cache is modelled as FP8, with a warning on stderr.",
                  {{"--out", "MODEL.json", "also write the model spec (atomically)"},
                   {"--name", "NAME", "name to give the model (default: from the file)"},
                   kJsonOption},
                  1, 1},
                 runImportHf});
    v.push_back({{"gen-scenarios", "--seed N --count N --out DIR [--first I] [--feasible-only]",
                  "write random scenarios from the pretraining distribution (dense/MoE/MLA, 1 B-2 T, 1-4096 GPUs)",
                  "Scenario i of seed N is the same on every run. The pretrained ppo policy was trained on seed 6; "
                  "the held-out benchmark set (resources/benchmarks/held-out) is seed 20261123 (docs/ppo.md). "
                  "--feasible-only keeps scenarios where exact finds a valid plan.",
                  {{"--seed", "N", "generator seed"},
                   {"--count", "N", "scenarios to write"},
                   {"--first", "I", "first index (default 0)"},
                   {"--out", "DIR", "directory (created if missing); files are named gen-SEED-I.json"},
                   {"--feasible-only", "", "skip scenarios without a valid plan (runs exact on each)"}},
                  0, 0},
                 runGenerateScenarios});
}

} // namespace shardlab::cli
