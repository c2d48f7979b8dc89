// The cost model's functions (cost_model.h): overlap parts, phases and the pipeline's
// figures; the constructor is in cost_model_static.cpp. docs/simulator.md sections 1-4
// explain every formula.
#include "sim/cost_model.h"

#include "model/plan_checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace shardlab {

OverlapPart overlapPart(OpId id, int option, bool own)
{
    switch (id) {
    case OpId::Dispatch:
    case OpId::Combine:
        // Only the all-to-all is overlapped (DeepEP's, in both engines); a gather or
        // reduce-scatter dispatch stays on the compute side's critical path.
        if (!own || ownCollective(id, option) != Collective::AllToAll)
            return OverlapPart::Attention;
        return id == OpId::Dispatch ? OverlapPart::Dispatch : OverlapPart::Combine;
    case OpId::ExpertUp:
    case OpId::ExpertDown:
        return OverlapPart::Experts;
    case OpId::SharedExpert:
        return OverlapPart::SharedExpert;
    default:
        return OverlapPart::Attention;
    }
}

OverlapPart overlapPart(const GraphEdge& e)
{
    if (e.space == EdgeSpace::Expert)
        return OverlapPart::Experts;
    return overlapPart(e.chargedTo, 0, false);
}

double overlappedLayerSeconds(const std::array<double, kOverlapParts>& h)
{
    const double A = h[static_cast<int>(OverlapPart::Attention)], S = h[static_cast<int>(OverlapPart::SharedExpert)];
    const double M = h[static_cast<int>(OverlapPart::Experts)], D = h[static_cast<int>(OverlapPart::Dispatch)];
    const double C = h[static_cast<int>(OverlapPart::Combine)];
    return std::max(A, D) + std::max(M, D) + std::max(S + M, C) + std::max(S + A, C);
}

double layerSeconds(const LayerSums& s, int ch, bool prefill, int halves)
{
    const double sum = prefill ? s.pre[ch] : s.dec[ch];
    if (halves <= 1)
        return sum;
    if (ch != 1)
        return halves * sum;
    return overlappedLayerSeconds(prefill ? s.moePre : s.moeDec);
}

double draftSeconds(const LayerSums& s, bool moeLayer, int halves, int passes)
{
    if (passes <= 0)
        return 0;
    const double layer = halves <= 1 ? s.draftLayer
        : moeLayer                 ? overlappedLayerSeconds(s.draftParts)
                                   : halves * s.draftLayer;
    return passes * (layer + std::max(1, halves) * s.draftFixed);
}

Collective ownCollective(OpId id, int option)
{
    if (id == OpId::Dispatch)
        return option == 0 ? Collective::AllToAll : Collective::AllGather;
    if (id == OpId::Combine)
        return option == 0 ? Collective::AllToAll : Collective::ReduceScatter;
    return Collective::None;
}

