// Import of HuggingFace transformers config.json files into a ModelSpec. Supported
// families (field names differ between them): llama, mistral, qwen2, qwen3, qwen3_moe,
// qwen2_moe, mixtral, deepseek_v2, deepseek_v3.
#pragma once

#include <string>

#include "io/scenario_json.h"

namespace shardlab {

Parsed<ModelSpec> importHfConfig(const std::string& text, const std::string& file);
Parsed<ModelSpec> importHfConfigFile(const std::string& path);

} // namespace shardlab
