// Shared checks for the libFuzzer targets: a loaded scenario must simulate to finite
// numbers, and must survive a save/load round trip. Any violation aborts (= a finding).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "io/result_json.h"
#include "io/scenario_json.h"
#include "sim/megatron.h"

namespace fuzzcheck {

inline void require(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
        std::abort();
    }
}

inline void checkResult(const shardlab::SimResult& r)
{
    require(std::isfinite(r.tpotMs) && std::isfinite(r.ttftMs), "non-finite TPOT/TTFT");
    require(std::isfinite(r.tokensPerSPerGpu) && r.tokensPerSPerGpu >= 0, "non-finite throughput");
    require(std::isfinite(r.memory.totalGb), "non-finite memory");
    require(!r.valid || r.violations == 0, "valid with violations");
}

inline void checkScenario(const shardlab::Scenario& s)
{
    using namespace shardlab;
    const ParameterCounts c = countParameters(s.model);
    require(std::isfinite(c.total) && c.total > 0, "parameter count");
    const Simulator sim(s);
    const RecipePlan rp = megatronPlan(sim);
    checkResult(rp.result);
    const std::string json = evaluationToJson(s, rp.plan, rp.result);
    require(json.find("nan") == std::string::npos && json.find("inf") == std::string::npos, "NaN/Inf in JSON");
}

} // namespace fuzzcheck