std::vector<OpConversion> opConversions(const ModelSpec& m, const Plan& p, OpId id)
{
    std::vector<OpConversion> v;
    const int tp = p.tensorParallel, etp = std::max(1, expertTensorParallel(p));
    const bool both = m.denseLayerCount() > 0 && m.moeLayers() > 0;
    auto add = [&](const GraphEdge& e, const char* where) {
        const int group = e.space == EdgeSpace::Expert ? etp : tp;
        const Layout from = edgeSource(e, p), to = edgeTarget(e, p);
        const Collective k = conversionFor(from, to);
        if (group > 1 && k != Collective::None && k != Collective::LocalSlice)
            v.push_back({from, to, k, e.intoOutput ? "output join" : where});
    };
    if (id == OpId::Embedding)
        add(embeddingEdge(), "");
    const bool shared = opPresent(m, OpId::SharedExpert);
    // An edge of both layer kinds is listed once, marked as run by both: each edge seen, with
    // its entry in v where it moves data.
    std::vector<std::pair<std::pair<OpId, OpId>, std::optional<size_t>>> seen;
    for (LayerKind kind : {LayerKind::Dense, LayerKind::Moe}) {
        const bool present = kind == LayerKind::Dense ? m.denseLayerCount() > 0 : m.moeLayers() > 0;
        if (!present)
            continue;
        // Only attn_norm's input differs between the kinds (from down, or from combine).
        const char* where = both && id == OpId::AttnNorm ? (kind == LayerKind::Dense ? "dense layers" : "MoE layers") : "";
        for (const GraphStep& st : layerSteps(kind, shared)) {
            if (!st.isEdge || st.edge.chargedTo != id)
                continue;
            const std::pair<OpId, OpId> key{st.edge.from, st.edge.to};
            const auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == key; });
            if (it != seen.end()) {
                if (it->second)
                    (kind == LayerKind::Dense ? v[*it->second].denseLayers : v[*it->second].moeLayers) = true;
                continue;
            }
            const size_t at = v.size();
            add(st.edge, where);
            std::optional<size_t> entry;
            if (v.size() > at) {
                entry = at;
                v[at].denseLayers = kind == LayerKind::Dense;
                v[at].moeLayers = kind == LayerKind::Moe;
            }
            seen.push_back({key, entry});
        }
    }
    if (id == OpId::LmHead) {
        add(lmHeadEdge(m.moeLayers() > 0), "");
        if (lmHeadGathersLogits(p.option(id), tp))
            v.push_back({opOption(id, p.option(id)).out, Layout::R, Collective::AllGather, "logits to every rank for sampling"});
    }
    const long long moeRanks = expertGroupRanks(p);
    const Collective own = ownCollective(id, p.option(id));
    if (own != Collective::None && ownCollectiveRanks(own, moeRanks, tp) > 1)
        v.push_back({opOption(id, p.option(id)).in, opOption(id, p.option(id)).out, own,
                     id == OpId::Dispatch ? "to expert ranks" : "back to token ranks"});
    return v;
}

LayerSums& LayerSums::operator+=(const LayerSums& o)
{
    for (int i = 0; i < 4; ++i) {
        dec[i] += o.dec[i];
        pre[i] += o.pre[i];
        weights[i] += o.weights[i];
        kv[i] += o.kv[i];
    }
    logitsShare += o.logitsShare;
    promptOwnerShare += o.promptOwnerShare;
    draftLayer += o.draftLayer;
    draftFixed += o.draftFixed;
    for (int i = 0; i < kOverlapParts; ++i) {
        moeDec[i] += o.moeDec[i];
        moePre[i] += o.moePre[i];
        draftParts[i] += o.draftParts[i];
    }
    return *this;
}

bool LayerSums::dominatedBy(const LayerSums& o) const
{
    for (int i = 0; i < 4; ++i)
        if (o.dec[i] > dec[i] || o.pre[i] > pre[i] || o.weights[i] > weights[i] || o.kv[i] > kv[i])
            return false;
    if (o.logitsShare > logitsShare || o.promptOwnerShare < promptOwnerShare) // a larger share: fewer steps
        return false;
    if (o.draftLayer > draftLayer || o.draftFixed > draftFixed)
        return false;
    for (int i = 0; i < kOverlapParts; ++i)
        if (o.moeDec[i] > moeDec[i] || o.moePre[i] > moePre[i] || o.draftParts[i] > draftParts[i])
            return false;
    return true;
}

double promptOwnerShare(int attentionOption, int tensorParallel)
{
    const bool own = opOption(OpId::Attention, attentionOption).split == Split::Tokens;
    return own ? 1.0 / std::max(1, tensorParallel) : 1.0;
}

bool lmHeadGathersLogits(int lmHeadOption, int tensorParallel)
{
    return opOption(OpId::LmHead, lmHeadOption).split == Split::Weights && tensorParallel > 1;
}

double lmHeadLogitsShare(int lmHeadOption, int tensorParallel)
{
    const bool own = opOption(OpId::LmHead, lmHeadOption).split == Split::Tokens;
    return own ? 1.0 / std::max(1, tensorParallel) : 1.0;
}

LayerSums operator+(LayerSums a, const LayerSums& b)
{
    a += b;
    return a;
}

