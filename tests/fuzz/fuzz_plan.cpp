// libFuzzer target: plan JSON -> loader -> (if accepted) checks and simulation against
// two shipped scenarios (a dense one and an MLA MoE one).
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace shardlab;
    static const Scenario dense = scenarioPreset("llama3-70b-8gpu").value;
    static const Scenario moe = scenarioPreset("deepseek-v3-256gpu").value;
    static const Simulator denseSim(dense), moeSim(moe);
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto p = parsePlan(text, "fuzz.plan.json");
    if (!p.ok()) {
        fuzzcheck::require(!p.errors.front().reason.empty(), "error without a reason");
        return 0;
    }
    for (const auto* pair : {&dense, &moe}) {
        const Simulator& sim = pair == &dense ? denseSim : moeSim;
        (void)checkPlanAgainstScenario(p.value, *pair, "fuzz.plan.json");
        const SimResult r = sim.evaluate(p.value);
        fuzzcheck::checkResult(r);
        fuzzcheck::checkResultJson(evaluationToJson(*pair, p.value, r));
    }
    auto again = parsePlan(planToJson(p.value), "roundtrip.json");
    fuzzcheck::require(again.ok() && again.value == p.value, "plan round trip");
    return 0;
}
