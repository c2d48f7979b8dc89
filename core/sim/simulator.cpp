#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }

// Adds a collective's time and bytes to an operator's breakdown. An operator's own
// collective (dispatch, combine, sequence-split prefill) names its breakdown's collective;
// an input conversion names it only when none is named yet, or when it is an all-reduce.
void chargeCollective(OpBreakdown* acc, const CollectiveCost& c, double scale, bool own)
{
    if (!acc)
        return;
    acc->commUs += c.seconds * 1e6 * scale;
    acc->commBytes += c.bytesPerRank * scale;
    acc->commInterBytes += c.interBytesPerRank * scale;
    acc->byGroup[static_cast<int>(c.group)].add({c.seconds * 1e6, c.bytesPerRank, c.interBytesPerRank,
                                                 static_cast<std::uint8_t>(1u << static_cast<int>(c.kind))},
                                                scale);
    acc->collectivesPerLayer += 1;
    if (own || acc->collective == Collective::None || c.kind == Collective::AllReduce)
        acc->collective = c.kind;
}
} // namespace

const char* violationName(Violation v)
{
    switch (v) {
    case Violation::Tiling: return "tiling";
    case Violation::Divisibility: return "divisibility";
    case Violation::Memory: return "memory";
    case Violation::TtftSlo: return "TTFT SLO";
    case Violation::TpotSlo: return "TPOT SLO";
    case Violation::TokenBudget: return "token budget";
    case Violation::Count: break;
    }
    return "?";
}

std::vector<std::string> violationNames(std::uint32_t mask)
{
    std::vector<std::string> names;
    for (int b = 0; b < kViolationCount; ++b)
        if (mask & (1u << b))
            names.emplace_back(violationName(static_cast<Violation>(b)));
    return names;
}

Simulator::Simulator(const Scenario& scenario, SimConstants constants) : m_costs(scenario, constants)
{
    // Stage shapes of the shallower pipelines, computed once (the hot path's largest loop).
    const ModelSpec& m = scenario.model;
    const int n = std::clamp(m.layers, 0, kCachedPipelines);
    m_stages.reserve(n);
    for (int pp = 1; pp <= n; ++pp)
        m_stages.push_back(pipelineStages(m.layers, m.denseLayerCount(), pp));
}

StageShapes Simulator::stagesFor(int pp) const
{
    if (pp >= 1 && pp <= static_cast<int>(m_stages.size()))
        return m_stages[pp - 1];
    return pipelineStages(m_costs.scenario().model.layers, m_costs.scenario().model.denseLayerCount(), pp);
}

