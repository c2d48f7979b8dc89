#include "sim/collectives.h"

#include <algorithm>

#include "io/profile_json.h"

namespace shardlab {


const char* collectiveName(Collective c)
{
    switch (c) {
    case Collective::None: return "none";
    case Collective::AllReduce: return "all-reduce";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllGather: return "all-gather";
    case Collective::AllToAll: return "all-to-all";
    case Collective::LocalSlice: return "local slice";
    }
    return "?";
}

const char* collectiveAlgoName(CollectiveAlgo a)
{
    switch (a) {
    case CollectiveAlgo::RingLL128: return "ring LL128";
    case CollectiveAlgo::RingSimple: return "ring Simple";
    case CollectiveAlgo::Nvls: return "NVLS";
    case CollectiveAlgo::OneShot: return "one-shot";
    case CollectiveAlgo::TwoShot: return "two-shot";
    case CollectiveAlgo::Direct: return "direct";
    case CollectiveAlgo::Hierarchical: return "hierarchical";
    case CollectiveAlgo::DeepEpLowLatency: return "DeepEP low-latency";
    case CollectiveAlgo::DeepEpNormal: return "DeepEP normal";
    default: return "none";
    }
}

const NcclParams& ncclParams() { return builtinProfile().nccl; }

const KernelProfile& LinkModel::kernels() const { return profile ? *profile : builtinProfile(); }

LinkModel linkModel(const ClusterSpec& c, CollectiveEngine engine)
{
    LinkModel l;
    l.engine = engine;
    l.profile = &profileOf(c);
    l.intraBytesPerS = c.nvlinkGBps * 1e9 * c.gpu.efficiency.nvlink;
    l.intraLatencyS = c.nvlinkLatencyUs * 1e-6;
    l.interBytesPerS = c.interNodeGBps * 1e9 * c.gpu.efficiency.interNode;
    l.interLatencyS = c.interNodeLatencyUs * 1e-6;
    l.gpusPerNode = std::max(1, c.gpusPerNode);
    l.invIntra = 1.0 / l.intraBytesPerS;
    l.invInter = 1.0 / l.interBytesPerS;
    return l;
}

namespace {


// An engine's custom all-reduce inside a node (every GPU reads its peers' buffers over
// NVLink): one-shot reads the whole tensor from each peer; two-shot reduce-scatters then
// all-gathers. Each within the engine's size limits (the profile's engines section); NCCL
// otherwise. SGLang runs vLLM's kernel; vLLM eager adds the copy into the registered buffer.
struct CustomAllReduce {
    double launchS = 0;
    double bandwidth = 1;
    double extraS = 0;
    double oneShotMaxBytes = 0;
    double twoShotMaxBytes = 0;
};

bool customAllReduce(const LinkModel& link, int n, CustomAllReduce& out)
{
    const KernelProfile& k = link.kernels();
    const CustomAllReduceParams* p = nullptr;
    switch (link.engine) {
    case CollectiveEngine::TrtLlm: p = &k.trtllm; break;
    case CollectiveEngine::Vllm:
    case CollectiveEngine::Sglang:
    case CollectiveEngine::VllmEager: p = &k.vllm; break;
    default: return false;
    }
    if (!p->present || n > p->maxRanks || (p->evenRanksOnly && n % 2 != 0) || p->bandwidth <= 0)
        return false;
    out.launchS = p->launchS;
    out.bandwidth = p->bandwidth;
    out.extraS = link.engine == CollectiveEngine::VllmEager ? p->eagerCopyS : 0.0;
    out.oneShotMaxBytes = n <= 2 ? p->oneShotMaxBytes2 : n <= 4 ? p->oneShotMaxBytes4 : p->oneShotMaxBytes8;
    out.twoShotMaxBytes = p->twoShotMaxBytes;
    return true;
}

struct Choice {
    double seconds = 0;
    CollectiveAlgo algo = CollectiveAlgo::None;
    std::uint8_t sizeCapped = 0;
    void offer(double s, CollectiveAlgo a)
    {
        if (algo == CollectiveAlgo::None || s < seconds) {
            seconds = s;
            algo = a;
        }
    }
};

// NCCL inside one node: the fastest of its algorithms and protocols for the size.
Choice ncclIntra(Collective kind, double S, double n, const LinkModel& link)
{
    const NcclParams& kNccl = link.kernels().nccl;
    Choice c;
    const double iB = link.invIntra, L = link.intraLatencyS;
    switch (kind) {
    case Collective::AllReduce: {
        const double W = 2.0 * (n - 1) / n * S * iB, steps = 2.0 * (n - 1);
        c.offer(kNccl.launchS + steps * L + W / kNccl.ll128, CollectiveAlgo::RingLL128);
        c.offer(kNccl.simpleLaunchS + steps * L + W / kNccl.simple, CollectiveAlgo::RingSimple);
        if (n > 2)
            c.offer(kNccl.nvlsLaunchS + W / kNccl.nvls, CollectiveAlgo::Nvls);
        break;
    }
    case Collective::ReduceScatter:
    case Collective::AllGather: {
        const double W = (n - 1) / n * S * iB, steps = n - 1;
        c.offer(kNccl.launchS + steps * L + W / kNccl.ll128, CollectiveAlgo::RingLL128);
        c.offer(kNccl.simpleLaunchS + steps * L + W / kNccl.simple, CollectiveAlgo::RingSimple);
        break;
    }
    case Collective::AllToAll: {
        const double W = (n - 1) / n * (S / n) * iB; // each rank's buffer is S/n
        c.offer(kNccl.a2aLaunchS + W / kNccl.ll128, CollectiveAlgo::Direct);
        c.offer(kNccl.simpleLaunchS + W / kNccl.a2aSimple, CollectiveAlgo::Direct);
        break;
    }
    default:
        break;
    }
    return c;
}

// The engine's choice for an all-reduce inside one node: its custom kernels within their
// limits, or NCCL, whichever is faster (engines switch at fixed sizes; near a switch the
// fastest differs from the engine's pick by a few percent, and the fastest keeps the cost
// rising with the size).
Choice intraNode(Collective kind, double S, double n, const LinkModel& link)
{
    Choice c = ncclIntra(kind, S, n, link);
    CustomAllReduce ar;
    if (kind != Collective::AllReduce || !customAllReduce(link, static_cast<int>(n), ar))
        return c;
    const double iB = link.invIntra / ar.bandwidth;
    c.seconds += ar.extraS; // eager mode: the copy into the registered buffer, whichever path runs
    // A kernel with a limit of 0 does not exist; one above its limit is unavailable.
    const bool lifted = link.sizeCapsLifted;
    if (ar.oneShotMaxBytes > 0 && (S <= ar.oneShotMaxBytes || lifted))
        c.offer(ar.extraS + ar.launchS + (n - 1) * S * iB, CollectiveAlgo::OneShot);
    else if (ar.oneShotMaxBytes > 0)
        ++c.sizeCapped;
    if (ar.twoShotMaxBytes > 0 && (S <= ar.twoShotMaxBytes || lifted))
        c.offer(ar.extraS + 2 * ar.launchS + 2.0 * (n - 1) / n * S * iB, CollectiveAlgo::TwoShot);
    else if (ar.twoShotMaxBytes > 0)
        ++c.sizeCapped;
    return c;
}

} // namespace

CollectiveCost collectiveCost(Collective kind, double S, const Group& g, const LinkModel& link)
{
    CollectiveCost c;
    c.kind = kind;
    c.group = g.role;
    const double n = g.size;
    if (g.size <= 1 || kind == Collective::None || kind == Collective::LocalSlice || S <= 0) {
        c.kind = g.size <= 1 && kind != Collective::None ? Collective::None : kind;
        return c;
    }
    const double a = g.ranksPerNode;     // the most ranks of the group inside one node
    const double af = g.fewestPerNode;   // the fewest: their node's share of the data is S / af
    const double b = g.nodes;            // nodes the group spans
    const double iBe = link.invInter, iBi = link.invIntra;
    const double Le = link.interLatencyS;
    if (b <= 1) {
        const Choice in = intraNode(kind, S, n, link);
        c.seconds = in.seconds;
        c.algo = in.algo;
        c.sizeCapped = in.sizeCapped;
        c.bytesPerRank = kind == Collective::AllReduce ? 2.0 * (n - 1) / n * S
            : kind == Collective::AllToAll            ? (n - 1) * S / (n * n)
                                                      : (n - 1) / n * S;
        return c;
    }
    c.algo = CollectiveAlgo::Hierarchical;
    switch (kind) {
    case Collective::AllReduce:
        // Inside each node (reduce-scatter and all-gather: an all-reduce's cost), then an
        // all-reduce over the nodes of each node's share, carried by its ranks' ports.
        c.interBytesPerRank = 2.0 * (b - 1) / b * (S / af);
        c.bytesPerRank = (a > 1 ? 2.0 * (a - 1) / a * S : 0.0) + c.interBytesPerRank;
        c.seconds = (a > 1 ? ncclIntra(kind, S, a, link).seconds : 0.0) + c.interBytesPerRank * iBe
            + 2.0 * (b - 1) * Le;
        break;
    case Collective::ReduceScatter:
    case Collective::AllGather:
        c.interBytesPerRank = (b - 1) / b * (S / af);
        c.bytesPerRank = (a > 1 ? (a - 1) / a * S : 0.0) + c.interBytesPerRank;
        c.seconds = (a > 1 ? ncclIntra(kind, S, a, link).seconds : 0.0) + c.interBytesPerRank * iBe + (b - 1) * Le;
        break;
    case Collective::AllToAll: {
        // Each rank sends S/n^2 to each of its n-1 peers, all at once: NVLink peers and
        // remote peers in parallel, one latency for the round. A rank of the fewest-rank
        // node has the most remote peers, one of the most-rank node the most local ones.
        const double perPeer = S / (n * n);
        const double intra = (a - 1) * perPeer, inter = (n - af) * perPeer;
        c.interBytesPerRank = inter;
        c.bytesPerRank = (af - 1) * perPeer + inter;
        c.seconds = link.kernels().nccl.a2aLaunchS + std::max(intra * iBi, inter * iBe) + Le;
        break;
    }
    default:
        break;
    }
    return c;
}

namespace {
// Which collective turns layout `from` into `to` (same side of the model), as a table:
// the simulator asks this for every operator boundary.
constexpr Layout baseLayout(Layout l)
{
    switch (l) {
    case Layout::XR: return Layout::R;
    case Layout::XT: return Layout::T;
    case Layout::XF: return Layout::F;
    case Layout::XP: return Layout::P;
    default: return l;
    }
}

constexpr Collective computeConversion(Layout from, Layout to)
{
    if (from == to)
        return Collective::None;
    const Layout f = baseLayout(from), t = baseLayout(to);
    if (f == t)
        return Collective::None;
    if (f == Layout::R)
        return Collective::LocalSlice; // R -> S or R -> P: keep a slice (or one addend)
    if (f == Layout::P)
        return t == Layout::R ? Collective::AllReduce : Collective::ReduceScatter;
    if (t == Layout::R)
        return Collective::AllGather;
    if (t == Layout::P)
        return Collective::LocalSlice; // a shard zero-padded is a valid addend
    return Collective::AllToAll;       // S(d1) -> S(d2)
}

struct ConversionTable {
    Collective c[8][8];
    constexpr ConversionTable() : c{}
    {
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j)
                c[i][j] = computeConversion(static_cast<Layout>(i), static_cast<Layout>(j));
    }
};
constexpr ConversionTable kConversions;
} // namespace

Collective conversionFor(Layout from, Layout to)
{
    return kConversions.c[static_cast<int>(from)][static_cast<int>(to)];
}

} // namespace shardlab
