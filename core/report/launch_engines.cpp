// The per-engine emitters (core/report/launch_engines.h): one EngineLayout as the command line
// of vLLM 0.11 or SGLang 0.5, or TensorRT-LLM 1.0's trtllm-serve command plus its YAML, and
// the per-operator comparison of what each engine does with what the plan chose.
#include "report/launch_engines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/plan_checks.h"
#include "report/launch_pools.h"

namespace shardlab::launch {

namespace {

const char* optName(const Plan& p, OpId id) { return opInfo(id).options[p.option(id)].name; }

// --- engines ---------------------------------------------------------------------------------

const char* kHeadNote = "HEAD_IP: the address of node 0, where the API server runs";

// The draft tokens each decode step verifies, as the plan is priced (workload.speculative;
// makeLayout admits drafting for the DeepSeek-V3 family's MTP only); 0 without drafting and
// on a prefill pool, which does not decode.
int draftTokens(const EngineLayout& L)
{
    const WorkloadSpec& w = L.s->workload;
    return w.speculative.on() && w.serving != ServingMode::Prefill ? w.speculative.draftTokens : 0;
}

} // namespace

int rankTokenBudget(const EngineLayout& L)
{
    return L.s->workload.maxNumTokens / L.tokenSplit();
}

SchedulerLimits schedulerLimits(Engine e, const EngineLayout& L)
{
    SchedulerLimits out;
    out.tokens = L.tokenBudget;
    switch (e) {
    case Engine::Vllm:
        out.sequences = L.seqsPerReplica;
        out.sequencesFlag = "--max-num-seqs";
        out.tokensFlag = "--max-num-batched-tokens";
        break;
    case Engine::Sglang:
        out.sequences = L.seqsPerReplica;
        if (L.moe && L.attnDp > 1) { // --enable-dp-attention: totals over the attnDp ranks
            out.ranks = L.attnDp;
            out.sequences *= L.attnDp;
            out.tokens *= L.attnDp;
        }
        out.sequencesFlag = "--max-running-requests";
        out.tokensFlag = "--chunked-prefill-size";
        break;
    case Engine::TrtLlm: {
        // Under attention DP each of the stage's ranks schedules its own share of the
        // stage's sequences; otherwise one MoE stage, or one dense replica, holds them.
        const long long stageSeqs = static_cast<long long>(L.plan.batch) * L.dp;
        const bool attentionDp = L.moe && L.attnDp > 1;
        out.sequences = attentionDp ? (stageSeqs + L.stage - 1) / L.stage : (L.moe ? stageSeqs : L.plan.batch);
        out.sequencesFlag = "--max_batch_size";
        out.tokensFlag = "--max_num_tokens";
        break;
    }
    }
    return out;
}

namespace {
// Redundant experts and two-batch overlap (docs/launch.md, "Redundant experts and
// two-batch overlap", with where each flag was checked).

// vLLM 0.11: --enable-eplb with --eplb-config '{"num_redundant_experts": N}' (expert
// parallel deployment guide, "Expert Parallel Load Balancer"); --enable-dbo (design doc
// "Dual Batch Overlap": needs --data-parallel-size > 1, --enable-expert-parallel, DeepEP).
// vLLM splits a step only when it carries at least --dbo-decode-token-threshold tokens
// (decode only; default 32) or --dbo-prefill-token-threshold (with a prompt; default 512),
// `check_ubatch_thresholds`; the plan was priced with every step split, so both are set to
// the fewest tokens that split into two non-empty halves.
constexpr int kDboSplitTokens = 2;
void vllmMoeBalance(const EngineLayout& L, Args& a)
{
    if (!L.moe)
        return;
    if (L.plan.redundantExperts > 0) {
        a.add("--enable-eplb");
        a.add("--eplb-config", "{\"num_redundant_experts\":" + num(L.plan.redundantExperts) + "}");
    }
    if (L.plan.twoBatchOverlap) {
        a.add("--enable-dbo");
        a.add("--dbo-decode-token-threshold", kDboSplitTokens);
        a.add("--dbo-prefill-token-threshold", kDboSplitTokens);
    }
}

// SGLang 0.5: --ep-num-redundant-experts N with --enable-eplb; --enable-two-batch-overlap
// (server arguments, "MoE" and "Optimization/debug options"); TBO runs on DeepEP.
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
} // namespace

namespace {
constexpr int kRayPort = 6379; // Ray's default GCS port, as vLLM's multi-node guide starts it

// vLLM under Ray on `nodes` nodes, started as vLLM's multi-node guide does: node 0 starts the
// Ray head and then `program` (vllm serve), whose placement group waits until the cluster
// holds every worker's GPU; each other node joins the head and stays in the foreground
// (--block). `reads` gets the variables the text reads.
std::string rayCluster(const std::string& program, const Args& serve, long long nodes, unsigned& reads)
{
    Args head, join;
    head.add("--head");
    head.add("--port", kRayPort);
    join.add("--address", Expansion::hostPort(ShellVar::HeadIp, kRayPort));
    join.add("--block");
    reads = serve.reads | join.reads | varBit(ShellVar::NodeRank);
    return "# vLLM over a Ray cluster of " + num(nodes) + " nodes: run on every node with NODE_RANK=0.."
        + num(nodes - 1) + "; node 0 starts the Ray head, then vllm serve (it waits until the other nodes have "
          "joined), the others join the head; " + kHeadNote + ".\n" + nodeRankBelow(nodes)
        + "if [ \"$NODE_RANK\" = 0 ]; then\n" + render("ray start", head) + render(program, serve) + "else\n"
        + render("ray start", join) + "fi\n";
}
} // namespace

LaunchPool vllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o, std::vector<std::string>& w)
{
    const Scenario& s = *L.s;
    LaunchPool pool;
    Args a;
    if (L.attnTp > 1)
        a.add("--tensor-parallel-size", L.attnTp);
    if (L.pp > 1)
        a.add("--pipeline-parallel-size", L.pp);
    if (L.attnDp > 1)
        a.add("--data-parallel-size", L.attnDp);
    EngineLayout run = L; // its environment gains the all-to-all backend
    if (L.moe && L.stage > 1 && L.ep > 1) {
        // Experts parallel over all of the stage's ranks (the engine rules allow no other
        // EP); without it they are tensor-parallel over them. Between DP ranks vLLM 0.11
        // reads its all-to-all backend from VLLM_ALL2ALL_BACKEND (the --all2all-backend
        // flag came after 0.11.0).
        a.add("--enable-expert-parallel");
        if (L.attnDp > 1) {
            const bool a2a = std::string(optName(L.plan, OpId::Dispatch)) == "all_to_all";
            run.env.push_back({"VLLM_ALL2ALL_BACKEND", a2a ? "deepep_low_latency" : "allgather_reducescatter"});
            if (a2a)
                w.push_back("operators.dispatch: all_to_all - vLLM's deepep_low_latency backend needs DeepEP installed "
                            "(vLLM's expert-parallel deployment guide)");
        }
    }
    vllmMoeBalance(L, a);
    const SchedulerLimits limits = schedulerLimits(Engine::Vllm, L);
    a.add(limits.sequencesFlag, limits.sequences);
    a.add(limits.tokensFlag, limits.tokens);
    a.add("--max-model-len", L.maxModelLen);
    a.add(memoryFractionFlag(Engine::Vllm), memoryFractionText(L.memory.writtenFraction));
    a.add("--dtype", "bfloat16");
    if (L.quantizeOnLoad)
        a.add("--quantization", "fp8");
    if (s.model.kvPrecision == Precision::FP8)
        a.add("--kv-cache-dtype", "fp8");
    // A plan priced as vLLM runs without CUDA graphs (its kernel floor and all-reduce copy)
    // is started that way.
    if (s.workload.engine == CollectiveEngine::VllmEager)
        a.add("--enforce-eager");
    // DeepSeek's MTP module as the draft model (vLLM's "deepseek_mtp" method), k drafts per step.
    if (const int k = draftTokens(L))
        a.add("--speculative-config", R"({"method":"deepseek_mtp","num_speculative_tokens":)" + num(k) + "}");

    if (L.role) {
        // NixlConnector moves the KV cache (UCX underneath: NVLink within a node, RDMA
        // between nodes); it does not read kv_role, the proxy decides who prefills.
        a.add("--port", L.role->port);
        a.add("--kv-transfer-config", R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})");
    }

    // Placement: one vLLM engine (a DP rank) spans attnTp x PP GPUs.
    const int engineGpus = L.attnTp * L.pp;
    const std::string program = withEnv(run, "vllm serve " + shellWord(model));
    if (L.gpus <= L.gpusPerNode) {
        pool.command = render(program, a);
        pool.environment = varNames(a.reads);
        return pool;
    }
    if (L.attnDp > 1 && engineGpus <= L.gpusPerNode && L.gpusPerNode % engineGpus == 0) {
        const int local = L.gpusPerNode / engineGpus;
        const long long nodes = L.gpus / L.gpusPerNode;
        Args head = a, rest = a;
        head.add("--data-parallel-size-local", local);
        head.add("--data-parallel-address", Expansion::var(ShellVar::HeadIp));
        head.add("--data-parallel-rpc-port", 13345);
        rest.add("--headless");
        rest.add("--data-parallel-size-local", local);
        rest.add("--data-parallel-start-rank", Expansion::nodeRankTimes(local));
        rest.add("--data-parallel-address", Expansion::var(ShellVar::HeadIp));
        rest.add("--data-parallel-rpc-port", 13345);
        pool.command = "# " + num(nodes) + " nodes, " + num(local) + " data-parallel engines each: run on every node "
            "with NODE_RANK=0.." + num(nodes - 1) + "; " + kHeadNote + ".\n" + nodeRankBelow(nodes)
            + "if [ \"$NODE_RANK\" = 0 ]; then\n"
            + render(program, head) + "else\n" + render(program, rest) + "fi\n";
        pool.environment = varNames(head.reads | rest.reads | varBit(ShellVar::NodeRank));
        pool.serverNodes = nodes;
        return pool;
    }
    a.add("--distributed-executor-backend", "ray");
    if (L.attnDp > 1)
        a.add("--data-parallel-backend", "ray");
    const long long nodes = (L.gpus + L.gpusPerNode - 1) / L.gpusPerNode;
    w.push_back("placement: one vLLM engine spans " + num(engineGpus) + " GPUs over "
                + num((engineGpus + L.gpusPerNode - 1) / L.gpusPerNode)
                + " nodes (TP x PP beyond one NVLink domain): the script starts a Ray cluster over all " + num(nodes)
                + " nodes (ray start --head on node 0, which then runs vllm serve; ray start --address=$HEAD_IP:"
                + num(kRayPort) + " --block on the others)"
                + (L.attnDp > 1 ? "; vLLM then places the " + num(L.attnDp)
                           + " data-parallel engines on the Ray cluster (multi-node engines under Ray data "
                             "parallelism: check on your vLLM build)"
                                : ""));
    unsigned reads = 0;
    pool.command = rayCluster(program, a, nodes, reads);
    pool.environment = varNames(reads);
    pool.serverNodes = nodes;
    return pool;
}

