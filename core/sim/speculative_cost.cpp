// Speculative decoding's part of the cost model (cost_model.h; docs/simulator.md §4,
// "Speculative decoding"): how many tokens a decoding sequence carries and emits per step,
// and the drafting pass of an MTP module. The verification itself is the decode step with
// queriesPerSeq tokens per sequence (CostModel::phase, op).
#include <algorithm>

#include "model/plan.h"
#include "sim/cost_model.h"

namespace shardlab {

bool CostModel::speculative() const
{
    const WorkloadSpec& w = m_scenario.workload;
    return w.speculative.on() && w.serving != ServingMode::Prefill;
}

double CostModel::queriesPerSequence() const
{
    return speculative() ? 1.0 + m_scenario.workload.speculative.draftTokens : 1.0;
}

double CostModel::tokensPerStep() const { return m_tokensPerStep; }

double CostModel::expectedTokensPerStep() const
{
    // Solved once per cost model: an engine-reported acceptance length needs a bisection
    // for its rate, and the answer depends on the scenario only.
    if (!speculative())
        return 1.0;
    const SpeculativeSpec& s = m_scenario.workload.speculative;
    // An acceptance rate neither given nor published is refused by validateScenario; a
    // scenario built without it drafts nothing useful (rates below 0 count as 0: one token
    // per step).
    return speculativeTokensPerStep(speculativeAcceptance(s, m_scenario.model), s.draftTokens);
}

int CostModel::draftPasses() const { return speculative() ? m_scenario.workload.speculative.draftTokens : 0; }

void CostModel::draftPhase(const Plan& p, PhaseContext& out, const StepLoad* load, int redundantHigh) const
{
    // MTP (TensorRT-LLM's "MTP Eagle", the default for DeepSeek-V3/R1): the one module runs
    // once per drafted token, each time on one token per sequence over the same context.
    StepLoad draft;
    draft.seqs = load ? load->seqs : double(p.batch);
    draft.chunkTokens = 0;
    draft.draftPass = true;
    if (redundantHigh > p.redundantExperts)
        phaseFloor(p, redundantHigh, false, out, &draft);
    else
        phase(p, false, out, &draft);
}

OpCost CostModel::mtpProjection(const Plan& p, const PhaseContext& ph) const
{
    // The module's input projection: [norm(embedding); norm(hidden)] (2d) -> d, kept in
    // BF16 and split over the TP group as a row-parallel GEMM (replicated under attention
    // data parallelism), as TensorRT-LLM's DeepseekV3MTP builds eh_proj.
    const double d = m_scenario.model.hiddenSize;
    const bool replicated = opOption(OpId::QkvProj, p.option(OpId::QkvProj)).split == Split::Tokens;
    const double share = replicated ? 1.0 : ph.invTp;
    const double tokens = replicated ? ph.tokensPerRank : ph.tokens;
    const double elems = 2 * d * d * share;
    OpCost c;
    c.weightBytes = elems * bytesPerElement(Precision::BF16);
    c.flops = 2 * tokens * elems;
    c.hbmBytes = c.weightBytes + tokens * 3 * d * bytesPerElement(Precision::BF16);
    c.computeS = m_gemm.computeS(false, c.flops, elems);
    c.memoryS = m_gemm.memoryS(false, c.hbmBytes);
    c.fixedS = m_gemm.fixedS(false);
    c.timeS = std::max(c.computeS, c.memoryS) + c.fixedS;
    return c;
}

} // namespace shardlab