LayerSums componentMin(const LayerSums& a, const LayerSums& b)
{
    LayerSums r;
    for (int i = 0; i < 4; ++i) {
        r.dec[i] = std::min(a.dec[i], b.dec[i]);
        r.pre[i] = std::min(a.pre[i], b.pre[i]);
        r.weights[i] = std::min(a.weights[i], b.weights[i]);
        r.kv[i] = std::min(a.kv[i], b.kv[i]);
    }
    r.logitsShare = std::min(a.logitsShare, b.logitsShare);
    r.promptOwnerShare = std::max(a.promptOwnerShare, b.promptOwnerShare);
    r.draftLayer = std::min(a.draftLayer, b.draftLayer);
    r.draftFixed = std::min(a.draftFixed, b.draftFixed);
    for (int i = 0; i < kOverlapParts; ++i) {
        r.moeDec[i] = std::min(a.moeDec[i], b.moeDec[i]);
        r.moePre[i] = std::min(a.moePre[i], b.moePre[i]);
        r.draftParts[i] = std::min(a.draftParts[i], b.draftParts[i]);
    }
    return r;
}

StageShapes pipelineStages(int L, int nd, int PP)
{
    StageShapes out;
    PP = std::max(1, PP);
    // Walked without divisions (stage sizes q or q+1, Bresenham): the simulator's hot path.
    const int q = L / PP, rem = L % PP;
    int lo = 0, err = 0;
    for (int k = 0; k < PP; ++k) {
        err += rem;
        int size = q;
        if (err >= PP) {
            err -= PP;
            ++size;
        }
        const int hi = lo + size;
        StageShape st;
        st.dense = std::max(0, std::min(hi, nd) - lo);
        st.moe = size - st.dense;
        st.first = k == 0;
        st.last = k == PP - 1;
        lo = hi;
        StageShape* prev = out.size > 0 ? &out.shape[out.size - 1] : nullptr;
        if (prev && prev->dense == st.dense && prev->moe == st.moe && prev->first == st.first && prev->last == st.last) {
            ++prev->count; // runs of equal stages merge; stage order is kept
            continue;
        }
        bool merged = false;
        for (int i = 0; i < out.size && !merged; ++i) {
            StageShape& o = out.shape[i];
            if (o.dense == st.dense && o.moe == st.moe && o.first == st.first && o.last == st.last) {
                ++o.count;
                merged = true;
            }
        }
        if (!merged && out.size < StageShapes::kMax) {
            st.count = 1;
            out.shape[out.size++] = st;
        }
    }
    return out;
}

CostModel CostModel::withSizeCapsLifted() const
{
    CostModel out(*this);
    out.m_link = linkModel(out.m_scenario.cluster, out.m_scenario.workload.engine); // its own cluster
    out.m_link.sizeCapsLifted = true;
    return out;
}

void CostModel::phase(const Plan& p, bool prefill, PhaseContext& ph, const StepLoad* load) const
{
    const double share = prefill || load ? 1.0 : chunkStepShare(p);
    ph.chunkShare = 1;
    if (share >= 1 || !(share > 0)) { // no batch: no prompt pieces either
        stepPhase(p, prefill, ph, load);
        return;
    }
    // Prefill as events: the step with the busiest replica's one prompt piece and the step
    // without; the same prompt tokens per step on average as the mean step (Little's law).
    const double batch = p.batch, meanChunk = batch * chunkPerSequence();
    StepLoad none{batch, 0.0};
    none.pieceShare = share;
    stepPhase(p, false, ph.plain, &none);
    StepLoad piece{batch, meanChunk / share};
    piece.pieceShare = share;
    stepPhase(p, false, ph, &piece);
    ph.stepTokens = ph.plain.stepTokens + meanChunk / std::max(1, p.microBatches);
    ph.chunkShare = share;
}