namespace {
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

// A dense model's SGLang servers: each replica is attention TP x PP GPUs; replicas that fit
// a node run `perServer` to a server (--dp-size), one server a node; a replica larger than a
// node is a server of its own over several nodes.
struct SglangDenseServers {
    int perServer = 1;
    long long servers = 1;
};
SglangDenseServers sglangDenseServers(const EngineLayout& L)
{
    const int replicaGpus = L.serverGpus;
    if (replicaGpus > L.gpusPerNode)
        return {1, L.attnDp};
    const int perServer = std::max(1, std::min(L.attnDp, L.gpusPerNode / replicaGpus));
    return {perServer, (L.attnDp + perServer - 1) / perServer};
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
} // namespace

LaunchPool sglangPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o, std::vector<std::string>& w)
{
    const Scenario& s = *L.s;
    LaunchPool pool;
    Args a;
    a.add("--model-path", model);
    // An MoE model is one server over the stage (its DP ranks share the experts); DP
    // attention gives each of attnDp ranks groups its own sequences with attention TP
    // tp-size / dp-size. A dense model's DP replicas are independent servers (--dp-size).
    const bool dpAttention = L.moe && L.attnDp > 1;
    const int serverGpus = L.serverGpus;
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
    if (L.moe && L.stage > 1) {
        const bool a2a = std::string(optName(L.plan, OpId::Dispatch)) == "all_to_all";
        if (a2a)
            a.add("--moe-a2a-backend", "deepep");
    }
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

    std::string program = "python3 -m sglang.launch_server";
    if (L.role) {
        if (L.role->remote)
            a.add("--host", "0.0.0.0");
        a.add("--port", L.role->port);
        a.add("--disaggregation-mode", poolRoleName(L.role->role));
        a.add("--disaggregation-transfer-backend", "mooncake");
        if (L.role->link == KvLink::InterNode)
            a.add("--disaggregation-ib-device", Expansion::var(ShellVar::IbDevice));
        else // Mooncake's NVLink transport (SGLang's PD guide, "NVLink Transport Configuration")
            program = "SGLANG_MOONCAKE_CUSTOM_MEM_POOL=True MC_FORCE_MNNVL=True " + program;
    }
    program = withEnv(L, program);
    const int replicas = L.moe ? 1 : L.attnDp;
    if (serverGpus > L.gpusPerNode) {
        const int nodes = serverGpus / L.gpusPerNode;
        a.add("--nnodes", nodes);
        a.add("--node-rank", Expansion::var(ShellVar::NodeRank));
        a.add("--dist-init-addr", Expansion::hostPort(ShellVar::HeadIp, 5000));
        pool.command = "# one server over " + num(nodes) + " nodes: run on each with NODE_RANK=0.." + num(nodes - 1)
            + "; " + kHeadNote + ".\n" + nodeRankBelow(nodes) + render(program, a);
        pool.environment = varNames(a.reads);
        pool.serverNodes = nodes;
        if (replicas > 1)
            w.push_back(multiNodeReplicas(L, replicas, nodes));
        return pool;
    }
    if (replicas > 1) {
        const int perNode = sglangDenseServers(L).perServer;
        a.add("--dp-size", perNode);
        if (perNode < replicas)
            w.push_back(perNodeServers(L, replicas, perNode));
    }
    pool.command = render(program, a);
    pool.environment = varNames(a.reads);
    return pool;
}

