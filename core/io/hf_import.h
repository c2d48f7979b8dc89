// Import of HuggingFace transformers checkpoints into a ModelSpec. Supported families
// (field names differ between them): llama, mistral, qwen2, qwen3, qwen3_moe, qwen2_moe,
// mixtral, deepseek_v2, deepseek_v3.
//
// Precisions come from the checkpoint (docs/presets.md, "HuggingFace import"):
// - config.json: torch_dtype (or dtype) for unquantized weights; quantization_config for
//   quantized ones (quant_method "fp8", e.g. DeepSeek-V3's block-wise FP8; "modelopt").
// - hf_quant_config.json beside config.json (NVIDIA ModelOpt exports):
//   quantization.quant_algo for the weights and quantization.kv_cache_quant_algo for the
//   KV cache. ShardLab has BF16 and FP8: 4-bit formats (NVFP4, AWQ) map to FP8, the nearest,
//   with a warning saying so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/scenario_json.h"

namespace shardlab {

struct HfImport {
    ModelSpec model;
    // Where precisions came from and what could not be represented exactly. Never silent:
    // the CLI prints these, the window shows them.
    std::vector<std::string> warnings;
    bool weightsQuantized = false; // the checkpoint declares quantized weights
    bool kvQuantized = false;      // the checkpoint declares a quantized KV cache
    std::string quantFile;         // the hf_quant_config.json read, if any
};

// config.json text, and optionally hf_quant_config.json text; the labels name them in errors.
Parsed<HfImport> importHfTexts(const std::string& configText, const std::string& configFile,
                               const std::optional<std::string>& quantText = std::nullopt,
                               const std::string& quantFile = "hf_quant_config.json");

// A model folder (config.json and, if present, hf_quant_config.json in it) or a config
// file (and hf_quant_config.json beside it, if present).
Parsed<HfImport> importHfModel(const std::string& path);

// config.json alone (validate, fuzzing): the model of importHfTexts without a quant file.
Parsed<ModelSpec> importHfConfig(const std::string& text, const std::string& file);
// A config file's model (and hf_quant_config.json beside it); no folders.
Parsed<ModelSpec> importHfConfigFile(const std::string& path);

} // namespace shardlab
