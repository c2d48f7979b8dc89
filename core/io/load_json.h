// The workload's load protocol in scenario files ("workload.load", docs/simulator.md §4,
// "Serving under load"):
//   {"protocol": "concurrency", "concurrency": 64, "requests": 640, "warmup_requests": 128,
//    "lengths": "uniform", "seed": 1}
//   {"protocol": "request_rate", "request_rate": 8 | "inf", "requests": 500}
// Absent: the steady state. Errors name the JSON path (workload.load.request_rate).
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "model/specs.h"

namespace shardlab::io {

LoadSpec readLoad(JsonReader r);
// Null for the steady state (the key is then left out).
nlohmann::ordered_json loadJson(const LoadSpec& l);

} // namespace shardlab::io
