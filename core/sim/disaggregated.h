// Disaggregated serving (docs/simulator.md §4, "Disaggregated serving"): a prefill pool and
// a decode pool, each running its own plan on its own GPUs, the prompt's KV cache sent
// from the first to the second over the workload's `kv_transfer` links.
//
// Each pool is priced by the one cost model as a scenario of its own (poolScenario): the
// prefill pool in the internal Prefill role (a step is a prefill pass; TTFT = half a pass
// cycle of waiting + its own pass + the KV transfer), the decode pool in Decode mode
// (TPOT = its cycle). The deployment serves the lesser of the pools' request rates and
// of what the KV links carry; per-GPU figures count every GPU of both pools.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/disaggregated_plan.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

namespace shardlab {

enum class DisaggLimit : std::uint8_t { Prefill, Decode, KvLink };
const char* disaggLimitName(DisaggLimit l); // "prefill", "decode", "kv_link"

struct DisaggregatedResult {
    bool valid = false;          // both pools valid and the split fits the cluster
    FieldErrors structure;       // why the split does not fit (empty when it does)
    SimResult prefill, decode;   // each pool on its own pool scenario
    double outputTokensPerS = 0; // the deployment: min of the three rates x output tokens
    double tokensPerSPerGpu = 0; // over every GPU of both pools
    double ttftMs = 0;           // the prefill pool's (wait, pass, KV transfer)
    double tpotMs = 0;           // the decode pool's
    double e2eMs = 0;
    double prefillRequestsPerS = 0, decodeRequestsPerS = 0, kvLinkRequestsPerS = 0;
    double kvBytesPerRequest = 0;
    double kvLinkLoad = 0;       // fraction of the KV links' capacity the served rate uses
    DisaggLimit limitedBy = DisaggLimit::Prefill;
};

// The KV links' request rate for a split: min(prefill, decode) GPUs, each link at the
// workload's kv_transfer bandwidth, over one request's KV bytes.
double kvLinkRequestsPerS(const CostModel& costs, int prefillGpus, int decodeGpus);

// Combines two pool results (each from its pool scenario's simulator) into the deployment's.
DisaggregatedResult combinePools(const Scenario& s, const CostModel& prefillCosts, const SimResult& prefill,
                                 const SimResult& decode, int prefillGpus, int decodeGpus);

// Evaluates disaggregated plans; keeps one simulator per pool scenario it has met.
class DisaggregatedSimulator {
public:
    explicit DisaggregatedSimulator(const Scenario& s, SimConstants constants = {});
    const Scenario& scenario() const { return m_scenario; }
    DisaggregatedResult evaluate(const DisaggregatedPlan& p) const;
    // The simulator of one pool size (poolScenario); created on first use.
    const Simulator& pool(PoolRole role, int gpus) const;

private:
    Scenario m_scenario;
    SimConstants m_constants;
    mutable std::map<std::pair<int, int>, std::unique_ptr<Simulator>> m_pools;
};

// The Megatron recipe applied to each pool at every split; the split whose deployment
// serves the most. `found` when some split gives two valid pools.
struct DisaggregatedRecipe {
    DisaggregatedPlan plan;
    DisaggregatedResult result;
    bool found = false;
    int evaluations = 0;
    std::string explanation;
};
DisaggregatedRecipe megatronDisaggregated(const DisaggregatedSimulator& sim);

} // namespace shardlab