void CostModel::stepPhase(const Plan& p, bool prefill, StepContext& ph, const StepLoad* load) const
{
    const ModelSpec& m = m_scenario.model;
    const WorkloadSpec& w = m_scenario.workload;
    const int gpn = m_scenario.cluster.gpusPerNode;
    ph = StepContext{};
    ph.prefill = prefill;
    ph.tp = p.tensorParallel;
    ph.dp = p.dataParallel;
    ph.maxCtx = w.maxContext() + (speculative() ? w.speculative.draftTokens : 0); // draft positions' cache
    ph.batchSeqs = p.batch;
    if (w.serving == ServingMode::Prefill) {
        // A prefill pool's step is a prefill pass of its micro-batch's prompts (both the
        // step and the "prefill" context): batch / micro_batches prompts of ISL tokens.
        // Their KV cache is held until it has been sent to the decode pool.
        ph.prefill = true;
        ph.seqs = double(p.batch) / std::max(1, p.microBatches);
        ph.tokens = double(w.promptTokens) * ph.seqs;
        ph.ctx = w.promptTokens / 2.0;
        ph.maxCtx = w.promptTokens;
    } else if (prefill) {
        ph.seqs = std::max(1, m_constants.prefillPrompts);
        ph.tokens = double(w.promptTokens) * ph.seqs;
        ph.ctx = w.promptTokens / 2.0; // causal: the mean query sees half the prompt
    } else {
        // The mean micro-batch: batch / micro_batches sequences (uneven splits average out),
        // with the steady state's prompt tokens beside them, or the given step's.
        // Speculative decoding: each sequence carries its drafted tokens to verify (a drafting
        // pass: one token each).
        const double mb = std::max(1, p.microBatches);
        ph.seqs = load ? load->seqs / mb : double(p.batch) / mb;
        ph.chunkTokens = load ? load->chunkTokens / mb : ph.seqs * chunkPerSequence();
        if (load && load->groupChunkTokens >= 0) { // the busiest replica's chunk, the group's mean beside it
            ph.ownChunk = ph.chunkTokens;
            ph.chunkTokens = load->groupChunkTokens / mb / lockStepReplicas(p);
        }
        ph.chunkCtx = w.promptTokens / 2.0;
        ph.queriesPerSeq = load && load->draftPass ? 1.0 : queriesPerSequence();
        ph.tokens = ph.seqs * ph.queriesPerSeq + ph.chunkTokens;
        ph.ctx = w.meanDecodeContext();
    }
    ph.stepTokens = ph.tokens;
    ph.stepSeqs = ph.seqs;
    ph.pieceShare = load ? load->pieceShare : 1.0;
    if (stepHalves(p) == 2) {
        // Two-batch overlap: every operator runs once for each half of the step's
        // sequences (docs/simulator.md §3); the prices below are one half's.
        ph.halves = 2;
        ph.tokens *= 0.5;
        ph.seqs *= 0.5;
        ph.chunkTokens *= 0.5;
        if (ph.ownChunk >= 0)
            ph.ownChunk *= 0.5;
    }
    const PlanPlacement placed = placePlan(p, gpn);
    ph.tpGroup = placed.tensor;
    ph.stageHandoffCrossesNodes = placed.stageHandoffCrossesNodes;
    ph.invTp = 1.0 / ph.tp;
    // (One rank has nothing to split: its share is the whole, also below one token, which a
    // half-batch of one sequence has.)
    ph.tokensPerRank = ph.tp > 1 ? std::max(1.0, ph.tokens * ph.invTp) : ph.tokens;
    ph.seqsPerRank = ph.tp > 1 ? std::max(1.0, ph.seqs * ph.invTp) : ph.seqs;
    setBusiestOwners(p, ph);
    if (m.isMoe()) {
        ph.etpGroup = placed.expertTensor;
        ph.moeGroup = placed.expertExchange;
        ph.replicaGroup = placed.expertReplicas;
        setExpertLoad(p, ph);
    }
}

