#include "model/engine_caps.h"

#include <cstring>

#include "model/plan_checks.h"

namespace shardlab {

namespace {

const std::vector<EngineInfo> kEngines = {
    {Engine::Vllm, "vllm", "vLLM", "0.11"},
    {Engine::Sglang, "sglang", "SGLang", "0.5"},
    {Engine::TrtLlm, "trtllm", "TensorRT-LLM", "1.0"},
};

bool is(OpId id, int o, const char* name) { return std::strcmp(opOption(id, o).name, name) == 0; }

// Whether the options of the mode give every present operator one that divides the model.
bool layoutFits(Engine e, const ModelSpec& m, const Plan& d, int mode)
{
    const int etp = m.isMoe() ? expertTensorParallel(d) : 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(m, id))
            continue;
        bool any = false;
        for (int o = 0; o < opInfo(id).optionCount && !any; ++o)
            any = engineOptionAllowed(e, m, d, mode, id, o) && optionRule(m, id, o, d.tensorParallel, etp) == PlanCheck::Count;
        if (!any)
            return false;
    }
    return true;
}

// The sentence for a refusal, with the plan's values.
std::string refusalText(Engine e, EngineRefusal r, const ModelSpec& m, const Plan& p)
{
    const std::string n = engineInfo(e).label;
    const std::string ranks = std::to_string(expertGroupRanks(p));
    switch (r) {
    case EngineRefusal::AttentionDp:
        if (!m.isMoe())
            return "attention split by sequences inside a tensor-parallel group is not what --tensor-parallel-size "
                   "means for a dense model; its data parallelism is the plan's data_parallel";
        return n + " splits attention by heads over --tensor-parallel-size; its data-parallel ranks are the plan's "
                   "data_parallel (attention data parallelism is tensor_parallel 1 with data_parallel > 1)";
    case EngineRefusal::ExpertParallelAll:
        return n + " has expert parallelism over all " + ranks + " ranks of a stage (--enable-expert-parallel) or "
                   "none (experts tensor-parallel over them); expert_parallel " + std::to_string(p.expertParallel)
            + " is neither";
    case EngineRefusal::AllToAllBackend:
        if (e == Engine::Vllm)
            return "vLLM's all-to-all backend (deepep) runs between data-parallel ranks with expert parallelism "
                   "(--data-parallel-size > 1, --enable-expert-parallel)";
        if (e == Engine::Sglang)
            return "SGLang's all-to-all (--moe-a2a-backend deepep) needs expert parallelism over the whole "
                   "--tp-size (expert_parallel " + ranks + ")";
        return "TensorRT-LLM's all-to-all MoE backend (WIDEEP) is not part of the exported configuration; its "
               "default gathers tokens and reduce-scatters the outputs";
    case EngineRefusal::AttentionTp:
        return "TensorRT-LLM's attention is tensor-parallel over the whole stage (tp_size) or data-parallel over it "
               "(enable_attention_dp, attention TP 1); tensor_parallel " + std::to_string(p.tensorParallel)
            + " inside " + std::to_string(replicasPerInstance(p)) + " data-parallel groups is neither";
    case EngineRefusal::DenseUnderDp:
        return "SGLang's DP attention splits dense layers and the shared expert over the whole --tp-size (" + ranks
            + " ranks) or keeps them whole per rank, not over the plan's tensor_parallel "
            + std::to_string(p.tensorParallel);
    case EngineRefusal::Overlap:
        if (e == Engine::TrtLlm)
            return "TensorRT-LLM " + std::string(engineInfo(e).version)
                + " has no option that splits a step into two overlapping half-batches";
        return n + "'s two-batch overlap runs on an all-to-all with expert parallelism"
            + (e == Engine::Vllm ? " between data-parallel ranks (--enable-dbo)" : " (--enable-two-batch-overlap)");
    case EngineRefusal::Redundant:
        return n + "'s expert load balancer (EPLB) places redundant experts over expert-parallel ranks; expert_parallel "
                   "is 1";
    case EngineRefusal::Layout:
        return "no layout " + n + " runs divides the model's heads and FFN at tensor_parallel "
            + std::to_string(p.tensorParallel);
    case EngineRefusal::None:
        break;
    }
    return {};
}

