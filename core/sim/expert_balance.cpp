// The expert load imbalance of MoE layers (docs/simulator.md §2, "Redundant experts and
// expert load imbalance"): the busiest EP rank's routed (token, expert) pairs over the mean,
// from routing noise, the experts' popularity skew and the hottest slot under EPLB's
// replication. Part of CostModel (cost_model.h), kept apart from the operator prices.
#include "sim/cost_model.h"

#include "model/plan_checks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>
#include <cstdint>
#include <numbers>

namespace shardlab {

namespace {
// The standard normal's quantile: P. J. Acklam's rational approximation (relative error
// below 1.2e-9), refined by one Halley step on erfc.
double normalQuantile(double p)
{
    p = std::clamp(p, 1e-300, 1 - 1e-16);
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    constexpr double lo = 0.02425;
    double x;
    if (p < lo || p > 1 - lo) {
        const double q = std::sqrt(-2 * std::log(p < lo ? p : 1 - p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        if (p > 1 - lo)
            x = -x;
    } else {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
    const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

// The expected largest of n independent standard normals, by Blom's plotting position
// (G. Blom, Statistical Estimates and Transformed Beta-Variables, 1958):
// Phi^-1((n - 0.375) / (n + 0.25)); within 0.03 of the exact value for n = 2..1000.
double expectedMaxNormal(double n)
{
    return n <= 1 ? 0.0 : normalQuantile((n - 0.375) / (n + 0.25));
}

// expectedMaxNormal for an EP degree, remembered per thread (the simulator's hot path asks
// for the same few degrees over and over).
double expectedMaxNormalOf(int ep)
{
    struct Entry {
        int n = -1;
        double z = 0;
    };
    thread_local std::array<Entry, 16> cache;
    Entry& c = cache[(static_cast<std::uint32_t>(ep) * 2654435761u) >> 28];
    if (c.n != ep)
        c = {ep, expectedMaxNormal(ep)};
    return c.z;
}

} // namespace

double expectedMaxOfNormals(double n) { return expectedMaxNormal(n); }
double expectedMaxOfRanks(int n) { return expectedMaxNormalOf(n); }

double CostModel::hottestSlotLoad(int redundant) const
{
    if (redundant <= 0 || !m_scenario.model.isMoe())
        return m_hottestExpert;
    // Every answer per model, per thread (the last few models): exact asks for every count
    // of a large expert set, the searches for the same counts over and over, and one answer
    // costs a bisection of erfc sums (tens of microseconds to milliseconds).
    struct Memo {
        std::uint64_t id = 0;
        std::vector<double> load; // by redundant count; NaN: not computed yet
    };
    thread_local std::array<Memo, 4> memos;
    thread_local unsigned next = 0;
    Memo* memo = nullptr;
    for (Memo& m : memos)
        if (m.id == m_id)
            memo = &m;
    if (!memo) {
        memo = &memos[next++ % memos.size()];
        memo->id = m_id;
        memo->load.clear();
    }
    if (static_cast<size_t>(redundant) < memo->load.size() && !std::isnan(memo->load[redundant]))
        return memo->load[redundant];
    // DeepSeek's EPLB (deepseek-ai/EPLB, replicate_experts) gives each redundant slot to the
    // expert with the largest load per replica; its busiest slot is then the smallest h for
    // which splitting every expert into slots of at most h needs no more than `redundant`
    // extra slots. With E experts of lognormal popularity that count is
    // E * sum_j P(load > j h) (slot j of an expert is needed once its load passes j h);
    // at Blom's plotting position, (E + 0.25) * sum_j P(load > j h) = redundant + 0.625,
    // which for 0 redundant slots is the busiest expert itself.
    const double E = m_scenario.model.moe.experts, sg = m_popularitySigma;
    const double target = redundant + 0.625;
    auto needed = [&](double h) {
        double n = 0;
        for (int j = 1; j <= 1 << 16; ++j) {
            const double z = (std::log(j * h) + 0.5 * sg * sg) / sg;
            const double q = 0.5 * std::erfc(z / std::sqrt(2.0));
            n += q;
            if (q < 1e-12)
                break;
        }
        return (E + 0.25) * n;
    };
    double load;
    if (sg <= 0) {
        load = E / (E + redundant); // equal popularity: every slot carries the same share
    } else {
        // Every slot carries at least the mean share E / (E + redundant); needed() falls as h grows.
        double lo = std::log(0.5 * E / (E + redundant)), hi = std::log(std::max(1.0, m_hottestExpert));
        for (int i = 0; i < 48 && hi - lo > 1e-12; ++i) {
            const double mid = 0.5 * (lo + hi);
            (needed(std::exp(mid)) > target ? lo : hi) = mid;
        }
        load = std::exp(hi);
    }
    if (memo->load.size() <= static_cast<size_t>(redundant))
        memo->load.resize(static_cast<size_t>(redundant) + 1, std::numeric_limits<double>::quiet_NaN());
    memo->load[redundant] = load;
    return load;
}

namespace {
// The terms of the imbalance, each given by the caller: the slots that cap a rank's share
// (capSlots), the count whose hottest slot bounds it from below (hot, already over the
// mean rank), and whether the static placement's popularity spread adds to the noise.
double imbalanceOf(double E, double k, double EP, double capSlots, double hot, bool popularity,
                   double popularityCv2, double stageTokens)
{
    // Routing noise: the T k token-expert pairs of the step fall on EP ranks like balls into
    // bins (multinomial): each rank's relative variance (EP - 1) / (T k).
    double v = (EP - 1) / std::max(stageTokens * k, 1e-9);
    // Static placement (no redundant slots, no load balancer): a rank holds E / EP experts of
    // skewed popularity, drawn without replacement: relative variance cv^2 (EP - 1) / (E - 1).
    // With redundant slots the engine's load balancer places them by measured load and
    // leaves only the routing noise and the hottest slot.
    if (popularity)
        v += std::max(0.0, popularityCv2) * (EP - 1) / std::max(1.0, E - 1);
    const double gauss = 1 + expectedMaxNormalOf(static_cast<int>(EP)) * std::sqrt(v);
    // Nor more than every token's pairs that can land on a rank: min(k, slots per rank) each.
    const double cap = EP * std::min(k, capSlots / EP) / k;
    return std::max(1.0, std::min(cap, std::max(gauss, hot)));
}
} // namespace

double CostModel::expertLoadImbalance(int ep, int redundant, double stageTokens) const
{
    const MoeDims& e = m_scenario.model.moe;
    if (ep <= 1 || e.experts <= 0)
        return 1.0;
    const double E = e.experts, r = std::max(0, redundant);
    // No rank carries less than its busiest slot: the mean rank carries E / EP experts' load.
    const double hot = hottestSlotLoad(redundant) * ep / E;
    return imbalanceOf(E, e.expertsPerToken, ep, E + r, hot, r <= 0, m_constants.expertPopularityCv2, stageTokens);
}

double CostModel::expertLoadImbalanceFloor(int ep, int low, int high, double stageTokens) const
{
    const MoeDims& e = m_scenario.model.moe;
    if (ep <= 1 || e.experts <= 0)
        return 1.0;
    const double E = e.experts;
    // hottestSlotLoad falls as the count grows, the cap rises: the range's ends are each
    // term's least.
    const double hot = hottestSlotLoad(high) * ep / E;
    return imbalanceOf(E, e.expertsPerToken, ep, E + std::max(0, low), hot, high <= 0,
                       m_constants.expertPopularityCv2, stageTokens);
}

void CostModel::setRoutedLoad(StepContext& ph, double stageTokens, double imbalance) const
{
    ph.loadImbalance = imbalance;
    ph.routedPerEpRank = stageTokens * m_scenario.model.moe.expertsPerToken / ph.ep * imbalance;
    ph.routedPerEtpRank = ph.routedPerEpRank / ph.etp; // an expectation, not a count
    // Every slot the rank reads serves at least one of its routed pairs.
    ph.activeLocalExperts = std::min(ph.expertsTouched, ph.routedPerEpRank);
}

void CostModel::setExpertLoad(const Plan& p, StepContext& ph) const
{
    ph.moeRanks = std::max(1, expertGroupRanks(p));
    ph.ep = p.expertParallel;
    ph.etp = std::max(1, expertTensorParallel(p));
    ph.invEtp = 1.0 / ph.etp;
    // Every replica of an instance runs the same phase in lock step (symmetric load); its
    // instance's replicas route their tokens over the instance's experts.
    ph.stageTokens = ph.tokens * replicasPerInstance(p);
    const double slots = double(m_scenario.model.moe.experts) + std::max(0, p.redundantExperts);
    ph.localExperts = slots / ph.ep; // each EP rank holds slots / EP
    // A slot no token reaches is not read; the busiest rank's reads set the step.
    ph.expertsTouched = busiestRankActiveSlots(ph.ep, p.redundantExperts, ph.stageTokens);
    setRoutedLoad(ph, ph.stageTokens, expertLoadImbalance(ph.ep, p.redundantExperts, ph.stageTokens));
}

void CostModel::setPopularityStrata()
{
    // Stratum j holds the popularities between the lognormal's j/N and (j+1)/N quantiles,
    // represented by its middle; the strata are rescaled to mean 1 so that one token picks
    // exactly top-k experts on average.
    const MoeDims& e = m_scenario.model.moe;
    const double sg = m_popularitySigma, N = kPopularityStrata;
    std::array<double, kPopularityStrata> pop{};
    double sum = 0;
    for (int j = 0; j < kPopularityStrata; ++j) {
        pop[j] = std::exp(-0.5 * sg * sg + sg * normalQuantile((j + 0.5) / N));
        sum += pop[j];
    }
    const double pick = double(e.expertsPerToken) / std::max(1, e.experts);
    for (int j = 0; j < kPopularityStrata; ++j)
        m_stratumLogIdle[j] = std::log1p(-std::min(pick * pop[j] * N / sum, 0.999999));
}

double CostModel::expectedActiveSlots(int redundant, double stageTokens) const
{
    const MoeDims& e = m_scenario.model.moe;
    if (e.experts <= 0)
        return 0;
    // An expert of popularity p misses all of T tokens' picks with probability
    // (1 - k p / E)^T; over the popularity's strata the expected share of idle experts.
    const double T = std::max(0.0, stageTokens);
    double idle = 0;
    for (double logIdle : m_stratumLogIdle)
        idle += std::exp(T * logIdle);
    idle /= kPopularityStrata;
    const double E = e.experts, r = std::max(0, redundant);
    double active = E * (1 - idle);
    if (r > 0) {
        // The load balancer replicates the hottest experts; a replica is idle when none of
        // its expert's tokens is sent its way, (1 - k / slots)^T at the mean slot's share
        // (r times that is non-decreasing in r: concave in the share, zero at none).
        const double k = e.expertsPerToken;
        active += r * (1 - std::exp(T * std::log1p(-std::min(k / (E + r), 0.999999))));
    }
    return std::min(E + r, active);
}

double CostModel::busiestRankActiveSlots(int ep, int redundant, double stageTokens) const
{
    const double slots = double(m_scenario.model.moe.experts) + std::max(0, redundant);
    const double n = slots / std::max(1, ep);
    const double a = expectedActiveSlots(redundant, stageTokens) / std::max(1, ep);
    if (ep <= 1 || n <= 0)
        return a;
    // A rank's active slots: n draws of "has a token" at the mean rate a / n (the rank's
    // experts are a draw from the popularity); the busiest of ep ranks sits at Blom's
    // expected maximum of that sum's spread.
    const double spread = std::sqrt(std::max(0.0, a * (1 - a / n)));
    return std::min(n, a + expectedMaxNormalOf(ep) * spread);
}

void CostModel::phaseFloor(const Plan& p, int redundantHigh, bool prefill, PhaseContext& ph, const StepLoad* load) const
{
    phase(p, prefill, ph, load);
    if (!m_scenario.model.isMoe() || redundantHigh <= p.redundantExperts)
        return;
    // phase() above, with the range's least imbalance in place of the start's (in both
    // steps when prefill runs as events).
    setRoutedLoad(ph, ph.stageTokens,
                  expertLoadImbalanceFloor(ph.ep, p.redundantExperts, redundantHigh, ph.stageTokens));
    if (ph.events())
        setRoutedLoad(ph.plain, ph.plain.stageTokens,
                      expertLoadImbalanceFloor(ph.ep, p.redundantExperts, redundantHigh, ph.plain.stageTokens));
}

} // namespace shardlab
