// The scenario's "constraints" object (docs/choices.md): allowed values per degree, a batch
// range, operators' options. Internal to core/io (scenario_json.cpp reads and writes it).
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "model/specs.h"

namespace shardlab::io {

// Reads `r` (an object) into constraints; every problem names its JSON path.
PlanConstraints readConstraints(JsonReader r);
// The object written for non-empty constraints (option names, not indices).
nlohmann::ordered_json constraintsJson(const PlanConstraints& c);

} // namespace shardlab::io