namespace {

void chargeOp(OpBreakdown* acc, const OpCost& c, double scale)
{
    if (!acc)
        return;
    acc->present = true;
    acc->computeUs += c.computeS * 1e6 * scale;
    acc->memoryUs += c.memoryS * 1e6 * scale;
    acc->timeUs += c.timeS * 1e6 * scale;
    acc->launchUs += c.fixedS * 1e6 * scale;
    acc->flops += c.flops * scale;
    acc->hbmBytes += c.hbmBytes * scale;
    acc->bound = acc->computeUs > acc->memoryUs ? Bound::Compute : Bound::Memory;
    if (c.own.kind != Collective::None)
        chargeCollective(acc, c.own, scale, true);
}

using Breakdown = std::array<OpBreakdown, kOpCount>;

// One layer of `kind` with the plan's options, decode and prefill in one walk along the
// operator graph (each edge's conversion is looked up once for both phases): time
// (seconds), weights and KV bytes per GPU; per-operator costs into the breakdowns.
// With two-batch overlap the prices are one half-batch's: the breakdown shows both halves
// (scale = halves), the layer's time is combined from its overlap parts (cost_model.h).
struct LayerTotals {
    double timeS = 0, weightBytes = 0, kvBytes = 0;
    int sizeCapped = 0; // CollectiveCost::sizeCapped over the layer's collectives
    std::array<double, kOverlapParts> parts{};
};
void walkLayer(const CostModel& cm, LayerKind kind, bool shared, const Plan& p, const PhaseContext& dec,
               const PhaseContext& pre, Breakdown* accDec, Breakdown* accPre, LayerTotals& d, LayerTotals& q)
{
    auto part = [](OverlapPart x) { return static_cast<int>(x); };
    for (const GraphStep& st : layerSteps(kind, shared)) {
        if (st.isEdge) {
            const Layout from = edgeSource(st.edge, p), to = edgeTarget(st.edge, p);
            const Collective kind = conversionFor(from, to);
            if (kind == Collective::None || kind == Collective::LocalSlice)
                continue;
            const CollectiveCost cd = cm.edge(st.edge, from, to, dec);
            const CollectiveCost cp = cm.edge(st.edge, from, to, pre);
            d.timeS += cd.seconds;
            q.timeS += cp.seconds;
            d.sizeCapped += cd.sizeCapped;
            q.sizeCapped += cp.sizeCapped;
            const int pe = part(overlapPart(st.edge));
            d.parts[pe] += cd.seconds;
            q.parts[pe] += cp.seconds;
            if (accDec && cd.kind != Collective::None)
                chargeCollective(&(*accDec)[idx(st.edge.chargedTo)], cd, dec.halves, false);
            if (accPre && cp.kind != Collective::None)
                chargeCollective(&(*accPre)[idx(st.edge.chargedTo)], cp, pre.halves, false);
        } else {
            const int o = p.option(st.op);
            const OpCost cd = cm.op(st.op, o, dec);
            const OpCost cp = cm.op(st.op, o, pre);
            d.timeS += cd.totalS();
            q.timeS += cp.totalS();
            d.sizeCapped += cd.own.sizeCapped;
            q.sizeCapped += cp.own.sizeCapped;
            const int pc = part(overlapPart(st.op, o, false)), po = part(overlapPart(st.op, o, true));
            d.parts[pc] += cd.timeS;
            d.parts[po] += cd.own.seconds;
            q.parts[pc] += cp.timeS;
            q.parts[po] += cp.own.seconds;
            d.weightBytes += cd.weightBytes;
            q.weightBytes += cp.weightBytes;
            chargeOp(accDec ? &(*accDec)[idx(st.op)] : nullptr, cd, dec.halves);
            chargeOp(accPre ? &(*accPre)[idx(st.op)] : nullptr, cp, pre.halves);
        }
    }
    // The cache a GPU holds is sized by the decode phase.
    d.kvBytes = cm.kvBytesPerLayer(p.option(OpId::Attention), dec);
}

// Embedding (first stage) or LM head (last stage) with its edge: time and weights.
LayerTotals walkFixed(const CostModel& cm, bool head, bool lastLayerMoe, const Plan& p, const PhaseContext& ph,
                      Breakdown* acc)
{
    LayerTotals t;
    const GraphEdge e = head ? lmHeadEdge(lastLayerMoe) : embeddingEdge();
    const OpId id = head ? OpId::LmHead : OpId::Embedding;
    OpBreakdown* a = acc ? &(*acc)[idx(id)] : nullptr;
    auto addEdge = [&] {
        const CollectiveCost c = cm.edge(e, edgeSource(e, p), edgeTarget(e, p), ph);
        if (c.kind == Collective::None)
            return;
        t.timeS += c.seconds;
        t.sizeCapped += c.sizeCapped;
        chargeCollective(a, c, ph.halves, false);
    };
    if (head)
        addEdge();
    const OpCost c = cm.op(id, p.option(id), ph);
    t.timeS += c.totalS();
    t.sizeCapped += c.own.sizeCapped;
    t.weightBytes = c.weightBytes;
    chargeOp(a, c, ph.halves);
    if (!head)
        addEdge();
    return t;
}

// Speculative decoding's drafting pass (docs/simulator.md §4): the MTP module on the last
// stage, one block of the last layer's kind, its input projection, and the shared embedding
// lookup and LM head, over one token per sequence. One half-batch's prices, as LayerSums
// holds them (draftLayer and its parts, draftFixed); the block's and projection's weights
// and the block's KV cache per GPU; the size-capped collectives.
struct DraftTotals {
    double layerS = 0, fixedS = 0, weightBytes = 0, kvBytes = 0;
    std::array<double, kOverlapParts> parts{};
    int sizeCapped = 0;
};
DraftTotals walkDraft(const CostModel& cm, bool shared, const Plan& p, const StepLoad* load)
{
    DraftTotals t;
    const int passes = cm.draftPasses();
    if (passes == 0)
        return t;
    const bool moe = cm.scenario().model.isMoe();
    PhaseContext ph;
    cm.draftPhase(p, ph, load);
    LayerTotals d, unused;
    walkLayer(cm, moe ? LayerKind::Moe : LayerKind::Dense, shared, p, ph, ph, nullptr, nullptr, d, unused);
    const LayerTotals emb = walkFixed(cm, false, moe, p, ph, nullptr);
    const LayerTotals head = walkFixed(cm, true, moe, p, ph, nullptr);
    const OpCost proj = cm.mtpProjection(p, ph);
    t.layerS = d.timeS;
    t.parts = d.parts;
    t.fixedS = emb.timeS + head.timeS + proj.timeS;
    t.weightBytes = d.weightBytes + proj.weightBytes;
    t.kvBytes = d.kvBytes;
    t.sizeCapped = d.sizeCapped + emb.sizeCapped + head.sizeCapped;
    return t;
}

// The fast path resets the summary and only marks the breakdown arrays absent; the full
// path starts from an empty result.
void resetResult(SimResult& r, bool breakdown)
{
    if (breakdown) {
        r = SimResult{};
        return;
    }
    r.valid = false;
    r.unbounded = false;
    r.violations = r.structureChecks = 0;
    r.tpotMs = r.ttftMs = r.e2eMs = r.stepTokens = r.outputTokensPerS = r.tokensPerSPerGpu = 0;
    r.passMs = r.kvTransferMs = r.cycleMs = 0;
    r.stageStepUs = r.pipelineBubble = r.p2pUs = r.p2pBytes = 0;
    r.p2pCrossesNodes = false;
    r.expertTensorParallel = 0;
    r.expertLoadImbalance = 1;
    r.overlapHiddenUs = 0;
    r.draftUs = 0;
    r.tokensPerStep = 1;
    r.sizeCappedCollectives = 0;
    r.memory = MemoryBreakdown{};
    for (int i = 0; i < kOpCount; ++i)
        r.decode[i].present = r.prefill[i].present = false;
}

// The plan's structural checks (degrees that fit the model and cluster, a well-formed plan)
// as violations; true when any fails: such a plan has no meaningful cost.
bool structureFails(const Plan& p, const Scenario& sc, SimResult& r)
{
    r.structureChecks = planStructureViolations(p, sc);
    bool shapeOk = p.tensorParallel >= 1 && p.pipelineParallel >= 1 && p.dataParallel >= 1 && p.expertParallel >= 1
        && p.instances >= 1 && p.batch >= 1 && p.microBatches >= 1 && p.redundantExperts >= 0 && p.redundantExperts <= kMaxRedundantExperts;
    for (int i = 0; i < kOpCount; ++i)
        shapeOk = shapeOk && p.sharding[i] < opInfo(static_cast<OpId>(i)).optionCount;
    if (!shapeOk)
        r.structureChecks |= 1u << static_cast<int>(PlanCheck::MicroBatches);
    if (!r.structureChecks)
        return false;
    for (int b = 0; b < kPlanCheckCount; ++b)
        if (r.structureChecks & (1u << b))
            r.violations |= 1u << static_cast<int>(isTilingCheck(static_cast<PlanCheck>(b)) ? Violation::Tiling
                                                                                             : Violation::Divisibility);
    return true;
}

// Per-operator breakdowns of one layer of each kind and of the embedding and LM head, per
// phase (the full path's scratch space).
struct StepBreakdowns {
    Breakdown dDense, dMoe, pDense, pMoe, dFixed, pFixed;
};

// The step's additive sums (cost_model.h, LayerSums): one dense and one MoE layer, the
// embedding (first stage), the LM head and speculative decoding's drafting (last stage),
// per phase, with their weights and KV cache. Counts the size-capped collectives into `r`
// and records the drafting; `b` (the full path) receives the per-operator breakdowns.
LayerSums stepSums(const CostModel& cm, const Plan& p, const PhaseContext& dec, const PhaseContext& pre,
                   const StepLoad* load, StepBreakdowns* b, SimResult& r)
{
    const ModelSpec& m = cm.scenario().model;
    const int nd = m.denseLayerCount(), nm = m.moeLayers();
    const bool shared = opPresent(m, OpId::SharedExpert);
    LayerSums sums;
    auto layer = [&](LayerKind kind, int channel, Breakdown* dAcc, Breakdown* pAcc) {
        LayerTotals d, q;
        walkLayer(cm, kind, shared, p, dec, pre, dAcc, pAcc, d, q);
        sums.dec[channel] = d.timeS;
        sums.pre[channel] = q.timeS;
        r.sizeCappedCollectives += d.sizeCapped + q.sizeCapped;
        sums.weights[channel] = d.weightBytes;
        sums.kv[channel] = d.kvBytes;
        if (kind == LayerKind::Moe) {
            sums.moeDec = d.parts;
            sums.moePre = q.parts;
        }
    };
    if (nd > 0)
        layer(LayerKind::Dense, 0, b ? &b->dDense : nullptr, b ? &b->pDense : nullptr);
    if (nm > 0)
        layer(LayerKind::Moe, 1, b ? &b->dMoe : nullptr, b ? &b->pMoe : nullptr);
    for (int h = 0; h < 2; ++h) {
        const bool head = h == 1;
        const LayerTotals d = walkFixed(cm, head, nm > 0, p, dec, b ? &b->dFixed : nullptr);
        const LayerTotals q = walkFixed(cm, head, nm > 0, p, pre, b ? &b->pFixed : nullptr);
        sums.dec[2 + h] = d.timeS;
        sums.pre[2 + h] = q.timeS;
        r.sizeCappedCollectives += d.sizeCapped + q.sizeCapped;
        sums.weights[2 + h] = d.weightBytes;
    }
    sums.logitsShare = lmHeadLogitsShare(p.option(OpId::LmHead), p.tensorParallel);
    sums.promptOwnerShare = promptOwnerShare(p.option(OpId::Attention), p.tensorParallel);
    const DraftTotals draft = walkDraft(cm, shared, p, load); // on the last stage, with the LM head
    sums.draftLayer = draft.layerS;
    sums.draftParts = draft.parts;
    sums.draftFixed = draft.fixedS;
    sums.weights[3] += draft.weightBytes;
    sums.kv[3] += draft.kvBytes;
    r.sizeCappedCollectives += draft.sizeCapped;
    r.draftUs = draftSeconds(sums, nm > 0, dec.halves, cm.draftPasses()) * 1e6;
    r.tokensPerStep = cm.tokensPerStep();
    return sums;
}

// The pipeline's figures into the result: latencies, throughput, the stage step and what
// two-batch overlap hid.
void recordFigures(const PipelineFigures& f, const Plan& p, const PhaseContext& dec, const LayerSums& sums, bool moe,
                   SimResult& r)
{
    r.expertLoadImbalance = dec.loadImbalance;
    if (dec.halves > 1 && moe) {
        double serial = 0;
        for (double x : sums.moeDec)
            serial += x;
        r.overlapHiddenUs = std::max(
            0.0, f.busiest.moe * (dec.halves * serial - layerSeconds(sums, 1, false, dec.halves)) * 1e6);
    }
    r.stageStepUs = f.stageStepS * 1e6;
    r.p2pUs = f.p2pDecS * 1e6;
    r.p2pBytes = f.p2pBytes;
    r.p2pCrossesNodes = p.pipelineParallel > 1 && dec.stageHandoffCrossesNodes;
    r.pipelineBubble = f.bubble;
    r.tpotMs = f.tpotMs;
    r.ttftMs = f.ttftMs;
    r.e2eMs = f.e2eMs;
    r.stepTokens = f.stepTokens;
    r.passMs = f.passMs;
    r.kvTransferMs = f.kvTransferMs;
    r.cycleMs = f.cycleS * 1e3;
    r.outputTokensPerS = f.tokensPerS;
    r.tokensPerSPerGpu = f.tokensPerSPerGpu;
}

// A stage's (or the whole prefill's) per-operator breakdown: nDense dense layers, nMoe MoE
// layers, and the embedding and LM head where the stage holds them.
void combineBreakdown(Breakdown& dst, const Breakdown& dense, const Breakdown& moe, const Breakdown& fixed,
                      double nDense, double nMoe, bool withEmb, bool withHead)
{
    for (int i = 0; i < kOpCount; ++i) {
        OpBreakdown& o = dst[i];
        auto add = [&](const OpBreakdown& s, double k) {
            if (!s.present || k <= 0)
                return;
            o.present = true;
            o.computeUs += s.computeUs * k;
            o.memoryUs += s.memoryUs * k;
            o.timeUs += s.timeUs * k;
            o.launchUs += s.launchUs * k;
            o.commUs += s.commUs * k;
            o.commBytes += s.commBytes * k;
            o.commInterBytes += s.commInterBytes * k;
            o.flops += s.flops * k;
            o.hbmBytes += s.hbmBytes * k;
            o.collectivesPerLayer = std::max(o.collectivesPerLayer, s.collectivesPerLayer);
            for (int g = 0; g < kGroupRoleCount; ++g)
                o.byGroup[g].add(s.byGroup[g], k);
            if (o.collective == Collective::None)
                o.collective = s.collective;
        };
        add(dense[i], nDense);
        add(moe[i], nMoe);
        if ((i == idx(OpId::Embedding) && withEmb) || (i == idx(OpId::LmHead) && withHead))
            add(fixed[i], 1.0);
        o.bound = o.computeUs > o.memoryUs ? Bound::Compute : Bound::Memory;
    }
}

// The fullest stage's memory, the limits the plan breaks, and an overflowed step's
// unbounded times; the plan is valid when it breaks none.
void judge(const PipelineFigures& f, const CostModel& cm, SimResult& r)
{
    const Scenario& sc = cm.scenario();
    const WorkloadSpec& wl = sc.workload;
    MemoryBreakdown& mem = r.memory;
    const double gb = 1e-9;
    mem.capacityGb = sc.cluster.gpu.hbmGb;
    mem.reserveGb = sc.cluster.gpu.memoryReserveGb;
    mem.weightsGb = f.weightsBytes * gb;
    mem.kvCacheGb = f.kvBytes * gb;
    mem.activationGb = f.activationBytes * gb;
    mem.totalGb = f.memoryGb;
    mem.kvHeldBackGb = mem.kvCacheGb * (kvPoolGbPerCacheGb(wl.kvCacheMemoryFraction) - 1);

    const CostModel::LimitsBroken broken = cm.limitsBroken(f, 0);
    auto mark = [&r](bool b, Violation v) {
        if (b)
            r.violations |= 1u << static_cast<int>(v);
    };
    mark(broken.memory, Violation::Memory);
    mark(broken.ttft, Violation::TtftSlo);
    mark(broken.tpot, Violation::TpotSlo);
    mark(broken.tokenBudget, Violation::TokenBudget);
    if (!f.finite) {
        // Absurd inputs (bandwidth 1e-12 GB/s) overflow somewhere in the step: its times are
        // unbounded (+infinity, never NaN or a 300-digit number), the plan misses both
        // latency SLOs, and nothing is served. Memory does not depend on time: it stays unless it
        // overflowed itself.
        constexpr double kUnbounded = std::numeric_limits<double>::infinity();
        r.unbounded = true;
        r.tpotMs = r.ttftMs = r.e2eMs = kUnbounded;
        r.violations |= 1u << static_cast<int>(Violation::TpotSlo) | 1u << static_cast<int>(Violation::TtftSlo);
        if (!std::isfinite(mem.totalGb))
            mem.totalGb = kUnbounded;
        r.tokensPerSPerGpu = r.outputTokensPerS = 0;
    }
    r.valid = r.violations == 0;
}

} // namespace

