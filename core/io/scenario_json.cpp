// Scenario, model and cluster files (io/scenario_json.h; plan files are io/plan_json.cpp):
// read with every problem at its JSON path, written back in the same shape.
#include "io/scenario_json.h"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include "io/atomic_file.h"
#include "io/format_json.h"
#include "io/constraints_json.h"
#include "io/json_reader.h"
#include "io/load_json.h"
#include "io/model_json.h"
#include "io/speculative_json.h"
#include "io/presets.h"
#include "io/profile_json.h"
#include "model/constraint_checks.h"
#include "model/plan_checks.h"

namespace shardlab {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using io::JsonReader;
using io::modelJson;
using io::readModel;
using io::checkFormat;
using io::parseWith;
using io::scenarioJson;
using io::withFile;
using namespace io::formats;

namespace {

ClusterSpec readCluster(JsonReader r)
{
    ClusterSpec c;
    if (!r.requireObject())
        return c;
    r.rejectUnknownKeys({"format", "version", "name", "description", "gpu", "gpus_per_node", "nodes",
                         "nvlink_gb_per_s", "nvlink_latency_us", "inter_node_gb_per_s", "inter_node_latency_us",
                         "source", "profile"});
    c.name = r.string("name");
    JsonReader g = r.child("gpu");
    if (!r.has("gpu"))
        r.fail(r.path("gpu"), "missing required field");
    else if (g.requireObject()) {
        g.rejectUnknownKeys({"name", "peak_tflops_bf16", "peak_tflops_fp8", "peak_tflops_fp4", "hbm_gb", "hbm_tb_per_s",
                             "memory_reserve_gb", "kernel_overhead_us", "efficiency"});
        c.gpu.name = g.string("name");
        c.gpu.peakTflopsBf16 = g.number("peak_tflops_bf16", 1e-9, 1e6);
        c.gpu.peakTflopsFp8 = g.number("peak_tflops_fp8", 1e-9, 1e6);
        c.gpu.peakTflopsFp4 = g.numberOr("peak_tflops_fp4", 0, 0, 1e6); // 0: no FP4 tensor cores
        c.gpu.hbmGb = g.number("hbm_gb", 1e-9, 1e5);
        c.gpu.hbmTbps = g.number("hbm_tb_per_s", 1e-12, 1e4);
        c.gpu.memoryReserveGb = g.number("memory_reserve_gb", 0, 1e5);
        c.gpu.kernelOverheadUs = g.number("kernel_overhead_us", 0, 1e4);
        JsonReader e = g.child("efficiency");
        if (!g.has("efficiency"))
            g.fail(g.path("efficiency"), "missing required field");
        else if (e.requireObject()) {
            e.rejectUnknownKeys({"compute", "hbm", "nvlink", "inter_node"});
            c.gpu.efficiency.compute = e.number("compute", 1e-6, 1);
            c.gpu.efficiency.hbm = e.number("hbm", 1e-6, 1);
            c.gpu.efficiency.nvlink = e.number("nvlink", 1e-6, 1);
            c.gpu.efficiency.interNode = e.number("inter_node", 1e-6, 1);
        }
    }
    c.gpusPerNode = r.integer("gpus_per_node", 1, 1024);
    c.nodes = r.integer("nodes", 1, 131072);
    c.nvlinkGBps = r.number("nvlink_gb_per_s", 1e-12, 1e6);
    c.nvlinkLatencyUs = r.number("nvlink_latency_us", 0, 1e6);
    c.interNodeGBps = r.number("inter_node_gb_per_s", 1e-12, 1e6);
    c.interNodeLatencyUs = r.number("inter_node_latency_us", 0, 1e6);
    // The kernel profile its GPU's kernels are priced with (a shipped profile's name); absent:
    // the built-in H100 one. The cluster's own efficiency fields stay its knobs.
    if (r.has("profile")) {
        const std::string name = r.string("profile");
        if (auto prof = shippedProfile(name))
            c.profile = std::move(prof);
        else
            r.fail(r.path("profile"), profilePreset(name).errors.front().reason);
    }
    return c;
}

WorkloadSpec readWorkload(JsonReader r)
{
    WorkloadSpec w;
    if (!r.requireObject())
        return w;
    r.rejectUnknownKeys(
        {"prompt_tokens", "output_tokens", "ttft_slo_ms", "tpot_slo_ms", "serving", "max_num_tokens", "kv_transfer", "engine",
         "kv_cache_memory_fraction", "runnable", "load", "speculative", "description"});
    w.promptTokens = r.integer("prompt_tokens", 1, 10'000'000);
    w.outputTokens = r.integer("output_tokens", 1, 10'000'000);
    w.ttftSloMs = r.number("ttft_slo_ms", 1e-9, kUnlimitedSloMs);
    w.tpotSloMs = r.number("tpot_slo_ms", 1e-9, kUnlimitedSloMs);
    // Files written before serving modes existed are read as aggregated serving, what the
    // benchmarks users compare with measure.
    const std::string mode = r.stringOr("serving", servingModeName(ServingMode::Aggregated));
    if (!servingModeFromName(mode, w.serving))
        r.fail(r.path("serving"), "unknown serving mode \"" + mode + "\" (known: aggregated, decode, disaggregated)");
    w.maxNumTokens = r.integerOr("max_num_tokens", 8192, 1, kMaxNumTokensLimit);
    w.kvCacheMemoryFraction = r.numberOr("kv_cache_memory_fraction", 1.0, 0.01, 1);
    const std::string link = r.stringOr("kv_transfer", kvLinkName(KvLink::InterNode));
    if (!kvLinkFromName(link, w.kvTransfer))
        r.fail(r.path("kv_transfer"), "unknown KV transfer link \"" + link + "\" (known: inter_node, nvlink)");
    const std::string engine = r.stringOr("engine", collectiveEngineName(CollectiveEngine::Nccl));
    if (!collectiveEngineFromName(engine, w.engine))
        r.fail(r.path("engine"), "unknown engine \"" + engine + "\" for the collectives (known: "
                                     + knownCollectiveEngines() + ")");
    w.runnable = r.booleanOr("runnable", false);
    if (r.has("load"))
        w.load = io::readLoad(r.child("load"));
    if (r.has("speculative"))
        w.speculative = io::readSpeculative(r.child("speculative"));
    return w;
}

ojson clusterJson(const ClusterSpec& c)
{
    const GpuSpec& g = c.gpu;
    ojson j;
    j["name"] = c.name;
    j["gpu"] = {{"name", g.name},
                {"peak_tflops_bf16", g.peakTflopsBf16},
                {"peak_tflops_fp8", g.peakTflopsFp8}};
    if (g.peakTflopsFp4 > 0) // written only for GPUs with FP4 tensor cores
        j["gpu"]["peak_tflops_fp4"] = g.peakTflopsFp4;
    j["gpu"]["hbm_gb"] = g.hbmGb;
    j["gpu"]["hbm_tb_per_s"] = g.hbmTbps;
    j["gpu"]["memory_reserve_gb"] = g.memoryReserveGb;
    j["gpu"]["kernel_overhead_us"] = g.kernelOverheadUs;
    j["gpu"]["efficiency"] = {{"compute", g.efficiency.compute},
                              {"hbm", g.efficiency.hbm},
                              {"nvlink", g.efficiency.nvlink},
                              {"inter_node", g.efficiency.interNode}};
    j["gpus_per_node"] = c.gpusPerNode;
    j["nodes"] = c.nodes;
    j["nvlink_gb_per_s"] = c.nvlinkGBps;
    j["nvlink_latency_us"] = c.nvlinkLatencyUs;
    j["inter_node_gb_per_s"] = c.interNodeGBps;
    j["inter_node_latency_us"] = c.interNodeLatencyUs;
    return j;
}

} // namespace

const char* fileKindName(FileKind k)
{
    switch (k) {
    case FileKind::Scenario: return "scenario";
    case FileKind::Plan: return "plan";
    case FileKind::Model: return "model";
    case FileKind::Cluster: return "cluster";
    case FileKind::HuggingFaceConfig: return "HuggingFace config";
    case FileKind::Profile: return "kernel profile";
    case FileKind::Measurements: return "measurements";
    case FileKind::Unknown: break;
    }
    return "unknown";
}

std::string knownFormatsText()
{
    std::string out;
    const size_t n = std::size(io::formats::kFileFormats);
    for (size_t i = 0; i < n; ++i)
        out += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + "\"" + io::formats::kFileFormats[i].tag + "\"";
    return out;
}

FileKind detectFileKind(const std::string& text, FieldError* parseError)
{
    json doc;
    FieldError error;
    if (!io::parseJsonText(text, doc, error)) {
        if (parseError)
            *parseError = error;
        return FileKind::Unknown;
    }
    if (!doc.is_object())
        return FileKind::Unknown;
    auto f = doc.find("format");
    if (f != doc.end() && f->is_string()) {
        const std::string s = *f;
        for (const io::formats::FileFormat& known : io::formats::kFileFormats)
            if (s == known.tag)
                return known.kind;
    }
    if (doc.contains("architectures") || doc.contains("model_type"))
        return FileKind::HuggingFaceConfig;
    if (doc.contains("tensor_parallel"))
        return FileKind::Plan;
    if (doc.contains("workload"))
        return FileKind::Scenario;
    return FileKind::Unknown;
}

Parsed<ModelSpec> parseModel(const std::string& text, const std::string& file)
{
    return parseWith<ModelSpec>(text, file, [](const json& doc, Parsed<ModelSpec>& out) {
        JsonReader r(doc, "", out.errors);
        if (!r.requireObject())
            return;
        if (!checkFormat(r, kModelFormat, false))
            return;
        out.value = readModel(r);
        if (out.errors.empty())
            out.errors = validateModel(out.value, "");
        for (FieldError& e : out.errors)
            if (!e.where.empty() && e.where.front() == '.')
                e.where.erase(0, 1);
    });
}

Parsed<ClusterSpec> parseCluster(const std::string& text, const std::string& file)
{
    return parseWith<ClusterSpec>(text, file, [](const json& doc, Parsed<ClusterSpec>& out) {
        JsonReader r(doc, "", out.errors);
        if (!r.requireObject())
            return;
        if (!checkFormat(r, kClusterFormat, false))
            return;
        out.value = readCluster(r);
        if (out.errors.empty())
            out.errors = validateCluster(out.value, "");
        for (FieldError& e : out.errors)
            if (!e.where.empty() && e.where.front() == '.')
                e.where.erase(0, 1);
    });
}

Parsed<Scenario> parseScenario(const std::string& text, const std::string& file)
{
    return parseWith<Scenario>(text, file, [](const json& doc, Parsed<Scenario>& out) {
        JsonReader r(doc, "", out.errors);
        if (!r.requireObject())
            return;
        if (!checkFormat(r, kScenarioFormat, true))
            return;
        r.rejectUnknownKeys({"format", "version", "name", "description", "model", "cluster", "profile", "workload", "constraints"});
        Scenario& s = out.value;
        s.name = r.string("name");
        s.description = r.stringOr("description", "");
        if (!r.has("model")) {
            r.fail("model", "missing required field");
        } else if (doc["model"].is_string()) {
            auto p = modelPreset(doc["model"].get<std::string>());
            if (!p.ok())
                r.fail("model", p.errors.front().reason);
            s.model = p.value;
        } else {
            s.model = readModel(r.child("model"));
        }
        if (!r.has("cluster")) {
            r.fail("cluster", "missing required field");
        } else if (doc["cluster"].is_string()) {
            auto p = clusterPreset(doc["cluster"].get<std::string>());
            if (!p.ok())
                r.fail("cluster", p.errors.front().reason);
            s.cluster = p.value;
        } else {
            s.cluster = readCluster(r.child("cluster"));
        }
        if (r.has("profile")) // the kernel profile (docs/profiles.md): its knobs replace the cluster's
            if (auto prof = readScenarioProfile(doc["profile"].dump(), "profile", out.errors))
                applyProfile(s.cluster, std::move(prof));
        if (!r.has("workload"))
            r.fail("workload", "missing required field");
        else
            s.workload = readWorkload(r.child("workload"));
        if (r.has("constraints"))
            s.constraints = io::readConstraints(r.child("constraints"));
        if (out.errors.empty()) {
            // A well-formed document's values: the validation's rules, then the constraints
            // the cluster cannot meet (e.g. "TP 3" on 16 GPUs, by JSON path).
            out.errors = validateScenario(s);
            if (out.errors.empty())
                out.errors = checkConstraintValues(s);
            for (FieldError& e : out.errors)
                e.invalidValue = true;
        }
    });
}

Parsed<Scenario> loadScenarioFile(const std::string& path)
{
    return io::loadWith<Scenario>(path, parseScenario);
}

Parsed<std::vector<ScenarioFile>> loadScenarioDirectory(const std::string& dir)
{
    namespace fs = std::filesystem;
    Parsed<std::vector<ScenarioFile>> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        out.errors.push_back({dir, "", fs::exists(dir, ec) ? "not a directory (a directory of scenario files is expected)"
                                                           : "no such directory"});
        return out;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".json")
            files.push_back(e.path());
    if (ec) {
        out.errors.push_back({dir, "", "cannot read the directory: " + ec.message()});
        return out;
    }
    if (files.empty()) {
        out.errors.push_back({dir, "", "no .json scenario files"});
        return out;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        Parsed<Scenario> s = loadScenarioFile(f.string());
        if (!s.ok()) {
            out.errors = std::move(s.errors);
            out.value.clear();
            return out;
        }
        out.value.push_back({f.string(), std::move(s.value)});
    }
    return out;
}