const char* refusalPath(EngineRefusal r)
{
    switch (r) {
    case EngineRefusal::AttentionDp: return "operators.attention";
    case EngineRefusal::ExpertParallelAll: return "expert_parallel";
    case EngineRefusal::AllToAllBackend: return "operators.dispatch";
    case EngineRefusal::AttentionTp: return "tensor_parallel";
    case EngineRefusal::DenseUnderDp: return "tensor_parallel";
    case EngineRefusal::Overlap: return "two_batch_overlap";
    case EngineRefusal::Redundant: return "redundant_experts";
    case EngineRefusal::Layout: return "tensor_parallel";
    case EngineRefusal::None: break;
    }
    return "";
}

} // namespace

const std::vector<EngineInfo>& launchEngines() { return kEngines; }

const EngineInfo& engineInfo(Engine e)
{
    for (const EngineInfo& i : kEngines)
        if (i.engine == e)
            return i;
    return kEngines.front();
}

bool engineFromName(const std::string& name, Engine& out)
{
    for (const EngineInfo& i : kEngines)
        if (name == i.name) {
            out = i.engine;
            return true;
        }
    return false;
}

std::string knownEngines()
{
    std::string out;
    for (const EngineInfo& i : kEngines)
        out += (out.empty() ? "" : ", ") + std::string(i.name);
    return out;
}

std::optional<Engine> engineOfCollectives(CollectiveEngine c)
{
    switch (c) {
    case CollectiveEngine::Vllm:
    case CollectiveEngine::VllmEager: return Engine::Vllm;
    case CollectiveEngine::Sglang: return Engine::Sglang;
    case CollectiveEngine::TrtLlm: return Engine::TrtLlm;
    case CollectiveEngine::Nccl: break;
    }
    return std::nullopt;
}

bool streamsPrefillFirstToken(CollectiveEngine c)
{
    return engineOfCollectives(c) == Engine::Sglang;
}

CollectiveEngine collectivesOf(Engine e)
{
    switch (e) {
    case Engine::Vllm: return CollectiveEngine::Vllm;
    case Engine::Sglang: return CollectiveEngine::Sglang;
    case Engine::TrtLlm: return CollectiveEngine::TrtLlm;
    }
    return CollectiveEngine::Nccl;
}

std::optional<Engine> runnableEngine(const Scenario& s)
{
    if (!s.workload.runnable)
        return std::nullopt;
    return engineOfCollectives(s.workload.engine);
}

std::string runnableSpaceWords(const Scenario& s)
{
    const std::optional<Engine> e = runnableEngine(s);
    if (!e)
        return {};
    return std::string(", among the plans ") + engineInfo(*e).label + " " + engineInfo(*e).version
        + " runs (docs/engines.md)";
}

std::string engineModeName(int index)
{
    const EngineMode md = engineMode(index);
    return std::string(md.attentionDp ? "attention data parallel" : "attention by heads")
        + (md.allToAll ? ", all-to-all dispatch" : ", all-gather dispatch / reduce-scatter combine");
}

EngineRefusal engineDegreesRefusal(Engine e, const ModelSpec& m, const Plan& d, int mode)
{
    const EngineMode md = engineMode(mode);
    const int tp = d.tensorParallel, ep = d.expertParallel, ranks = expertGroupRanks(d);
    const int localDp = replicasPerInstance(d);
    if (!m.isMoe()) {
        // A dense model: heads over TP, its replicas independent (one mode).
        if (md.attentionDp)
            return EngineRefusal::AttentionDp;
        return md.allToAll ? EngineRefusal::AllToAllBackend
                           : (layoutFits(e, m, d, mode) ? EngineRefusal::None : EngineRefusal::Layout);
    }
    if (md.attentionDp && tp == 1)
        return EngineRefusal::AttentionDp; // the same plan as attention by heads at TP 1
    switch (e) {
    case Engine::Vllm:
        if (md.attentionDp)
            return EngineRefusal::AttentionDp;
        if (ep > 1 && ep != ranks)
            return EngineRefusal::ExpertParallelAll;
        if (md.allToAll && !(ep > 1 && localDp > 1))
            return EngineRefusal::AllToAllBackend;
        if (d.twoBatchOverlap && !(md.allToAll && ep > 1 && localDp > 1))
            return EngineRefusal::Overlap;
        break;
    case Engine::Sglang:
        if (!md.attentionDp && localDp > 1 && tp > 1 && (m.denseLayerCount() > 0 || m.moe.sharedExperts > 0))
            return EngineRefusal::DenseUnderDp;
        if (md.allToAll && !(ep > 1 && ep == ranks))
            return EngineRefusal::AllToAllBackend;
        if (d.twoBatchOverlap && !(md.allToAll && ep > 1))
            return EngineRefusal::Overlap;
        break;
    case Engine::TrtLlm:
        if (localDp > 1 && tp > 1)
            return EngineRefusal::AttentionTp;
        if (md.allToAll)
            return EngineRefusal::AllToAllBackend;
        if (d.twoBatchOverlap)
            return EngineRefusal::Overlap;
        break;
    }
    if (d.redundantExperts > 0 && ep == 1)
        return EngineRefusal::Redundant;
    return layoutFits(e, m, d, mode) ? EngineRefusal::None : EngineRefusal::Layout;
}

