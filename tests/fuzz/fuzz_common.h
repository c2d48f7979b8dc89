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

// Every number in a result JSON is finite. nlohmann writes NaN/Inf as null, so a null is
// legitimate only where the result says it has no figure: inside an object that says
// "costed": false (a plan not priced) or "unbounded": true (a time that overflowed).
inline bool jsonNumbersFinite(const nlohmann::json& j, bool nullAllowed = false)
{
    if (j.is_null())
        return nullAllowed;
    if (j.is_number_float())
        return std::isfinite(j.get<double>());
    if (j.is_object()) {
        const auto costed = j.find("costed"), unbounded = j.find("unbounded");
        nullAllowed = nullAllowed || (costed != j.end() && *costed == false)
            || (unbounded != j.end() && *unbounded == true);
        // Without a TPOT (one output token, a prefill pool) its figures are null, under load too.
        const auto hasTpot = j.find("has_tpot");
        if (!nullAllowed && hasTpot != j.end() && *hasTpot == false) {
            for (auto it = j.begin(); it != j.end(); ++it) {
                const bool tpotFigure = it.key() == "tpot_ms" || it.key() == "tokens_per_s_per_user";
                if (tpotFigure && it->is_null())
                    continue;
                if (it.key() == "load" && it->is_object()) {
                    nlohmann::json load = *it;
                    if (load.contains("tpot_ms") && load["tpot_ms"].is_null())
                        load.erase("tpot_ms");
                    if (!jsonNumbersFinite(load, false))
                        return false;
                    continue;
                }
                if (!jsonNumbersFinite(*it, false))
                    return false;
            }
            return true;
        }
    }
    if (j.is_structured())
        for (const auto& v : j)
            if (!jsonNumbersFinite(v, nullAllowed))
                return false;
    return true;
}

inline void checkJsonNumbers(const nlohmann::json& j)
{
    require(jsonNumbersFinite(j), "null or non-finite number in result JSON outside a figure it says it lacks");
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
