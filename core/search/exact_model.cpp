#include "search/exact_model.h"

#include <algorithm>
#include <cmath>

namespace shardlab::exact {

namespace {
inline int idx(OpId id) { return static_cast<int>(id); }
} // namespace

CostVec& CostVec::operator+=(const CostVec& o)
{
    for (int i = 0; i < 4; ++i) {
        dec[i] += o.dec[i];
        pre[i] += o.pre[i];
        mem[i] += o.mem[i];
    }
    return *this;
}

bool CostVec::dominatedBy(const CostVec& o) const
{
    for (int i = 0; i < 4; ++i)
        if (o.dec[i] > dec[i] || o.pre[i] > pre[i] || o.mem[i] > mem[i])
            return false;
    return true;
}

CostVec operator+(CostVec a, const CostVec& b)
{
    a += b;
    return a;
}

CostVec componentMin(const CostVec& a, const CostVec& b)
{
    CostVec r;
    for (int i = 0; i < 4; ++i) {
        r.dec[i] = std::min(a.dec[i], b.dec[i]);
        r.pre[i] = std::min(a.pre[i], b.pre[i]);
        r.mem[i] = std::min(a.mem[i], b.mem[i]);
    }
    return r;
}

CostModel::CostModel(const Simulator& sim, const SearchSpace& space) : m_sim(sim), m_space(space)
{
    const Scenario& s = sim.scenario();
    const ClusterSpec& c = s.cluster;
    m_nd = s.model.denseLayerCount();
    m_nm = s.model.moeLayers();
    m_shared = opPresent(s.model, OpId::SharedExpert);
    m_link = linkModel(c);
    // Same expressions as Simulator's constructor, so the products round the same way.
    m_peakBf16 = c.gpu.peakTflopsBf16 * 1e12 * c.gpu.efficiency.compute;
    m_peakFp8 = c.gpu.peakTflopsFp8 * 1e12 * c.gpu.efficiency.compute;
    m_hbm = c.gpu.hbmTbps * 1e12 * c.gpu.efficiency.hbm;
    m_overheadS = c.gpu.kernelOverheadUs * 1e-6;
    m_hiddenBytes = sim.opStatic(OpId::Embedding).outBytesPerToken; // hidden x activation bytes
}

void CostModel::fillPhase(bool prefill, Phase& ph) const
{
    const Scenario& s = m_sim.scenario();
    const ModelSpec& m = s.model;
    const WorkloadSpec& w = s.workload;
    const int gpn = s.cluster.gpusPerNode;
    ph = Phase{};
    ph.prefill = prefill;
    ph.tp = m_c.tp;
    ph.maxCtx = w.maxContext();
    ph.batchSeqs = m_c.batch;
    if (prefill) {
        ph.seqs = std::max(1, m_sim.constants().prefillPrompts);
        ph.tokens = double(w.promptTokens) * ph.seqs;
        ph.ctx = w.promptTokens / 2.0;
    } else {
        ph.seqs = double(m_c.batch) / m_c.micro;
        ph.tokens = ph.seqs;
        ph.ctx = w.meanDecodeContext();
    }
    ph.tpGroup = placeGroup(m_c.tp, 1, gpn);
    if (m.isMoe()) {
        ph.moeRanks = m_c.tp * m_c.dp;
        ph.ep = m_c.ep;
        ph.etp = std::max(1, ph.moeRanks / std::max(1, ph.ep));
        ph.etpGroup = placeGroup(ph.etp, 1, gpn);
        ph.moeGroup = placeGroup(ph.moeRanks, 1, gpn);
        const double stageTokens = ph.tokens * m_c.dp;
        const double E = m.moe.experts, k = m.moe.expertsPerToken;
        ph.localExperts = E / ph.ep;
        const double mean = stageTokens * k / ph.ep;
        ph.routedPerEpRank = mean * (ph.ep > 1 ? m_sim.constants().expertLoadImbalance : 1.0);
        const double pIdle = std::exp(stageTokens * std::log1p(-std::min(k / E, 0.999999)));
        ph.activeLocalExperts = std::min(ph.localExperts, ph.localExperts * (1 - pIdle));
    }
}

double CostModel::opTime(OpId id, int option, const Phase& ph, double& weightRank) const
{
    const Simulator::OpStatic& s = m_sim.opStatic(id);
    const OpOption& opt = opInfo(id).options[option];
    const double peak = s.fp8 ? m_peakFp8 : m_peakBf16;
    double flops = 0, bytes = 0, commS = 0;
    weightRank = 0;
    switch (id) {
    case OpId::ExpertUp:
    case OpId::ExpertDown: {
        const bool split = opt.split == Split::Weights;
        const double g = ph.etp;
        const double tok = split ? ph.routedPerEpRank : ph.routedPerEpRank / g; // an expectation
        const double wf = split ? 1.0 / g : 1.0;
        flops = tok * s.flopsPerToken * wf;
        bytes = ph.activeLocalExperts * s.weightBytes * wf + tok * s.actBytesPerToken * wf;
        weightRank = ph.localExperts * s.weightBytes * wf;
        break;
    }
    case OpId::Dispatch:
    case OpId::Combine: {
        const double localTok = std::ceil(ph.tokens / ph.tp);
        const double M = ph.moeRanks;
        bytes = localTok * s.actBytesPerToken;
        const double k = m_sim.scenario().model.moe.expertsPerToken;
        Collective kind;
        double full;
        if (option == 0) {
            kind = Collective::AllToAll;
            full = M * localTok * k * m_hiddenBytes;
        } else {
            kind = id == OpId::Dispatch ? Collective::AllGather : Collective::ReduceScatter;
            full = M * localTok * m_hiddenBytes;
        }
        if (M > 1)
            commS = collectiveCost(kind, full, ph.moeGroup, m_link).seconds;
        break;
    }
    default: {
        const double g = ph.tp;
        double tok = ph.tokens, wf = 1.0, seqs = ph.seqs;
        if (opt.split == Split::Weights)
            wf = 1.0 / g;
        else if (opt.split == Split::Tokens) {
            tok = std::ceil(ph.tokens / g);
            seqs = std::ceil(ph.seqs / g);
        }
        weightRank = s.weightBytes * wf;
        flops = tok * s.flopsPerToken * wf;
        if (id == OpId::Embedding)
            bytes = tok * s.actBytesPerToken;
        else
            bytes = s.weightBytes * wf + tok * s.actBytesPerToken;
        if (id == OpId::Attention) {
            const double kvFrac = opt.split == Split::Weights ? std::max(wf, s.kvFloor) : 1.0;
            if (ph.prefill) {
                flops += tok * ph.ctx * s.attnFlopsPrefillPerCtx * wf;
                bytes += tok * s.kvBytesPerCtx * kvFrac;
                if (opt.split == Split::Tokens && g > 1)
                    commS += collectiveCost(Collective::AllGather, ph.tokens * s.kvBytesPerCtx, ph.tpGroup, m_link)
                                 .seconds;
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
    return t + commS;
}

double CostModel::kvBytes(int attentionOption) const
{
    const Simulator::OpStatic& s = m_sim.opStatic(OpId::Attention);
    const OpOption& a = opInfo(OpId::Attention).options[attentionOption];
    const Phase& ph = m_phase[0];
    const double g = ph.tp;
    const double kv = s.kvBytesPerCtx * ph.maxCtx;
    if (a.split == Split::Weights)
        return ph.batchSeqs * kv * std::max(1.0 / g, s.kvFloor);
    if (a.split == Split::Tokens)
        return std::ceil(ph.batchSeqs / g) * kv;
    return ph.batchSeqs * kv;
}

double CostModel::conv(int phase, int edge, Layout from, Layout to)
{
    const int f = static_cast<int>(from), t = static_cast<int>(to);
    if (m_convStamp[phase][edge][f][t] == m_stamp)
        return m_conv[phase][edge][f][t];
    const Phase& ph = m_phase[phase];
    auto outBytes = [&](OpId id) { return m_sim.opStatic(id).outBytesPerToken; };
    const double N = ph.tokens, routed = ph.routedPerEpRank;
    double bytes = 0;
    const Group* g = &ph.tpGroup;
    switch (edge) {
    case kAttnNormQkv: bytes = N * outBytes(OpId::AttnNorm); break;
    case kQkvAttention: bytes = N * outBytes(OpId::QkvProj); break;
    case kAttentionOut: bytes = N * outBytes(OpId::Attention); break;
    case kOutFfnNorm: bytes = N * outBytes(OpId::OutProj); break;
    case kFfnNormGateUp: bytes = N * outBytes(OpId::FfnNorm); break;
    case kGateUpDown: bytes = N * outBytes(OpId::GateUp); break;
    case kDownAttnNorm: bytes = N * outBytes(OpId::Down); break;
    case kFfnNormShared: bytes = N * m_hiddenBytes; break;
    case kFfnNormRouter: bytes = N * outBytes(OpId::FfnNorm); break;
    case kRouterDispatch: bytes = N * outBytes(OpId::Router); break;
    case kDispatchExpertUp:
        bytes = routed * outBytes(OpId::Dispatch);
        g = &ph.etpGroup;
        break;
    case kExpertUpDown:
        bytes = routed * outBytes(OpId::ExpertUp);
        g = &ph.etpGroup;
        break;
    case kExpertDownCombine:
        bytes = routed * outBytes(OpId::ExpertDown);
        g = &ph.etpGroup;
        break;
    case kSharedJoin:
    case kCombineAttnNorm: bytes = N * m_hiddenBytes; break;
    case kEmbeddingAttnNorm:
    case kLastHead: bytes = ph.tokens * m_hiddenBytes; break;
    default: break;
    }
    double seconds = 0;
    const Collective kind = conversionFor(from, to);
    if (!(kind == Collective::None || kind == Collective::LocalSlice || g->size <= 1))
        seconds = collectiveCost(kind, bytes, *g, m_link).seconds;
    m_conv[phase][edge][f][t] = seconds;
    m_convStamp[phase][edge][f][t] = m_stamp;
    return seconds;
}

void CostModel::setCoarse(const Coarse& c)
{
    m_c = c;
    if (++m_stamp == 0) { // wrapped: clear the stamps so no stale entry matches
        for (auto& a : m_convStamp)
            for (auto& b : a)
                for (auto& r : b)
                    r.fill(0);
        m_stamp = 1;
    }
    fillPhase(false, m_phase[0]);
    fillPhase(true, m_phase[1]);

    const Scenario& s = m_sim.scenario();
    const ModelSpec& m = s.model;
    const int etp = m_phase[0].etp;
    for (auto& v : m_allowed)
        v.clear();
    for (int i = 0; i < kOpCount; ++i)
        if (!opPresent(m, static_cast<OpId>(i)))
            m_allowed[i].push_back(opInfo(static_cast<OpId>(i)).megatronOption);
    for (int sl = m_space.firstOpSlot(); sl < m_space.slotCount(); ++sl) {
        const Slot& slot = m_space.slots()[sl];
        for (int o : slot.values)
            if (m_space.optionAllowed(slot.op, o, c.tp, m.isMoe() ? etp : 0))
                m_allowed[idx(slot.op)].push_back(o);
    }
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(m, id))
            continue;
        for (int o : m_allowed[i]) {
            double w = 0;
            m_time[0][i][o] = opTime(id, o, m_phase[0], w);
            m_weight[i][o] = w;
            m_time[1][i][o] = opTime(id, o, m_phase[1], w);
        }
    }

    m_stages.clear();
    const int L = m.layers, PP = c.pp;
    for (int k = 0; k < PP; ++k) {
        const int lo = static_cast<int>((long long)k * L / PP), hi = static_cast<int>((long long)(k + 1) * L / PP);
        const int dk = std::max(0, std::min(hi, m_nd) - lo), mk = (hi - lo) - dk;
        const bool first = k == 0, last = k == PP - 1;
        bool merged = false;
        for (Stage& st : m_stages)
            if (st.dense == dk && st.moe == mk && st.first == first && st.last == last) {
                ++st.count;
                merged = true;
            }
        if (!merged)
            m_stages.push_back({dk, mk, 1, first, last});
    }

    const int gpn = s.cluster.gpusPerNode;
    const bool crossNode = c.tp * c.dp >= gpn;
    const double bw = crossNode ? m_link.interBytesPerS : m_link.intraBytesPerS;
    const double lat = crossNode ? m_link.interLatencyS : m_link.intraLatencyS;
    m_p2pDec = PP > 1 ? lat + m_phase[0].tokens * m_hiddenBytes / c.tp / bw : 0;
    m_p2pPre = PP > 1 ? lat + m_phase[1].tokens * m_hiddenBytes / c.tp / bw : 0;
    const SimConstants& k = m_sim.constants();
    m_activationBytes = std::max(m_phase[1].tokens * m_hiddenBytes * k.prefillWorkspaceFactor,
                                 c.batch * m_hiddenBytes * k.decodeWorkspaceFactor);
}

Figures CostModel::figures(const CostVec& v) const
{
    double maxDec = 0, sumDec = 0, sumPre = 0, maxMem = 0;
    for (const Stage& st : m_stages) {
        double tDec = st.dense * v.dec[0] + st.moe * v.dec[1];
        double tPre = st.dense * v.pre[0] + st.moe * v.pre[1];
        double mem = st.dense * v.mem[0] + st.moe * v.mem[1];
        if (st.first) {
            tDec += v.dec[2];
            tPre += v.pre[2];
            mem += v.mem[2];
        }
        if (st.last) {
            tDec += v.dec[3];
            tPre += v.pre[3];
            mem += v.mem[3];
        }
        sumDec += st.count * tDec;
        sumPre += st.count * tPre;
        maxDec = std::max(maxDec, tDec);
        maxMem = std::max(maxMem, mem);
    }
    const Scenario& s = m_sim.scenario();
    Figures f;
    const double mb = m_c.micro;
    f.cycleS = std::max(mb * (maxDec + m_p2pDec), sumDec + m_c.pp * m_p2pDec);
    f.tpotMs = f.cycleS * 1e3;
    f.ttftMs = (sumPre + (m_c.pp - 1) * m_p2pPre) * 1e3;
    const double gb = 1e-9;
    f.memoryGb = maxMem * gb + m_activationBytes * gb + s.cluster.gpu.memoryReserveGb;
    const double seqsInFlight = double(m_c.batch) * m_c.dp;
    f.tokensPerSPerGpu = f.cycleS > 0 ? seqsInFlight / f.cycleS / double(s.cluster.totalGpus()) : 0;
    f.finite = std::isfinite(f.tpotMs) && std::isfinite(f.ttftMs) && std::isfinite(f.tokensPerSPerGpu)
        && std::isfinite(f.memoryGb);
    return f;
}

bool CostModel::withinLimits(const Figures& f, double slack) const
{
    const Scenario& s = m_sim.scenario();
    return f.finite && f.memoryGb <= s.cluster.gpu.hbmGb * (1 + slack) && f.ttftMs <= s.workload.ttftSloMs * (1 + slack)
        && f.tpotMs <= s.workload.tpotSloMs * (1 + slack);
}

} // namespace shardlab::exact