std::string modelToJson(const ModelSpec& m)
{
    ojson j;
    j["format"] = kModelFormat;
    j["version"] = kFormatVersion;
    j.update(modelJson(m));
    return j.dump(2) + "\n";
}

std::string clusterToJson(const ClusterSpec& c)
{
    ojson j;
    j["format"] = kClusterFormat;
    j["version"] = kFormatVersion;
    j.update(clusterJson(c));
    // A shipped profile by name. In a scenario the scenario's own "profile" carries it (edited
    // knobs and other profiles included), so only the cluster file writes it here.
    if (c.profile && isShippedProfile(*c.profile))
        j["profile"] = c.profile->name;
    return j.dump(2) + "\n";
}

namespace io {
ojson scenarioJson(const Scenario& s)
{
    ojson j;
    j["format"] = kScenarioFormat;
    j["version"] = kFormatVersion;
    j["name"] = s.name;
    if (!s.description.empty())
        j["description"] = s.description;
    j["model"] = modelJson(s.model);
    j["cluster"] = clusterJson(s.cluster);
    if (const std::string prof = scenarioProfileJson(s.cluster); !prof.empty())
        j["profile"] = ojson::parse(prof);
    j["workload"] = {{"prompt_tokens", s.workload.promptTokens},
                     {"output_tokens", s.workload.outputTokens},
                     {"ttft_slo_ms", s.workload.ttftSloMs},
                     {"tpot_slo_ms", s.workload.tpotSloMs},
                     {"serving", servingModeName(s.workload.serving)},
                     {"max_num_tokens", s.workload.maxNumTokens}};
    if (kvLinkInEffect(s.workload.serving) || s.workload.kvTransfer != KvLink::InterNode)
        j["workload"]["kv_transfer"] = kvLinkName(s.workload.kvTransfer);
    if (s.workload.engine != CollectiveEngine::Nccl)
        j["workload"]["engine"] = collectiveEngineName(s.workload.engine);
    if (s.workload.kvCacheMemoryFraction != 1.0)
        j["workload"]["kv_cache_memory_fraction"] = s.workload.kvCacheMemoryFraction;
    if (s.workload.runnable)
        j["workload"]["runnable"] = true;
    if (!s.workload.load.steady())
        j["workload"]["load"] = io::loadJson(s.workload.load);
    if (s.workload.speculative.method != SpeculativeMethod::None)
        j["workload"]["speculative"] = io::speculativeJson(s.workload.speculative);
    if (!s.constraints.empty())
        j["constraints"] = io::constraintsJson(s.constraints);
    return j;
}

} // namespace io

