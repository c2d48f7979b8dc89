// Shared by the HuggingFace import tests: the path of a published config under
// tests/data/hf/ and a compact Llama-3-8B-like config.
#pragma once

#include <QString>

#include <string>

namespace shardlab::testutil {

inline QString hfPath(const QString& name)
{
    return QStringLiteral(SHARDLAB_TEST_DATA "/hf/") + name + ".config.json";
}

// Compact Llama-3-8B-like config; bad-input rows each break one thing of it.
inline const std::string kLlama = R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

} // namespace shardlab::testutil