PipelineFigures CostModel::pipeline(const Plan& p, const StageShapes& stages, const PhaseContext& dec,
                                    const PhaseContext& pre, const LayerSums& v) const
{
    PipelineFigures f;
    double maxDec = 0, sumDec = 0, sumPre = 0, maxMem = -1;
    // One layer of each channel as the step runs it (two-batch overlap: both halves).
    std::array<double, 4> lDec{}, lPre{};
    for (int ch = 0; ch < 4; ++ch) {
        lDec[ch] = layerSeconds(v, ch, false, dec.halves);
        lPre[ch] = layerSeconds(v, ch, true, pre.halves);
    }
    lDec[3] += draftSeconds(v, m_scenario.model.isMoe(), dec.halves, draftPasses()); // on the last stage
    for (int i = 0; i < stages.size; ++i) {
        const StageShape& st = stages.shape[i];
        double tDec = st.dense * lDec[0] + st.moe * lDec[1];
        double tPre = st.dense * lPre[0] + st.moe * lPre[1];
        double w = st.dense * v.weights[0] + st.moe * v.weights[1];
        double kv = st.dense * v.kv[0] + st.moe * v.kv[1];
        if (st.first) {
            tDec += lDec[2];
            tPre += lPre[2];
            w += v.weights[2];
        }
        if (st.last) {
            tDec += lDec[3];
            tPre += lPre[3];
            w += v.weights[3];
            kv += v.kv[3]; // a speculative-decoding MTP module's cache (0 otherwise)
        }
        sumDec += st.count * tDec;
        sumPre += st.count * tPre;
        if (tDec > maxDec) {
            maxDec = tDec;
            f.busiest = st;
        }
        if (w + kv > maxMem) {
            maxMem = w + kv;
            f.weightsBytes = w;
            f.kvBytes = kv;
        }
    }
    // Stage-to-stage transfer of one micro-batch's hidden states, each rank its 1/TP.
    const int PP = p.pipelineParallel;
    const bool crossNode = dec.stageHandoffCrossesNodes;
    const double bw = crossNode ? m_link.interBytesPerS : m_link.intraBytesPerS;
    const double lat = crossNode ? m_link.interLatencyS : m_link.intraLatencyS;
    f.p2pBytes = PP > 1 ? dec.stepTokens * m_hiddenBytes / p.tensorParallel : 0;
    f.p2pDecS = PP > 1 ? lat + f.p2pBytes / bw : 0;
    const double p2pPre = PP > 1 ? lat + pre.stepTokens * m_hiddenBytes / p.tensorParallel / bw : 0;

    // The engine's host work (scheduling, input preparation) runs once per micro-batch step.
    const double mb = std::max(1, p.microBatches);
    f.cycleS = std::max(mb * (maxDec + f.p2pDecS), sumDec + PP * f.p2pDecS) + mb * m_stepOverheadS;
    f.stageStepS = maxDec;
    f.bubble = f.cycleS > 0 ? std::max(0.0, 1.0 - mb * maxDec / f.cycleS) : 0;
    f.stepTokens = dec.stepTokens;
    // The prompt's own work: a prefill pool's pass through the stages and its KV transfer,
    // elsewhere one prompt's prefill through every stage.
    if (m_scenario.workload.serving == ServingMode::Prefill) {
        f.passMs = (sumDec + (PP - 1) * f.p2pDecS) * 1e3;
        f.kvTransferMs = kvTransferMs(p);
    } else {
        f.prefillMs = (sumPre + (PP - 1) * p2pPre) * 1e3;
    }
    servingFigures(f, double(p.batch) * p.dataParallel, dec.stepSeqs * dec.queriesPerSeq, v.promptOwnerShare);

    // A prefill pool's pass is its step (`dec`); elsewhere one prompt's prefill. With
    // two-batch overlap a pass holds one half's activations at a time (SGLang: TBO "lowers
    // peak memory usage by halving the effective batch size").
    const bool pool = m_scenario.workload.serving == ServingMode::Prefill;
    const double promptTokens = (pool ? dec.stepTokens : pre.stepTokens) / std::max(1, pool ? dec.halves : pre.halves);
    // Each rank samples its share of the logits (lmHeadLogitsShare), carried in the sums so
    // that exact's tables, which price degrees with the operators' options in the sums,
    // see the same share as the plan's own evaluation.
    const double logits = p.batch * dec.queriesPerSeq * double(m_scenario.model.vocabSize) * v.logitsShare;
    f.activationBytes = std::max({promptTokens * m_hiddenBytes * m_constants.prefillWorkspaceFactor,
                                  p.batch * dec.queriesPerSeq * m_hiddenBytes * m_constants.decodeWorkspaceFactor,
                                  logits * m_constants.samplerBytesPerLogit});
    const double gb = 1e-9;
    // A batch fits when its cache fits the pool, i.e. when the rest of the memory holds the
    // pool that cache needs.
    f.memoryGb = f.weightsBytes * gb + f.kvBytes * gb * kvPoolGbPerCacheGb(m_scenario.workload.kvCacheMemoryFraction)
        + f.activationBytes * gb + m_scenario.cluster.gpu.memoryReserveGb;
    f.finite = std::isfinite(f.tpotMs) && std::isfinite(f.ttftMs) && std::isfinite(f.tokensPerSPerGpu)
        && std::isfinite(f.memoryGb) && std::isfinite(f.e2eMs);
    return f;
}

} // namespace shardlab