namespace {
// "a.b.c" -> value text, for every leaf; names and descriptions left out.
void flatten(const ojson& j, const std::string& path, std::vector<std::pair<std::string, std::string>>& out)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "name" || it.key() == "description" || it.key() == "format" || it.key() == "version")
                continue;
            flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
        }
        return;
    }
    out.push_back({path, j.dump()});
}
} // namespace

std::string scenarioToJson(const Scenario& s)
{
    return scenarioJson(s).dump(2) + "\n";
}

std::vector<ScenarioDifference> scenarioFieldDifferences(const Scenario& a, const Scenario& b)
{
    std::vector<std::pair<std::string, std::string>> fa, fb;
    flatten(scenarioJson(a), "", fa);
    flatten(scenarioJson(b), "", fb);
    std::vector<ScenarioDifference> out;
    for (const auto& [path, va] : fa) {
        std::string vb = "(absent)";
        for (const auto& [p2, v2] : fb)
            if (p2 == path)
                vb = v2;
        if (va != vb)
            out.push_back({path, va, vb});
    }
    for (const auto& [path, vb] : fb) {
        bool seen = false;
        for (const auto& [p2, v2] : fa)
            seen = seen || p2 == path;
        if (!seen)
            out.push_back({path, "(absent)", vb});
    }
    return out;
}

std::vector<std::string> scenarioDifferences(const Scenario& a, const Scenario& b)
{
    std::vector<std::string> out;
    for (const ScenarioDifference& d : scenarioFieldDifferences(a, b))
        out.push_back(d.text());
    return out;
}

Status saveScenarioFile(const std::string& path, const Scenario& s)
{
    return writeFileAtomically(path, scenarioToJson(s));
}

} // namespace shardlab