namespace {
// The placement warning of a pool of several trtllm-serve instances of `world` GPUs. A
// one-pool script is one instance's. A disaggregated script starts every instance where
// instances smaller than a node tile it (instancesPerNode: each on its own GPUs and port,
// several to a node); otherwise one on each server's nodes (whole nodes on a multi-node
// cluster: one per node when an instance is smaller) or one on a one-node cluster, and its
// router lists those (a router warning says what is left).
std::string trtllmInstances(const EngineLayout& L, long long instances, int world)
{
    const std::string what = "placement: " + num(instances) + " independent trtllm-serve instances of " + num(world)
        + " GPUs each (trtllm-serve has no data parallelism for dense models)";
    if (!L.role)
        return what + ": start one per GPU group (CUDA_VISIBLE_DEVICES) and balance requests over them";
    if (const long long perNode = instancesPerNode(Engine::TrtLlm, L); perNode > 1) {
        // On several nodes the plan's layout puts a pipeline's stages on different nodes;
        // each instance here keeps them on one.
        const bool stagesJoined = L.role->remote && L.pp > 1 && L.gpus * L.instances > L.gpusPerNode;
        return what + ": the script starts each, " + num(perNode) + " to a node"
            + (L.role->remote ? "" : " on the pool's GPUs") + " in the background, on its own GPUs (CUDA_VISIBLE_DEVICES) and port ("
            + num(instancePort(Engine::TrtLlm, L.role->role, 0)) + ", "
            + num(instancePort(Engine::TrtLlm, L.role->role, 1)) + (perNode > 2 ? ", ..." : "")
            + "), and the router lists each"
            + (stagesJoined ? "; each keeps its " + num(L.pp) + " pipeline stages on one node (their hand-off over "
                              "NVLink), where the plan's layout puts them on different nodes and prices the hand-off "
                              "over the inter-node network"
                            : std::string());
    }
    const long long started = !L.role->remote ? 1 : world >= L.gpusPerNode ? instances : L.gpus / L.gpusPerNode;
    if (started == instances)
        return what + ": the script starts each on its own node" + (world > L.gpusPerNode ? "s" : "")
            + " and the router lists each";
    return what + ": the script starts " + (started == 1 ? std::string("one") : "one per node, " + num(started))
        + " on the first " + num(world) + " GPUs it sees, and the router lists " + (started == 1 ? "it" : "those");
}
} // namespace

