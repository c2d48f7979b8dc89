#include "sim/disaggregated.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab {

const char* disaggLimitName(DisaggLimit l)
{
    switch (l) {
    case DisaggLimit::Prefill: return "prefill";
    case DisaggLimit::Decode: return "decode";
    case DisaggLimit::KvLink: return "kv_link";
    }
    return "?";
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
    r.prefillRequestsPerS = requestsPerS(s.workload, prefill.outputTokensPerS);
    r.decodeRequestsPerS = requestsPerS(s.workload, decode.outputTokensPerS);
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
    r.outputTokensPerS = outputTokensPerS(s.workload, rate);
    r.tokensPerSPerGpu = r.outputTokensPerS / double(s.cluster.totalGpus());
    r.ttftMs = prefill.ttftMs;
    r.tpotMs = decode.tpotMs;
    r.e2eMs = r.ttftMs + (std::max(1, s.workload.outputTokens) - 1) * r.tpotMs;
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
