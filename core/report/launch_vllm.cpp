// vLLM 0.11's emitter (core/report/launch_engines.h): one EngineLayout as a `vllm serve`
// command, placed on one node, as data-parallel engines a node, or over a Ray cluster.
#include "report/launch_engines.h"

#include "report/launch_pools.h"

namespace shardlab::launch {

namespace {

// Redundant experts and two-batch overlap (docs/launch.md, "Redundant experts and
// two-batch overlap", with where each flag was checked). vLLM 0.11: --enable-eplb with
// --eplb-config '{"num_redundant_experts": N}' (expert parallel deployment guide, "Expert
// Parallel Load Balancer"); --enable-dbo (design doc "Dual Batch Overlap": needs
// --data-parallel-size > 1, --enable-expert-parallel, DeepEP).
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

// The degrees: one engine a data-parallel rank of attention TP x PP GPUs; an MoE stage's
// experts parallel over all of its ranks. `run` gains the all-to-all backend's variable.
void vllmParallelArgs(const EngineLayout& L, EngineLayout& run, Args& a, std::vector<std::string>& w)
{
    if (L.attnTp > 1)
        a.add("--tensor-parallel-size", L.attnTp);
    if (L.pp > 1)
        a.add("--pipeline-parallel-size", L.pp);
    if (L.attnDp > 1)
        a.add("--data-parallel-size", L.attnDp);
    if (L.moe && L.stage > 1 && L.ep > 1) {
        // Experts parallel over all of the stage's ranks (the engine rules allow no other
        // EP); without it they are tensor-parallel over them. Between DP ranks vLLM 0.11
        // reads its all-to-all backend from VLLM_ALL2ALL_BACKEND (the --all2all-backend
        // flag came after 0.11.0).
        a.add("--enable-expert-parallel");
        if (L.attnDp > 1) {
            const bool a2a = dispatchAllToAll(L);
            run.env.push_back({"VLLM_ALL2ALL_BACKEND", a2a ? "deepep_low_latency" : "allgather_reducescatter"});
            if (a2a)
                w.push_back("operators.dispatch: all_to_all - vLLM's deepep_low_latency backend needs DeepEP installed "
                            "(vLLM's expert-parallel deployment guide)");
        }
    }
    vllmMoeBalance(L, a);
}

// The scheduler's limits, memory, precisions, how the plan was priced to run (eager or
// graphs), drafting, and a disaggregated pool's KV connector.
void vllmServeArgs(const EngineLayout& L, Args& a)
{
    const Scenario& s = *L.s;
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
}

// Data-parallel engines that fit a node, `local` to each of the pool's nodes: node 0 runs
// the API server and its engines, the others run theirs headless.
void vllmEnginesPerNode(const EngineLayout& L, const std::string& program, const Args& a, LaunchPool& pool)
{
    const int local = L.gpusPerNode / (L.attnTp * L.pp);
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
        + "if [ \"$NODE_RANK\" = 0 ]; then\n" + render(program, head) + "else\n" + render(program, rest) + "fi\n";
    pool.environment = varNames(head.reads | rest.reads | varBit(ShellVar::NodeRank));
    pool.serverNodes = nodes;
}

// An engine larger than a node (TP x PP beyond one NVLink domain): a Ray cluster over the
// pool's nodes, on which vLLM places its engines.
void vllmOverRay(const EngineLayout& L, const std::string& program, Args a, LaunchPool& pool,
                 std::vector<std::string>& w)
{
    const int engineGpus = L.attnTp * L.pp;
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
}

} // namespace

LaunchPool vllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions&, std::vector<std::string>& w)
{
    LaunchPool pool;
    Args a;
    EngineLayout run = L; // its environment gains the all-to-all backend
    vllmParallelArgs(L, run, a, w);
    vllmServeArgs(L, a);
    // Placement: one vLLM engine (a DP rank) spans attnTp x PP GPUs.
    const int engineGpus = L.attnTp * L.pp;
    const std::string program = withEnv(run, "vllm serve " + shellWord(model));
    if (L.gpus <= L.gpusPerNode) {
        pool.command = render(program, a);
        pool.environment = varNames(a.reads);
    } else if (L.attnDp > 1 && engineGpus <= L.gpusPerNode && L.gpusPerNode % engineGpus == 0) {
        vllmEnginesPerNode(L, program, a, pool);
    } else {
        vllmOverRay(L, program, a, pool, w);
    }
    return pool;
}

} // namespace shardlab::launch
