// Internal to the launch-configuration export (core/io/launch_config.h): a plan in engine
// terms (EngineLayout) and the per-engine emitters that turn one layout into one pool's
// command and files. launch_config.cpp makes layouts and assembles one-pool configs;
// launch_disaggregated.cpp assembles a prefill and a decode pool from the same emitters.
// Not part of the core's public API.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/launch_config.h"
#include "sim/disaggregated.h"
#include "sim/simulator.h"

namespace shardlab::launch {

inline std::string num(long long v) { return std::to_string(v); }
std::string fraction(double f); // "0.92"

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
    int seqsPerReplica = 1; // sequences one attention replica holds: batch x dp / attnDp
    int gpusPerNode = 1;
    long long gpus = 1;
    int maxModelLen = 0;
    int tokenBudget = 0;
    SimResult sim;
    bool checkpointFp8 = false;
    bool quantizeOnLoad = false; // FP8 plan, BF16 checkpoint
    std::optional<PoolRoleInfo> role; // a disaggregated plan's pool: its role flags are added
};

struct Args {
    std::vector<std::pair<std::string, std::string>> items; // flag, value ("" for a switch)
    void add(const std::string& flag, const std::string& value = {}) { items.push_back({flag, value}); }
    void add(const std::string& flag, long long v) { items.push_back({flag, num(v)}); }
};

// A word for a POSIX shell: plain, "$EXPANDED" (ShardLab's own $NAME and $((...))), or
// 'single-quoted'.
std::string shellWord(const std::string& w);
// "program \\\n  --flag value ..." ending in a newline.
std::string render(const std::string& program, const Args& a);

// The plan's structure checked against the scenario (the error names the plan field), then
// its engine terms; warnings for what no engine expresses and for an invalid plan.
Result<EngineLayout> makeLayout(const Scenario& s, const Plan& p, const LaunchOptions& o,
                                std::vector<std::string>& w);
// The checkpoint the command loads (--model, or the preset's id) and how it stores weights.
std::string checkpointFor(const Scenario& s, const LaunchOptions& o, EngineLayout& L, std::vector<std::string>& w);
double memoryFraction(Engine e, const Scenario& s, const LaunchOptions& o);

// One pool each: role "serve", or the layout's role with that role's disaggregation flags
// appended to the same command.
LaunchPool vllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                    std::vector<std::string>& w);
LaunchPool sglangPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
LaunchPool trtllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
LaunchPool enginePool(Engine e, const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w);
// The API servers one pool's command starts (a router lists each): vLLM one (its DP
// engines share the head's API server), SGLang one per independent server, TensorRT-LLM
// one per trtllm-serve instance.
long long apiServers(Engine e, const EngineLayout& L);
// The port a role's API server listens on for an engine (the engines' own examples).
int rolePort(Engine e, PoolRole r);

} // namespace shardlab::launch