bool engineOptionAllowed(Engine e, const ModelSpec& m, const Plan& d, int mode, OpId id, int o)
{
    const EngineMode md = engineMode(mode);
    const bool adp = md.attentionDp;
    const bool dpAttention = m.isMoe() && replicasPerInstance(d) > 1; // SGLang --enable-dp-attention
    switch (id) {
    case OpId::Embedding:
        // Attention-DP ranks keep the whole table (SGLang under DP attention too).
        return is(id, o, (adp || (e == Engine::Sglang && dpAttention)) ? "replicated" : "vocab");
    case OpId::AttnNorm:
    case OpId::FfnNorm:
        return is(id, o, adp ? "sequence" : "replicated");
    case OpId::QkvProj:
    case OpId::OutProj:
        return is(id, o, adp ? "token" : id == OpId::QkvProj ? "column" : "row");
    case OpId::Attention:
        return is(id, o, adp ? "token" : "head");
    case OpId::GateUp:
    case OpId::Down:
        // Under attention DP the dense FFN runs whole per rank (TensorRT-LLM's rule; SGLang
        // --moe-dense-tp-size 1); SGLang's default splits it over --tp-size, which is the
        // plan's TP when the stage has one data-parallel group.
        if (adp)
            return is(id, o, "token")
                || (e == Engine::Sglang && replicasPerInstance(d) == 1 && is(id, o, id == OpId::GateUp ? "column" : "row"));
        return is(id, o, id == OpId::GateUp ? "column" : "row");
    case OpId::Router:
        return is(id, o, adp ? "token" : "replicated");
    case OpId::SharedExpert:
        return is(id, o, adp ? "token" : "column_row");
    case OpId::LmHead:
        return is(id, o, adp ? "token" : "column");
    case OpId::Dispatch:
        return is(id, o, md.allToAll ? "all_to_all" : "all_gather");
    case OpId::Combine:
        return is(id, o, md.allToAll ? "all_to_all" : "reduce_scatter");
    case OpId::ExpertUp:
        return is(id, o, "column");
    case OpId::ExpertDown:
        return is(id, o, "row");
    case OpId::Count:
        break;
    }
    return false;
}

int planEngineMode(const ModelSpec& m, const Plan& p)
{
    if (!m.isMoe())
        return 0;
    const bool adp = attentionDataParallel(p);
    const bool a2a = !optionIrrelevant(p, OpId::Dispatch) && is(OpId::Dispatch, p.option(OpId::Dispatch), "all_to_all");
    return (adp ? 2 : 0) + (a2a ? 1 : 0);
}

long long engineServerGpus(const ModelSpec& m, const Plan& p)
{
    return m.isMoe() ? p.gpus() / std::max(1, p.instances) : static_cast<long long>(p.tensorParallel) * p.pipelineParallel;
}

