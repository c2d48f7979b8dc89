#include "sim/disaggregated.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab {

const char* poolRoleName(PoolRole r) { return r == PoolRole::Prefill ? "prefill" : "decode"; }

const char* disaggLimitName(DisaggLimit l)
{
    switch (l) {
    case DisaggLimit::Prefill: return "prefill";
    case DisaggLimit::Decode: return "decode";
    case DisaggLimit::KvLink: return "kv_link";
    }
    return "?";
}

std::vector<int> disaggregatedSplits(const Scenario& s)
{
    std::vector<int> out;
    const ClusterSpec& c = s.cluster;
    if (c.nodes > 1) {
        for (int k = 1; k < c.nodes; ++k)
            out.push_back(k * c.gpusPerNode);
    } else {
        for (int g = 1; g < c.gpusPerNode; ++g)
            out.push_back(g);
    }
    return out;
}

Scenario poolScenario(const Scenario& s, PoolRole role, int gpus)
{
    Scenario p = s;
    const int gpn = std::max(1, std::min(s.cluster.gpusPerNode, gpus));
    p.cluster.gpusPerNode = gpn;
    p.cluster.nodes = std::max(1, gpus / gpn);
    // The other pool's limit is not this pool's: the largest value a workload may hold.
    const double unlimited = 1e9;
    if (role == PoolRole::Prefill) {
        p.workload.serving = ServingMode::Prefill;
        p.workload.tpotSloMs = unlimited;
    } else {
        p.workload.serving = ServingMode::Decode;
        p.workload.ttftSloMs = unlimited;
    }
    p.name = s.name + " (" + poolRoleName(role) + " pool, " + std::to_string(gpus) + " GPUs)";
    return p;
}

FieldErrors validateDisaggregatedPlan(const DisaggregatedPlan& p, const Scenario& s)
{
    FieldErrors e;
    const long long N = s.cluster.totalGpus();
    const long long gp = p.prefill.gpus(), gd = p.decode.gpus();
    const std::vector<int> splits = disaggregatedSplits(s);
    const std::string unit = s.cluster.nodes > 1
        ? "whole nodes of " + std::to_string(s.cluster.gpusPerNode) + " GPUs"
        : "1 to " + std::to_string(N - 1) + " GPUs";
    auto allowed = [&](long long g) { return std::find(splits.begin(), splits.end(), g) != splits.end(); };
    if (splits.empty())
        e.push_back({{}, "prefill", "a cluster of one GPU cannot be split into a prefill and a decode pool"});
    else if (gp + gd != N)
        e.push_back({{}, "decode",
                     "the pools use " + std::to_string(gp) + " + " + std::to_string(gd) + " = " + std::to_string(gp + gd)
                         + " GPUs (tensor x pipeline x data parallel each), the cluster has " + std::to_string(N)});
    else if (!allowed(gp))
        e.push_back({{}, "prefill",
                     "the prefill pool has " + std::to_string(gp) + " GPUs; each pool must be " + unit});
    return e;
}

double kvLinkRequestsPerS(const CostModel& costs, int prefillGpus, int decodeGpus)
{
    const double bytes = costs.kvBytesPerRequest();
    if (!(bytes > 0))
        return std::numeric_limits<double>::infinity();
    return std::min(prefillGpus, decodeGpus) * costs.kvLinkBytesPerS() / bytes;
}

