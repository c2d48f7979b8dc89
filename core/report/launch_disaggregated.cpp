// A disaggregated plan as a launch configuration (core/report/launch_config.h,
// docs/launch.md "Disaggregated plans"): each pool's plan laid out on its own pool scenario
// (poolScenario) and emitted by the same per-engine emitter as a one-pool plan, plus the
// role's flags; the pools placed on the cluster (prefill first), and the router that joins
// them where the engine ships one.
#include <algorithm>
#include <utility>

#include "report/launch_config.h"
#include "report/launch_engines.h"
#include "sim/deployment.h"

namespace shardlab {

namespace {

using launch::num;

const PoolRole kRoles[] = {PoolRole::Prefill, PoolRole::Decode};
constexpr int kRouterPort = 8000;

struct PoolOut {
    PoolRole role;
    Scenario scenario;
    launch::EngineLayout layout;
    LaunchPool pool;
    long long servers = 1;
    long long firstGpu = 0;  // on a one-node cluster: the pool's first GPU
    long long firstNode = 0; // on a multi-node cluster: the pool's first node
    long long nodes = 1;
};

// "32 GPUs", or with several engine instances (the command starts one) "32 GPUs, 2
// instances of 16".
std::string poolGpus(const PoolOut& p)
{
    const long long all = p.layout.plan.gpus();
    if (p.pool.instances <= 1)
        return launch::num(all) + " GPUs";
    return launch::num(all) + " GPUs, " + launch::num(p.pool.instances) + " instances of " + launch::num(p.pool.gpus);
}

// A pool's plan laid out on its pool scenario; an error names the pool: as the prefix of a
// plan field ("decode.expert_parallel"), or, for an option or engine flag (the same for both
// pools), in the reason ("decode pool: ...").
Result<launch::EngineLayout> poolLayout(const Scenario& scenario, const Plan& plan, const LaunchOptions& o,
                                        const std::string& name, std::vector<std::string>& w)
{
    Result<launch::EngineLayout> layout = launch::makeLayout(scenario, plan, o, w);
    if (layout.ok())
        return layout;
    FieldError e = layout.error();
    if (e.where.rfind("--", 0) != 0)
        e.where = name + (e.where.empty() ? "" : "." + e.where);
    else
        e.reason = name + " pool: " + e.reason;
    return e;
}

std::string gpuList(long long first, long long count)
{
    std::string out;
    for (long long g = first; g < first + count; ++g)
        out += (out.empty() ? "" : ",") + num(g);
    return out;
}

// The variable naming a pool's first node in a multi-node script.
launch::ShellVar poolHeadVar(PoolRole r)
{
    return r == PoolRole::Prefill ? launch::ShellVar::PrefillHeadIp : launch::ShellVar::DecodeHeadIp;
}

// Where the router reaches a pool's (first) API server, as text for a warning.
std::string poolHost(const PoolOut& p, bool multiNode)
{
    return multiNode ? launch::Expansion::var(poolHeadVar(p.role)).text() : std::string("127.0.0.1");
}

// The router's flag naming a pool's API server: the pool's head variable on many nodes.
void addPoolUrl(launch::Args& a, const std::string& flag, const PoolOut& p, int port, bool multiNode)
{
    if (multiNode)
        a.add(flag, launch::Expansion::url(poolHeadVar(p.role), port));
    else
        a.add(flag, "http://127.0.0.1:" + num(port));
}

// The engine's own router, or none (a warning says what to run instead).
LaunchPool routerFor(const LaunchOptions& o, const PoolOut& pre, const PoolOut& dec, bool multiNode,
                     std::vector<std::string>& w)
{
    const Engine e = o.engine;
    LaunchPool r;
    r.role = "router";
    r.gpus = 0;
    const std::string ph = poolHost(pre, multiNode), dh = poolHost(dec, multiNode);
    const std::string pp = num(launch::rolePort(e, PoolRole::Prefill));
    const std::string dp = num(launch::rolePort(e, PoolRole::Decode));
    switch (e) {
    case Engine::Vllm:
        w.push_back("router: vLLM " + std::string(engineInfo(e).version)
                    + " ships no prefill/decode router and none is written here: run a proxy in front that sends "
                      "each request to a prefill server, then (with the kv_transfer_params it returns) to a decode "
                      "server, e.g. vLLM's test proxy tests/v1/kv_connector/nixl_integration/toy_proxy_server.py "
                      "--port " + num(kRouterPort) + " --prefiller-hosts " + ph + " --prefiller-ports " + pp
                    + " --decoder-hosts " + dh + " --decoder-ports " + dp
                    + " (not for production), or a router such as llm-d or NVIDIA Dynamo");
        return r;
    case Engine::Sglang: {
        launch::Args a;
        a.add("--pd-disaggregation");
        addPoolUrl(a, "--prefill", pre, launch::rolePort(e, PoolRole::Prefill), multiNode);
        addPoolUrl(a, "--decode", dec, launch::rolePort(e, PoolRole::Decode), multiNode);
        a.add("--host", "0.0.0.0");
        a.add("--port", kRouterPort);
        r.command = launch::render("python3 -m sglang_router.launch_router", a);
        r.environment = launch::varNames(a.reads);
        for (const PoolOut* p : {&pre, &dec})
            if (p->servers > 1)
                w.push_back(std::string("router: the ") + poolRoleName(p->role) + " pool runs " + num(p->servers)
                            + " servers (see its placement warnings); the router lists its first: add one --"
                            + poolRoleName(p->role) + " http://ADDRESS:"
                            + num(launch::rolePort(e, p->role)) + " per other server");
        return r;
    }
    case Engine::TrtLlm: {
        std::string y = "# TensorRT-LLM " + std::string(engineInfo(e).version)
            + " disaggregated server (trtllm-serve disaggregated -c disagg_config.yaml), from ShardLab.\n";
        y += "hostname: 0.0.0.0\n";
        y += "port: " + num(kRouterPort) + "\n";
        y += "backend: pytorch\n";
        for (const PoolOut* p : {&pre, &dec}) {
            const std::string host = multiNode ? (p->role == PoolRole::Prefill ? "PREFILL_HEAD_IP" : "DECODE_HEAD_IP")
                                               : "localhost";
            y += std::string(p->role == PoolRole::Prefill ? "context_servers" : "generation_servers") + ":\n";
            y += "  num_instances: 1\n";
            y += "  urls:\n";
            y += "    - \"" + host + ":" + num(launch::rolePort(e, p->role)) + "\"\n";
            if (p->servers > 1)
                w.push_back(std::string("router: the ") + poolRoleName(p->role) + " pool runs " + num(p->servers)
                            + " trtllm-serve instances (see its placement warnings); disagg_config.yaml lists its "
                              "first: add each instance's host:port to "
                            + (p->role == PoolRole::Prefill ? "context_servers" : "generation_servers")
                            + ".urls and set num_instances");
        }
        if (multiNode)
            w.push_back("router: disagg_config.yaml names the pools' first nodes PREFILL_HEAD_IP and DECODE_HEAD_IP; "
                        "replace them with those nodes' addresses before starting it");
        const std::string file = companionName(o, "disagg_config.yaml");
        r.files.push_back({file, y});
        r.command = "trtllm-serve disaggregated -c " + launch::shellWord(file) + "\n";
        return r;
    }
    }
    return r;
}

bool reads(const LaunchPool& p, launch::ShellVar v) { return launch::varsNamed(p.environment) & launch::varBit(v); }

// What a multi-node script needs from the environment: NODE_RANK (it picks the pool), each
// pool's head address where that pool reads HEAD_IP, and what the pools and router read.
std::vector<std::string> multiNodeEnvironment(const std::vector<PoolOut>& pools, const LaunchPool& router)
{
    using launch::ShellVar;
    unsigned vars = launch::varBit(ShellVar::NodeRank) | launch::varsNamed(router.environment);
    for (const PoolOut& p : pools) {
        const unsigned own = launch::varsNamed(p.pool.environment);
        vars |= own & ~launch::varBit(ShellVar::HeadIp);
        if (own & launch::varBit(ShellVar::HeadIp))
            vars |= launch::varBit(poolHeadVar(p.role));
    }
    return launch::varNames(vars);
}

// The environment that pins a pool of a one-node deployment to its own GPUs.
std::vector<std::pair<std::string, std::string>> oneNodeEnv(Engine e, long long firstGpu, long long gpus)
{
    std::vector<std::pair<std::string, std::string>> env{{"CUDA_VISIBLE_DEVICES", gpuList(firstGpu, gpus)}};
    if (e == Engine::Vllm) // each vLLM worker on a host needs its own NIXL handshake port
        env.push_back({"VLLM_NIXL_SIDE_CHANNEL_PORT", num(5600 + firstGpu)});
    return env;
}

// Each pool in the background, started with its oneNodeEnv; the router in front.
std::string oneNodeCommand(const std::vector<PoolOut>& pools, const LaunchPool& router)
{
    std::string out = "# one node: both pools and the router run here (pools on their own GPUs, in the background).\n";
    for (const PoolOut& p : pools) {
        out += "# pool: " + p.pool.role + " (" + poolGpus(p) + " on GPUs " + num(p.firstGpu) + "-"
            + num(p.firstGpu + p.layout.plan.gpus() - 1) + ")\n";
        out += p.pool.command.substr(0, p.pool.command.size() - 1) + " &\n";
    }
    if (router.command.empty())
        return out + "wait\n";
    return out + "# router: clients send requests here (port " + num(kRouterPort) + ")\n" + router.command;
}

// One script for every node: NODE_RANK picks the pool; each pool's command sees its own
// HEAD_IP and a NODE_RANK counted from its first node, as a one-pool script does.
std::string multiNodeCommand(const std::vector<PoolOut>& pools, const LaunchPool& router, int gpusPerNode)
{
    const PoolOut& pre = pools[0];
    const PoolOut& dec = pools[1];
    const long long total = pre.nodes + dec.nodes;
    std::string out = "# " + num(total) + " nodes of " + num(gpusPerNode) + " GPUs: run on every node with NODE_RANK=0.."
        + num(total - 1) + "; prefill pool on nodes 0-" + num(pre.nodes - 1) + " (PREFILL_HEAD_IP: node 0's address), "
        "decode pool on nodes " + num(dec.firstNode) + "-" + num(total - 1) + " (DECODE_HEAD_IP: node "
        + num(dec.firstNode) + "'s address)" + (router.command.empty() ? "" : "; the router runs on node 0") + ".\n";
    out += launch::nodeRankBelow(total);
    out += "if [ \"$NODE_RANK\" -lt " + num(dec.firstNode) + " ]; then\n";
    out += "# pool: prefill (" + poolGpus(pre) + ", nodes 0-" + num(pre.nodes - 1) + ")\n";
    if (reads(pre.pool, launch::ShellVar::HeadIp))
        out += "HEAD_IP=$PREFILL_HEAD_IP\n";
    if (!router.command.empty())
        out += "if [ \"$NODE_RANK\" = 0 ]; then\n# router: clients send requests here (port " + num(kRouterPort)
            + ")\n" + router.command.substr(0, router.command.size() - 1) + " &\nfi\n";
    out += pre.pool.command;
    out += "else\n";
    out += "# pool: decode (" + poolGpus(dec) + ", nodes " + num(dec.firstNode) + "-" + num(total - 1) + ")\n";
    if (reads(dec.pool, launch::ShellVar::HeadIp))
        out += "HEAD_IP=$DECODE_HEAD_IP\n";
    if (reads(dec.pool, launch::ShellVar::NodeRank))
        out += "NODE_RANK=$((NODE_RANK - " + num(dec.firstNode) + "))\n";
    out += dec.pool.command;
    return out + "fi\n";
}

} // namespace

Result<LaunchConfig> launch::exportPools(const Scenario& s, const DisaggregatedPlan& p, const LaunchOptions& o,
                                 std::vector<std::string> warnings)
{
    if (s.workload.serving != ServingMode::Disaggregated)
        return FieldError{{}, "serving",
                          "a disaggregated plan (prefill and decode pools) needs a scenario whose workload.serving is "
                          "\"disaggregated\"; scenario '" + s.name + "' is " + servingModeName(s.workload.serving)};
    const FieldErrors split = validateDisaggregatedPlan(p, s);
    if (!split.empty()) {
        FieldError e = split.front();
        e.reason = "the pools do not fit scenario '" + s.name + "': " + e.reason;
        return e;
    }
    LaunchConfig c;
    c.engine = o.engine;
    c.companionPrefix = o.companionPrefix;
    c.engineName = engineInfo(o.engine).name;
    c.engineVersion = engineInfo(o.engine).version;
    c.warnings = std::move(warnings);
    const bool multiNode = s.cluster.nodes > 1;

    std::vector<PoolOut> pools;
    long long nextGpu = 0;
    for (PoolRole role : kRoles) {
        const Plan& plan = role == PoolRole::Prefill ? p.prefill : p.decode;
        const std::string name = poolRoleName(role);
        PoolOut out{role, poolScenario(s, role, static_cast<int>(plan.gpus())), {}, {}, 1, 0, 0, 1};
        std::vector<std::string> w;
        Result<launch::EngineLayout> layout = poolLayout(out.scenario, plan, o, name, w);
        if (!layout.ok())
            return layout.error();
        out.layout = layout.value();
        out.layout.role = launch::PoolRoleInfo{role, launch::rolePort(o.engine, role), multiNode, s.workload.kvTransfer,
                                               s.workload.promptTokens};
        if (!multiNode)
            out.layout.env = oneNodeEnv(o.engine, nextGpu, plan.gpus());
        // The checkpoint is the deployment's: its warnings once, unprefixed.
        std::vector<std::string> checkpointWarnings;
        Result<std::string> model = launch::checkpointFor(out.scenario, o, out.layout, checkpointWarnings);
        if (!model.ok())
            return model.error();
        c.model = model.value();
        if (role == PoolRole::Prefill)
            c.warnings.insert(c.warnings.end(), checkpointWarnings.begin(), checkpointWarnings.end());
        out.pool = launch::enginePool(o.engine, out.layout, c.model, o, w);
        out.servers = launch::apiServers(o.engine, out.layout);
        for (const std::string& x : w)
            c.warnings.push_back(name + ": " + x);
        out.firstGpu = nextGpu;
        out.firstNode = nextGpu / std::max(1, s.cluster.gpusPerNode);
        out.nodes = std::max(1LL, plan.gpus() / std::max(1, s.cluster.gpusPerNode));
        nextGpu += plan.gpus();
        pools.push_back(std::move(out));
    }

    LaunchPool router = routerFor(o, pools[0], pools[1], multiNode, c.warnings);
    if (multiNode && s.workload.kvTransfer == KvLink::NvLink)
        c.warnings.push_back("kv_transfer: nvlink - the plan prices the KV cache crossing NVLink between pools on "
                             "different nodes, which needs a multi-node NVLink domain (e.g. GB200 NVL72) that the "
                             "transfer library uses; over the inter-node network the transfer is slower than planned");
    if (multiNode && o.engine == Engine::Vllm)
        c.warnings.push_back("VLLM_NIXL_SIDE_CHANNEL_HOST: set it to each node's own address on every node (the "
                             "pools are on different nodes; NixlConnector's handshake defaults to localhost)");

    c.command = multiNode ? multiNodeCommand(pools, router, s.cluster.gpusPerNode)
                          : oneNodeCommand(pools, router);
    if (multiNode)
        c.environment = multiNodeEnvironment(pools, router);
    else
        c.environment = launch::varNames(launch::varsNamed(pools[0].pool.environment)
                                         | launch::varsNamed(pools[1].pool.environment));
    for (PoolOut& pl : pools) {
        c.files.insert(c.files.end(), pl.pool.files.begin(), pl.pool.files.end());
        c.pools.push_back(std::move(pl.pool));
    }
    if (!router.command.empty()) {
        c.files.insert(c.files.end(), router.files.begin(), router.files.end());
        c.pools.push_back(std::move(router));
    }
    return c;
}

Result<LaunchConfig> exportDisaggregatedLaunchConfig(const Scenario& given, const DisaggregatedPlan& p,
                                                     const LaunchOptions& o)
{
    std::vector<std::string> warnings;
    const Result<Scenario> priced = launch::exportScenario(given, o, warnings);
    if (!priced.ok())
        return priced.error();
    return launch::exportPools(priced.value(), p, o, std::move(warnings));
}

Result<LaunchConfig> exportLaunchConfig(const Scenario& s, const Deployment& d, const LaunchOptions& o)
{
    if (const std::string why = deploymentShapeError(s, d); !why.empty())
        return FieldError{{}, "plan", why};
    std::vector<std::string> warnings;
    const Result<Scenario> priced = launch::exportScenario(s, o, warnings);
    if (!priced.ok())
        return priced.error();
    // A plan whose degrees do not fit is refused below with its field; one that fits but
    // breaks a limit (at the budget it is exported with) is refused here with every violation.
    if (!o.allowInvalid) {
        const DeploymentOutcome check = evaluateDeployment(priced.value(), d);
        if (check.costed && !check.valid) {
            std::string why;
            for (const std::string& r : check.reasons)
                why += (why.empty() ? "" : "; ") + r;
            const bool rebudget = priced.value().workload.maxNumTokens != s.workload.maxNumTokens;
            return FieldError{{}, "plan", "not valid for scenario '" + s.name + "'"
                                              + (rebudget ? " at --max-num-tokens " + std::to_string(o.maxNumTokens) : "")
                                              + " (" + why
                                              + "): not exported, since a launch config starts a real deployment"};
        }
    }
    return d.pools ? launch::exportPools(priced.value(), *d.pools, o, std::move(warnings))
                   : launch::exportPlan(priced.value(), d.plan, o, std::move(warnings));
}

} // namespace shardlab
