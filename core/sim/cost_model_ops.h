// The per-operator and per-edge prices of the cost model (cost_model.h), inline so that
// the simulator's walk and the exact search's tables inline them (hot paths). Included by
// cost_model.h only; docs/simulator.md §2 (collectives) and §3 explain each formula.
#pragma once

#include <algorithm>
#include <cmath>

namespace shardlab {

inline OpCost CostModel::opInStep(OpId id, int option, const StepContext& ph) const
{
    const OpStatic& s = m_ops[static_cast<int>(id)];
    const OpOption& opt = opOption(id, option);
    const double peak = s.fp8 ? m_peakFp8 : m_peakBf16;
    OpCost c;
    double flops = 0, bytes = 0;
    double gemmElems = 0; // a GEMM's n x k on this GPU (experts: one expert's shard)
    double matrixElems = 0; // grouped expert GEMMs: one projection matrix of one expert's shard
    double stored = 1;      // a weight-only kernel's padded elements per element (its tiles)

    switch (id) {
    case OpId::ExpertUp:
    case OpId::ExpertDown: {
        const bool split = opt.split == Split::Weights;
        const double tok = split ? ph.routedPerEpRank : ph.routedPerEtpRank;
        const double wf = split ? ph.invEtp : 1.0;
        // A weight-only 4-bit kernel may store, read and multiply padded MXFP4 matrices (its
        // tiles); the model's FLOPs stay the unpadded ones.
        if (s.paddedMxfp4)
            stored = m_gemm.storedShareW4(m_scenario.model.hiddenSize, m_scenario.model.moe.expertFfnHidden * wf);
        flops = tok * s.flopsPerToken * wf;
        bytes = ph.activeLocalExperts * s.weightBytes * wf * stored + tok * s.actBytesPerToken * wf;
        c.weightBytes = ph.localExperts * s.weightBytes * wf * stored;
        gemmElems = s.weightElems * wf * stored;
        matrixElems = s.matrixElems * wf * stored;
        break;
    }
    case OpId::Dispatch:
    case OpId::Combine: {
        const double localTok = ph.tokensPerRank;
        const double M = ph.moeRanks;
        const double k = m_scenario.model.moe.expertsPerToken;
        // The permutation (or its inverse) copies each routed (token, expert) pair's hidden
        // state: the rank's own tokens' pairs before they leave, the pairs routed to its
        // expert slots once they arrive. A gathered layer (tensor-parallel experts, or an
        // all-gather to the expert ranks) holds every token of its group, so a rank
        // permutes every pair of its slots, not its 1/TP share of the tokens'.
        bytes = std::max(localTok * k, ph.routedPerEpRank) * s.actBytesPerToken;
        if (M > 1) {
            // all-to-all: each token to its top-k experts' ranks (NCCL, or the engine's
            // DeepEP-style kernels: moe_all_to_all.h); otherwise every token to (all-gather)
            // or from (reduce-scatter) every expert rank. The all-gather starts replicated
            // over each TP group, so it gathers only across the replicas: none when the
            // expert group is one TP group (a TP MoE layer reads the tokens it holds).
            const Collective kind = ownCollective(id, option);
            const MoeKernel kernel = moeKernel(ph);
            if (kind == Collective::AllToAll && kernel != MoeKernel::Nccl)
                c.own = moeAllToAllCost(kernel, id == OpId::Combine, localTok, m_scenario.model.hiddenSize,
                                        static_cast<int>(k), ph.moeGroup, m_link);
            else if (kind == Collective::AllGather) {
                const long long replicas = ownCollectiveRanks(kind, ph.moeRanks, ph.tp);
                if (replicas > 1)
                    c.own = collectiveCost(kind, replicas * ph.tokens * m_hiddenBytes, ph.replicaGroup, m_link);
            } else {
                const double full =
                    kind == Collective::AllToAll ? M * localTok * k * m_hiddenBytes : M * localTok * m_hiddenBytes;
                c.own = collectiveCost(kind, full, ph.moeGroup, m_link);
            }
        }
        break;
    }
    default: {
        double tok = ph.tokensReplica, wf = 1.0, seqs = ph.seqs, chunk = ph.chunkReplica, ctx = ph.ctxReplica;
        if (opt.split == Split::Weights)
            wf = ph.invTp;
        else if (pricedAtBusiestRank(id, opt)) {
            tok = ph.tokensBusiestRank;
            seqs = ph.seqsPerRank;
            chunk = ph.chunkBusiestRank;
            ctx = ph.ctxTokenRank;
        }
        // Logits are computed for the last position of each sequence only: the decoding
        // sequences, or each prompt of a prefill, never a prompt chunk's other tokens.
        if (id == OpId::LmHead) {
            tok = seqs * ph.queriesPerSeq; // speculative decoding: every verified position
            // A vocabulary-split head's logits are gathered whole for the sampler (16-bit).
            if (lmHeadGathersLogits(option, ph.tp))
                c.own = collectiveCost(Collective::AllGather, tok * s.outBytesPerToken, ph.tpGroup, m_link);
        }

        c.weightBytes = s.weightBytes * wf;
        gemmElems = s.weightElems * wf;
        flops = tok * s.flopsPerToken * wf;
        if (id == OpId::Embedding)
            bytes = tok * s.actBytesPerToken; // a lookup reads only the rows it needs
        else
            bytes = s.weightBytes * wf + tok * s.actBytesPerToken;
        if (id == OpId::Attention) {
            const double kvFrac = opt.split == Split::Weights ? std::max(wf, s.kvFloor) : 1.0;
            // An attention layer mix (OpStatic::mixed): the layers' mean attended context,
            // the cache written by the layers that keep one, and linear layers' state.
            const double cached = s.mixed ? 1 - s.linearShare : 1.0;
            const double stateFrac = opt.split == Split::Weights ? std::max(wf, s.stateFloor) : 1.0;
            if (ph.prefill) {
                const double promptCtx = s.mixed ? attendedContext(s, ph.ctx, true) : ph.ctx;
                flops += tok * promptCtx * s.attnFlopsPrefillPerCtx * wf;
                bytes += tok * s.kvBytesPerCtx * kvFrac * cached; // the cache is written once
                if (s.stateBytes > 0) {
                    flops += tok * s.stateFlopsPrefill * wf;
                    bytes += seqs * s.stateBytes * stateFrac; // each prompt's final state written
                }
            } else {
                // Speculative decoding's k + 1 queries per sequence share one read of its cache.
                const double attended = s.mixed ? attendedContext(s, ctx, false) : ctx;
                const double decodeFlops = seqs * ph.queriesPerSeq * attended * s.attnFlopsDecodePerCtx * wf;
                flops += decodeFlops;
                bytes += seqs * attended * s.kvBytesPerCtx * kvFrac;
                double chunkFlops = 0; // at the BF16 peak: the chunk's and linear layers' state
                if (chunk > 0) {
                    // The prompt chunk beside them: causal attention over the prompt's
                    // prefix; it writes its keys/values and reads about half as much again
                    // of the earlier chunks' (with a layer mix: as much as they attend to).
                    const double chunkCtx = s.mixed ? attendedContext(s, ph.chunkCtx, true) : ph.chunkCtx;
                    const double chunkKv = s.mixed ? cached + 0.5 * chunkCtx / std::max(1.0, ph.chunkCtx) : 1.5;
                    chunkFlops = chunk * chunkCtx * s.attnFlopsPrefillPerCtx * wf;
                    flops += chunkFlops;
                    bytes += chunkKv * chunk * s.kvBytesPerCtx * kvFrac;
                }
                if (s.stateBytes > 0) {
                    // Linear layers: every decoding sequence reads and writes its state once
                    // per token, whatever its context; a prompt chunk runs the chunked form.
                    const double stateFlops = (seqs * ph.queriesPerSeq * s.stateFlopsDecode + chunk * s.stateFlopsPrefill) * wf;
                    chunkFlops += stateFlops;
                    flops += stateFlops;
                    bytes += 2 * seqs * s.stateBytes * stateFrac;
                }
                if (s.queryHeads > 0) {
                    // GQA/MHA decode attention: the profile's kernel (docs/kernels.md, "Decode
                    // attention"): a fixed cost, the cache streamed or the decode FLOPs at
                    // their fitted rates (the prompt chunk's at the compute efficiency), and a
                    // cost per (sequence, query head) of this rank. Linear in the sequences.
                    c.flops = flops;
                    c.hbmBytes = bytes;
                    c.computeS = decodeFlops / m_attnFlops + chunkFlops / m_peakBf16;
                    c.memoryS = bytes / m_attnStream;
                    const double perHead = m_attnPerHeadS * seqs * ph.queriesPerSeq * s.queryHeads * wf;
                    if (s.linearShare > 0) {
                        // Only the attention layers run the attention kernel; linear
                        // layers run their own (one launch each).
                        const double a = 1 - s.linearShare;
                        c.fixedS = a * m_attnFixedS + s.linearShare * m_overheadS;
                        c.timeS = c.fixedS + std::max(c.computeS, c.memoryS) + a * perHead;
                        return c;
                    }
                    c.fixedS = m_attnFixedS;
                    c.timeS = c.fixedS + std::max(c.computeS, c.memoryS) + perHead;
                    return c;
                }
            }
        }
        break;
    }
    }
    c.flops = flops;
    c.hbmBytes = bytes;
    if (s.gemm) {
        // By size and precision, with the per-kernel fixed cost (gemm_model.h).
        if (matrixElems > 0 && s.w4a16) // grouped expert GEMMs: their own curve (gemm_model.h)
            c.computeS = m_gemm.groupedW4ComputeS(flops * stored, matrixElems, gemmElems);
        else if (matrixElems > 0)
            c.computeS = m_gemm.groupedComputeS(s.fp8, s.fp4, flops, matrixElems, gemmElems);
        else
            c.computeS = s.fp4 ? m_gemm.computeSFp4(flops, gemmElems) : m_gemm.computeS(s.fp8, flops, gemmElems);
        c.memoryS = s.w4a16         ? m_gemm.memoryW4S(bytes)
            : matrixElems > 0 ? m_gemm.groupedMemoryS(s.fp8, bytes)
                              : m_gemm.memoryS(s.fp8, bytes);
        c.fixedS = m_gemm.fixedS(s.fp8);
        c.timeS = std::max(c.computeS, c.memoryS) + c.fixedS;
        return c;
    }
    c.computeS = flops / peak;
    c.memoryS = bytes / m_hbm;
    c.fixedS = m_overheadS;
    c.timeS = std::max(c.computeS, c.memoryS) + c.fixedS;
    return c;
}

inline CollectiveCost CostModel::edgeInStep(const GraphEdge& e, Layout from, Layout to, const StepContext& ph) const
{
    const Collective kind = conversionFor(from, to);
    const bool expert = e.space == EdgeSpace::Expert;
    const Group& g = expert ? ph.etpGroup : ph.tpGroup;
    if (kind == Collective::None || kind == Collective::LocalSlice || g.size <= 1)
        return {};
    const double tokens = expert ? ph.routedPerEpRank : ph.tokensReplica;
    return collectiveCost(kind, tokens * m_ops[static_cast<int>(e.from)].outBytesPerToken, g, m_link);
}

// The mean over steps of a collective: share w of `withPiece`, the rest `plain`. Its
// size-capped count is the two steps' sum: a limit crossed in either step is a place where
// the price can jump. A phase priced as one step counts that step twice (phaseCollective),
// so the count never falls as the batch grows, also where the share reaches 1 and the plain
// step drops out (the step with the piece becomes the mean step there, and the plain step's
// messages are the smaller).
inline CollectiveCost weightedCollective(const CollectiveCost& withPiece, const CollectiveCost& plain, double w)
{
    CollectiveCost c = withPiece.kind != Collective::None ? withPiece : plain;
    c.seconds = w * withPiece.seconds + (1 - w) * plain.seconds;
    c.bytesPerRank = w * withPiece.bytesPerRank + (1 - w) * plain.bytesPerRank;
    c.interBytesPerRank = w * withPiece.interBytesPerRank + (1 - w) * plain.interBytesPerRank;
    c.sizeCapped = static_cast<std::uint8_t>(withPiece.sizeCapped + plain.sizeCapped);
    return c;
}

// A collective of a phase priced as one step, its size-capped count as weightedCollective's.
inline CollectiveCost phaseCollective(CollectiveCost c)
{
    c.sizeCapped = static_cast<std::uint8_t>(2 * c.sizeCapped);
    return c;
}

inline OpCost CostModel::op(OpId id, int option, const PhaseContext& ph) const
{
    if (!ph.events()) {
        OpCost c = opInStep(id, option, ph);
        c.own = phaseCollective(c.own);
        return c;
    }
    const OpCost a = opInStep(id, option, ph), b = opInStep(id, option, ph.plain);
    // A token-split operator's prices are its busiest rank's, whose steps with a piece are
    // its own share (StepContext::rankShare); the experts and the exchange are the group's.
    const double w = pricedAtBusiestRank(id, opOption(id, option)) ? ph.rankShare : ph.chunkShare;
    OpCost c = a;
    c.computeS = w * a.computeS + (1 - w) * b.computeS;
    c.memoryS = w * a.memoryS + (1 - w) * b.memoryS;
    c.timeS = w * a.timeS + (1 - w) * b.timeS;
    c.fixedS = w * a.fixedS + (1 - w) * b.fixedS;
    c.flops = w * a.flops + (1 - w) * b.flops;
    c.hbmBytes = w * a.hbmBytes + (1 - w) * b.hbmBytes;
    c.own = weightedCollective(a.own, b.own, w);
    return c;
}

inline CollectiveCost CostModel::edge(const GraphEdge& e, Layout from, Layout to, const PhaseContext& ph) const
{
    if (!ph.events())
        return phaseCollective(edgeInStep(e, from, to, ph));
    return weightedCollective(edgeInStep(e, from, to, ph), edgeInStep(e, from, to, ph.plain), ph.chunkShare);
}

inline double CostModel::kvBytesPerLayer(int attentionOption, const StepContext& ph) const
{
    const OpStatic& att = m_ops[static_cast<int>(OpId::Attention)];
    const Split split = opOption(OpId::Attention, attentionOption).split;
    const double g = ph.tp;
    if (att.mixed) {
        // Sliding-window layers hold at most the window; linear layers their state.
        const double kv = att.kvBytesPerCtx * (att.fullShare * ph.maxCtx + att.slidingShare * std::min(ph.maxCtx, att.window));
        if (split == Split::Weights)
            return ph.batchSeqs * (kv * std::max(1.0 / g, att.kvFloor) + att.stateBytes * std::max(1.0 / g, att.stateFloor));
        const double seqs = split == Split::Tokens ? std::ceil(ph.batchSeqs / g) : ph.batchSeqs;
        return seqs * (kv + att.stateBytes);
    }
    const double kv = att.kvBytesPerCtx * ph.maxCtx;
    if (split == Split::Weights)
        return ph.batchSeqs * kv * std::max(1.0 / g, att.kvFloor);
    if (split == Split::Tokens)
        return std::ceil(ph.batchSeqs / g) * kv; // whole sequences per rank
    return ph.batchSeqs * kv;
}

inline double CostModel::cacheBytesPerSequence(double ctx) const
{
    const OpStatic& att = m_ops[static_cast<int>(OpId::Attention)];
    if (!att.mixed)
        return att.kvBytesPerCtx * ctx;
    return att.kvBytesPerCtx * (att.fullShare * ctx + att.slidingShare * std::min(ctx, att.window)) + att.stateBytes;
}

} // namespace shardlab
