#include "sim/moe_all_to_all.h"

#include "io/profile_json.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace shardlab {

namespace {
// Fitted by log-ratio least squares (Nelder-Mead) to the measured H100 SXM figures of
// NVIDIA aiconfigurator's database (ai-dynamo/aiconfigurator, systems/data/h100_sxm, DeepEP
// through SGLang; hidden 7168, top-8, 256 experts), on the H100 preset's links (NVLink 450
// GB/s x 0.8, RDMA 50 GB/s x 0.8):
// - low-latency: dispatch and combine at 16/128/256 tokens per rank for EP 8, 16, 32 (18
//   cells); EP 64 and DeepEP's own H800 figures are held out (docs/simulator.md §2);
// - normal: EP 8, 16, 32 at 4096 tokens per rank (6 cells), launch shared with low-latency.
} // namespace

const DeepEpParams& deepEpParams() { return builtinProfile().deepEp; }

const char* moeKernelName(MoeKernel k)
{
    switch (k) {
    case MoeKernel::Nccl: return "nccl";
    case MoeKernel::DeepEpLowLatency: return "deepep_ll";
    case MoeKernel::DeepEpNormal: return "deepep_normal";
    }
    return "?";
}

bool moeKernelFromName(const char* name, MoeKernel& out)
{
    for (MoeKernel k : {MoeKernel::Nccl, MoeKernel::DeepEpLowLatency, MoeKernel::DeepEpNormal})
        if (std::strcmp(name, moeKernelName(k)) == 0) {
            out = k;
            return true;
        }
    return false;
}

MoeKernel moeKernelFor(CollectiveEngine engine, bool promptTokensInStep)
{
    if (engine == CollectiveEngine::Nccl)
        return MoeKernel::Nccl;
    return promptTokensInStep ? MoeKernel::DeepEpNormal : MoeKernel::DeepEpLowLatency;
}

CollectiveCost moeAllToAllCost(MoeKernel kernel, bool combine, double T, double hidden, int topK, const Group& g,
                               const LinkModel& link)
{
    CollectiveCost c;
    c.kind = Collective::AllToAll;
    c.group = g.role;
    if (g.size <= 1 || T <= 0) {
        c.kind = g.size <= 1 ? Collective::None : Collective::AllToAll;
        return c;
    }
    const double M = g.size, k = std::max(1, topK);
    if (kernel == MoeKernel::Nccl) {
        // NCCL's all-to-all of every (token, expert) copy in BF16 (collectives.h).
        return collectiveCost(Collective::AllToAll, M * T * k * hidden * 2.0, g, link);
    }
    const double a = std::min<double>(g.ranksPerNode, M); // the most ranks of the group in one node
    const double af = std::min<double>(g.fewestPerNode, a); // the fewest (their ranks have the most remote peers)
    const double b = g.nodes;                             // nodes the group spans
    const double payload = combine ? 2.0 * hidden : hidden + hidden / 128.0 * 4.0;
    const double B = link.intraBytesPerS, R = link.interBytesPerS;
    const DeepEpParams& kDeepEp = link.kernels().deepEp;
    double intra = 0, inter = 0, seconds = kDeepEp.launchS;
    if (kernel == MoeKernel::DeepEpLowLatency) {
        // Every (token, expert) pair is one message to the expert's rank.
        const double pairs = T * k * payload;
        intra = pairs * (a - 1) / M;
        inter = pairs * (M - af) / M;
        seconds += kDeepEp.llNodeLatencyS * std::log2(b);
        seconds += std::max(intra / (kDeepEp.llNvlink * B), inter > 0 ? inter / (kDeepEp.llRdma * R) : 0.0);
        c.algo = CollectiveAlgo::DeepEpLowLatency;
    } else {
        // Distinct destination ranks and remote nodes of one token (experts spread evenly).
        const double ranks = M * (1 - std::pow(1 - 1 / M, k));
        const double nodes = b > 1 ? (b - 1) * (1 - std::pow(1 - 1 / b, k)) : 0.0;
        intra = T * payload * ranks * (a - 1) / a;
        inter = T * payload * nodes;
        const double rdma = std::min(kDeepEp.normalRdmaCap, (b - 1) * kDeepEp.normalRdmaPerPeer) * R;
        seconds += std::max(intra / (kDeepEp.normalNvlink * B), inter > 0 ? inter / rdma : 0.0);
        c.algo = CollectiveAlgo::DeepEpNormal;
    }
    c.seconds = seconds;
    c.bytesPerRank = intra + inter;
    c.interBytesPerRank = inter;
    return c;
}

} // namespace shardlab
