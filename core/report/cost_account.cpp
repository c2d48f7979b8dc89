#include "report/cost_account.h"

#include <algorithm>
#include <cmath>

namespace shardlab {

const char* costPartKindName(CostPartKind k)
{
    switch (k) {
    case CostPartKind::Operator: return "operator";
    case CostPartKind::PipelineBubble: return "pipeline_bubble";
    case CostPartKind::Overlap: return "overlap";
    case CostPartKind::Drafting: return "drafting";
    }
    return "?";
}

namespace {
double finite(double v) { return std::isfinite(v) ? v : 0.0; }
// The model's operators as parts of the busiest stage's step, in graph order; returns the
// step time they sum to, and adds their launch and communication time (µs) to the shares.
double addOperatorParts(const PoolOutcome& pool, CostAccount& a)
{
    double opsUs = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = pool.result.decode[i];
        if (!opPresent(pool.scenario.model, id))
            continue;
        CostPart part;
        part.kind = CostPartKind::Operator;
        part.id = id;
        part.name = opName(id);
        part.inBusiestStage = o.present;
        part.stepUs = finite(o.timeUs) + finite(o.commUs);
        part.commUs = finite(o.commUs);
        part.launchUs = std::clamp(finite(o.launchUs), 0.0, finite(o.timeUs));
        part.gpuUsPerToken = part.stepUs * a.perStepUs;
        opsUs += part.stepUs;
        a.launchShare += part.launchUs;
        a.commShare += part.commUs;
        a.parts.push_back(part);
    }
    return opsUs;
}
} // namespace

CostAccount costAccount(const PoolOutcome& pool)
{
    CostAccount a;
    const Scenario& s = pool.scenario;
    const Plan& p = pool.plan;
    const SimResult& r = pool.result;
    const bool prompts = s.workload.serving == ServingMode::Prefill;
    a.unit = prompts ? "prompt token" : "output token";
    // A decoding sequence emits r.tokensPerStep tokens per step (1 without speculative decoding).
    const double perSequence = prompts ? std::max(1, s.workload.promptTokens) : finite(r.tokensPerStep);
    const double tokensPerCycle = double(p.batch) * p.dataParallel * perSequence;
    if (!pool.costed() || tokensPerCycle <= 0 || !(r.outputTokensPerS > 0) || !std::isfinite(r.outputTokensPerS))
        return a;
    const double gpus = double(s.cluster.totalGpus());
    const double mb = std::max(1, p.microBatches);
    // The cycle as the headline's throughput says: batch x DP sequences (a prefill pool:
    // prompts, its requests, each worth the workload's output tokens) per cycle.
    const double sequencesPerS = prompts ? requestsPerS(s.workload, r.outputTokensPerS)
                                         : r.outputTokensPerS / std::max(1.0, finite(r.tokensPerStep));
    const double cycle = 1e6 * double(p.batch) * p.dataParallel / sequencesPerS;
    a.costed = true;
    // A prefill pool's headline counts its requests' output tokens; its unit is prompt tokens.
    a.tokensPerSPerGpu = prompts ? requestsPerS(s.workload, r.tokensPerSPerGpu) * std::max(1, s.workload.promptTokens)
                                 : r.tokensPerSPerGpu;
    a.perStepUs = mb * gpus / tokensPerCycle;
    a.tokensPerStep = tokensPerCycle / mb;
    a.gpuUsPerToken = a.perStepUs * cycle / mb;
    double opsUs = addOperatorParts(pool, a);
    // Speculative decoding's drafting passes run on the last stage after its operators: a
    // part of the busiest stage's step when that stage holds the LM head, else of the wait.
    CostPart drafting;
    drafting.kind = CostPartKind::Drafting;
    drafting.name = "speculative drafting";
    drafting.inBusiestStage = r.decode[static_cast<int>(OpId::LmHead)].present;
    drafting.stepUs = drafting.inBusiestStage ? finite(r.draftUs) : 0.0;
    drafting.gpuUsPerToken = drafting.stepUs * a.perStepUs;
    if (r.draftUs > 0) {
        opsUs += drafting.stepUs;
        a.parts.push_back(drafting);
    }
    // The stage step is the operators less what two-batch overlap hides; the cycle is
    // micro-batches of it plus the bubble.
    CostPart overlap;
    overlap.kind = CostPartKind::Overlap;
    overlap.name = "two-batch overlap";
    // (A rounding residue, -4e-12 where nothing is hidden, is none.)
    const double hidden = finite(r.stageStepUs) - opsUs;
    overlap.stepUs = std::abs(hidden) < 1e-9 * std::max(1.0, opsUs) ? 0.0 : hidden;
    CostPart bubble;
    bubble.kind = CostPartKind::PipelineBubble;
    bubble.name = "pipeline bubble + transfers";
    // >= 0: the cycle holds mb stage steps; a rounding residue below zero (-1e-12) is none.
    bubble.stepUs = std::max(0.0, cycle / mb - finite(r.stageStepUs));
    for (CostPart* x : {&bubble, &overlap}) {
        x->gpuUsPerToken = x->stepUs * a.perStepUs;
        // Without two-batch overlap the stage step is the operators' sum: what is left is
        // rounding, and no part of its own.
        if (x != &overlap || p.twoBatchOverlap)
            a.parts.push_back(*x);
    }
    const double total = a.gpuUsPerToken;
    a.bubbleShare = bubble.gpuUsPerToken / total;
    a.overlapShare = p.twoBatchOverlap ? overlap.gpuUsPerToken / total : 0.0;
    a.launchShare = a.launchShare * a.perStepUs / total;
    a.commShare = a.commShare * a.perStepUs / total;
    a.draftShare = drafting.gpuUsPerToken / total;
    return a;
}

DeploymentAccount deploymentAccount(const DeploymentOutcome& o)
{
    DeploymentAccount d;
    d.gpuUsPerToken = o.gpuUsPerToken();
    if (d.gpuUsPerToken <= 0)
        return d;
    for (const PoolOutcome& pool : o.pools) {
        DeploymentAccount::Pool x;
        x.name = pool.name();
        x.gpus = pool.gpus;
        x.gpuUsPerToken = double(pool.gpus) * 1e6 / o.outputTokensPerS;
        x.busyShare = pool.requestsPerS > 0 ? std::min(1.0, o.requestsPerS / pool.requestsPerS) : 0;
        d.pools.push_back(x);
    }
    return d;
}

} // namespace shardlab
