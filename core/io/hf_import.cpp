#include "io/hf_import.h"

#include "io/json_reader.h"

#include <utility>
#include <vector>

namespace shardlab {

using nlohmann::json;
using io::JsonReader;

namespace {

std::string nameFromFile(const std::string& file)
{
    std::string stem = file;
    const auto slash = stem.find_last_of('/');
    if (slash != std::string::npos) {
        // ".../Llama-3-70B/config.json" names the model by its folder.
        std::string dir = stem.substr(0, slash);
        const auto slash2 = dir.find_last_of('/');
        const std::string leaf = stem.substr(slash + 1);
        if (leaf == "config.json" && !dir.empty())
            return slash2 == std::string::npos ? dir : dir.substr(slash2 + 1);
        stem = leaf;
    }
    const auto dot = stem.rfind(".json");
    return dot == std::string::npos ? stem : stem.substr(0, dot);
}

// The model's name: "_name_or_path", else the file's folder or stem. A file name need not
// be UTF-8; the name is written into JSON later, so it is escaped (\xff) here.
std::string nameFrom(const json& doc, const std::string& file)
{
    auto it = doc.find("_name_or_path");
    if (it != doc.end() && it->is_string() && !it->get<std::string>().empty())
        return it->get<std::string>();
    return displayText(nameFromFile(file));
}

bool isFp8(const json& doc)
{
    auto q = doc.find("quantization_config");
    if (q == doc.end() || !q->is_object())
        return false;
    auto m = q->find("quant_method");
    return m != q->end() && m->is_string() && m->get<std::string>() == "fp8";
}

// ShardLab's model fields and the config.json keys they are read from, per family.
std::vector<std::pair<std::string, std::string>> hfKeyNames(const std::string& type)
{
    std::vector<std::pair<std::string, std::string>> k = {
        {"layers", "num_hidden_layers"},        {"hidden_size", "hidden_size"},
        {"attention_heads", "num_attention_heads"}, {"kv_heads", "num_key_value_heads"},
        {"head_dim", "head_dim"},               {"vocab_size", "vocab_size"},
        {"ffn_hidden", "intermediate_size"},    {"experts_per_token", "num_experts_per_tok"},
        {"q_lora_rank", "q_lora_rank"},         {"kv_lora_rank", "kv_lora_rank"},
        {"qk_nope_head_dim", "qk_nope_head_dim"}, {"qk_rope_head_dim", "qk_rope_head_dim"},
        {"v_head_dim", "v_head_dim"}};
    if (type == "mixtral") {
        k.push_back({"experts", "num_local_experts"});
        k.push_back({"expert_ffn_hidden", "intermediate_size"});
    } else if (type == "qwen3_moe" || type == "qwen2_moe") {
        k.push_back({"experts", "num_experts"});
        k.push_back({"expert_ffn_hidden", "moe_intermediate_size"});
        k.push_back({"shared_experts", "shared_expert_intermediate_size"});
        k.push_back({"shared_expert_ffn_hidden", "shared_expert_intermediate_size"});
    } else {
        k.push_back({"experts", "n_routed_experts"});
        k.push_back({"expert_ffn_hidden", "moe_intermediate_size"});
        k.push_back({"shared_experts", "n_shared_experts"});
        k.push_back({"shared_expert_ffn_hidden", "moe_intermediate_size"});
        k.push_back({"dense_layers", "first_k_dense_replace"});
    }
    return k;
}

// "model.moe.experts_per_token" -> "num_experts_per_tok", and the same for field names
// quoted in the reason ("attention_heads (64) must be divisible by kv_heads (7)").
void renameToHfKeys(FieldError& e, const std::string& type, bool hasHeadDim)
{
    const auto names = hfKeyNames(type);
    auto lookup = [&](const std::string& ours) -> const std::string* {
        for (const auto& [a, b] : names)
            if (a == ours)
                return &b;
        return nullptr;
    };
    const std::string leaf = e.where.substr(e.where.find_last_of('.') + 1);
    if (const std::string* theirs = lookup(leaf)) {
        if (leaf == "head_dim" && !hasHeadDim)
            e.reason += " (derived as hidden_size / num_attention_heads; head_dim is not given)";
        e.where = *theirs;
    }
    std::string out;
    for (size_t i = 0; i < e.reason.size();) {
        const size_t j = e.reason.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", i);
        const size_t end = j == std::string::npos ? e.reason.size() : j;
        if (end > i) {
            const std::string word = e.reason.substr(i, end - i);
            const std::string* theirs = lookup(word);
            out += theirs && word.find('_') != std::string::npos ? *theirs : word;
            i = end;
        } else {
            out += e.reason[i++];
        }
    }
    e.reason = out;
}

} // namespace

Parsed<ModelSpec> importHfConfig(const std::string& text, const std::string& file)
{
    Parsed<ModelSpec> out;
    json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) {
        perr.file = file;
        out.errors.push_back(perr);
        return out;
    }
    JsonReader r(doc, "", out.errors);
    if (!r.requireObject()) {
        out.errors.front().file = file;
        return out;
    }
    ModelSpec& m = out.value;
    const std::string type = r.string("model_type");
    const bool llamaLike = type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3";
    const bool deepseek = type == "deepseek_v3" || type == "deepseek_v2";
    const bool known = llamaLike || deepseek || type == "mixtral" || type == "qwen3_moe" || type == "qwen2_moe";
    if (!type.empty() && !known)
        r.fail("model_type", "unsupported model family \"" + type
                                 + "\" (supported: llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, mixtral, "
                                   "deepseek_v2, deepseek_v3)");
    if (!out.errors.empty()) {
        for (auto& e : out.errors)
            e.file = file;
        return out;
    }

