// A user's measured runs, for `shardlab-cli calibrate --measurements FILE` (docs/simulator.md
// §8, "Calibrating from your own runs"):
//   {"format": "shardlab-measurements", "version": 1,
//    "rows": [{"scenario": "llama3-70b-8gpu" | "path.json" | {scenario object},
//              "plan": "plan.json" | {plan object},
//              "metric": "tpot_ms" | "ttft_ms" | "output_tokens_per_s",
//              "value": 18.6, "note": "optional"}]}
// Paths are relative to the measurements file; a scenario string that names a shipped
// scenario is that scenario. Errors name the file and the JSON path ("rows[2].metric").
#pragma once

#include <string>
#include <vector>

#include "io/scenario_json.h"
#include "sim/knob_fit.h"

namespace shardlab {

Parsed<std::vector<MeasurementRow>> loadMeasurementsFile(const std::string& path);

} // namespace shardlab
