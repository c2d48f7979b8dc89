// The cost model's serving-mode figures (cost_model.h): the prompt chunk a steady step
// carries, the aggregated TTFT's wait, the limits, and the disaggregated KV transfer.
#include <algorithm>
#include <cmath>

#include "sim/cost_model.h"

namespace shardlab {

double CostModel::chunkPerSequence() const
{
    const WorkloadSpec& w = m_scenario.workload;
    // A request takes OSL / tokensPerStep() steps (speculative decoding emits more than one
    // token per step), so its prompt is spread over fewer of them.
    return w.serving == ServingMode::Aggregated
        ? double(w.promptTokens) / std::max(1, w.outputTokens) * tokensPerStep()
        : 0.0;
}

double CostModel::chunkStepShare(const Plan& p) const
{
    const double perSeq = chunkPerSequence();
    if (perSeq <= 0)
        return 1.0;
    const WorkloadSpec& w = m_scenario.workload;
    // In the units one step's half runs (two-batch overlap: half the sequences and budget).
    const double halves = stepHalves(p);
    const double seqs = double(p.batch) / std::max(1, p.microBatches) / halves;
    const double budget = w.maxNumTokens / halves;
    const double piece = std::min(double(w.promptTokens), promptRoom(seqs * queriesPerSequence(), halves));
    const int replicas = lockStepReplicas(p);
    const double busiest = busiestRankChunk(replicas * seqs * perSeq, replicas, budget, w.promptTokens);
    return std::min(1.0, busiest / piece);
}

double CostModel::promptRoom(double decodeTokens, double halves, double budgetShare) const
{
    // A step whose decode tokens fill the budget is refused by the budget check; the
    // prompt then gets one token per step, which keeps TTFT finite and monotone.
    return std::max(1.0, m_scenario.workload.maxNumTokens / halves * budgetShare - decodeTokens);
}

double CostModel::aggregatedTtftMs(double cycleS, double seqsPerStep, double ownerShare) const
{
    const WorkloadSpec& w = m_scenario.workload;
    const double share = ownerShare > 0 ? std::min(1.0, ownerShare) : 1.0;
    return (0.5 + std::max(1.0, w.promptTokens / promptRoom(seqsPerStep * share, 1, share))) * cycleS * 1e3;
}

CostModel::LimitsBroken CostModel::limitsBroken(const PipelineFigures& f, double slack) const
{
    const Scenario& s = m_scenario;
    const double k = 1 + slack;
    LimitsBroken b;
    b.memory = !(f.memoryGb <= s.cluster.gpu.hbmGb * k);
    b.ttft = !(f.ttftMs <= s.workload.ttftSloMs * k);
    b.tpot = !(f.tpotMs <= s.workload.tpotSloMs * k);
    b.tokenBudget = !(f.stepTokens <= tokenBudget() * k);
    return b;
}

void CostModel::servingFigures(PipelineFigures& f, double seqsInFlight, double stepDecodeTokens,
                               double promptOwnerShare) const
{
    const WorkloadSpec& w = m_scenario.workload;
    // Each decoding sequence emits tokensPerStep() tokens per step (1 without speculative
    // decoding, and in a prefill pool).
    const double emitted = tokensPerStep();
    f.tpotMs = hasTpot() ? f.cycleS * 1e3 / emitted : 0;
    f.tokensPerS = f.cycleS > 0 ? seqsInFlight / f.cycleS * emitted : 0;
    switch (w.serving) {
    case ServingMode::Aggregated:
        // The steps that carry the prompt's chunks are longer than the mean step by the
        // prompt's own prefill work: one prompt through every stage.
        f.ttftMs = aggregatedTtftMs(f.cycleS, stepDecodeTokens, promptOwnerShare) + f.prefillMs;
        break;
    case ServingMode::Prefill:
        // A prompt waits half a pass cycle for a slot, runs its own pass through the
        // stages, and its KV cache is sent to the decode pool. The pool's output is the
        // OSL tokens the decode pool generates for each prompt it prefilled.
        f.ttftMs = 0.5 * f.cycleS * 1e3 + f.passMs + f.kvTransferMs;
        f.tokensPerS *= w.outputTokens;
        break;
    default: f.ttftMs = f.prefillMs; break;
    }
    f.e2eMs = f.ttftMs + (w.outputTokens - 1) * f.tpotMs;
    f.tokensPerSPerGpu = f.tokensPerS / double(m_scenario.cluster.totalGpus());
}

double CostModel::tokenBudget() const
{
    const WorkloadSpec& w = m_scenario.workload;
    // A prefill pool chunks a prompt longer than the budget over several steps (about the
    // same work as one pass); a pass of several prompts must fit the budget.
    return w.serving == ServingMode::Prefill ? std::max(w.maxNumTokens, w.promptTokens) : w.maxNumTokens;
}

double CostModel::kvBytesPerRequest() const
{
    if (m_scenario.model.attentionMix.any()) // sliding windows and linear layers' state
        return cacheBytesPerSequence(m_scenario.workload.promptTokens) * m_scenario.model.layers;
    return m_kvPerTokenLayer * m_scenario.model.layers * m_scenario.workload.promptTokens;
}

double CostModel::kvLinkBytesPerS() const
{
    return m_scenario.workload.kvTransfer == KvLink::NvLink ? m_link.intraBytesPerS : m_link.interBytesPerS;
}

double CostModel::kvTransferMs(const Plan& p) const
{
    // Every GPU of the prefill replica sends its share of the prompt's KV cache over its
    // own link (the decode side is assumed to receive as fast: docs/simulator.md).
    const double lat = m_scenario.workload.kvTransfer == KvLink::NvLink ? m_link.intraLatencyS : m_link.interLatencyS;
    const double senders = double(p.tensorParallel) * p.pipelineParallel;
    return (lat + kvBytesPerRequest() / (senders * kvLinkBytesPerS())) * 1e3;
}

} // namespace shardlab