std::string enginePlacementRefusal(Engine e, const ModelSpec& m, const Plan& d, int gpusPerNode, std::string* field)
{
    if (e == Engine::Vllm || gpusPerNode <= 0)
        return {};
    const long long server = engineServerGpus(m, d);
    // Whole nodes, or servers that tile a node; on one node (the plan's GPUs within it) they
    // tile the plan's GPUs. Otherwise some server straddles two nodes without filling them.
    if (server <= 0 || server % gpusPerNode == 0 || (server < gpusPerNode && gpusPerNode % server == 0)
        || (server < gpusPerNode && d.gpus() <= gpusPerNode))
        return {};
    if (field)
        *field = m.isMoe() ? "instances" : (d.pipelineParallel > 1 ? "pipeline_parallel" : "tensor_parallel");
    const std::string node = std::to_string(gpusPerNode);
    const std::string choose = m.isMoe() ? "choose engine instances of whole nodes or of a size that divides " + node
                                         : "choose tensor x pipeline parallel a multiple of " + node
                                               + " or a divisor of it";
    const std::string what = e == Engine::Sglang ? (m.isMoe() ? "SGLang server" : "SGLang replica")
                                                 : "trtllm-serve world";
    if (server > gpusPerNode)
        return "one " + what + " spans " + std::to_string(server) + " GPUs, beyond one " + node
            + "-GPU node but not whole nodes: a multi-node server runs on whole nodes, so no script starts it as "
              "planned (" + choose + ")";
    return what + "s of " + std::to_string(server) + " GPUs do not tile " + node + "-GPU nodes: over "
        + std::to_string(d.gpus()) + " GPUs one would straddle two nodes, which a server within a node cannot, so "
          "no script starts them as planned (" + choose + ")";
}

FieldErrors engineViolations(Engine e, const Plan& p, const Scenario& s)
{
    const ModelSpec& m = s.model;
    FieldErrors out;
    const int mode = planEngineMode(m, p);
    const EngineRefusal r = engineDegreesRefusal(e, m, p, mode);
    if (r != EngineRefusal::None)
        out.push_back({{}, refusalPath(r), refusalText(e, r, m, p)});
    if (r == EngineRefusal::None || r == EngineRefusal::Layout) {
        for (int i = 0; i < kOpCount; ++i) {
            const OpId id = static_cast<OpId>(i);
            if (!opPresent(m, id) || optionIrrelevant(p, id) || engineOptionAllowed(e, m, p, mode, id, p.option(id)))
                continue;
            std::string runs;
            for (int o = 0; o < opInfo(id).optionCount; ++o)
                if (engineOptionAllowed(e, m, p, mode, id, o))
                    runs += (runs.empty() ? "" : " or ") + std::string(opOption(id, o).name);
            out.push_back({{}, std::string("operators.") + opName(id),
                           std::string(opOption(id, p.option(id)).name) + ": " + engineInfo(e).label + " runs " + runs
                               + " here (" + engineModeName(mode) + ")"});
        }
    }
    if (p.pipelineParallel > 1 && !engineMicroBatchesRun(p))
        out.push_back({{}, "micro_batches",
                       std::to_string(p.microBatches) + " micro-batches of a batch of " + std::to_string(p.batch) + ": "
                           + engineInfo(e).label + " keeps one micro-batch per pipeline stage in flight ("
                           + std::to_string(p.pipelineParallel) + ", with at least that many sequences)"});
    std::string field;
    if (std::string why = enginePlacementRefusal(e, m, p, s.cluster.gpusPerNode, &field); !why.empty())
        out.push_back({{}, field, std::move(why)});
    return out;
}

void applyEngineLayout(Engine e, const ModelSpec& m, Plan& p)
{
    if (p.pipelineParallel > 1) {
        p.microBatches = p.pipelineParallel;
        p.batch = std::max(p.batch, p.pipelineParallel);
    }
    const int etp = m.isMoe() ? expertTensorParallel(p) : 0;
    // The plan's own mode first (it keeps most of its options), then its attention with the
    // other dispatcher (a plan with attention DP keeps it where the engine has it only with
    // all-gather / reduce-scatter), then the others in order.
    const int own = planEngineMode(m, p);
    for (int k = -2; k < kEngineModes; ++k) {
        const int mode = k == -2 ? own : k == -1 ? (own ^ 1) : k;
        if ((k >= 0 && (mode == own || mode == (own ^ 1))) || engineDegreesRefusal(e, m, p, mode) != EngineRefusal::None)
            continue;
        for (int i = 0; i < kOpCount; ++i) {
            const OpId id = static_cast<OpId>(i);
            if (!opPresent(m, id) || engineOptionAllowed(e, m, p, mode, id, p.option(id)))
                continue;
            for (int o = 0; o < opInfo(id).optionCount; ++o)
                if (engineOptionAllowed(e, m, p, mode, id, o) && optionRule(m, id, o, p.tensorParallel, etp) == PlanCheck::Count) {
                    p.setOption(id, o);
                    break;
                }
        }
        return;
    }
}

} // namespace shardlab
