// A model's JSON (the "model" object of a scenario, or a shardlab-model file): reading with
// errors by JSON path, and writing. Fields absent from a file keep their defaults, and the
// writer leaves out what a model does not use (expert_precision when the experts are stored
// as the other weights, sliding_window and linear_attention when there are none), so files
// of models without them read and write as before.
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "model/specs.h"

namespace shardlab::io {

ModelSpec readModel(JsonReader r);
nlohmann::ordered_json modelJson(const ModelSpec& m);

} // namespace shardlab::io
