// Precisions of a HuggingFace checkpoint (docs/presets.md, "HuggingFace import"): config.json's
// torch_dtype and quantization_config (fp8, mxfp4, compressed-tensors, modelopt) and NVIDIA
// ModelOpt's hf_quant_config.json. Used by hf_import.cpp only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "io/hf_import.h"
#include "io/json_reader.h"

namespace shardlab::hf {

// Weights and KV precisions from config.json. A format that quantizes the routed experts
// only (attention left out, as gpt-oss's mxfp4 and Kimi-K2-Thinking's int4) sets
// ModelSpec::expertPrecision; the caller moves it to weightPrecision for a dense model.
void readConfigPrecisions(const nlohmann::json& doc, io::JsonReader& r, HfImport& out);

// hf_quant_config.json (ModelOpt): {"quantization": {"quant_algo": ..., "kv_cache_quant_algo": ...}}.
void readQuantConfig(const std::string& text, const std::string& file, HfImport& out, FieldErrors& errors);

} // namespace shardlab::hf
