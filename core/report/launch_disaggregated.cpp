// A disaggregated plan as a launch configuration (core/report/launch_config.h,
// docs/launch.md "Disaggregated plans"): each pool's plan laid out on its own pool scenario
// (poolScenario) and emitted by the same per-engine emitter as a one-pool plan, plus the
// role's flags; the pools placed on the cluster (prefill first), with the router that joins
// them where the engine ships one (launch_router.cpp) run on node 0.
#include <algorithm>
#include <utility>

#include "report/launch_config.h"
#include "report/launch_engines.h"
#include "report/launch_pools.h"
#include "report/load_text.h"
#include "sim/deployment.h"

namespace shardlab {

namespace launch {

ShellVar poolHeadVar(PoolRole r)
{
    return r == PoolRole::Prefill ? ShellVar::PrefillHeadIp : ShellVar::DecodeHeadIp;
}

ShellVar poolHeadsVar(PoolRole r)
{
    return r == PoolRole::Prefill ? ShellVar::PrefillHeadIps : ShellVar::DecodeHeadIps;
}

bool reads(const LaunchPool& p, ShellVar v) { return varsNamed(p.environment) & varBit(v); }

ServerGroups serverGroups(const PoolOut& p)
{
    const long long size = std::clamp(p.pool.serverNodes, 1LL, p.nodes);
    return {size, p.nodes / size};
}

bool listsHeads(const PoolOut& p)
{
    return serverGroups(p).count > 1 && (p.routed || reads(p.pool, ShellVar::HeadIp));
}

long long serverFirstNode(const PoolOut& p, long long i) { return p.firstNode + i * serverGroups(p).size; }

long long instancesPerNode(Engine e, const EngineLayout& L)
{
    if (e != Engine::TrtLlm || !L.role)
        return 1;
    const long long world = trtllmWorld(L);
    const long long room = L.role->remote ? L.gpusPerNode : L.gpus * L.instances;
    return world < room && room % world == 0 ? room / world : 1;
}

std::string instanceGpus(const EngineLayout& L, long long slot, long long perNode, long long first)
{
    const long long width = trtllmWorld(L) / L.pp; // one stage of the instance
    std::string out;
    for (long long stage = 0; stage < L.pp; ++stage)
        for (long long rank = 0; rank < width; ++rank)
            out += (out.empty() ? "" : ",") + num(first + (stage * perNode + slot) * width + rank);
    return out;
}

int instancePort(Engine e, PoolRole r, long long slot) { return rolePort(e, r) + 2 * static_cast<int>(slot); }

long long listedServers(const PoolOut& p) { return (listsHeads(p) ? serverGroups(p).count : 1) * p.perNode; }

std::string addressOf(const PoolOut& p, const std::string& index)
{
    const std::string var = shellVarName(poolHeadsVar(p.role));
    return "address_of " + var + " \"$" + var + "\" " + num(serverGroups(p).count) + " " + index + "\n";
}

} // namespace launch

namespace {

using launch::addressOf;
using launch::kRouterPort;
using launch::listsHeads;
using launch::num;
using launch::poolHeadsVar;
using launch::poolHeadVar;
using launch::PoolOut;
using launch::reads;
using launch::routerFor;
using launch::serverFirstNode;
using launch::ServerGroups;
using launch::serverGroups;

const PoolRole kRoles[] = {PoolRole::Prefill, PoolRole::Decode};

// "node 2", "nodes 2 and 5", "nodes 2, 4 and 6": the first node of each of a pool's servers.
std::string serverFirstNodes(const PoolOut& p)
{
    const ServerGroups g = serverGroups(p);
    std::string out = g.count > 1 ? "nodes " : "node ";
    for (long long i = 0; i < g.count; ++i)
        out += (i == 0 ? "" : i + 1 == g.count ? " and " : ", ") + num(serverFirstNode(p, i));
    return out;
}

// "32 GPUs", or with several engine instances "32 GPUs, 2 instances of 16": an MoE plan's
// (the command starts one), or those the script starts several to a node.
std::string poolGpus(const PoolOut& p)
{
    const long long all = p.layout.plan.gpus();
    const long long instances = p.perNode > 1 ? p.perNode * p.nodes : p.pool.instances;
    if (instances <= 1)
        return launch::num(all) + " GPUs";
    return launch::num(all) + " GPUs, " + launch::num(instances) + " instances of " + launch::num(all / instances);
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

// Defines address_of NAME LIST COUNT INDEX: LIST (the value of NAME) must hold COUNT host
// names or addresses separated by spaces, each of letters, digits, '.', ':' and '-' (so it
// is one word that expands to nothing else), or the script stops naming NAME; ADDRESS is set
// to the entry at INDEX (from 0). The list is split by parameter expansion, never by eval or
// unquoted word splitting.
const char* const kHeadListFunction =
    "# address_of NAME LIST COUNT INDEX: LIST (NAME's value) must hold COUNT addresses separated by spaces; sets\n"
    "# ADDRESS to the one at INDEX (from 0).\n"
    "address_of() {\n"
    "  _rest=$2 _count=0 ADDRESS=\n"
    "  while :; do\n"
    "    _rest=${_rest#\"${_rest%%[! ]*}\"}\n"
    "    [ -n \"$_rest\" ] || break\n"
    "    _word=${_rest%% *}\n"
    "    _rest=${_rest#\"$_word\"}\n"
    "    case $_word in *[!A-Za-z0-9.:-]*) echo \"$1: '$_word' is not a host name or address (letters, digits, '.', "
    "':', '-'); separate the addresses with spaces\" >&2; exit 1 ;; esac\n"
    "    if [ \"$_count\" = \"$4\" ]; then ADDRESS=$_word; fi\n"
    "    _count=$((_count + 1))\n"
    "  done\n"
    "  if [ \"$_count\" != \"$3\" ]; then echo \"$1 must list $3 addresses separated by spaces, the first node of each "
    "server; it lists $_count\" >&2; exit 1; fi\n"
    "  if [ \"$4\" -ge \"$3\" ]; then echo \"$1: no server $4 among $3 (this node is past the pool's servers)\" >&2; exit 1; fi\n"
    "}\n";

// What a multi-node script needs from the environment: NODE_RANK (it picks the pool), each
// pool's head address where that pool reads HEAD_IP (its servers' head list when it has
// several: listsHeads), and what the pools and router read.
std::vector<std::string> multiNodeEnvironment(const std::vector<PoolOut>& pools, const LaunchPool& router)
{
    using launch::ShellVar;
    unsigned vars = launch::varBit(ShellVar::NodeRank) | launch::varsNamed(router.environment);
    for (const PoolOut& p : pools) {
        const unsigned own = launch::varsNamed(p.pool.environment);
        vars |= own & ~launch::varBit(ShellVar::HeadIp);
        if (listsHeads(p))
            vars |= launch::varBit(poolHeadsVar(p.role));
        else if (own & launch::varBit(ShellVar::HeadIp))
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
    std::string out = router.command.empty()
        ? "# one node: both pools run here, on their own GPUs, in the background (no router: see the warnings).\n"
        : "# one node: both pools and the router run here (pools on their own GPUs, in the background).\n";
    for (const PoolOut& p : pools) {
        out += "# pool: " + p.pool.role + " (" + poolGpus(p) + " on GPUs " + num(p.firstGpu) + "-"
            + num(p.firstGpu + p.layout.plan.gpus() - 1) + ")\n";
        const std::vector<std::string> one{p.pool.command};
        for (const std::string& command : p.instanceCommands.empty() ? one : p.instanceCommands)
            out += command.substr(0, command.size() - 1) + " &\n";
    }
    if (router.command.empty())
        return out + "wait\n";
    return out + "# router: clients send requests here (port " + num(kRouterPort) + ")\n" + router.command;
}

// ShardLab's own text inside a double-quoted shell string: $ ` " \ escaped.
std::string inDoubleQuotes(const std::string& text)
{
    std::string out;
    for (char c : text) {
        if (c == '$' || c == '`' || c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

// The header's word on a pool's head address: its first node's, or each server's from its list.
std::string headNote(const PoolOut& p)
{
    if (listsHeads(p))
        return std::string(launch::shellVarName(poolHeadsVar(p.role))) + ": the addresses of " + serverFirstNodes(p)
            + ", separated by spaces";
    return std::string(launch::shellVarName(poolHeadVar(p.role))) + ": node " + num(p.firstNode) + "'s address";
}

// A header line for a pool of several servers, or of one whose command only its first node
// runs; empty when every node of the pool runs the command as one server or on its own.
std::string placementNote(const PoolOut& p)
{
    const ServerGroups g = serverGroups(p);
    const bool ranked = reads(p.pool, launch::ShellVar::NodeRank);
    const std::string role = poolRoleName(p.role);
    if (p.perNode > 1) {
        std::string ports;
        for (long long i = 0; i < p.perNode; ++i)
            ports += (i == 0 ? "" : ", ") + num(launch::instancePort(p.engine, p.role, i));
        return "# " + role + " pool: " + num(p.perNode) + " instances on each of its nodes, in the background, each on "
            "its own GPUs and port (" + ports + ").\n";
    }
    if (g.size == 1 || (ranked && g.count == 1))
        return {};
    if (ranked) {
        std::string ranges;
        for (long long i = 0; i < g.count; ++i)
            ranges += (i == 0 ? "" : ", ") + num(p.firstNode + i * g.size) + "-" + num(p.firstNode + (i + 1) * g.size - 1);
        return "# " + role + " pool: " + num(g.count) + " servers of " + num(g.size) + " nodes (nodes " + ranges
            + "), each run on its own nodes with NODE_RANK counted from its first node"
            + (listsHeads(p) ? std::string(" and HEAD_IP that node's address (its entry in ")
                                   + launch::shellVarName(poolHeadsVar(p.role)) + ")"
                             : std::string())
            + ".\n";
    }
    return "# " + role + " pool: its command runs on " + serverFirstNodes(p) + " only, the first node of "
        + (g.count > 1 ? "each server" : "its server") + " of " + num(g.size)
        + " nodes; its other nodes say what they are for and exit: " + p.pool.otherNodes + ".\n";
}

// One pool's branch of the multi-node script: HEAD_IP and NODE_RANK as its command reads
// them (the server's first node, the rank counted from it), `router` (run on node 0, before
// NODE_RANK is counted within the pool), then the command. A node past the first of a server
// whose command reads no NODE_RANK says what it is for and exits 0 instead.
std::string poolSection(const PoolOut& p, const std::string& router)
{
    using launch::ShellVar;
    const ServerGroups g = serverGroups(p);
    const bool ranked = reads(p.pool, ShellVar::NodeRank);
    const std::string first = num(p.firstNode), size = num(g.size);
    std::string out = "# pool: " + p.pool.role + " (" + poolGpus(p) + ", nodes " + first + "-"
        + num(p.firstNode + p.nodes - 1) + ")\n";
    if (reads(p.pool, ShellVar::HeadIp) && !listsHeads(p))
        out += "HEAD_IP=$" + std::string(launch::shellVarName(poolHeadVar(p.role))) + "\n";
    out += router;
    // This node's place in the pool, as shell arithmetic.
    const std::string local = p.firstNode == 0 ? "NODE_RANK" : "(NODE_RANK - " + first + ")";
    if (listsHeads(p) && reads(p.pool, ShellVar::HeadIp))
        out += addressOf(p, "\"$((" + local + " / " + size + "))\"") + "HEAD_IP=$ADDRESS\n";
    if (ranked && g.count > 1)
        out += "NODE_RANK=$((" + local + " % " + size + "))\n";
    else if (ranked && p.firstNode > 0)
        out += "NODE_RANK=$((NODE_RANK - " + first + "))\n";
    else if (!ranked && g.size > 1) {
        // The node's place in its server, and the server's first and last node.
        const std::string offset = local + " % " + size;
        const std::string from = g.count > 1 ? "$((NODE_RANK - " + offset + "))" : first;
        const std::string to = g.count > 1 ? "$((NODE_RANK - " + offset + " + " + num(g.size - 1) + "))"
                                           : num(p.firstNode + g.size - 1);
        out += g.count > 1 ? "if [ \"$((" + offset + "))\" != 0 ]; then\n" : "if [ \"$NODE_RANK\" != " + first + " ]; then\n";
        out += "  echo \"node $NODE_RANK (" + std::string(poolRoleName(p.role)) + " pool, server of nodes " + from + "-"
            + to + "): " + inDoubleQuotes(p.pool.otherNodes) + "\" >&2\n  exit 0\nfi\n";
    }
    return out + p.pool.command;
}

// One script for every node: NODE_RANK picks the pool; each pool's command sees its own
// server's HEAD_IP and a NODE_RANK counted from that server's first node, as a one-pool
// script does (poolSection). A pool of several servers reading HEAD_IP takes their
// addresses from a list that every node checks first (address_of).
std::string multiNodeCommand(const std::vector<PoolOut>& pools, const LaunchPool& router, int gpusPerNode)
{
    const PoolOut& pre = pools[0];
    const PoolOut& dec = pools[1];
    const long long total = pre.nodes + dec.nodes;
    std::string out = "# " + num(total) + " nodes of " + num(gpusPerNode) + " GPUs: run on every node with NODE_RANK=0.."
        + num(total - 1) + "; prefill pool on nodes 0-" + num(pre.nodes - 1) + " (" + headNote(pre) + "), "
        "decode pool on nodes " + num(dec.firstNode) + "-" + num(total - 1) + " (" + headNote(dec) + ")"
        + (router.command.empty() ? "" : "; the router runs on node 0") + ".\n";
    out += placementNote(pre) + placementNote(dec);
    out += launch::nodeRankBelow(total);
    if (listsHeads(pre) || listsHeads(dec)) {
        out += kHeadListFunction;
        for (const PoolOut& p : pools)
            if (listsHeads(p))
                out += addressOf(p, "0");
    }
    std::string routerBlock;
    if (!router.command.empty())
        routerBlock = "if [ \"$NODE_RANK\" = 0 ]; then\n# router: clients send requests here (port " + num(kRouterPort)
            + ")\n" + router.command.substr(0, router.command.size() - 1) + " &\nfi\n";
    out += "if [ \"$NODE_RANK\" -lt " + num(dec.firstNode) + " ]; then\n";
    out += poolSection(pre, routerBlock);
    out += "else\n";
    out += poolSection(dec, {});
    return out + "fi\n";
}

// Each instance of a node (the pool's perNode, several) as its own command: the pool's
// command with that instance's GPUs (CUDA_VISIBLE_DEVICES, from GPU `first`) and port. The
// pool's command then starts them all in the background and waits for them, so the node's
// script lasts as long as they do.
void startInstances(PoolOut& out, const std::string& model, const LaunchOptions& o, long long first)
{
    std::string all;
    for (long long slot = 0; slot < out.perNode; ++slot) {
        launch::EngineLayout one = out.layout;
        one.env.erase(std::remove_if(one.env.begin(), one.env.end(),
                                     [](const auto& v) { return v.first == "CUDA_VISIBLE_DEVICES"; }),
                      one.env.end());
        one.env.insert(one.env.begin(), {"CUDA_VISIBLE_DEVICES", launch::instanceGpus(out.layout, slot, out.perNode, first)});
        one.role->port = launch::instancePort(o.engine, out.role, slot);
        std::vector<std::string> again; // the pool's own warnings, said once already
        const std::string command = launch::enginePool(o.engine, one, model, o, again).command;
        out.instanceCommands.push_back(command);
        all += command.substr(0, command.size() - 1) + " &\n";
    }
    out.pool.command = all + "wait\n";
}

// One pool of the deployment from its first GPU on: its layout, the checkpoint (the
// deployment's: its warnings once, unprefixed, into `c`), its engine command and where it
// sits (a placement no script starts is refused by the layout: model/engine_caps.h).
Result<PoolOut> buildPool(const Scenario& s, PoolRole role, const Plan& plan, const LaunchOptions& o, long long firstGpu,
                          LaunchConfig& c)
{
    const bool multiNode = s.cluster.nodes > 1;
    const std::string name = poolRoleName(role);
    PoolOut out{role, poolScenario(s, role, static_cast<int>(plan.gpus())), {}, {}, 1, 0, 0, 1, o.engine != Engine::Vllm, 1, {}, o.engine};
    std::vector<std::string> w;
    Result<launch::EngineLayout> layout = poolLayout(out.scenario, plan, o, name, w);
    if (!layout.ok())
        return layout.error();
    out.layout = layout.value();
    out.layout.role = launch::PoolRoleInfo{role, launch::rolePort(o.engine, role), multiNode, s.workload.kvTransfer,
                                           s.workload.promptTokens};
    if (!multiNode)
        out.layout.env = oneNodeEnv(o.engine, firstGpu, plan.gpus());
    std::vector<std::string> checkpointWarnings;
    Result<std::string> model = launch::checkpointFor(out.scenario, o, out.layout, checkpointWarnings);
    if (!model.ok())
        return model.error();
    c.model = model.value();
    if (role == PoolRole::Prefill)
        c.warnings.insert(c.warnings.end(), checkpointWarnings.begin(), checkpointWarnings.end());
    out.pool = launch::enginePool(o.engine, out.layout, c.model, o, w);
    out.servers = launch::apiServers(o.engine, out.layout);
    out.perNode = launch::instancesPerNode(o.engine, out.layout);
    if (out.perNode > 1)
        startInstances(out, c.model, o, multiNode ? 0 : firstGpu);
    out.firstGpu = firstGpu;
    out.firstNode = firstGpu / std::max(1, s.cluster.gpusPerNode);
    out.nodes = std::max(1LL, plan.gpus() / std::max(1, s.cluster.gpusPerNode));
    // Every node of a multi-node pool belongs to one of its servers.
    if (multiNode && out.pool.serverNodes > 1 && out.nodes % out.pool.serverNodes != 0)
        return FieldError{{}, name,
                          "the pool's " + std::to_string(out.nodes) + " nodes do not split into servers of "
                              + std::to_string(out.pool.serverNodes) + " nodes each: no script places it as planned"};
    // The script starts every server and the router lists them: makeLayout's "start the
    // other instances" is not the user's to do.
    if (listedServers(out) >= out.servers)
        std::erase(w, launch::instancesWarning(out.layout, plan.dataParallel));
    for (const std::string& x : w)
        c.warnings.push_back(name + ": " + x);
    return out;
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
        Result<PoolOut> out = buildPool(s, role, plan, o, nextGpu, c);
        if (!out.ok())
            return out.error();
        nextGpu += plan.gpus();
        pools.push_back(std::move(out.value()));
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
    // breaks a limit (at the budget it is exported with), in the steady state or under the
    // scenario's load protocol, is refused here with every violation.
    const DeploymentOutcome check = evaluateDeployment(priced.value(), d);
    std::string why;
    for (const std::string& r : check.reasons)
        why += (why.empty() ? "" : "; ") + r;
    if (check.costed && check.breaksLimitsUnderLoad()) {
        std::string load;
        for (const std::string& r : check.loadVerdict.reasons)
            load += (load.empty() ? "" : "; ") + r;
        why += (why.empty() ? "" : "; ") + ("under its load protocol, " + describeProtocol(s.workload.load) + ": " + load);
        if (o.allowInvalid)
            warnings.push_back("the plan breaks the scenario's limits under its load protocol ("
                               + describeProtocol(s.workload.load) + ": " + load + "): exported as planned");
    }
    if (!o.allowInvalid && check.costed && (!check.valid || check.breaksLimitsUnderLoad())) {
        const bool rebudget = priced.value().workload.maxNumTokens != s.workload.maxNumTokens;
        return FieldError{{}, "plan", "not valid for scenario '" + s.name + "'"
                                          + (rebudget ? " at --max-num-tokens " + std::to_string(o.maxNumTokens) : "")
                                          + " (" + why
                                          + "): not exported, since a launch config starts a real deployment"
                                          + (o.allowInvalidName.empty()
                                                 ? ""
                                                 : " (" + o.allowInvalidName
                                                       + " exports it as planned, the violations listed as warnings)")};
    }
    return d.pools ? launch::exportPools(priced.value(), *d.pools, o, std::move(warnings))
                   : launch::exportPlan(priced.value(), d.plan, o, std::move(warnings));
}

} // namespace shardlab
