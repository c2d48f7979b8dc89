#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

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
    case Violation::Count: break;
    }
    return "?";
}

// Everything about one phase (decode step or prefill) that does not depend on the op.
struct Simulator::Phase {
    bool prefill = false;
    double tokens = 0;      // attention side, per replica per micro-batch
    double seqs = 0;        // sequences those tokens belong to
    double ctx = 0;         // cached tokens each query attends to (mean)
    double batchSeqs = 0;   // sequences whose KV cache a replica holds (memory)
    double maxCtx = 0;
    int tp = 1, etp = 1, ep = 1, moeRanks = 1;
    double tokensPerRank = 0; // ceil(tokens / TP): a token-split operator's share
    double seqsPerRank = 0;   // ceil(seqs / TP)
    double invTp = 1;
    double routedPerEtpRank = 0; // routedPerEpRank / expert TP (an expectation)
    double invEtp = 1;
    Group tpGroup, etpGroup, moeGroup;
    double routedPerEpRank = 0;   // token-expert pairs landing on one EP rank (busiest)
    double localExperts = 0;
    double activeLocalExperts = 0; // of those, how many see at least one token
};

double Simulator::convert(Layout from, Layout to, double fullBytes, const Group& g, OpBreakdown* acc,
                          double scale) const
{
    const Collective kind = conversionFor(from, to);
    if (kind == Collective::None || kind == Collective::LocalSlice || g.size <= 1)
        return 0;
    const CollectiveCost c = collectiveCost(kind, fullBytes, g, m_link);
    chargeCollective(acc, c, scale, false);
    return c.seconds;
}

void Simulator::fillPhase(const Plan& p, bool prefill, Phase& ph) const
{
    const ModelSpec& m = m_scenario.model;
    const WorkloadSpec& w = m_scenario.workload;
    const int gpn = m_scenario.cluster.gpusPerNode;
    ph.prefill = prefill;
    ph.tp = p.tensorParallel;
    ph.maxCtx = w.maxContext();
    ph.batchSeqs = p.batch;
    if (prefill) {
        ph.seqs = std::max(1, m_constants.prefillPrompts);
        ph.tokens = double(w.promptTokens) * ph.seqs;
        ph.ctx = w.promptTokens / 2.0; // causal: the mean query sees half the prompt
    } else {
        ph.seqs = double(p.batch) / p.microBatches;
        ph.tokens = ph.seqs;
        ph.ctx = w.meanDecodeContext();
    }
    ph.tpGroup = placeGroup(p.tensorParallel, 1, gpn);
    ph.tokensPerRank = std::ceil(ph.tokens / ph.tp);
    ph.seqsPerRank = std::ceil(ph.seqs / ph.tp);
    ph.invTp = 1.0 / ph.tp;
    if (m.isMoe()) {
        ph.moeRanks = p.tensorParallel * p.dataParallel;
        ph.ep = p.expertParallel;
        ph.etp = std::max(1, ph.moeRanks / std::max(1, ph.ep));
        ph.etpGroup = placeGroup(ph.etp, 1, gpn);
        ph.moeGroup = placeGroup(ph.moeRanks, 1, gpn);
        // Every replica runs the same phase in lock step (symmetric load).
        const double stageTokens = ph.tokens * p.dataParallel;
        const double E = m.moe.experts, k = m.moe.expertsPerToken;
        ph.localExperts = E / ph.ep;
        const double mean = stageTokens * k / ph.ep;
        ph.routedPerEpRank = mean * (ph.ep > 1 ? m_constants.expertLoadImbalance : 1.0);
        // P(an expert gets no token) = (1 - k/E)^tokens: its weights are not read.
        const double pIdle = std::exp(stageTokens * m_logExpertIdle);
        ph.activeLocalExperts = std::min(ph.localExperts, ph.localExperts * (1 - pIdle));
        ph.routedPerEtpRank = ph.routedPerEpRank / ph.etp; // an expectation, not a count
        ph.invEtp = 1.0 / ph.etp;
    }
}

