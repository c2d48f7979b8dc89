// The busiest owner of whole sequences in a lock-step group: the replicas of one MoE engine
// instance, and with the `token` (attention data-parallel) split each rank of their TP
// groups. A step waits for the owner that reads the longest caches and prefills the largest
// prompt chunk, where the mean owner would price both evenly (docs/simulator.md §4,
// "Busiest owner of sequences").
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "model/plan_checks.h"
#include "sim/cost_model.h"

namespace shardlab {

namespace {

// E[max] = sum over k >= 1 of P(max >= k) = sum of 1 - F(k - 1)^ranks.
double expectedMaxPoissonSum(int ranks, double mean)
{
    double pmf = std::exp(-mean), cdf = 0, sum = 0;
    for (int k = 1; k < 100000; ++k) {
        cdf += pmf;
        const double tail = 1 - std::pow(std::min(1.0, cdf), ranks);
        sum += tail;
        if (tail < 1e-12 && k > mean)
            break;
        pmf *= mean / k;
    }
    return sum;
}

constexpr int kGridPoints = 512;
constexpr double kGridTop = 64;

// The mean at grid point i: 64 (i / 512)^2, finest near zero where E[max] bends most.
double gridMean(int i) { return kGridTop * double(i) * i / (double(kGridPoints) * kGridPoints); }

// The sum at every grid point, per rank count, remembered per thread: the searches ask for
// a few rank counts at means that vary with every batch.
const std::vector<double>& poissonMaxGrid(int ranks)
{
    thread_local std::unordered_map<int, std::vector<double>> grids;
    auto it = grids.find(ranks);
    if (it != grids.end())
        return it->second;
    if (grids.size() > 64)
        grids.clear();
    std::vector<double> g(kGridPoints + 1);
    for (int i = 1; i <= kGridPoints; ++i)
        g[i] = expectedMaxPoissonSum(ranks, gridMean(i));
    return grids.emplace(ranks, std::move(g)).first->second;
}

} // namespace

double expectedMaxPoisson(int ranks, double mean)
{
    if (ranks <= 1 || mean <= 0)
        return std::max(0.0, mean);
    // Linear between the grid's exact values: the sum is concave in the mean and zero at
    // none, and so is its interpolation (the chords of a concave function), which keeps
    // E[max] / mean non-increasing, as exact's batch argument needs. Above the grid the
    // maximum lies a multiple of the spread sqrt(mean) above the mean; the multiple is the
    // grid's last one, so the two join without a step.
    const std::vector<double>& g = poissonMaxGrid(ranks);
    if (mean >= kGridTop) {
        const double excess = g.back() - kGridTop;
        return mean + excess * std::sqrt(mean / kGridTop);
    }
    const int i = std::min(int(std::sqrt(mean / kGridTop) * kGridPoints), kGridPoints - 1);
    const double lo = gridMean(i), hi = gridMean(i + 1);
    return g[i] + (mean - lo) / (hi - lo) * (g[i + 1] - g[i]);
}

double busiestRankChunk(double chunkTokens, int ranks, double rankBudget, double promptTokens)
{
    const double mean = chunkTokens / std::max(1, ranks);
    if (ranks <= 1 || chunkTokens <= 0)
        return mean;
    // A prompt is prefilled on the rank that owns its sequence, in pieces of up to the
    // rank's share of the token budget. The pieces a step carries land on the ranks as
    // independent arrivals (Poisson), so the busiest rank holds the expected largest count
    // of pieces, but never more tokens than its budget, and never fewer than the mean.
    const double budget = std::max(1.0, rankBudget);
    const double piece = std::max(1.0, std::min(promptTokens, budget));
    const double busiest = std::min(budget, piece * expectedMaxPoisson(ranks, mean / piece));
    return std::max(mean, busiest);
}

int CostModel::lockStepReplicas(const Plan& p) const
{
    return m_scenario.model.isMoe() ? std::max(1, replicasPerInstance(p)) : 1;
}

void CostModel::setBusiestOwners(const Plan& p, StepContext& ph) const
{
    const WorkloadSpec& w = m_scenario.workload;
    const int replicas = lockStepReplicas(p);
    ph.ctxReplica = ph.ctxTokenRank = ph.ctx;
    ph.chunkReplica = ph.chunkTokens;
    ph.chunkBusiestRank = ph.chunkTokens * ph.invTp;
    ph.tokensReplica = ph.tokens;
    ph.tokensBusiestRank = ph.tokensPerRank;
    if (ph.prefill) {
        // A token-split rank owns whole sequences: it prefills its prompts alone, so the
        // busiest holds at least one whole prompt (max(1, prompts / TP) of them, the
        // sequences per rank), however few the pass has.
        if (ph.tp > 1 && ph.seqs > 0)
            ph.tokensBusiestRank = std::max(ph.tokensPerRank, ph.seqsPerRank * ph.tokens / ph.seqs);
        return;
    }
    // Each owner of whole sequences (a replica; with the `token` split each of its TP ranks)
    // has its decoding sequences spread evenly, but not their lengths: in steady state a
    // sequence is anywhere in its output, so its context spreads by OSL / sqrt(12) around
    // the mean, and the busiest of n owners' mean context lies Blom's expected maximum of
    // that spread over its sequences above it.
    const double spread = w.outputTokens / std::sqrt(12.0);
    auto busiestCtx = [&](int owners, double seqsPerOwner) {
        return owners > 1 ? ph.ctx + expectedMaxOfRanks(owners) * spread / std::sqrt(std::max(1.0, seqsPerOwner))
                          : ph.ctx;
    };
    // (With TP 1 a rank is its replica: both splits price the same, as canonicalPlan says.)
    const int rankOwners = ph.tp * replicas;
    ph.ctxReplica = busiestCtx(replicas, ph.seqs);
    ph.ctxTokenRank = ph.tp > 1 ? busiestCtx(rankOwners, ph.seqsPerRank) : ph.ctxReplica;
    if (ph.chunkTokens <= 0)
        return;
    // The prompt chunks beside them: max_num_tokens is a replica's budget, a token-split
    // rank's share of it 1/TP (two-batch overlap: each half's share of that).
    const double budget = double(w.maxNumTokens) / ph.halves;
    // The busiest owner's chunk in the mean step. With prefill as events (pieceShare below
    // 1) this is the step with a piece: the busiest replica carries the whole piece (its
    // mean chunk over the share: chunkStepShare), so over the steps it prefills what it
    // does in the mean step; at a share of 1 the two are the same step.
    const double share = ph.pieceShare;
    const double all = ph.chunkTokens * replicas * share;
    // A run's step knows the busiest replica's own chunk (StepLoad::groupChunkTokens),
    // spread over that replica's own ranks below.
    const bool own = ph.ownChunk >= 0;
    ph.chunkReplica = own ? ph.ownChunk : busiestRankChunk(all, replicas, budget, w.promptTokens) / share;
    ph.tokensReplica = ph.seqs * ph.queriesPerSeq + ph.chunkReplica;
    ph.rankShare = share;
    if (ph.tp == 1) {
        ph.chunkBusiestRank = ph.chunkReplica;
        ph.tokensBusiestRank = ph.tokensReplica;
        return;
    }
    // A token-split rank owns its sequences and prefills its prompts at its 1/TP of the
    // budget, a piece of min(ISL, the room its decode tokens leave) at a time. As events,
    // its steps with a piece are a share of its own: its mean-step chunk over that piece,
    // so that its prompt tokens over the steps are the mean step's; at a share of 1 every
    // step of the rank carries its mean chunk.
    const double rankBudget = budget * ph.invTp;
    const double rankChunk = own ? busiestRankChunk(ph.ownChunk, ph.tp, rankBudget, w.promptTokens)
                                 : busiestRankChunk(all, rankOwners, rankBudget, w.promptTokens);
    if (share < 1) {
        const double rankPiece =
            std::min(double(w.promptTokens), promptRoom(ph.seqs * ph.queriesPerSeq * ph.invTp, ph.halves, ph.invTp));
        ph.rankShare = std::min(1.0, rankChunk / rankPiece);
        ph.chunkBusiestRank = ph.rankShare < 1 ? rankPiece : rankChunk;
    } else
        ph.chunkBusiestRank = rankChunk;
    ph.tokensBusiestRank = std::max(1.0, ph.seqs * ph.queriesPerSeq * ph.invTp + ph.chunkBusiestRank);
}

} // namespace shardlab
