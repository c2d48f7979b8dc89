// SGLang 0.5's emitter (core/report/launch_engines.h): one EngineLayout as a
// `python3 -m sglang.launch_server` command, one server per MoE instance or per node of a
// dense model's replicas, or one server over several nodes.
#include "report/launch_engines.h"

#include <algorithm>

#include "report/launch_pools.h"

namespace shardlab::launch {

SglangDenseServers sglangDenseServers(const EngineLayout& L)
{
    const int replicaGpus = L.serverGpus;
    if (replicaGpus > L.gpusPerNode)
        return {1, L.attnDp};
    const int perServer = std::max(1, std::min(L.attnDp, L.gpusPerNode / replicaGpus));
    return {perServer, (L.attnDp + perServer - 1) / perServer};
}

namespace {

// SGLang 0.5: --ep-num-redundant-experts N with --enable-eplb; --enable-two-batch-overlap
// (server arguments, "MoE" and "Optimization/debug options"); TBO runs on DeepEP
// (docs/launch.md, "Redundant experts and two-batch overlap").
void sglangMoeBalance(const EngineLayout& L, Args& a)
{
    if (!L.moe)
        return;
    if (L.plan.redundantExperts > 0) {
        a.add("--ep-num-redundant-experts", L.plan.redundantExperts);
        a.add("--enable-eplb");
    }
    if (L.plan.twoBatchOverlap)
        a.add("--enable-two-batch-overlap");
}

// The placement warning of SGLang replicas that each span `nodes` nodes: a one-pool script
// is one replica's, started once per replica; a disaggregated script starts every replica
// itself, each from its own head address in the pool's head list.
std::string multiNodeReplicas(const EngineLayout& L, int replicas, int nodes)
{
    const std::string what = "placement: " + num(replicas) + " data-parallel replicas of " + num(nodes) + " nodes each";
    if (!L.role)
        return what + ": start this once per replica (its own HEAD_IP) behind sglang-router";
    return what + ", each its own server: the script runs each on its own nodes with its own HEAD_IP (from "
        + shellVarName(poolHeadsVar(L.role->role)) + ") and the router lists every one";
}

// The placement warning of SGLang replicas several nodes hold, `perNode` to a node as one
// --dp-size server each: a one-pool script is one node's, started on each; a disaggregated
// script starts the server on every node of the pool itself.
std::string perNodeServers(const EngineLayout& L, int replicas, int perNode)
{
    const std::string what = "placement: " + num(replicas) + " data-parallel replicas, " + num(perNode) + " per node";
    if (!L.role)
        return what + ": run this on each of " + num(replicas / perNode) + " nodes and put sglang-router in front";
    return what + ", one server per node: the script runs it on each of the pool's " + num(replicas / perNode)
        + " nodes and the router lists every one (from " + shellVarName(poolHeadsVar(L.role->role)) + ")";
}

// The degrees. An MoE model is one server over the stage (its DP ranks share the experts);
// DP attention gives each of attnDp ranks groups its own sequences with attention TP
// tp-size / dp-size. A dense model's DP replicas are independent servers (--dp-size, set
// with the placement).
void sglangParallelArgs(const EngineLayout& L, Args& a)
{
    const bool dpAttention = L.moe && L.attnDp > 1;
    if (L.moe) {
        a.add("--tp-size", L.stage);
        if (dpAttention) {
            a.add("--dp-size", L.attnDp);
            a.add("--enable-dp-attention");
        }
        if (L.ep > 1)
            a.add("--ep-size", L.ep);
    } else if (L.attnTp > 1) {
        a.add("--tp-size", L.attnTp);
    }
    if (L.pp > 1)
        a.add("--pp-size", L.pp);
    if (L.moe && L.stage > 1 && dispatchAllToAll(L))
        a.add("--moe-a2a-backend", "deepep");
    sglangMoeBalance(L, a);
    // The shared expert as the plan runs it (split like a dense MLP, or whole per DP
    // rank), not fused into the routed experts as SGLang does for DeepSeek models.
    if (L.moe && L.s->model.moe.sharedExperts > 0)
        a.add("--disable-shared-experts-fusion");
    if (dpAttention) {
        if (L.s->model.denseLayerCount() > 0 && std::string(optName(L.plan, OpId::GateUp)) == "token")
            a.add("--moe-dense-tp-size", 1);
        const std::string lm = optName(L.plan, OpId::LmHead);
        if ((lm == "token" && L.attnTp == 1) || (lm == "column" && L.attnTp > 1))
            a.add("--enable-dp-lm-head");
    }
}

// The scheduler as the plan was priced: its limits, prompt chunks mixed into decode steps
// (or EAGLE drafting, which turns them off), memory and precisions.
void sglangServeArgs(const EngineLayout& L, Args& a, std::vector<std::string>& w)
{
    const Scenario& s = *L.s;
    // Under DP attention both are totals over the DP-attention ranks (schedulerLimits).
    const SchedulerLimits limits = schedulerLimits(Engine::Sglang, L);
    a.add(limits.sequencesFlag, limits.sequences);
    a.add(limits.tokensFlag, limits.tokens);
    // Aggregated serving is priced as steps that carry the decode tokens and a prompt chunk
    // together; SGLang runs prefill batches apart from decode batches unless told to mix
    // them (scheduler: is_mixed_chunk = chunked prefill on and --enable-mixed-chunk).
    // SGLang runs DeepSeek's MTP (NextN) module as EAGLE with one candidate per step (its
    // DeepSeek usage guide); it then turns mixed chunks off (server_args: "Mixed chunked
    // prefill is disabled because of using eagle speculative decoding").
    const int drafts = draftTokens(L);
    if (drafts > 0) {
        a.add("--speculative-algorithm", "EAGLE");
        a.add("--speculative-num-steps", drafts);
        a.add("--speculative-eagle-topk", 1);
        a.add("--speculative-num-draft-tokens", drafts + 1);
        if (s.workload.serving == ServingMode::Aggregated)
            w.push_back("speculative decoding: SGLang runs prefill batches apart from decode steps under EAGLE/MTP "
                        "(no mixed chunks), where the plan is priced with prompt chunks beside the decode tokens");
    } else if (s.workload.serving == ServingMode::Aggregated)
        a.add("--enable-mixed-chunk");
    a.add("--context-length", L.maxModelLen);
    a.add(memoryFractionFlag(Engine::Sglang), memoryFractionText(L.memory.writtenFraction));
    a.add("--dtype", "bfloat16");
    if (L.quantizeOnLoad)
        a.add("--quantization", "fp8");
    if (s.model.kvPrecision == Precision::FP8)
        a.add("--kv-cache-dtype", "fp8_e4m3");
}

// A disaggregated pool's flags: its port and role, and how Mooncake moves the KV cache.
// Returns the program with the environment Mooncake's NVLink transport reads.
std::string sglangRoleArgs(const EngineLayout& L, Args& a)
{
    std::string program = "python3 -m sglang.launch_server";
    if (!L.role)
        return program;
    if (L.role->remote)
        a.add("--host", "0.0.0.0");
    a.add("--port", L.role->port);
    a.add("--disaggregation-mode", poolRoleName(L.role->role));
    a.add("--disaggregation-transfer-backend", "mooncake");
    if (L.role->link == KvLink::InterNode)
        a.add("--disaggregation-ib-device", Expansion::var(ShellVar::IbDevice));
    else // Mooncake's NVLink transport (SGLang's PD guide, "NVLink Transport Configuration")
        program = "SGLANG_MOONCAKE_CUSTOM_MEM_POOL=True MC_FORCE_MNNVL=True " + program;
    return program;
}

// One server over several nodes: each node runs the command with its NODE_RANK.
void sglangMultiNodeServer(const EngineLayout& L, const std::string& program, Args& a, LaunchPool& pool,
                           std::vector<std::string>& w)
{
    const int replicas = L.moe ? 1 : L.attnDp;
    const int nodes = L.serverGpus / L.gpusPerNode;
    a.add("--nnodes", nodes);
    a.add("--node-rank", Expansion::var(ShellVar::NodeRank));
    a.add("--dist-init-addr", Expansion::hostPort(ShellVar::HeadIp, 5000));
    pool.command = "# one server over " + num(nodes) + " nodes: run on each with NODE_RANK=0.." + num(nodes - 1)
        + "; " + kHeadNote + ".\n" + nodeRankBelow(nodes) + render(program, a);
    pool.environment = varNames(a.reads);
    pool.serverNodes = nodes;
    if (replicas > 1)
        w.push_back(multiNodeReplicas(L, replicas, nodes));
}

} // namespace

LaunchPool sglangPool(const EngineLayout& L, const std::string& model, const LaunchOptions&, std::vector<std::string>& w)
{
    LaunchPool pool;
    Args a;
    a.add("--model-path", model);
    sglangParallelArgs(L, a);
    sglangServeArgs(L, a, w);
    const std::string program = withEnv(L, sglangRoleArgs(L, a));
    if (L.serverGpus > L.gpusPerNode) {
        sglangMultiNodeServer(L, program, a, pool, w);
        return pool;
    }
    // A dense model's replicas that fit a node: a node's share to each server (--dp-size).
    if (const int replicas = L.moe ? 1 : L.attnDp; replicas > 1) {
        const int perNode = sglangDenseServers(L).perServer;
        a.add("--dp-size", perNode);
        if (perNode < replicas)
            w.push_back(perNodeServers(L, replicas, perNode));
    }
    pool.command = render(program, a);
    pool.environment = varNames(a.reads);
    return pool;
}

} // namespace shardlab::launch