double Simulator::opTime(OpId id, const Plan& p, const Phase& ph, OpBreakdown* acc, double scale,
                         double& weightRank) const
{
    const OpStatic& s = m_ops[idx(id)];
    const OpOption& opt = opInfo(id).options[p.option(id)];
    const double peak = s.fp8 ? m_peakFp8 : m_peakBf16;
    double flops = 0, bytes = 0, commS = 0;
    weightRank = 0;

    switch (id) {
    case OpId::ExpertUp:
    case OpId::ExpertDown: {
        const bool split = opt.split == Split::Weights;
        const double tok = split ? ph.routedPerEpRank : ph.routedPerEtpRank;
        const double wf = split ? ph.invEtp : 1.0;
        flops = tok * s.flopsPerToken * wf;
        bytes = ph.activeLocalExperts * s.weightBytes * wf + tok * s.actBytesPerToken * wf;
        weightRank = ph.localExperts * s.weightBytes * wf;
        break;
    }
    case OpId::Dispatch:
    case OpId::Combine: {
        const double localTok = ph.tokensPerRank;
        const double M = ph.moeRanks;
        bytes = localTok * s.actBytesPerToken;
        const double k = m_scenario.model.moe.expertsPerToken;
        Collective kind;
        double full;
        const bool a2a = p.option(id) == 0;
        if (a2a) {
            kind = Collective::AllToAll;
            full = M * localTok * k * m_hiddenBytes;
        } else {
            kind = id == OpId::Dispatch ? Collective::AllGather : Collective::ReduceScatter;
            full = M * localTok * m_hiddenBytes;
        }
        if (M > 1) {
            const CollectiveCost c = collectiveCost(kind, full, ph.moeGroup, m_link);
            commS = c.seconds;
            chargeCollective(acc, c, scale, true);
        }
        break;
    }
    default: {
        const double g = ph.tp;
        double tok = ph.tokens, wf = 1.0, seqs = ph.seqs;
        if (opt.split == Split::Weights)
            wf = ph.invTp;
        else if (opt.split == Split::Tokens) {
            tok = ph.tokensPerRank;
            seqs = ph.seqsPerRank;
        }
        weightRank = s.weightBytes * wf;
        flops = tok * s.flopsPerToken * wf;
        if (id == OpId::Embedding)
            bytes = tok * s.actBytesPerToken; // a lookup reads only the rows it needs
        else
            bytes = s.weightBytes * wf + tok * s.actBytesPerToken;
        if (id == OpId::Attention) {
            const double kvFrac = opt.split == Split::Weights ? std::max(wf, s.kvFloor) : 1.0;
            if (ph.prefill) {
                flops += tok * ph.ctx * s.attnFlopsPrefillPerCtx * wf;
                bytes += tok * s.kvBytesPerCtx * kvFrac; // the cache is written once
                if (opt.split == Split::Tokens && g > 1) {
                    // Sequence-split prefill: every rank needs the keys/values of the
                    // earlier chunks: all-gather them.
                    const CollectiveCost c = collectiveCost(Collective::AllGather, ph.tokens * s.kvBytesPerCtx,
                                                            ph.tpGroup, m_link);
                    commS += c.seconds;
                    chargeCollective(acc, c, scale, true);
                }
            } else {
                flops += tok * ph.ctx * s.attnFlopsDecodePerCtx * wf;
                bytes += seqs * ph.ctx * s.kvBytesPerCtx * kvFrac;
            }
        }
        break;
    }
    }
    const double computeS = flops / peak;
    const double memoryS = bytes / m_hbm;
    const double t = std::max(computeS, memoryS) + m_overheadS;
    if (acc) {
        acc->present = true;
        acc->computeUs += computeS * 1e6 * scale;
        acc->memoryUs += memoryS * 1e6 * scale;
        acc->timeUs += t * 1e6 * scale;
        acc->flops += flops * scale;
        acc->hbmBytes += bytes * scale;
        acc->bound = acc->computeUs > acc->memoryUs ? Bound::Compute : Bound::Memory;
    }
    return t + commS;
}

