// libFuzzer target: HuggingFace config.json -> importer -> (if accepted) a scenario on
// an H100 node, simulated.
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/hf_import.h"
#include "io/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace shardlab;
    static const Scenario base = scenarioPreset("llama3-70b-8gpu").value;
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto m = importHfConfig(text, "config.json");
    if (!m.ok()) {
        fuzzcheck::require(!m.errors.front().reason.empty(), "error without a reason");
        return 0;
    }
    Scenario s = base;
    s.model = m.value;
    fuzzcheck::checkScenario(s);
    auto again = parseModel(modelToJson(m.value), "roundtrip.json");
    fuzzcheck::require(again.ok(), "an imported model does not load back");
    return 0;
}
