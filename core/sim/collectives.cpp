#include "sim/collectives.h"

#include <algorithm>

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

LinkModel linkModel(const ClusterSpec& c)
{
    LinkModel l;
    l.intraBytesPerS = c.nvlinkGBps * 1e9 * c.gpu.efficiency.nvlink;
    l.intraLatencyS = c.nvlinkLatencyUs * 1e-6;
    l.interBytesPerS = c.interNodeGBps * 1e9 * c.gpu.efficiency.interNode;
    l.interLatencyS = c.interNodeLatencyUs * 1e-6;
    l.gpusPerNode = std::max(1, c.gpusPerNode);
    l.invIntra = 1.0 / l.intraBytesPerS;
    l.invInter = 1.0 / l.interBytesPerS;
    return l;
}

Group placeGroup(int size, int stride, int gpusPerNode)
{
    Group g;
    g.size = std::max(1, size);
    const int perNode = std::max(1, gpusPerNode / std::max(1, stride));
    g.ranksPerNode = std::min(g.size, perNode);
    return g;
}

CollectiveCost collectiveCost(Collective kind, double S, const Group& g, const LinkModel& link)
{
    CollectiveCost c;
    c.kind = kind;
    const double n = g.size;
    if (g.size <= 1 || kind == Collective::None || kind == Collective::LocalSlice || S <= 0) {
        c.kind = g.size <= 1 && kind != Collective::None ? Collective::None : kind;
        return c;
    }
    const double a = g.ranksPerNode;     // ranks of the group inside one node
    const double b = n / a;              // nodes the group spans
    const double iBi = link.invIntra, iBe = link.invInter;
    const double Li = link.intraLatencyS, Le = link.interLatencyS;
    switch (kind) {
    case Collective::AllReduce:
        // Intra-node reduce-scatter, inter-node all-reduce of the 1/a shard, intra all-gather.
        c.bytesPerRank = 2.0 * (n - 1) / n * S;
        c.seconds = 2.0 * (a - 1) / a * S * iBi + 2.0 * (a - 1) * Li;
        if (b > 1)
            c.seconds += 2.0 * (b - 1) / b * (S / a) * iBe + 2.0 * (b - 1) * Le;
        break;
    case Collective::ReduceScatter:
    case Collective::AllGather:
        c.bytesPerRank = (n - 1) / n * S;
        c.seconds = (a - 1) / a * S * iBi + (a - 1) * Li;
        if (b > 1)
            c.seconds += (b - 1) / n * S * iBe + (b - 1) * Le;
        break;
    case Collective::AllToAll: {
        // Each rank sends S/n^2 to each of its n-1 peers, all at once: NVLink peers and
        // remote peers in parallel, one latency for the round.
        const double perPeer = S / (n * n);
        const double intra = (a - 1) * perPeer, inter = (n - a) * perPeer;
        c.bytesPerRank = intra + inter;
        c.seconds = std::max(intra * iBi, inter > 0 ? inter * iBe : 0.0) + (b > 1 ? Le : Li);
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