Simulator::LayerCost Simulator::evalLayer(bool moe, const Plan& p, const Phase& ph,
                                          std::array<OpBreakdown, kOpCount>* acc, double scale) const
{
    LayerCost lc;
    auto A = [&](OpId id) { return acc ? &(*acc)[idx(id)] : nullptr; };
    auto in = [&](OpId id) { return opInfo(id).options[p.option(id)].in; };
    auto outL = [&](OpId id) { return opInfo(id).options[p.option(id)].out; };
    const double N = ph.tokens;
    double w = 0;

    // The conversion from the previous layer's output into attn_norm's input is charged
    // at the end of each layer (steady state: the previous layer is of the same kind).
    Layout cur = in(OpId::AttnNorm);
    double curBytes = m_hiddenBytes;
    const OpId attnChain[] = {OpId::AttnNorm, OpId::QkvProj, OpId::Attention, OpId::OutProj, OpId::FfnNorm};
    for (OpId id : attnChain) {
        lc.timeS += convert(cur, in(id), N * curBytes, ph.tpGroup, A(id), scale);
        lc.timeS += opTime(id, p, ph, A(id), scale, w);
        lc.weightBytes += w;
        cur = outL(id);
        curBytes = m_ops[idx(id)].outBytesPerToken;
    }
    // KV cache held by this GPU for this layer: every sequence of the replica, longest context.
    {
        const OpOption& a = opInfo(OpId::Attention).options[p.option(OpId::Attention)];
        const double g = ph.tp;
        const double kv = m_ops[idx(OpId::Attention)].kvBytesPerCtx * ph.maxCtx;
        if (a.split == Split::Weights)
            lc.kvBytes = ph.batchSeqs * kv * std::max(1.0 / g, m_ops[idx(OpId::Attention)].kvFloor);
        else if (a.split == Split::Tokens)
            lc.kvBytes = std::ceil(ph.batchSeqs / g) * kv;
        else
            lc.kvBytes = ph.batchSeqs * kv;
    }

    if (!moe) {
        for (OpId id : {OpId::GateUp, OpId::Down}) {
            lc.timeS += convert(cur, in(id), N * curBytes, ph.tpGroup, A(id), scale);
            lc.timeS += opTime(id, p, ph, A(id), scale, w);
            lc.weightBytes += w;
            cur = outL(id);
            curBytes = m_ops[idx(id)].outBytesPerToken;
        }
        lc.timeS += convert(cur, in(OpId::AttnNorm), N * curBytes, ph.tpGroup, A(OpId::AttnNorm), scale);
        return lc;
    }

    const Layout normOut = cur;
    const bool shared = m_hasShared;
    Layout sharedOut = Layout::T;
    if (shared) {
        const OpId id = OpId::SharedExpert;
        lc.timeS += convert(normOut, in(id), N * m_hiddenBytes, ph.tpGroup, A(id), scale);
        lc.timeS += opTime(id, p, ph, A(id), scale, w);
        lc.weightBytes += w;
        sharedOut = outL(id);
    }
    for (OpId id : {OpId::Router, OpId::Dispatch}) {
        lc.timeS += convert(cur, in(id), N * curBytes, ph.tpGroup, A(id), scale);
        lc.timeS += opTime(id, p, ph, A(id), scale, w);
        lc.weightBytes += w;
        cur = outL(id);
        curBytes = m_ops[idx(id)].outBytesPerToken;
    }
    // Expert side: tensors hold the routed token-expert pairs of one EP rank.
    const double routed = ph.routedPerEpRank;
    for (OpId id : {OpId::ExpertUp, OpId::ExpertDown, OpId::Combine}) {
        lc.timeS += convert(cur, in(id), routed * curBytes, ph.etpGroup, A(id), scale);
        lc.timeS += opTime(id, p, ph, A(id), scale, w);
        lc.weightBytes += w;
        cur = outL(id);
        curBytes = m_ops[idx(id)].outBytesPerToken;
    }
    if (shared) // the shared expert's output joins the combined output (same layout needed)
        lc.timeS += convert(sharedOut, cur, N * m_hiddenBytes, ph.tpGroup, A(OpId::SharedExpert), scale);
    lc.timeS += convert(cur, in(OpId::AttnNorm), N * m_hiddenBytes, ph.tpGroup, A(OpId::AttnNorm), scale);
    return lc;
}

