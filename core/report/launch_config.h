// Launch configurations for serving engines (docs/launch.md): a plan's degrees,
// batch, memory and per-operator choices as the command line of vLLM or SGLang, or the
// trtllm-serve command plus its --extra_llm_api_options YAML for TensorRT-LLM, each for
// one named engine version whose flags were checked against its documentation and argument
// parser. What an engine cannot express is a warning in the result, never dropped.
//
// The mapping lives here, in the core; the CLI (shardlab-cli export) and the window
// (File > Export launch config) only call it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/engine_caps.h"
#include "model/error.h"
#include "model/plan.h"
#include "model/specs.h"
#include "report/launch_memory.h"
#include "sim/deployment.h"
#include "sim/disaggregated.h"

namespace shardlab {

// Engine, EngineInfo, launchEngines, engineInfo, engineFromName, knownEngines: model/engine_caps.h

// Scheduler token budget per step when the scenario names none: large enough for a whole
// 8k prompt chunk, the engines' usual recommendation for throughput serving.
constexpr int kDefaultMaxNumTokens = 8192;

struct LaunchOptions {
    Engine engine = Engine::Vllm;
    // The checkpoint: a HuggingFace id or a path. Empty: the id ShardLab knows for the
    // model's name (presets), else the model's name with a warning.
    std::string model;
    // How the checkpoint stores its weights. Empty: as known for the preset's checkpoint,
    // else as the plan assumes. BF16 with an FP8 plan means "quantize on load".
    std::optional<Precision> checkpoint;
    int maxNumTokens = 0;      // per-step token budget; 0: the scenario's workload.max_num_tokens
    // The engine's memory fraction; 0: derived from the plan's memory breakdown
    // (launchMemory, docs/launch.md "Memory settings"). Either way it must hold the plan's batch.
    double memoryFraction = 0;
    // Files written beside the script are named "<companionPrefix>.<name>" so that scripts
    // exported into one directory never share (or overwrite) one; empty: "<name>" alone.
    // writeLaunchConfig requires companionPrefixFor(its path).
    std::string companionPrefix;
    // A deployment that breaks the scenario's limits (memory, TTFT, TPOT, token budget) is refused
    // by exportLaunchConfig(Scenario, Deployment, ...): a launch config starts a real
    // deployment. true exports it as planned, with the violations as warnings.
    bool allowInvalid = false;
    // The front's name for allowInvalid ("--allow-invalid"), empty where it offers none: a
    // refusal of an invalid deployment then says that it would export it as planned.
    std::string allowInvalidName;
};

// The companion prefix of a script path: its file name without a trailing ".sh"
// ("run/launch.sh" -> "launch").
std::string companionPrefixFor(const std::string& scriptPath);

// `model` as the script must name it: a checkpoint path relative to the working directory
// ("./ckpt", "../m", or any relative name that exists here) made absolute, since the script
// runs from its own directory (it reads its options file there); a HuggingFace id
// ("org/name", not on disk) and an absolute path as they are.
std::string scriptModelPath(const std::string& model);
// A companion file's name under the options' prefix.
std::string companionName(const LaunchOptions& o, const std::string& name);

struct LaunchFile {
    std::string name;     // written beside the script: "extra_llm_api_options.yaml"
    std::string contents;
};

// One group of identical engine processes started by one command. A plan is one pool
// ("serve"); a disaggregated plan gives a "prefill" and a "decode" pool, each from the same
// per-engine emitter plus its role's flags, and a "router" (0 GPUs) where the engine ships
// one (docs/launch.md, "Disaggregated plans").
struct LaunchPool {
    std::string role;
    long long gpus = 0;      // one engine instance's GPUs: what the command starts
    long long instances = 1; // engine instances of the pool, each started by the command
    std::string command;
    std::vector<LaunchFile> files;
    std::vector<std::string> environment; // variables the command reads, set per node (HEAD_IP, NODE_RANK, ...)
    std::optional<LaunchMemory> memory;   // an engine pool's memory fraction and what it holds (not a router)
    // Nodes one server that the command starts spans (1: a node or less of one). A pool of
    // several nodes is groups of this many, one server each; a multi-node disaggregated
    // script runs a command that reads NODE_RANK on every node of each group (NODE_RANK
    // counted from the group's first node, HEAD_IP that node), one that does not on each
    // group's first node only, the others printing `otherNodes` (docs/launch.md,
    // "Disaggregated plans").
    long long serverNodes = 1;
    std::string otherNodes; // what a server's other nodes are for, when its command reads no NODE_RANK
};

struct LaunchConfig {
    Engine engine = Engine::Vllm;
    std::string engineName;
    std::string engineVersion;
    std::string model;               // the checkpoint the commands load
    std::string command;             // every pool's command, as shell text (placed per node)
    std::vector<LaunchFile> files;   // every pool's files
    std::vector<std::string> environment; // variables the script needs from whoever starts it
    std::string companionPrefix;          // LaunchOptions::companionPrefix it was exported with
    std::vector<std::string> warnings;
    std::vector<LaunchPool> pools;
};

// The plan must fit the scenario's structure (tiling, divisibility): otherwise the error
// names the plan field. A plan that breaks the SLOs is exported with a warning; one whose
// batch the engine's memory fraction cannot hold is refused (launchMemory).
Result<LaunchConfig> exportLaunchConfig(const Scenario& s, const Plan& p, const LaunchOptions& o);

// A disaggregated plan (sim/disaggregated.h): each pool exported on its pool scenario
// (poolScenario) by the same emitter as a one-pool plan, plus the engine's disaggregation
// flags for its role; the prefill pool on the first GPUs (nodes), the decode pool on the
// rest; the engine's router joining them where it ships one (SGLang, TensorRT-LLM), a
// warning where it does not (vLLM). Pools that do not fit the scenario are an error naming
// "prefill"/"decode" (and the plan field: "prefill.tensor_parallel"); a pool's warnings
// are prefixed "prefill: " / "decode: ".
Result<LaunchConfig> exportDisaggregatedLaunchConfig(const Scenario& s, const DisaggregatedPlan& p,
                                                     const LaunchOptions& o);

// Either of the above by the deployment's shape; a shape that does not suit the scenario
// (deploymentShapeError) is an error naming "plan".
Result<LaunchConfig> exportLaunchConfig(const Scenario& s, const Deployment& d, const LaunchOptions& o);

// {"engine", "engine_version", "scenario", "model", "command", "files": {name: contents},
//  "warnings": [...], "pools": [{"role", "gpus", "command", "files": [names], "memory"}]}; an
// engine pool's "memory" is {"flag", "user_given", "needed_fraction", "written_fraction",
// "largest_fraction", "kv_needed_gb", "kv_room_gb", "weights_gb", "activations_gb",
// "reserve_gb", "capacity_gb"} (docs/launch.md, "Memory settings").
std::string launchConfigToJson(const LaunchConfig& c, const std::string& scenarioName);

// The lines a launch script starts with before its command: `set -e`, a stop naming each
// variable the commands read (HEAD_IP, NODE_RANK, IB_DEVICE, ...) that is unset, and a stop
// when NODE_RANK is not a whole number. Every script ShardLab prints or writes has them.
std::string launchGuards(const LaunchConfig& c);

// A POSIX shell script: the warnings as comments, then launchGuards and the command, run
// from the script's directory so the files written beside it are found.
std::string launchScript(const LaunchConfig& c);

// Writes each file beside `path`, then launchScript(c) to `path`, together
// (writeFilesTogether: all or none). c must be exported with companionPrefixFor(path). The
// error names the file and says what became of the others.
Status writeLaunchConfig(const LaunchConfig& c, const std::string& path);
// Every file writeLaunchConfig(c, path) writes: the options files beside the script, then
// the script.
std::vector<std::string> launchConfigPaths(const LaunchConfig& c, const std::string& path);

} // namespace shardlab
