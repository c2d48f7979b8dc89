// What the per-engine emitters (launch_vllm.cpp, launch_sglang.cpp, launch_trtllm.cpp)
// share (core/report/launch_engines.h): the scheduler's limits as each engine is told them,
// the API servers and ports of a pool, and the pool each emitter's command becomes.
#include "report/launch_engines.h"

#include <algorithm>

#include "report/launch_pools.h"

namespace shardlab::launch {

const char* optName(const Plan& p, OpId id) { return opInfo(id).options[p.option(id)].name; }

bool dispatchAllToAll(const EngineLayout& L) { return std::string(optName(L.plan, OpId::Dispatch)) == "all_to_all"; }

int draftTokens(const EngineLayout& L)
{
    const WorkloadSpec& w = L.s->workload;
    return w.speculative.on() && w.serving != ServingMode::Prefill ? w.speculative.draftTokens : 0;
}

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
        // stage's sequences, the layout's per-rank limit (seqsPerReplica, rounded as
        // makeLayout decided); otherwise one MoE stage, or one dense replica, holds them.
        const long long stageSeqs = static_cast<long long>(L.plan.batch) * L.dp;
        const bool attentionDp = L.moe && L.attnDp > 1;
        out.sequences = attentionDp ? L.seqsPerReplica : (L.moe ? stageSeqs : L.plan.batch);
        out.sequencesFlag = "--max_batch_size";
        out.tokensFlag = "--max_num_tokens";
        break;
    }
    }
    return out;
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