void Simulator::evaluate(const Plan& p, SimResult& r, bool breakdown) const
{
    if (breakdown) {
        r = SimResult{};
    } else { // fast path: reset the summary; the breakdown arrays are only marked absent
        r.valid = false;
        r.violations = r.structureChecks = 0;
        r.tpotMs = r.ttftMs = r.decodeTokensPerS = r.tokensPerSPerGpu = 0;
        r.stageStepUs = r.pipelineBubble = r.p2pUs = 0;
        r.expertTensorParallel = 0;
        r.memory = MemoryBreakdown{};
        for (int i = 0; i < kOpCount; ++i)
            r.decode[i].present = r.prefill[i].present = false;
    }
    const ModelSpec& m = m_scenario.model;
    const ClusterSpec& c = m_scenario.cluster;
    const WorkloadSpec& wl = m_scenario.workload;

    r.structureChecks = planStructureViolations(p, m_scenario);
    bool shapeOk = p.tensorParallel >= 1 && p.pipelineParallel >= 1 && p.dataParallel >= 1 && p.expertParallel >= 1
        && p.batch >= 1 && p.microBatches >= 1;
    for (int i = 0; i < kOpCount; ++i)
        shapeOk = shapeOk && p.sharding[i] < opInfo(static_cast<OpId>(i)).optionCount;
    if (!shapeOk)
        r.structureChecks |= 1u << static_cast<int>(PlanCheck::MicroBatches);
    if (r.structureChecks) {
        for (int b = 0; b < kPlanCheckCount; ++b)
            if (r.structureChecks & (1u << b))
                r.violations |= 1u << static_cast<int>(isTilingCheck(static_cast<PlanCheck>(b)) ? Violation::Tiling
                                                                                                 : Violation::Divisibility);
        return; // degrees that do not fit the model or cluster have no meaningful cost
    }
    r.expertTensorParallel = m.isMoe() ? expertTensorParallel(p) : 0;

    Phase dec, pre;
    fillPhase(p, false, dec);
    fillPhase(p, true, pre);

    // One layer of each kind, per phase, with per-op breakdowns per layer.
    // Scratch breakdowns live in thread-local storage: no allocation, no 8 KB of zeroing
    // per call on the fast path.
    struct Scratch {
        std::array<OpBreakdown, kOpCount> dDense, dMoe, pDense, pMoe, dFixed, pFixed;
    };
    thread_local Scratch scratch;
    auto* dDenseP = breakdown ? &scratch.dDense : nullptr;
    auto* dMoeP = breakdown ? &scratch.dMoe : nullptr;
    auto* pDenseP = breakdown ? &scratch.pDense : nullptr;
    auto* pMoeP = breakdown ? &scratch.pMoe : nullptr;
    if (breakdown)
        scratch = Scratch{};
    auto& dDense = scratch.dDense;
    auto& dMoe = scratch.dMoe;
    auto& pDense = scratch.pDense;
    auto& pMoe = scratch.pMoe;
    auto& dFixed = scratch.dFixed;
    auto& pFixed = scratch.pFixed;
    const int nd = m.denseLayerCount(), nm = m.moeLayers();
    LayerCost decD, decM, preD, preM;
    if (nd > 0) {
        decD = evalLayer(false, p, dec, dDenseP, 1.0);
        preD = evalLayer(false, p, pre, pDenseP, 1.0);
    }
    if (nm > 0) {
        decM = evalLayer(true, p, dec, dMoeP, 1.0);
        preM = evalLayer(true, p, pre, pMoeP, 1.0);
    }
    // Embedding on the first stage, final norm + LM head on the last.
    double embW = 0, headW = 0;
    auto fixedCost = [&](const Phase& ph, std::array<OpBreakdown, kOpCount>& acc, double& embS, double& headS) {
        const auto& E = opInfo(OpId::Embedding).options[p.option(OpId::Embedding)];
        const auto& Hd = opInfo(OpId::LmHead).options[p.option(OpId::LmHead)];
        OpBreakdown* accE = breakdown ? &acc[idx(OpId::Embedding)] : nullptr;
        OpBreakdown* accH = breakdown ? &acc[idx(OpId::LmHead)] : nullptr;
        embS = opTime(OpId::Embedding, p, ph, accE, 1.0, embW);
        embS += convert(E.out, opInfo(OpId::AttnNorm).options[p.option(OpId::AttnNorm)].in,
                        ph.tokens * m_hiddenBytes, ph.tpGroup, accE, 1.0);
        const Layout last = nm > 0 ? Layout::T : opInfo(OpId::Down).options[p.option(OpId::Down)].out;
        headS = convert(last, Hd.in, ph.tokens * m_hiddenBytes, ph.tpGroup, accH, 1.0);
        headS += opTime(OpId::LmHead, p, ph, accH, 1.0, headW);
    };
    double embDec, headDec, embPre, headPre;
    fixedCost(dec, dFixed, embDec, headDec);
    fixedCost(pre, pFixed, embPre, headPre);

    // Pipeline stages: contiguous layer ranges (stage k holds floor((k+1)L/PP) -
    // floor(kL/PP) layers), dense layers first. Walked without divisions: hot path.
    const int L = m.layers, PP = p.pipelineParallel;
    double maxStageDec = 0, sumStageDec = 0, sumStagePre = 0, maxStageMem = -1;
    int busyDense = 0, busyMoe = 0, busyStage = 0;
    double memWeights = 0, memKv = 0;
    {
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
            const int dk = std::max(0, std::min(hi, nd) - lo), mk = size - dk;
            lo = hi;
            double tDec = dk * decD.timeS + mk * decM.timeS;
            double tPre = dk * preD.timeS + mk * preM.timeS;
            double wk = dk * decD.weightBytes + mk * decM.weightBytes;
            const double kk = dk * decD.kvBytes + mk * decM.kvBytes;
            if (k == 0) {
                tDec += embDec;
                tPre += embPre;
                wk += embW;
            }
            if (k == PP - 1) {
                tDec += headDec;
                tPre += headPre;
                wk += headW;
            }
            sumStageDec += tDec;
            sumStagePre += tPre;
            if (tDec > maxStageDec) {
                maxStageDec = tDec;
                busyDense = dk;
                busyMoe = mk;
                busyStage = k;
            }
            if (wk + kk > maxStageMem) {
                maxStageMem = wk + kk;
                memWeights = wk;
                memKv = kk;
            }
        }
    }

    // Stage-to-stage transfer of one micro-batch's hidden states, each rank its 1/TP.
    const int gpn = c.gpusPerNode;
    const bool crossNode = p.tensorParallel * p.dataParallel >= gpn;
    const double bw = crossNode ? m_link.interBytesPerS : m_link.intraBytesPerS;
    const double lat = crossNode ? m_link.interLatencyS : m_link.intraLatencyS;
    const double p2pDec = PP > 1 ? lat + dec.tokens * m_hiddenBytes / p.tensorParallel / bw : 0;
    const double p2pPre = PP > 1 ? lat + pre.tokens * m_hiddenBytes / p.tensorParallel / bw : 0;

    const double mb = p.microBatches;
    const double cycle = std::max(mb * (maxStageDec + p2pDec), sumStageDec + PP * p2pDec);
    r.stageStepUs = maxStageDec * 1e6;
    r.p2pUs = p2pDec * 1e6;
    r.pipelineBubble = cycle > 0 ? std::max(0.0, 1.0 - mb * maxStageDec / cycle) : 0;
    r.tpotMs = cycle * 1e3;
    r.ttftMs = (sumStagePre + (PP - 1) * p2pPre) * 1e3;
    const double seqsInFlight = double(p.batch) * p.dataParallel;
    r.decodeTokensPerS = cycle > 0 ? seqsInFlight / cycle : 0;
    r.tokensPerSPerGpu = r.decodeTokensPerS / double(c.totalGpus());

    // Per-op breakdown of the busiest stage (decode) and of the whole prefill.
    auto combine = [&](std::array<OpBreakdown, kOpCount>& dst, const std::array<OpBreakdown, kOpCount>& dense,
                       const std::array<OpBreakdown, kOpCount>& moe, const std::array<OpBreakdown, kOpCount>& fixed,
                       double nDense, double nMoe, bool withEmb, bool withHead) {
        for (int i = 0; i < kOpCount; ++i) {
            OpBreakdown& o = dst[i];
            auto add = [&](const OpBreakdown& s, double f) {
                if (!s.present || f <= 0)
                    return;
                o.present = true;
                o.computeUs += s.computeUs * f;
                o.memoryUs += s.memoryUs * f;
                o.timeUs += s.timeUs * f;
                o.commUs += s.commUs * f;
                o.commBytes += s.commBytes * f;
                o.flops += s.flops * f;
                o.hbmBytes += s.hbmBytes * f;
                o.collectivesPerLayer = std::max(o.collectivesPerLayer, s.collectivesPerLayer);
                if (o.collective == Collective::None)
                    o.collective = s.collective;
            };
            add(dense[i], nDense);
            add(moe[i], nMoe);
            if ((i == idx(OpId::Embedding) && withEmb) || (i == idx(OpId::LmHead) && withHead))
                add(fixed[i], 1.0);
            o.bound = o.computeUs > o.memoryUs ? Bound::Compute : Bound::Memory;
        }
    };
    if (breakdown) {
        combine(r.decode, dDense, dMoe, dFixed, busyDense, busyMoe, busyStage == 0, busyStage == PP - 1);
        combine(r.prefill, pDense, pMoe, pFixed, nd, nm, true, true);
    }

    // Memory of the fullest stage's GPU.
    MemoryBreakdown& mem = r.memory;
    const double gb = 1e-9;
    mem.capacityGb = c.gpu.hbmGb;
    mem.reserveGb = c.gpu.memoryReserveGb;
    mem.weightsGb = memWeights * gb;
    mem.kvCacheGb = memKv * gb;
    const double prefillWs = pre.tokens * m_hiddenBytes * m_constants.prefillWorkspaceFactor;
    const double decodeWs = p.batch * m_hiddenBytes * m_constants.decodeWorkspaceFactor;
    mem.activationGb = std::max(prefillWs, decodeWs) * gb;
    mem.totalGb = mem.weightsGb + mem.kvCacheGb + mem.activationGb + mem.reserveGb;

    if (mem.totalGb > mem.capacityGb)
        r.violations |= 1u << static_cast<int>(Violation::Memory);
    if (r.ttftMs > wl.ttftSloMs)
        r.violations |= 1u << static_cast<int>(Violation::TtftSlo);
    if (r.tpotMs > wl.tpotSloMs)
        r.violations |= 1u << static_cast<int>(Violation::TpotSlo);
    if (!std::isfinite(r.tpotMs) || !std::isfinite(r.ttftMs) || !std::isfinite(r.tokensPerSPerGpu)
        || !std::isfinite(mem.totalGb)) {
        // Absurd inputs (bandwidth 1e-12 GB/s) overflow to Inf: report them as SLO misses.
        r.violations |= 1u << static_cast<int>(Violation::TpotSlo);
        if (!std::isfinite(r.tpotMs))
            r.tpotMs = 1e300;
        if (!std::isfinite(r.ttftMs))
            r.ttftMs = 1e300;
        if (!std::isfinite(r.tokensPerSPerGpu))
            r.tokensPerSPerGpu = r.decodeTokensPerS = 0;
    }
    r.valid = r.violations == 0;
}

} // namespace shardlab
