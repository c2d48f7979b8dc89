// Launch configurations (core/report/launch_config.h): the engines, a plan's layout in engine
// terms, the one-pool export, and the JSON, script and files it is written as. The
// per-engine emitters are in launch_engines.cpp, disaggregated plans in
// launch_disaggregated.cpp.
#include "report/launch_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "model/plan_checks.h"
#include "model/printf_text.h"
#include "report/launch_engines.h"
#include "report/result_json.h"

namespace shardlab {

namespace {

using ojson = nlohmann::ordered_json;

// Checkpoints of the shipped model presets (by the model's name) and how they store their
// weights: DeepSeek-V3 ships FP8 (block-wise), the others BF16. MoE-1.6T is synthetic.
struct KnownCheckpoint {
    const char* modelName;
    const char* id;
    Precision weights;
};
const KnownCheckpoint kCheckpoints[] = {
    {"DeepSeek-V3", "deepseek-ai/DeepSeek-V3", Precision::FP8},
    {"Llama-3-70B", "meta-llama/Meta-Llama-3-70B-Instruct", Precision::BF16},
    {"Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct", Precision::BF16},
    {"Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct", Precision::BF16},
    {"Mixtral-8x22B", "mistralai/Mixtral-8x22B-Instruct-v0.1", Precision::BF16},
    {"Mixtral-8x7B", "mistralai/Mixtral-8x7B-Instruct-v0.1", Precision::BF16},
    {"Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B", Precision::BF16},
    {"Qwen3-Next-80B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct", Precision::BF16},
    // Their routed experts are 4-bit in the checkpoint (MXFP4, INT4): engines read it from
    // its quantization_config, no flag.
    {"gpt-oss-120b", "openai/gpt-oss-120b", Precision::BF16},
    {"Kimi-K2-Thinking", "moonshotai/Kimi-K2-Thinking", Precision::BF16},
};

double finite(double v) { return std::isfinite(v) ? v : 0.0; }

// One pool's memory setting with the terms it was derived from, so that a reader can redo
// the engine's arithmetic (docs/launch.md, "Memory settings").
ojson memoryJson(const LaunchMemory& m)
{
    return {{"flag", memoryFractionFlag(m.engine)},
            {"user_given", m.userGiven},
            {"needed_fraction", finite(m.neededFraction)},
            {"written_fraction", m.writtenFraction},
            {"largest_fraction", finite(m.largestFraction)},
            {"kv_needed_gb", finite(m.kvNeededGb)},
            {"kv_room_gb", finite(m.kvRoomGb)},
            {"weights_gb", finite(m.terms.weightsGb)},
            {"activations_gb", finite(m.terms.activationGb)},
            {"sampler_warmup_gb", finite(m.terms.samplerWarmupGb)},
            {"reserve_gb", finite(m.terms.reserveGb)},
            {"capacity_gb", finite(m.terms.capacityGb)}};
}

} // namespace

namespace launch {

// --- layout ------------------------------------------------------------------------------

namespace {

// Every sequence in flight decodes one token per step: a per-step token budget below the
// sequences one engine rank schedules is refused by the engines (vLLM checks
// max_num_batched_tokens >= max_num_seqs) and could never run the plan's batch. Compared
// per rank as the engine reads its flags (schedulerLimits: SGLang divides both totals by its
// DP-attention ranks). A budget the user gave is refused; the scenario's is raised, with a
// warning. Both are the replica's budget: `split` ranks share it (rankTokenBudget).
std::optional<FieldError> fitTokenBudget(const LaunchOptions& o, EngineLayout& L, std::vector<std::string>& w)
{
    const int replicaBudget = L.s->workload.maxNumTokens; // --max-num-tokens when given (exportScenario)
    const SchedulerLimits limits = schedulerLimits(o.engine, L);
    const long long seqs = limits.sequencesPerRank();
    if (limits.tokensPerRank() >= seqs)
        return std::nullopt;
    const int split = L.tokenSplit();
    const std::string flags = std::string(engineInfo(o.engine).label) + "'s " + limits.sequencesFlag + " "
        + num(limits.sequences) + " against " + limits.tokensFlag + " " + num(limits.tokens)
        + (limits.ranks > 1 ? ", both over " + num(limits.ranks) + " DP-attention ranks" : "");
    const std::string perRank = split > 1 ? " (" + num(L.tokenBudget) + " per rank: the replica's " + num(split)
            + " token-split attention ranks share it)" : "";
    if (o.maxNumTokens > 0)
        return FieldError{{}, "--max-num-tokens", "is " + num(replicaBudget) + perRank + ", below the " + num(seqs)
                              + " sequences one engine replica runs at once (" + flags
                              + "): each needs a token per step"};
    w.push_back("max-num-tokens: raised from workload.max_num_tokens " + num(replicaBudget) + perRank + " to "
                + num(seqs * split) + (split > 1 ? " (" + num(seqs) + " per rank)" : "")
                + ", the sequences one engine replica runs at once (each decodes a token per step)");
    L.tokenBudget = static_cast<int>(seqs);
    return std::nullopt;
}

// Each attention rank's limit is a whole number of sequences: when the plan's sequences do
// not divide over the ranks, rounding the limit up lets a fully loaded engine run more than
// the plan priced, rounding it down fewer. Up is kept when the model prices the plan within
// the scenario's limits at that batch (the warning gives its TPOT); otherwise the limit is
// rounded down, so that no load takes the deployment past a limit, and the warning gives
// what the engine then serves.
void fitRankLimit(const Scenario& s, const Plan& p, EngineLayout& L, std::vector<std::string>& w)
{
    const long long planned = static_cast<long long>(p.batch) * L.dp;
    const long long admitted = static_cast<long long>(L.seqsPerReplica) * L.attnDp;
    if (admitted <= planned)
        return;
    const Simulator sim(s);
    auto at = [&](long long sequences) {
        Plan q = p;
        q.batch = static_cast<int>((sequences + L.dp - 1) / L.dp);
        return sim.evaluate(q);
    };
    const SimResult up = at(admitted);
    const std::string limits = "; fully loaded, the model prices its TPOT at " + printfText("%.2f", up.tpotMs)
        + " ms (limit " + printfText("%g", s.workload.tpotSloMs) + " ms) against the plan's "
        + printfText("%.2f", L.sim.tpotMs) + " ms";
    const long long down = planned / L.attnDp;
    if (up.valid || !L.sim.valid || down < 1) {
        w.push_back("batch: the engine's limit of " + num(L.seqsPerReplica) + " sequences on each of its "
                    + num(L.attnDp) + " attention ranks admits " + num(admitted) + " where the plan has "
                    + num(planned) + limits);
        return;
    }
    L.seqsPerReplica = static_cast<int>(down);
    const SimResult fewer = at(down * L.attnDp);
    w.push_back("batch: " + num(down) + " sequences on each of the engine's " + num(L.attnDp)
                + " attention ranks admit " + num(down * L.attnDp) + " of the plan's " + num(planned)
                + ", since one more each (" + num(admitted) + ") would break a limit" + limits
                + "; at " + num(down * L.attnDp) + " the model gives " + printfText("%.1f", fewer.tokensPerSPerGpu)
                + " output tokens/s per GPU against the plan's " + printfText("%.1f", L.sim.tokensPerSPerGpu));
}

} // namespace

Result<Scenario> exportScenario(const Scenario& s, const LaunchOptions& o, std::vector<std::string>& w)
{
    if (o.maxNumTokens < 0 || o.maxNumTokens > (1 << 24))
        return FieldError{{}, "--max-num-tokens", "must be between 1 and 16777216 (got " + num(o.maxNumTokens) + ")"};
    Scenario priced = s;
    if (o.maxNumTokens > 0 && o.maxNumTokens != s.workload.maxNumTokens) {
        priced.workload.maxNumTokens = o.maxNumTokens;
        w.push_back("max-num-tokens: the plan is checked and priced at " + num(o.maxNumTokens)
                    + " tokens per replica step, the budget the engine is given, not at the workload.max_num_tokens "
                    + num(s.workload.maxNumTokens) + " of scenario '" + s.name
                    + "' (evaluate and search figures are at that)");
    }
    // The collectives, kernel floor and per-step overhead that priced the plan are
    // workload.engine's; an export for another engine runs with that engine's
    // (docs/simulator.md §2, §8).
    if (engineOfCollectives(s.workload.engine) != o.engine)
        w.push_back("workload.engine: the plan is priced with " + std::string(collectiveEngineName(s.workload.engine))
                    + "'s collectives, kernel floor and step overhead, not " + engineInfo(o.engine).label
                    + "'s; search with --engine " + engineInfo(o.engine).name + ", or evaluate with the scenario's "
                    + "workload.engine set to \"" + engineInfo(o.engine).name + "\", for the figures it runs at");
    return priced;
}

std::string instancesWarning(const EngineLayout& L, int planDataParallel)
{
    return "instances " + num(L.instances) + ": this configuration is one engine instance of " + num(L.gpus)
        + " GPUs (data parallel " + num(L.dp) + " of the plan's " + num(planDataParallel) + "); start "
        + num(L.instances) + " of them on disjoint GPUs and spread requests over them with a load-balancing router";
}

Result<EngineLayout> makeLayout(const Scenario& s, const Plan& p, const LaunchOptions& o, std::vector<std::string>& w)
{
    const FieldErrors structure = validatePlan(p, s);
    if (!structure.empty()) {
        FieldError e = structure.front();
        e.reason = "the plan does not fit scenario '" + s.name + "': " + e.reason;
        return e;
    }
    // Drafting is written as the engines' MTP for the DeepSeek-V3 family, whose checkpoints
    // carry the module; another model's drafts would have nothing to run them.
    if (s.workload.speculative.on() && !deepSeekV3Family(s.model))
        return FieldError{{}, "workload.speculative",
                          "the plan is priced with MTP drafting, which ShardLab exports for the DeepSeek-V3 family "
                          "(its checkpoints carry the MTP module the engines load); model '" + s.model.name
                              + "' is not of that family: remove workload.speculative and search again to export it"};
    // Export never changes the plan: one the engine does not run as planned is refused,
    // each rule it breaks named (model/engine_caps.h).
    if (const FieldErrors broken = engineViolations(o.engine, p, s); !broken.empty()) {
        std::string why;
        for (const FieldError& b : broken)
            why += (why.empty() ? "" : "; ") + b.where + ": " + b.reason;
        return FieldError{{}, "plan", std::string(engineInfo(o.engine).label) + " " + engineInfo(o.engine).version
                                          + " does not run this plan as planned (" + why + ")"};
    }
    if (!(o.memoryFraction >= 0) || o.memoryFraction > 1)
        return FieldError{{}, "--memory-fraction", "must be in (0, 1] (got " + std::to_string(o.memoryFraction) + ")"};

    EngineLayout L;
    L.s = &s;
    L.plan = canonicalPlan(p);
    L.moe = s.model.isMoe();
    L.tp = p.tensorParallel;
    // Several engine instances: the configuration is one instance's (its share of the
    // replicas and GPUs); the user starts `instances` of them behind a router.
    const int instances = L.moe ? std::max(1, p.instances) : 1;
    L.dp = p.dataParallel / instances;
    L.pp = p.pipelineParallel;
    L.stage = L.tp * L.dp;
    L.ep = L.moe ? p.expertParallel : 1;
    L.etp = L.moe ? expertTensorParallel(p) : 1;
    const int attention = p.option(OpId::Attention);
    const std::string attn = opOption(OpId::Attention, attention).name;
    L.attnTp = attn == "head" ? L.tp : 1;
    L.attnDp = L.stage / L.attnTp;
    L.seqsPerReplica = static_cast<int>((static_cast<long long>(p.batch) * L.dp + L.attnDp - 1) / L.attnDp);
    L.gpusPerNode = s.cluster.gpusPerNode;
    L.serverGpus = static_cast<int>(engineServerGpus(s.model, p));
    L.gpus = p.gpus() / instances;
    L.instances = instances;
    if (instances > 1)
        w.push_back(instancesWarning(L, p.dataParallel));
    L.maxModelLen = s.workload.maxContext();
    L.sim = Simulator(s).evaluate(p);
    if (!L.sim.valid) {
        std::string why;
        for (const std::string& r : violationReasons(s, p, L.sim))
            why += (why.empty() ? "" : "; ") + r;
        w.push_back("the plan is not valid for scenario '" + s.name + "' (" + why
                    + "): the configuration is exported as planned");
    }
    fitRankLimit(s, p, L, w);
    // The budget holds the sequences a rank runs, as the limit above leaves them.
    L.tokenBudget = rankTokenBudget(L);
    if (std::optional<FieldError> e = fitTokenBudget(o, L, w))
        return *e;
    // The engine's memory fraction must leave the KV cache room for the plan's batch, beside
    // what vLLM's start-up sampler run takes at the flags written (sim/engine_memory.h).
    MemoryBreakdown terms = L.sim.memory;
    if (o.engine == Engine::Vllm) {
        const SchedulerLimits limits = schedulerLimits(Engine::Vllm, L);
        terms.samplerWarmupGb = vllmSamplerWarmupGb(s.model.vocabSize, limits.sequences, limits.tokens);
    }
    Result<LaunchMemory> memory =
        launchMemory(o.engine, terms, o.memoryFraction,
                     num(L.seqsPerReplica) + " sequences per engine replica, up to " + num(L.maxModelLen) + " tokens each", w);
    if (!memory.ok())
        return memory.error();
    L.memory = memory.value();
    return L;
}

// --- checkpoint, precision ------------------------------------------------------------------

Result<std::string> checkpointFor(const Scenario& s, const LaunchOptions& o, EngineLayout& L,
                                  std::vector<std::string>& w)
{
    const ModelSpec& m = s.model;
    const KnownCheckpoint* known = nullptr;
    for (const KnownCheckpoint& k : kCheckpoints)
        if (m.name == k.modelName)
            known = &k;
    std::string model = o.model;
    if (model.empty()) {
        if (known)
            model = known->id;
        else if (m.name.find('/') != std::string::npos)
            model = m.name; // an imported config's _name_or_path: a HuggingFace id or a path
        else {
            model = m.name.empty() ? std::string("MODEL") : m.name;
            w.push_back("model: no checkpoint is known for '" + displayText(m.name)
                        + "' (ShardLab's presets name theirs); pass --model with its HuggingFace id or path");
        }
    }
    // The id is one argument of the engine's command line, passed as written.
    const std::string field = o.model.empty() ? "model.name" : "--model";
    if (displayText(model) != model)
        return FieldError{{}, field, "'" + displayText(model) + "' holds control or bidirectional formatting "
                                         "characters, which a launch script would not show or pass as written; pass "
                                         "--model with the checkpoint's HuggingFace id or path"};
    if (model.front() == '-')
        return FieldError{{}, field, "'" + model + "' begins with '-', which the engine would read as an option, not "
                                         "a checkpoint; pass --model with its HuggingFace id, or ./" + model
                                         + " for a local folder"};
    const Precision stored = o.checkpoint ? *o.checkpoint : known && o.model.empty() ? known->weights : m.weightPrecision;
    L.checkpointFp8 = stored == Precision::FP8;
    L.quantizeOnLoad = m.weightPrecision == Precision::FP8 && stored == Precision::BF16;
    if (m.weightPrecision == Precision::BF16 && stored == Precision::FP8)
        w.push_back("weights: the plan assumes bf16 but the checkpoint stores fp8; engines serve it in fp8 (less "
                    "memory and time than planned)");
    const Precision experts = m.routedExpertPrecision();
    if (isFourBit(m.weightPrecision) || (m.isMoe() && isFourBit(experts)))
        w.push_back(std::string("weights: ") + precisionName(isFourBit(m.weightPrecision) ? m.weightPrecision : experts)
                    + " assumed stored in the checkpoint (engines read 4-bit formats from its quantization config and "
                      "do not quantize to them on load)");
    if (m.weightPrecision == Precision::FP8 && !o.checkpoint && !(known && o.model.empty()))
        w.push_back("weights: fp8 assumed stored in the checkpoint (engines read its quantization config); for a bf16 "
                    "checkpoint pass --checkpoint bf16 to quantize on load");
    return model;
}

Result<LaunchConfig> exportPlan(const Scenario& s, const Plan& p, const LaunchOptions& o,
                                std::vector<std::string> warnings)
{
    LaunchConfig c;
    c.engine = o.engine;
    c.companionPrefix = o.companionPrefix;
    c.engineName = engineInfo(o.engine).name;
    c.engineVersion = engineInfo(o.engine).version;
    c.warnings = std::move(warnings);
    Result<EngineLayout> layout = makeLayout(s, p, o, c.warnings);
    if (!layout.ok())
        return layout.error();
    EngineLayout& L = layout.value();
    Result<std::string> model = checkpointFor(s, o, L, c.warnings);
    if (!model.ok())
        return model.error();
    c.model = model.value();
    LaunchPool pool = enginePool(o.engine, L, c.model, o, c.warnings);
    c.command = pool.command;
    c.files = pool.files;
    c.environment = pool.environment;
    c.pools.push_back(std::move(pool));
    return c;
}

} // namespace launch

Result<LaunchConfig> exportLaunchConfig(const Scenario& given, const Plan& p, const LaunchOptions& o)
{
    std::vector<std::string> warnings;
    const Result<Scenario> priced = launch::exportScenario(given, o, warnings);
    if (!priced.ok())
        return priced.error();
    return launch::exportPlan(priced.value(), p, o, std::move(warnings));
}

std::string launchConfigToJson(const LaunchConfig& c, const std::string& scenarioName)
{
    ojson j;
    j["engine"] = c.engineName;
    j["engine_version"] = c.engineVersion;
    j["scenario"] = displayText(scenarioName);
    j["model"] = displayText(c.model);
    j["command"] = c.command; // UTF-8: built from validated names (--model is checked by its caller)
    ojson files = ojson::object();
    for (const LaunchFile& f : c.files)
        files[f.name] = f.contents;
    j["files"] = files;
    j["warnings"] = ojson::array();
    for (const std::string& w : c.warnings)
        j["warnings"].push_back(displayText(w));
    j["pools"] = ojson::array();
    for (const LaunchPool& p : c.pools) {
        ojson names = ojson::array();
        for (const LaunchFile& f : p.files)
            names.push_back(f.name);
        ojson pool = {{"role", p.role}, {"gpus", p.gpus}, {"instances", p.instances}, {"command", p.command},
                      {"files", names}};
        if (p.memory)
            pool["memory"] = memoryJson(*p.memory);
        j["pools"].push_back(pool);
    }
    return j.dump(2) + "\n";
}

std::string launchGuards(const LaunchConfig& c)
{
    std::string out = "set -e\n";
    // Multi-node commands read these (LaunchConfig::environment); say so at once rather than
    // start half a cluster.
    struct Need {
        const char* name;
        const char* why;
    };
    const Need needs[] = {
        {"HEAD_IP", "set HEAD_IP to the address of node 0"},
        {"PREFILL_HEAD_IP", "set PREFILL_HEAD_IP to the address of node 0, the first node of the prefill pool"},
        {"DECODE_HEAD_IP", "set DECODE_HEAD_IP to the address of the first node of the decode pool"},
        {"PREFILL_HEAD_IPS", "set PREFILL_HEAD_IPS to the addresses of the first node of each prefill server, "
                             "separated by spaces"},
        {"DECODE_HEAD_IPS", "set DECODE_HEAD_IPS to the addresses of the first node of each decode server, "
                            "separated by spaces"},
        {"NODE_RANK", "set NODE_RANK to the index of this node (0 on the head node)"},
        {"IB_DEVICE", "set IB_DEVICE to the RDMA devices of this node for the KV transfer, e.g. mlx5_0,mlx5_1"},
    };
    const auto needed = [&](const std::string& name) {
        return std::find(c.environment.begin(), c.environment.end(), name) != c.environment.end();
    };
    for (const Need& n : needs)
        if (needed(n.name))
            out += ": \"${" + std::string(n.name) + ":?" + n.why + "}\"\n";
    // NODE_RANK enters shell arithmetic, which would evaluate an expression held in it, and
    // read a leading 0 as octal (012 is 10; 08 is an error).
    if (needed("NODE_RANK"))
        out += "case $NODE_RANK in\n''|*[!0-9]*|0?*) echo \"NODE_RANK must be a whole number without leading zeros "
               "(0, 1, 2, ...)\" >&2; exit 1 ;;\nesac\n";
    return out;
}

std::string launchScript(const LaunchConfig& c)
{
    std::string out = "#!/bin/sh\n# " + std::string(engineInfo(c.engine).label) + " " + c.engineVersion
        + " launch configuration written by ShardLab (docs/launch.md).\n";
    if (!c.warnings.empty()) {
        out += "#\n# Warnings (what the engine cannot express, or what to do by hand):\n";
        for (const std::string& w : c.warnings)
            out += "#  - " + displayText(w) + "\n";
    }
    out += launchGuards(c);
    if (!c.files.empty())
        out += "cd \"$(dirname \"$0\")\"  # the options file is beside this script\n";
    return out + c.command;
}

std::string scriptModelPath(const std::string& model)
{
    namespace fs = std::filesystem;
    if (model.empty())
        return model;
    const fs::path p(model);
    std::error_code ec;
    const bool explicitlyRelative = model.rfind("./", 0) == 0 || model.rfind("../", 0) == 0 || model == "." || model == "..";
    if (!p.is_relative() || !(explicitlyRelative || fs::exists(p, ec)))
        return model;
    const fs::path full = fs::absolute(p, ec);
    if (ec)
        return model;
    std::string out = full.lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') // "." and "dir/..": the directory, not "dir/"
        out.pop_back();
    return out;
}

std::string companionPrefixFor(const std::string& scriptPath)
{
    const auto slash = scriptPath.find_last_of('/');
    std::string name = slash == std::string::npos ? scriptPath : scriptPath.substr(slash + 1);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".sh") == 0)
        name.resize(name.size() - 3);
    return name;
}

std::string companionName(const LaunchOptions& o, const std::string& name)
{
    return o.companionPrefix.empty() ? name : o.companionPrefix + "." + name;
}

Status writeLaunchConfig(const LaunchConfig& c, const std::string& path)
{
    if (!c.files.empty() && c.companionPrefix != companionPrefixFor(path))
        return Status::failure({path, {}, "the launch configuration names its files for script '"
                                              + displayText(c.companionPrefix) + "', not for this one"});
    const std::vector<std::string> paths = launchConfigPaths(c, path);
    std::vector<FileContents> files;
    for (size_t i = 0; i < c.files.size(); ++i)
        files.push_back({paths[i], c.files[i].contents});
    files.push_back({path, launchScript(c)});
    return writeFilesTogether(files);
}

std::vector<std::string> launchConfigPaths(const LaunchConfig& c, const std::string& path)
{
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    std::vector<std::string> paths;
    for (const LaunchFile& f : c.files)
        paths.push_back(dir + f.name);
    paths.push_back(path);
    return paths;
}

} // namespace shardlab