void Simulator::evaluate(const Plan& p, SimResult& r, bool breakdown, const StepLoad* load) const
{
    resetResult(r, breakdown);
    const Scenario& sc = m_costs.scenario();
    r.serving = sc.workload.serving;
    if (structureFails(p, sc, r))
        return;
    const ModelSpec& m = sc.model;
    r.expertTensorParallel = m.isMoe() ? expertTensorParallel(p) : 0;

    PhaseContext dec, pre;
    m_costs.phase(p, false, dec, load);
    m_costs.phase(p, true, pre);

    // Scratch breakdowns live in thread-local storage: no allocation, no 8 KB of zeroing
    // per call on the fast path.
    thread_local StepBreakdowns scratch;
    if (breakdown)
        scratch = StepBreakdowns{};
    const LayerSums sums = stepSums(m_costs, p, dec, pre, load, breakdown ? &scratch : nullptr, r);
    const PipelineFigures f = m_costs.pipeline(p, stagesFor(p.pipelineParallel), dec, pre, sums);
    recordFigures(f, p, dec, sums, m.moeLayers() > 0, r);
    // Per-op breakdown of the busiest stage (decode) and of the whole prefill.
    if (breakdown) {
        combineBreakdown(r.decode, scratch.dDense, scratch.dMoe, scratch.dFixed, f.busiest.dense, f.busiest.moe,
                         f.busiest.first, f.busiest.last);
        combineBreakdown(r.prefill, scratch.pDense, scratch.pMoe, scratch.pFixed, m.denseLayerCount(), m.moeLayers(),
                         true, true);
    }
    judge(f, m_costs, r);
}

} // namespace shardlab