DisaggregatedResult combinePools(const Scenario& s, const CostModel& prefillCosts, const SimResult& prefill,
                                 const SimResult& decode, int prefillGpus, int decodeGpus)
{
    DisaggregatedResult r;
    r.prefill = prefill;
    r.decode = decode;
    const double osl = std::max(1, s.workload.outputTokens);
    r.prefillRequestsPerS = prefill.outputTokensPerS / osl;
    r.decodeRequestsPerS = decode.outputTokensPerS / osl;
    r.kvLinkRequestsPerS = kvLinkRequestsPerS(prefillCosts, prefillGpus, decodeGpus);
    r.kvBytesPerRequest = prefillCosts.kvBytesPerRequest();
    double rate = r.prefillRequestsPerS;
    r.limitedBy = DisaggLimit::Prefill;
    if (r.decodeRequestsPerS < rate) {
        rate = r.decodeRequestsPerS;
        r.limitedBy = DisaggLimit::Decode;
    }
    if (r.kvLinkRequestsPerS < rate) {
        rate = r.kvLinkRequestsPerS;
        r.limitedBy = DisaggLimit::KvLink;
    }
    if (!std::isfinite(rate))
        rate = 0;
    r.outputTokensPerS = rate * osl;
    r.tokensPerSPerGpu = r.outputTokensPerS / double(s.cluster.totalGpus());
    r.ttftMs = prefill.ttftMs;
    r.tpotMs = decode.tpotMs;
    r.e2eMs = r.ttftMs + (osl - 1) * r.tpotMs;
    const double capacity = std::min(prefillGpus, decodeGpus) * prefillCosts.kvLinkBytesPerS();
    r.kvLinkLoad = capacity > 0 ? rate * r.kvBytesPerRequest / capacity : 0;
    if (!std::isfinite(r.kvLinkLoad))
        r.kvLinkLoad = 0;
    r.valid = prefill.valid && decode.valid && r.outputTokensPerS > 0;
    return r;
}

DisaggregatedSimulator::DisaggregatedSimulator(const Scenario& s, SimConstants constants)
    : m_scenario(s), m_constants(constants)
{
}

const Simulator& DisaggregatedSimulator::pool(PoolRole role, int gpus) const
{
    auto& slot = m_pools[{static_cast<int>(role), gpus}];
    if (!slot)
        slot = std::make_unique<Simulator>(poolScenario(m_scenario, role, gpus), m_constants);
    return *slot;
}

DisaggregatedResult DisaggregatedSimulator::evaluate(const DisaggregatedPlan& p) const
{
    DisaggregatedResult r;
    r.structure = validateDisaggregatedPlan(p, m_scenario);
    if (!r.structure.empty())
        return r;
    const int gp = static_cast<int>(p.prefill.gpus()), gd = static_cast<int>(p.decode.gpus());
    const Simulator& ps = pool(PoolRole::Prefill, gp);
    const Simulator& ds = pool(PoolRole::Decode, gd);
    DisaggregatedResult out = combinePools(m_scenario, ps.costs(), ps.evaluate(p.prefill), ds.evaluate(p.decode), gp, gd);
    return out;
}

DisaggregatedRecipe megatronDisaggregated(const DisaggregatedSimulator& sim)
{
    DisaggregatedRecipe best;
    const long long N = sim.scenario().cluster.totalGpus();
    bool haveAny = false;
    std::string bestWhy;
    for (int gp : disaggregatedSplits(sim.scenario())) {
        const int gd = static_cast<int>(N - gp);
        const RecipePlan pre = megatronPlan(sim.pool(PoolRole::Prefill, gp));
        const RecipePlan dec = megatronPlan(sim.pool(PoolRole::Decode, gd));
        best.evaluations += pre.evaluations + dec.evaluations;
        DisaggregatedPlan plan{pre.plan, dec.plan};
        DisaggregatedResult r = sim.evaluate(plan);
        const bool better = !haveAny || (r.valid && (!best.found || r.tokensPerSPerGpu > best.result.tokensPerSPerGpu));
        if (better) {
            haveAny = true;
            best.plan = plan;
            best.result = r;
            best.found = r.valid;
            bestWhy = "prefill pool (" + std::to_string(gp) + " GPUs): " + pre.explanation + " Decode pool ("
                + std::to_string(gd) + " GPUs): " + dec.explanation;
        }
    }
    best.explanation = "The recipe applied to each pool at every split of the cluster (" +
        std::to_string(disaggregatedSplits(sim.scenario()).size()) + " splits); the best split's " + bestWhy;
    return best;
}

} // namespace shardlab
