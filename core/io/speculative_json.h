// Speculative decoding in scenario files ("workload.speculative", docs/simulator.md §4,
// "Speculative decoding"):
//   {"method": "mtp", "draft_tokens": 3, "acceptance_rate": 0.8}
// acceptance_rate (per drafted token, every depth) is optional: the model family's published
// rates by depth. Or acceptance_length instead: the mean tokens per step an engine reports
// (vLLM's and SGLang's "acceptance length", the verified token included).
// Absent: off. Errors name the JSON path (workload.speculative.draft_tokens).
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "model/specs.h"

namespace shardlab::io {

SpeculativeSpec readSpeculative(JsonReader r);
// Null when off (the key is then left out).
nlohmann::ordered_json speculativeJson(const SpeculativeSpec& s);

} // namespace shardlab::io
