// Internal to the disaggregated export (core/report/launch_disaggregated.cpp, which places
// the pools, and launch_router.cpp, the router that joins them): one pool as exported and
// placed, and the rules both read to know a pool's servers and where they are. Not part of
// the core's public API.
#pragma once

#include <string>
#include <vector>

#include "report/launch_config.h"
#include "report/launch_engines.h"

namespace shardlab::launch {

constexpr int kRouterPort = 8000; // where clients reach a disaggregated deployment

// One pool of a disaggregated deployment: its layout, command and place on the cluster.
struct PoolOut {
    PoolRole role;
    Scenario scenario;
    EngineLayout layout;
    LaunchPool pool;
    long long servers = 1;   // API servers of the plan (apiServers)
    long long firstGpu = 0;  // on a one-node cluster: the pool's first GPU
    long long firstNode = 0; // on a multi-node cluster: the pool's first node
    long long nodes = 1;
    bool routed = false; // the engine's router lists each of the pool's servers (SGLang, TensorRT-LLM)
    // Instances the script starts on each of the pool's nodes (on one node: in the pool),
    // each its own server on its own GPUs and port (instancesPerNode), and, when several,
    // each one's command (the pool's command then starts them all in the background).
    long long perNode = 1;
    std::vector<std::string> instanceCommands;
    Engine engine = Engine::Vllm;
};

// The variable naming a pool's first node in a multi-node script (PREFILL_HEAD_IP).
ShellVar poolHeadVar(PoolRole r);
// The variable listing the first node of each of a pool's servers (PREFILL_HEAD_IPS).
ShellVar poolHeadsVar(PoolRole r);
bool reads(const LaunchPool& p, ShellVar v); // the pool's command reads v

// A multi-node pool as groups of nodes, one server each (LaunchPool::serverNodes).
struct ServerGroups {
    long long size = 1;  // nodes per server
    long long count = 1; // servers
};
ServerGroups serverGroups(const PoolOut& p);
// The first node of a pool's server `i`.
long long serverFirstNode(const PoolOut& p, long long i);
// The servers of a pool the router lists: each instance on each node of a listsHeads pool,
// else each instance on its one node (or its one multi-node server).
long long listedServers(const PoolOut& p);

// A multi-node pool of several servers whose addresses the script needs: its command reads
// HEAD_IP (each server's own first node), or a router lists each server (servers of a node
// too: SGLang's --dp-size per node, TensorRT-LLM instances). The addresses come from the
// pool's list variable (PREFILL_HEAD_IPS / DECODE_HEAD_IPS), one per server, in order, which
// every node checks first (address_of, in the script's preamble).
bool listsHeads(const PoolOut& p);

// A shell call of address_of that checks the pool's head list and sets ADDRESS to the entry
// of server `index` (shell text: a number or an arithmetic expansion).
std::string addressOf(const PoolOut& p, const std::string& index);

// The engine's own router joining both pools (a pool with an empty command where the engine
// ships none; a warning then says what to run instead). Its command runs on node 0.
LaunchPool routerFor(const LaunchOptions& o, const PoolOut& pre, const PoolOut& dec, bool multiNode,
                     std::vector<std::string>& w);

} // namespace shardlab::launch
