// libFuzzer target: scenario JSON -> loader -> (if accepted) round trip + simulation.
#include <cstdint>
#include <string>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto s = shardlab::parseScenario(text, "fuzz.json");
    if (!s.ok()) {
        fuzzcheck::require(!s.errors.front().reason.empty(), "error without a reason");
        return 0;
    }
    auto again = shardlab::parseScenario(shardlab::scenarioToJson(s.value), "roundtrip.json");
    fuzzcheck::require(again.ok(), "a saved scenario does not load");
    fuzzcheck::checkScenario(s.value);
    return 0;
}
