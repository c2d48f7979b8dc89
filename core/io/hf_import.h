// Import of HuggingFace transformers checkpoints into a ModelSpec. Supported families
// (field names differ between them): llama, mistral, qwen2, qwen3, qwen3_moe, qwen2_moe,
// qwen3_next, mixtral, gpt_oss, deepseek_v2, deepseek_v3, kimi_k2.
//
// Precisions come from the checkpoint (docs/presets.md, "HuggingFace import"):
// - config.json: torch_dtype (or dtype) for unquantized weights; quantization_config for
//   quantized ones (quant_method "fp8", e.g. DeepSeek-V3's block-wise FP8; "mxfp4", gpt-oss;
//   "compressed-tensors", e.g. Kimi-K2-Thinking's INT4 experts; "modelopt"); layer_types for
//   sliding-window and linear-attention layers.
// - hf_quant_config.json beside config.json (NVIDIA ModelOpt exports):
//   quantization.quant_algo for the weights and quantization.kv_cache_quant_algo for the
//   KV cache. 4-bit weight formats (NVFP4, MXFP4, AWQ) are read as themselves; a 4-bit KV
//   cache maps to FP8, with a warning saying so.
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

// The model_type values read, as a comma-separated list (the help and the errors say it).
extern const char* const kHfFamilies;

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
