// Shared checks for the libFuzzer targets: a loaded scenario must simulate to finite
// numbers, and must survive a save/load round trip. Any violation aborts (= a finding).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "io/scenario_json.h"
#include "report/result_json.h"
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

// Every number in a result JSON is finite (nlohmann writes NaN/Inf as null, and a result
// has no legitimate null).
inline void checkJsonNumbers(const nlohmann::json& j)
{
    require(!j.is_null(), "null (NaN/Inf) in result JSON");
    if (j.is_number_float())
        require(std::isfinite(j.get<double>()), "non-finite number in result JSON");
    if (j.is_structured())
        for (const auto& v : j)
            checkJsonNumbers(v);
}

inline void checkResultJson(const std::string& text)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception&) {
        require(false, "result JSON does not parse");
    }
    checkJsonNumbers(j);
}

inline void checkScenario(const shardlab::Scenario& s)
{
    using namespace shardlab;
    const ParameterCounts c = countParameters(s.model);
    require(std::isfinite(c.total) && c.total > 0, "parameter count");
    const Simulator sim(s);
    const RecipePlan rp = megatronPlan(sim);
    checkResult(rp.result);
    checkResultJson(evaluationToJson(s, rp.plan, rp.result));
}

} // namespace fuzzcheck
