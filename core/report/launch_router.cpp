// The router of a disaggregated deployment (core/report/launch_pools.h, docs/launch.md
// "Disaggregated plans"): sglang-router or TensorRT-LLM's disaggregated server, listing
// every server of each pool the script starts, or for vLLM, which ships none, a warning.
#include <string>
#include <vector>

#include "report/launch_pools.h"

namespace shardlab::launch {

namespace {

// Where the router reaches a pool's (first) API server, as text for a warning.
std::string poolHost(const PoolOut& p, bool multiNode)
{
    return multiNode ? Expansion::var(poolHeadVar(p.role)).text() : std::string("127.0.0.1");
}

// Server `i` of a pool as the router on node 0 reaches it: shell lines to run first, and its
// host as text for inside double quotes (each of the instances a node runs has the same:
// PoolOut::perNode). One node: 127.0.0.1 (there SGLang runs a node's replicas as one
// --dp-size server). Several: the server's entry in the pool's head list, which address_of
// checks and sets ADDRESS to (listsHeads), else the pool's head variable (one server).
struct ServerHost {
    std::string lines;
    std::string host;
};

ServerHost serverHost(const PoolOut& p, long long i, bool multiNode)
{
    if (multiNode && listsHeads(p))
        return {addressOf(p, num(i)), "$ADDRESS"};
    return {{}, poolHost(p, multiNode)};
}

// What a multi-node router reads to reach the pools (varBit): each pool's head list or head.
unsigned routerReads(const PoolOut& pre, const PoolOut& dec)
{
    unsigned out = 0;
    for (const PoolOut* p : {&pre, &dec})
        out |= varBit(listsHeads(*p) ? poolHeadsVar(p->role) : poolHeadVar(p->role));
    return out;
}

// A warning for servers a pool runs beyond those the router lists (apiServers counts them;
// where trtllm-serve instances smaller than a node do not tile it, the script starts one per
// node, or on one node one per pool; SGLang starts one instance of an MoE plan per server's
// nodes): `add` says what to do about them.
void warnUnlisted(const PoolOut& p, const std::string& servers, const std::string& add, std::vector<std::string>& w)
{
    const long long listed = listedServers(p);
    if (p.servers > listed)
        w.push_back(std::string("router: the ") + poolRoleName(p.role) + " pool runs " + num(p.servers) + " " + servers
                    + " (see its placement warnings); the router lists "
                    + (listed == 1 ? std::string("its first") : "the " + num(listed) + " the script starts") + ": " + add);
}

// The router's flag naming a pool's API server: the pool's head variable on many nodes.
void addPoolUrl(Args& a, const std::string& flag, const PoolOut& p, int port, bool multiNode)
{
    if (multiNode)
        a.add(flag, Expansion::url(poolHeadVar(p.role), port));
    else
        a.add(flag, "http://127.0.0.1:" + num(port));
}

// Shell lines that append `flag http://HEAD:port` for each server of a pool that listsHeads
// to the positional parameters ("$@", which the router's command then passes on); the
// first such line of a script starts the list afresh (`fresh`).
std::string poolUrlList(const PoolOut& p, const std::string& flag, int port, bool& fresh)
{
    std::string out;
    for (long long i = 0; i < serverGroups(p).count; ++i) {
        const ServerHost h = serverHost(p, i, true);
        out += h.lines + "set -- " + (fresh ? "" : "\"$@\" ") + flag + " \"http://" + h.host + ":" + num(port) + "\"\n";
        fresh = false;
    }
    return out;
}

// sglang-router in front of both pools, one --prefill / --decode per server. A pool of
// several servers (listsHeads) is listed server by server from its checked head list,
// passed to the router as "$@" (never split or evaluated); a pool of one server by its
// head variable, or 127.0.0.1 on one node.
LaunchPool sglangRouter(const PoolOut& pre, const PoolOut& dec, bool multiNode, std::vector<std::string>& w)
{
    const Engine e = Engine::Sglang;
    LaunchPool r;
    r.role = "router";
    r.gpus = 0;
    Args a;
    a.add("--pd-disaggregation");
    std::string lists;
    bool fresh = true;
    for (const PoolOut* p : {&pre, &dec}) {
        const std::string flag = std::string("--") + poolRoleName(p->role);
        const int port = rolePort(e, p->role);
        if (!listsHeads(*p)) {
            addPoolUrl(a, flag, *p, port, multiNode);
            continue;
        }
        if (fresh)
            a.add("\"$@\"");
        lists += poolUrlList(*p, flag, port, fresh);
        a.reads |= varBit(poolHeadsVar(p->role));
    }
    a.add("--host", "0.0.0.0");
    a.add("--port", kRouterPort);
    r.command = lists + render("python3 -m sglang_router.launch_router", a);
    r.environment = varNames(a.reads);
    for (const PoolOut* p : {&pre, &dec})
        warnUnlisted(*p, "servers", std::string("add one --") + poolRoleName(p->role) + " http://ADDRESS:"
                         + num(rolePort(e, p->role)) + " per other server", w);
    return r;
}

// disagg_config.yaml as lines: ShardLab's text, or (pool set) the URL of instance `slot` of
// the pool's server `server` (its node, or its nodes), written with its host by the caller.
struct YamlLine {
    std::string text;
    const PoolOut* pool = nullptr;
    long long server = 0;
    long long slot = 0;
};

const char* serversKey(PoolRole r) { return r == PoolRole::Prefill ? "context_servers" : "generation_servers"; }

// TensorRT-LLM's disaggregated server: context_servers / generation_servers, each with
// num_instances and the URL of every instance the router lists, in order: by server, then
// by instance on the server's node.
std::vector<YamlLine> disaggConfig(const PoolOut& pre, const PoolOut& dec)
{
    std::vector<YamlLine> out{{"# TensorRT-LLM " + std::string(engineInfo(Engine::TrtLlm).version)
                               + " disaggregated server (trtllm-serve disaggregated -c disagg_config.yaml), from ShardLab."},
                              {"hostname: 0.0.0.0"},
                              {"port: " + num(kRouterPort)},
                              {"backend: pytorch"}};
    for (const PoolOut* p : {&pre, &dec}) {
        out.push_back({std::string(serversKey(p->role)) + ":"});
        out.push_back({"  num_instances: " + num(listedServers(*p))});
        out.push_back({"  urls:"});
        for (long long i = 0; i < listedServers(*p); ++i)
            out.push_back({{}, p, i / p->perNode, i % p->perNode});
    }
    return out;
}

std::string yamlUrl(const YamlLine& l, const std::string& host)
{
    return "    - \"" + host + ":" + num(instancePort(Engine::TrtLlm, l.pool->role, l.slot)) + "\"";
}

// Shell lines that write disagg_config.yaml at run time (`file`, via `file`.tmp renamed
// over it, so the router never reads half a file): ShardLab's lines as printf arguments
// (shellWord), each URL by printf from its host (serverHost: a checked list entry, or a head
// variable) passed as an argument, so no address becomes shell code or a format. A node's
// instances after its first share the ADDRESS address_of set for it.
std::string writeConfigAtRunTime(const std::vector<YamlLine>& lines, const std::string& file)
{
    const std::string tmp = shellWord(file + ".tmp");
    std::string out = "# " + displayText(file) + " with the servers' addresses, known only now.\n{\n";
    std::string text;
    for (const YamlLine& l : lines) {
        if (!l.pool) {
            text += " " + shellWord(l.text);
            continue;
        }
        if (!text.empty())
            out += "printf '%s\\n'" + text + "\n";
        text.clear();
        const ServerHost h = serverHost(*l.pool, l.server, true);
        out += (l.slot == 0 ? h.lines : std::string()) + "printf '" + yamlUrl(l, "%s") + "\\n' \"" + h.host + "\"\n";
    }
    if (!text.empty())
        out += "printf '%s\\n'" + text + "\n";
    return out + "} > " + tmp + "\nmv -f " + tmp + " " + shellWord(file) + "\n";
}

// trtllm-serve disaggregated with disagg_config.yaml listing each instance the router lists.
// On one node the file beside the script is the one it reads. On several, the servers'
// addresses are known only when the script runs: node 0 writes the file again before it
// starts the router (writeConfigAtRunTime) rather than sed-editing addresses into a
// template, so an address is only ever a printf argument; the copy written beside the
// script names each server by its first node ("node3:8002").
LaunchPool trtllmRouter(const LaunchOptions& o, const PoolOut& pre, const PoolOut& dec, bool multiNode,
                        std::vector<std::string>& w)
{
    LaunchPool r;
    r.role = "router";
    r.gpus = 0;
    const std::string file = companionName(o, "disagg_config.yaml");
    const std::vector<YamlLine> lines = disaggConfig(pre, dec);
    std::string shipped;
    for (const YamlLine& l : lines) {
        if (!l.pool)
            shipped += l.text + "\n";
        else
            shipped += yamlUrl(l, multiNode ? "node" + num(serverFirstNode(*l.pool, l.server)) : "127.0.0.1") + "\n";
        if (multiNode && &l == &lines.front())
            shipped += "# The script writes this file again on node 0 before it starts the router, each nodeN below "
                       "replaced by node N's address.\n";
    }
    r.files.push_back({file, shipped});
    r.command = (multiNode ? writeConfigAtRunTime(lines, file) : std::string())
        + "trtllm-serve disaggregated -c " + shellWord(file) + "\n";
    if (multiNode)
        r.environment = varNames(routerReads(pre, dec));
    // On several nodes the script rewrites the file on node 0, so an edit of the file itself
    // would be lost: the lines that print it are what to extend.
    const std::string where = multiNode ? "the lines the script prints into " + file
            + " on node 0 (it rewrites that file there, so an edit of the file itself is lost): each host:port under "
                                        : file + ": each host:port under ";
    for (const PoolOut* p : {&pre, &dec})
        warnUnlisted(*p, "trtllm-serve instances",
                     "start the others on their own GPUs and ports (the pool's port + 2 per instance before it on "
                     "a node) and add them to " + where + serversKey(p->role) + ".urls, and num_instances",
                     w);
    return r;
}

} // namespace

LaunchPool routerFor(const LaunchOptions& o, const PoolOut& pre, const PoolOut& dec, bool multiNode,
                     std::vector<std::string>& w)
{
    const Engine e = o.engine;
    switch (e) {
    case Engine::Vllm:
        w.push_back("router: vLLM " + std::string(engineInfo(e).version)
                    + " ships no prefill/decode router and none is written here: run a proxy in front that sends "
                      "each request to a prefill server, then (with the kv_transfer_params it returns) to a decode "
                      "server, e.g. vLLM's test proxy tests/v1/kv_connector/nixl_integration/toy_proxy_server.py "
                      "--port " + num(kRouterPort) + " --prefiller-hosts " + poolHost(pre, multiNode)
                    + " --prefiller-ports " + num(rolePort(e, PoolRole::Prefill)) + " --decoder-hosts "
                    + poolHost(dec, multiNode) + " --decoder-ports " + num(rolePort(e, PoolRole::Decode))
                    + " (not for production), or a router such as llm-d or NVIDIA Dynamo");
        return {};
    case Engine::Sglang:
        return sglangRouter(pre, dec, multiNode, w);
    case Engine::TrtLlm:
        return trtllmRouter(o, pre, dec, multiNode, w);
    }
    return {};
}

} // namespace shardlab::launch
