// TensorRT-LLM 1.0's emitter (core/report/launch_engines.h): one EngineLayout as a
// trtllm-serve command plus its --extra_llm_api_options YAML, one MPI world per server.
#include "report/launch_engines.h"

#include <algorithm>

#include "report/launch_pools.h"

namespace shardlab::launch {

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

// The command's flags: trtllm-serve's tp_size is the world of a pipeline stage. An MoE
// model spans the stage; attention is either tensor parallel over all of it or, with
// enable_attention_dp, data parallel over all of it (attention TP 1).
Args trtllmArgs(const EngineLayout& L, const std::string& optionsFile)
{
    const Scenario& s = *L.s;
    const int tpSize = L.moe ? L.stage : L.attnTp;
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
    a.add(memoryFractionFlag(Engine::TrtLlm), memoryFractionText(L.memory.writtenFraction));
    a.add("--extra_llm_api_options", optionsFile);
    if (L.role) {
        if (L.role->remote)
            a.add("--host", "0.0.0.0");
        a.add("--port", L.role->port);
    }
    return a;
}

// The --extra_llm_api_options YAML: attention DP, the MoE mapping and its load balancer,
// MTP drafting, the KV cache, and a disaggregated pool's cache transceiver.
std::string trtllmOptionsYaml(const EngineLayout& L)
{
    const Scenario& s = *L.s;
    // (The engine rules leave attention TP 1 whenever the stage has several DP ranks.)
    const bool attentionDp = L.moe && L.attnDp > 1;
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
            yaml += "    num_slots: " + num(static_cast<long long>(s.model.moe.experts) + L.plan.redundantExperts) + "\n";
            yaml += "    layer_updates_per_iter: 1\n";
        }
    }
    if (const int k = draftTokens(L)) { // DeepSeek's MTP module, k drafts per step (the DeepSeek-R1 guide)
        yaml += "speculative_config:\n";
        yaml += "  decoding_type: MTP\n";
        yaml += "  num_nextn_predict_layers: " + num(k) + "\n";
    }
    yaml += "kv_cache_config:\n";
    yaml += "  free_gpu_memory_fraction: " + memoryFractionText(L.memory.writtenFraction) + "\n";
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
    return yaml;
}

// Where the worlds run: a world larger than a node is one MPI world over its nodes; a
// pool of several worlds is that many instances.
void trtllmPlacement(const EngineLayout& L, LaunchPool& pool, std::vector<std::string>& w)
{
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
}

} // namespace

LaunchPool trtllmPool(const EngineLayout& L, const std::string& model, const LaunchOptions& o, std::vector<std::string>& w)
{
    LaunchPool pool;
    const std::string optionsFile = companionName(
        o, L.role ? std::string(poolRoleName(L.role->role)) + "_extra_llm_api_options.yaml"
                  : std::string("extra_llm_api_options.yaml"));
    const Args a = trtllmArgs(L, optionsFile);
    pool.files.push_back({optionsFile, trtllmOptionsYaml(L)});
    if (L.quantizeOnLoad)
        w.push_back("weights: fp8 with a bf16 checkpoint - trtllm-serve does not quantize on load; serve an FP8 "
                    "checkpoint (e.g. quantized with NVIDIA ModelOpt)");
    trtllmPlacement(L, pool, w);
    pool.command = render(withEnv(L, "trtllm-serve " + shellWord(model)), a);
    pool.environment = varNames(a.reads);
    return pool;
}

} // namespace shardlab::launch