    m.name = nameFrom(doc, file);
    m.layers = r.integer("num_hidden_layers", 1, 1000);
    m.hiddenSize = r.integer("hidden_size", 1, 1 << 20);
    m.attentionHeads = r.integer("num_attention_heads", 1, 4096);
    m.kvHeads = r.integerOr("num_key_value_heads", m.attentionHeads, 1, 4096);
    const int defaultHeadDim = m.attentionHeads > 0 ? m.hiddenSize / m.attentionHeads : 0;
    if (r.has("head_dim") && doc["head_dim"].is_null())
        m.headDim = defaultHeadDim; // some configs write null for "derive it"
    else
        m.headDim = r.integerOr("head_dim", defaultHeadDim, 1, 4096);
    m.vocabSize = r.integer("vocab_size", 1, 10'000'000);
    m.tieEmbeddings = r.booleanOr("tie_word_embeddings", false);
    m.weightPrecision = isFp8(doc) ? Precision::FP8 : Precision::BF16;
    m.kvPrecision = Precision::BF16;

    if (type == "mixtral") {
        m.moe.experts = r.integer("num_local_experts", 1, 65536);
        m.moe.expertsPerToken = r.integer("num_experts_per_tok", 1, 65536);
        m.moe.expertFfnHidden = r.integer("intermediate_size", 1, 1 << 22);
        m.ffnHidden = 0;
    } else if (type == "qwen3_moe" || type == "qwen2_moe") {
        m.moe.experts = r.integer("num_experts", 1, 65536);
        m.moe.expertsPerToken = r.integer("num_experts_per_tok", 1, 65536);
        m.moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, 1 << 22);
        m.ffnHidden = r.integerOr("intermediate_size", 0, 0, 1 << 22);
        const int shared = r.integerOr("shared_expert_intermediate_size", 0, 0, 1 << 22);
        if (shared > 0) {
            m.moe.sharedExperts = 1;
            m.moe.sharedExpertFfnHidden = shared;
        }
        const int step = r.integerOr("decoder_sparse_step", 1, 1, 1000);
        if (step != 1)
            r.fail("decoder_sparse_step", "only 1 (every layer MoE) is supported, got " + std::to_string(step));
        auto mlpOnly = doc.find("mlp_only_layers");
        if (mlpOnly != doc.end() && mlpOnly->is_array() && !mlpOnly->empty())
            r.fail("mlp_only_layers", "dense layers interleaved with MoE layers are not supported");
    } else if (deepseek) {
        m.attention = AttentionKind::MLA;
        m.mla.qLoraRank = doc.contains("q_lora_rank") && doc["q_lora_rank"].is_null()
            ? 0
            : r.integerOr("q_lora_rank", 0, 0, 1 << 16);
        m.mla.kvLoraRank = r.integer("kv_lora_rank", 1, 1 << 16);
        m.mla.qkNopeHeadDim = r.integer("qk_nope_head_dim", 1, 4096);
        m.mla.qkRopeHeadDim = r.integer("qk_rope_head_dim", 0, 4096);
        m.mla.vHeadDim = r.integer("v_head_dim", 1, 4096);
        m.headDim = m.mla.vHeadDim;
        m.ffnHidden = r.integer("intermediate_size", 1, 1 << 22);
        if (r.has("n_routed_experts") && !doc["n_routed_experts"].is_null()) {
            m.moe.experts = r.integer("n_routed_experts", 1, 65536);
            m.moe.expertsPerToken = r.integer("num_experts_per_tok", 1, 65536);
            m.moe.expertFfnHidden = r.integer("moe_intermediate_size", 1, 1 << 22);
            m.moe.sharedExperts = r.integerOr("n_shared_experts", 0, 0, 64);
            m.moe.sharedExpertFfnHidden = m.moe.expertFfnHidden;
            m.moe.denseLayers = r.integerOr("first_k_dense_replace", 0, 0, 1000);
            const int freq = r.integerOr("moe_layer_freq", 1, 1, 1000);
            if (freq != 1)
                r.fail("moe_layer_freq", "only 1 (every layer after the dense ones is MoE) is supported");
        }
    } else {
        m.ffnHidden = r.integer("intermediate_size", 1, 1 << 22);
    }
    if (out.errors.empty()) {
        // The semantic checks speak of ShardLab's fields; the user wrote the config's keys.
        out.errors = validateModel(m, "model");
        for (auto& e : out.errors)
            renameToHfKeys(e, type, r.has("head_dim"));
    }
    for (auto& e : out.errors)
        e.file = file;
    return out;
}

Parsed<ModelSpec> importHfConfigFile(const std::string& path)
{
    auto text = readTextFile(path);
    if (!text.ok()) {
        Parsed<ModelSpec> r;
        r.errors.push_back(text.error());
        return r;
    }
    return importHfConfig(text.value(), inputLabel(path));
}

} // namespace shardlab