LaunchPool trtllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o, std::vector<std::string>& w)
{
    const Scenario& s = *L.s;
    LaunchPool pool;
    // trtllm-serve's tp_size is the world of a pipeline stage. An MoE model spans the
    // stage; attention is either tensor parallel over all of it or, with
    // enable_attention_dp, data parallel over all of it (attention TP 1).
    const int tpSize = L.moe ? L.stage : L.attnTp;
    // (The engine rules leave attention TP 1 whenever the stage has several DP ranks.)
    const bool attentionDp = L.moe && L.attnDp > 1;
    Args a;
    a.add("--backend", "pytorch");
    if (tpSize > 1)
        a.add("--tp_size", tpSize);
    if (L.pp > 1)
        a.add("--pp_size", L.pp);
    if (L.moe && L.ep > 1)
        a.add("--ep_size", L.ep);
    // Under attention DP each of the stage's ranks schedules its own batch (schedulerLimits).
    const SchedulerLimits limits = schedulerLimits(Engine::TrtLlm, L);
    a.add(limits.sequencesFlag, limits.sequences);
    a.add(limits.tokensFlag, limits.tokens);
    // Prompts are priced in pieces of at most the token budget (beside the decode tokens, or
    // a prefill pool's prompt over several passes); TensorRT-LLM schedules a context whole
    // unless chunked prefill is on (LLM API enable_chunked_prefill, default false).
    if (s.workload.serving == ServingMode::Aggregated || s.workload.serving == ServingMode::Prefill)
        a.add("--enable_chunked_prefill");
    a.add("--max_seq_len", L.maxModelLen);
    const std::string fr = memoryFractionText(L.memory.writtenFraction);
    a.add(memoryFractionFlag(Engine::TrtLlm), fr);
    const std::string optionsFile = companionName(
        o, L.role ? std::string(poolRoleName(L.role->role)) + "_extra_llm_api_options.yaml"
                  : std::string("extra_llm_api_options.yaml"));
    a.add("--extra_llm_api_options", optionsFile);
    if (L.role) {
        if (L.role->remote)
            a.add("--host", "0.0.0.0");
        a.add("--port", L.role->port);
    }

    std::string yaml = "# TensorRT-LLM " + std::string(engineInfo(Engine::TrtLlm).version)
        + " LLM API options (trtllm-serve --extra_llm_api_options), from ShardLab.\n";
    yaml += "dtype: bfloat16\n";
    yaml += std::string("enable_attention_dp: ") + (attentionDp ? "true" : "false") + "\n";
    if (L.moe) {
        yaml += "moe_expert_parallel_size: " + num(L.ep) + "\n";
        yaml += "moe_tensor_parallel_size: " + num(L.etp) + "\n";
        if (L.plan.redundantExperts > 0) {
            // Wide-EP's load balancer (examples/wide_ep/README.md): num_slots = experts +
            // redundant slots; layer_updates_per_iter > 0 rebalances online.
            yaml += "moe_config:\n";
            yaml += "  load_balancer:\n";
            yaml += "    num_slots: " + num(static_cast<long long>(L.s->model.moe.experts) + L.plan.redundantExperts) + "\n";
            yaml += "    layer_updates_per_iter: 1\n";
        }
    }
    if (const int k = draftTokens(L)) { // DeepSeek's MTP module, k drafts per step (the DeepSeek-R1 guide)
        yaml += "speculative_config:\n";
        yaml += "  decoding_type: MTP\n";
        yaml += "  num_nextn_predict_layers: " + num(k) + "\n";
    }
    yaml += "kv_cache_config:\n";
    yaml += "  free_gpu_memory_fraction: " + fr + "\n";
    if (s.model.kvPrecision == Precision::FP8)
        yaml += "  dtype: fp8\n";
    if (L.role) {
        // The context server runs without the overlap scheduler; both ends move the KV cache
        // with the cache transceiver, UCX named explicitly (DEFAULT changed meaning between
        // releases), its buffer at least the longest prompt.
        if (L.role->role == PoolRole::Prefill)
            yaml += "disable_overlap_scheduler: true\n";
        yaml += "cache_transceiver_config:\n";
        yaml += "  backend: UCX\n";
        yaml += "  max_tokens_in_buffer: " + num(std::max(1, L.role->maxPromptTokens)) + "\n";
    }
    pool.files.push_back({optionsFile, yaml});

    if (L.quantizeOnLoad)
        w.push_back("weights: fp8 with a bf16 checkpoint - trtllm-serve does not quantize on load; serve an FP8 "
                    "checkpoint (e.g. quantized with NVIDIA ModelOpt)");
    const int world = trtllmWorld(L);
    if (world > L.gpusPerNode) {
        w.push_back("placement: one trtllm-serve spans " + num(world) + " GPUs over " + num(world / L.gpusPerNode)
                    + " nodes; launch it as one MPI world of " + num(world) + " ranks over them (mpirun or srun), as "
                      "TensorRT-LLM's multi-node guide describes");
        pool.serverNodes = world / L.gpusPerNode;
        pool.otherNodes = "a host of the server's MPI world of " + num(world) + " ranks, which trtllm-serve on the "
            "server's first node runs (launch it there with mpirun or srun over these nodes, as TensorRT-LLM's "
            "multi-node guide describes); nothing to start here";
    }
    const long long instances = L.gpus / world;
    if (instances > 1)
        w.push_back(trtllmInstances(L, instances, world));
    pool.command = render(withEnv(L, "trtllm-serve " + shellWord(model)), a);
    pool.environment = varNames(a.reads);
    return pool;
}

