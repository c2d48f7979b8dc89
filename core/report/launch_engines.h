// Internal to the launch-configuration export (core/report/launch_config.h): a plan in engine
// terms (EngineLayout) and the per-engine emitters that turn one layout into one pool's
// command and files. launch_config.cpp makes layouts and assembles one-pool configs;
// launch_disaggregated.cpp assembles a prefill and a decode pool from the same emitters.
// Not part of the core's public API.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/shell_word.h"
#include "report/launch_config.h"
#include "sim/disaggregated.h"
#include "sim/simulator.h"

namespace shardlab::launch {

inline std::string num(long long v) { return std::to_string(v); }

// A pool's part in a disaggregated deployment: its role and what the role adds to the
// engine's command (docs/launch.md, "Disaggregated plans").
struct PoolRoleInfo {
    PoolRole role = PoolRole::Prefill;
    int port = 0;            // the pool's API server port
    bool remote = false;     // the router reaches it from another node: listen on 0.0.0.0
    KvLink link = KvLink::InterNode;
    int maxPromptTokens = 0; // KV transfer buffer (TensorRT-LLM max_tokens_in_buffer)
};

// The plan in engine terms. ShardLab's stage (TP x DP ranks) is what the engines call the
// tensor-parallel world of an MoE model; the attention of one sequence is split over
// attnTp ranks (the TP group when attention is head-split, 1 when sequences are split over
// it: attention data parallelism), giving attnDp attention replicas per stage.
struct EngineLayout {
    const Scenario* s = nullptr;
    Plan plan;   // canonicalPlan: options that cannot matter reset to the recipe's
    bool moe = false;
    int tp = 1, dp = 1, pp = 1, ep = 1, etp = 1, stage = 1;
    int attnTp = 1, attnDp = 1;
    // Ranks of one replica that share its token budget: its TP ranks when attention is
    // token-split (each schedules its own sequences), else 1.
    int tokenSplit() const { return tp / attnTp; }
    int seqsPerReplica = 1; // sequences one attention replica holds: batch x dp / attnDp
    // One server's GPUs (engineServerGpus): an SGLang server of an MoE plan or a dense
    // replica, a trtllm-serve world.
    int serverGpus = 1;
    int gpusPerNode = 1;
    long long gpus = 1;  // one engine instance's
    int instances = 1;   // engine instances the plan is started as (MoE plans' instances)
    int maxModelLen = 0;
    int tokenBudget = 0; // per attention replica (one engine rank under attention DP): rankTokenBudget
    SimResult sim;
    LaunchMemory memory; // the engine's memory fraction for the plan's batch (launchMemory)
    bool checkpointFp8 = false;
    bool quantizeOnLoad = false; // FP8 plan, BF16 checkpoint
    std::optional<PoolRoleInfo> role; // a disaggregated plan's pool: its role flags are added
    // Environment the pool's command is started with (NAME, literal value), written as
    // assignments before the program: a one-node deployment pins each pool to its GPUs.
    std::vector<std::pair<std::string, std::string>> env;
};

// The variables a generated script reads from its environment: set per node by whoever
// starts it (docs/launch.md), never taken from a plan, a scenario or a name.
// PREFILL_HEAD_IPS / DECODE_HEAD_IPS: a disaggregated pool of several multi-node servers
// whose commands read HEAD_IP, the first node of each server, separated by spaces.
enum class ShellVar { HeadIp, PrefillHeadIp, DecodeHeadIp, NodeRank, IbDevice, PrefillHeadIps, DecodeHeadIps };
const char* shellVarName(ShellVar v); // "HEAD_IP"

// A value the shell expands when the script runs. Its only constructors build it from a
// ShellVar, integers and fixed text, so no user string can reach one; it is written in
// double quotes. Every other value is a literal (a std::string) and is written so that the
// shell passes it on byte for byte (shellWord).
class Expansion {
public:
    static Expansion var(ShellVar v);                   // "$HEAD_IP"
    static Expansion hostPort(ShellVar host, int port); // "$HEAD_IP:5000"
    static Expansion url(ShellVar host, int port);      // "http://$PREFILL_HEAD_IP:8100"
    static Expansion nodeRankTimes(long long n);        // "$((NODE_RANK * 8))"
    const std::string& text() const { return text_; }
    unsigned reads() const { return reads_; } // the ShellVars it reads (varBit)

private:
    Expansion(std::string text, unsigned reads) : text_(std::move(text)), reads_(reads) {}
    std::string text_;
    unsigned reads_ = 0;
};

inline unsigned varBit(ShellVar v) { return 1u << static_cast<unsigned>(v); }
// The names of the variables in a varBit set, in ShellVar order.
std::vector<std::string> varNames(unsigned reads);
unsigned varsNamed(const std::vector<std::string>& names); // the inverse of varNames

struct Arg {
    std::string flag;
    std::string value;    // "" for a switch
    bool expands = false; // value is an Expansion's text
};

struct Args {
    std::vector<Arg> items;
    unsigned reads = 0; // the ShellVars its expansions read (varBit)
    void add(const std::string& flag, const std::string& literal = {}) { items.push_back({flag, literal, false}); }
    void add(const std::string& flag, const char* literal) { add(flag, std::string(literal)); }
    void add(const std::string& flag, long long v) { items.push_back({flag, num(v), false}); }
    void add(const std::string& flag, const Expansion& e)
    {
        items.push_back({flag, e.text(), true});
        reads |= e.reads();
    }
};

using shardlab::shellWord; // a literal as one shell word (model/shell_word.h)
// An Expansion as one shell word: double-quoted, so it expands but never splits.
std::string shellWord(const Expansion& e);
// The layout's environment assignments, then the program: "NAME=value program".
std::string withEnv(const EngineLayout& L, const std::string& program);
// "program \\\n  --flag value ..." ending in a newline.
std::string render(const std::string& program, const Args& a);
// Stops a multi-node script on a node whose NODE_RANK is past its `nodes` nodes (the
// preamble has checked it is a whole number): it would start ranks that do not exist.
std::string nodeRankBelow(long long nodes);

// The plan's structure checked against the scenario (the error names the plan field), then
// its engine terms; warnings for what no engine expresses and for an invalid plan.
// The scenario a plan is exported and priced on: --max-num-tokens, when given, replaces
// workload.max_num_tokens, since the engine runs every step at the budget it is given and
// the plan's validity, memory and times depend on it; a warning says so when it differs.
// An out-of-range --max-num-tokens is an error naming the flag.
Result<Scenario> exportScenario(const Scenario& s, const LaunchOptions& o, std::vector<std::string>& w);

// makeLayout's warning for a plan of several engine instances: the configuration is one of
// them, the user starts the others (a disaggregated pool's script may start them itself).
std::string instancesWarning(const EngineLayout& L, int planDataParallel);
Result<EngineLayout> makeLayout(const Scenario& s, const Plan& p, const LaunchOptions& o,
                                std::vector<std::string>& w);

// A plan exported on the scenario exportScenario priced (one pool; both pools of a
// disaggregated plan), `warnings` first. The public exportLaunchConfig entries price the
// scenario once and call these.
Result<LaunchConfig> exportPlan(const Scenario& s, const Plan& p, const LaunchOptions& o,
                                std::vector<std::string> warnings);
Result<LaunchConfig> exportPools(const Scenario& s, const DisaggregatedPlan& p, const LaunchOptions& o,
                                 std::vector<std::string> warnings);
// The checkpoint the command loads (--model, or the preset's id, or the model's name) and
// how it stores weights. An id an engine would not read as a checkpoint is refused: one
// that begins with '-' (an option) or holds control characters.
Result<std::string> checkpointFor(const Scenario& s, const LaunchOptions& o, EngineLayout& L,
                                  std::vector<std::string>& w);

// What one pool's command tells the engine's scheduler, as written: its limit on sequences
// in flight and its token budget per step, each a total over `ranks` ranks that the engine
// divides it by. vLLM: --max-num-seqs and --max-num-batched-tokens per data-parallel engine.
// SGLang: --max-running-requests and --chunked-prefill-size; under --enable-dp-attention
// both are totals that server_args divides by --dp-size (each DP-attention rank schedules
// max_running_requests // dp_size requests and chunks of chunked_prefill_size // dp_size
// tokens), so both are written as the per-rank figure times the ranks. TensorRT-LLM:
// --max_batch_size and --max_num_tokens per rank (its attention-DP ranks schedule alone).
struct SchedulerLimits {
    long long sequences = 0;
    long long tokens = 0;
    int ranks = 1;
    const char* sequencesFlag = "";
    const char* tokensFlag = "";
    long long sequencesPerRank() const { return (sequences + ranks - 1) / ranks; }
    long long tokensPerRank() const { return tokens / ranks; }
};
SchedulerLimits schedulerLimits(Engine e, const EngineLayout& L);

// One attention replica's token budget per step from the replica's (the layout scenario's
// workload.max_num_tokens, which is --max-num-tokens when given). The simulator gives each of a replica's TP ranks 1/TP of the budget
// when attention is token-split (each rank schedules its own sequences and prompt pieces;
// docs/simulator.md, "Prompt chunks"), so the engine's per-rank flag gets that share; a
// head-split replica schedules the whole budget.
int rankTokenBudget(const EngineLayout& L);

// The name of the option the plan gives operator `id` ("all_to_all").
const char* optName(const Plan& p, OpId id);
// Whether the plan's dispatch is an all-to-all (the engines' DeepEP backends).
bool dispatchAllToAll(const EngineLayout& L);
// The draft tokens each decode step verifies, as the plan is priced (workload.speculative;
// makeLayout admits drafting for the DeepSeek-V3 family's MTP only); 0 without drafting and
// on a prefill pool, which does not decode.
int draftTokens(const EngineLayout& L);
// What a multi-node command's comment says HEAD_IP is.
inline constexpr const char* kHeadNote = "HEAD_IP: the address of node 0, where the API server runs";

// A dense model's SGLang servers: each replica is attention TP x PP GPUs; replicas that fit
// a node run `perServer` to a server (--dp-size), one server a node; a replica larger than a
// node is a server of its own over several nodes.
struct SglangDenseServers {
    int perServer = 1;
    long long servers = 1;
};
SglangDenseServers sglangDenseServers(const EngineLayout& L);

// One pool each (launch_vllm.cpp, launch_sglang.cpp, launch_trtllm.cpp): role "serve", or
// the layout's role with that role's disaggregation flags appended to the same command.
LaunchPool vllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                    std::vector<std::string>& w);
LaunchPool sglangPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
LaunchPool trtllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
LaunchPool enginePool(Engine e, const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
// The API servers a pool runs (a router lists each): vLLM one (its DP engines share the
// head's API server), SGLang one per independent server (each instance of an MoE plan one),
// TensorRT-LLM one per trtllm-serve instance.
long long apiServers(Engine e, const EngineLayout& L);
// The port a role's API server listens on for an engine (the engines' own examples).
int rolePort(Engine e, PoolRole r);

// TensorRT-LLM: the GPUs one trtllm-serve runs (its MPI world, tp_size x pp_size).
int trtllmWorld(const EngineLayout& L);
// The instances of a disaggregated pool that its script starts on each of the pool's nodes
// (on a one-node cluster: in the pool), each on its own GPUs and port: trtllm-serve
// instances smaller than a node that tile it; 1 for every other pool (its command starts
// the node's share itself, or spans nodes).
long long instancesPerNode(Engine e, const EngineLayout& L);
// The GPUs of instance `slot` of the `perNode` on a node, from GPU `first`, in the order of
// its ranks: the plan's rank layout on those GPUs (tensor rank innermost, then the
// instance, then the pipeline stage), so TP 1 x PP 2 instances four to a node run on "0,4",
// "1,5", "2,6" and "3,7".
std::string instanceGpus(const EngineLayout& L, long long slot, long long perNode, long long first);
// The port of instance `slot` on a node: the role's port + 2 per instance before it
// (TensorRT-LLM prefill 8001, 8003, ...; decode 8002, 8004, ...), so the two pools' ports
// never meet (odd and even) and stay above the router's 8000.
int instancePort(Engine e, PoolRole r, long long slot);

} // namespace shardlab::launch