long long apiServers(Engine e, const EngineLayout& L)
{
    switch (e) {
    case Engine::Vllm:
        return 1;
    case Engine::Sglang: // one server an instance of an MoE plan; a dense plan's servers hold its replicas
        return L.moe ? L.instances : sglangDenseServers(L).servers;
    case Engine::TrtLlm: // every instance of the pool: an MoE plan's, or a dense plan's replicas
        return std::max(1LL, L.gpus * L.instances / std::max(1, trtllmWorld(L)));
    }
    return 1;
}

int trtllmWorld(const EngineLayout& L) { return L.serverGpus; }

int rolePort(Engine e, PoolRole r)
{
    const bool prefill = r == PoolRole::Prefill;
    switch (e) {
    case Engine::Vllm: return prefill ? 8100 : 8200;    // vLLM's NixlConnector guide
    case Engine::Sglang: return prefill ? 30000 : 30001; // SGLang's PD disaggregation guide
    case Engine::TrtLlm: return prefill ? 8001 : 8002;  // TensorRT-LLM's disaggregated example
    }
    return 0;
}

LaunchPool enginePool(Engine e, const EngineLayout& L, const std::string& model, const LaunchOptions& o,
                      std::vector<std::string>& w)
{
    LaunchPool pool;
    switch (e) {
    case Engine::Vllm: pool = vllmPool(L, model, o, w); break;
    case Engine::Sglang: pool = sglangPool(L, model, o, w); break;
    case Engine::TrtLlm: pool = trtllmPool(L, model, o, w); break;
    }
    pool.role = L.role ? poolRoleName(L.role->role) : "serve";
    pool.gpus = L.gpus;
    pool.instances = L.instances;
    if (e == Engine::TrtLlm) {
        // Each trtllm-serve is one world of TP x PP ranks (an MoE plan's stage): a dense
        // plan's data-parallel replicas are that many instances of it.
        pool.gpus = trtllmWorld(L);
        pool.instances = apiServers(e, L);
    } else if (e == Engine::Sglang && !L.moe) {
        // One SGLang server holds a node's replicas (--dp-size) or spans a replica's nodes:
        // the pool is that many servers of the GPUs one command starts.
        const SglangDenseServers d = sglangDenseServers(L);
        pool.gpus = L.serverGpus * d.perServer;
        pool.instances = d.servers;
    }
    pool.memory = L.memory;
    return pool;
}

} // namespace shardlab::launch
