#include "io/hf_import.h"

#include "io/hf_precision.h"
#include "io/json_reader.h"
#include "model/model_limits.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace shardlab {

const char* const kHfFamilies = "llama, mistral, qwen2, qwen3, qwen2_moe, qwen3_moe, qwen3_next, mixtral, gpt_oss, "
                                "deepseek_v2, deepseek_v3, kimi_k2";

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
        {"v_head_dim", "v_head_dim"},           {"name", "_name_or_path"}};
    if (type == "mixtral" || type == "gpt_oss") {
        k.push_back({"experts", "num_local_experts"});
        k.push_back({"expert_ffn_hidden", "intermediate_size"});
        k.push_back({"window", "sliding_window"});
    } else if (type == "qwen3_moe" || type == "qwen2_moe" || type == "qwen3_next") {
        k.push_back({"experts", "num_experts"});
        k.push_back({"expert_ffn_hidden", "moe_intermediate_size"});
        k.push_back({"shared_experts", "shared_expert_intermediate_size"});
        k.push_back({"shared_expert_ffn_hidden", "shared_expert_intermediate_size"});
        k.push_back({"key_heads", "linear_num_key_heads"});
        k.push_back({"value_heads", "linear_num_value_heads"});
        k.push_back({"key_head_dim", "linear_key_head_dim"});
        k.push_back({"value_head_dim", "linear_value_head_dim"});
        k.push_back({"conv_kernel", "linear_conv_kernel_dim"});
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

// layer_types (transformers' per-layer attention kinds: "full_attention",
// "sliding_attention", "linear_attention") counted into the attention layer mix; without it
// Qwen3-Next's full_attention_interval (every n-th layer full, the others linear), gpt-oss's
// alternate sliding layers, and Mistral's and Mixtral's sliding_window (every layer).
void readLayerTypes(const json& doc, JsonReader& r, ModelSpec& m, const std::string& type)
{
    AttentionMix& x = m.attentionMix;
    auto types = doc.find("layer_types");
    if (types != doc.end() && !types->is_null()) {
        if (!types->is_array() || int(types->size()) != m.layers) {
            r.fail("layer_types", "must be an array of num_hidden_layers (" + std::to_string(m.layers)
                                      + ") layer kinds");
            return;
        }
        for (const auto& t : *types) {
            const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
            if (kind == "sliding_attention")
                ++x.slidingLayers;
            else if (kind == "linear_attention")
                ++x.linearLayers;
            else if (kind != "full_attention") {
                r.fail("layer_types", "unknown layer kind \"" + displayText(kind)
                                          + "\" (known: full_attention, sliding_attention, linear_attention)");
                return;
            }
        }
    } else if (type == "qwen3_next") {
        const int every = r.integerOr("full_attention_interval", 4, modelLimits::kLayers);
        x.linearLayers = m.layers - m.layers / every;
    } else if (type == "gpt_oss") {
        x.slidingLayers = m.layers / 2; // transformers' default: even layers sliding
    } else if ((type == "mistral" || type == "mixtral") && doc.contains("sliding_window")
               && !doc["sliding_window"].is_null()) {
        x.slidingLayers = m.layers; // transformers' Mistral: a window, when set, on every layer
    }
    if (x.slidingLayers > 0)
        x.slidingWindow = r.integer("sliding_window", modelLimits::kSlidingWindow);
    if (x.linearLayers > 0) {
        x.linear.keyHeads = r.integer("linear_num_key_heads", modelLimits::kHeads);
        x.linear.valueHeads = r.integer("linear_num_value_heads", modelLimits::kHeads);
        x.linear.keyHeadDim = r.integer("linear_key_head_dim", modelLimits::kHeadDim);
        x.linear.valueHeadDim = r.integer("linear_value_head_dim", modelLimits::kHeadDim);
        x.linear.convKernel = r.integerOr("linear_conv_kernel_dim", 4, modelLimits::kConvKernel);
    }
}

// Qwen's MoE families: routed experts, one optional shared expert, every layer MoE.
void readQwenMoe(const json& doc, JsonReader& r, ModelSpec& m)
{
    m.moe.experts = r.integer("num_experts", modelLimits::kExperts);
    m.moe.expertsPerToken = r.integer("num_experts_per_tok", modelLimits::kExperts);
    m.moe.expertFfnHidden = r.integer("moe_intermediate_size", modelLimits::kFfnHidden);
    m.ffnHidden = r.integerOr("intermediate_size", 0, modelLimits::kOptionalFfnHidden);
    const int shared = r.integerOr("shared_expert_intermediate_size", 0, modelLimits::kOptionalFfnHidden);
    if (shared > 0) {
        m.moe.sharedExperts = 1;
        m.moe.sharedExpertFfnHidden = shared;
    }
    const int step = r.integerOr("decoder_sparse_step", 1, modelLimits::kLayers);
    if (step != 1)
        r.fail("decoder_sparse_step", "only 1 (every layer MoE) is supported, got " + std::to_string(step));
    auto mlpOnly = doc.find("mlp_only_layers");
    if (mlpOnly != doc.end() && !mlpOnly->is_array() && !mlpOnly->is_null())
        r.fail("mlp_only_layers", "must be an array of layer indices, got " + std::string(mlpOnly->type_name()));
    else if (mlpOnly != doc.end() && mlpOnly->is_array() && !mlpOnly->empty())
        r.fail("mlp_only_layers", "dense layers interleaved with MoE layers are not supported");
}

} // namespace

namespace {

bool isLlamaLike(const std::string& type)
{
    return type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3";
}

bool isDeepseek(const std::string& type) { return type == "deepseek_v3" || type == "deepseek_v2" || type == "kimi_k2"; }

// The config's model_type, checked: the family decides how every other key is read, and
// without it a MoE or MLA model would be read as a dense one of the wrong size. Also checks
// that _name_or_path, which names the model, is a string.
std::string readFamily(const json& doc, JsonReader& r)
{
    const std::string type = r.string("model_type");
    const bool known = isLlamaLike(type) || isDeepseek(type) || type == "mixtral" || type == "qwen3_moe"
        || type == "qwen2_moe" || type == "qwen3_next" || type == "gpt_oss";
    const std::string supported = std::string(" (supported: ") + kHfFamilies + ")";
    if (r.has("model_type") && doc["model_type"].is_string()) { // else JsonReader::string has said why
        if (type.empty())
            r.fail("model_type", std::string("is empty; it names the model family") + supported);
        else if (!known)
            r.fail("model_type", "unsupported model family \"" + type + "\"" + supported);
    }
    if (r.has("_name_or_path") && !doc["_name_or_path"].is_string())
        r.fail("_name_or_path", "must be a string (the model's HuggingFace id or path), got "
                                    + std::string(doc["_name_or_path"].type_name()));
    return type;
}

// The keys every family shares: layers, widths, heads (head_dim derived when absent or
// null, except for MLA, whose head sizes are its own keys), vocabulary, tied embeddings.
void readCommonShape(const json& doc, JsonReader& r, ModelSpec& m, bool mla)
{
    m.layers = r.integer("num_hidden_layers", modelLimits::kLayers);
    m.hiddenSize = r.integer("hidden_size", modelLimits::kHiddenSize);
    m.attentionHeads = r.integer("num_attention_heads", modelLimits::kHeads);
    m.kvHeads = r.integerOr("num_key_value_heads", m.attentionHeads, modelLimits::kHeads);
    const int defaultHeadDim = m.attentionHeads > 0 ? m.hiddenSize / m.attentionHeads : 0;
    const bool derivedHeadDim = !r.has("head_dim") || doc["head_dim"].is_null(); // null: "derive it"
    if (derivedHeadDim)
        m.headDim = defaultHeadDim;
    else
        m.headDim = r.integerOr("head_dim", defaultHeadDim, modelLimits::kHeadDim);
    if (derivedHeadDim && !mla && m.attentionHeads > 0 && m.hiddenSize % m.attentionHeads != 0)
        r.fail("head_dim", "is not given and hidden_size (" + std::to_string(m.hiddenSize)
                               + ") is not divisible by num_attention_heads (" + std::to_string(m.attentionHeads)
                               + "): give head_dim");
    m.vocabSize = r.integer("vocab_size", modelLimits::kVocabSize);
    m.tieEmbeddings = r.booleanOr("tie_word_embeddings", false);
}

// DeepSeek's MLA attention and, when it routes, its experts after the dense layers.
void readDeepseekShape(const json& doc, JsonReader& r, ModelSpec& m)
{
    m.attention = AttentionKind::MLA;
    m.mla.qLoraRank = doc.contains("q_lora_rank") && doc["q_lora_rank"].is_null()
        ? 0
        : r.integerOr("q_lora_rank", 0, modelLimits::kQLoraRank);
    m.mla.kvLoraRank = r.integer("kv_lora_rank", modelLimits::kKvLoraRank);
    m.mla.qkNopeHeadDim = r.integer("qk_nope_head_dim", modelLimits::kHeadDim);
    m.mla.qkRopeHeadDim = r.integer("qk_rope_head_dim", modelLimits::kRopeHeadDim);
    m.mla.vHeadDim = r.integer("v_head_dim", modelLimits::kHeadDim);
    m.headDim = m.mla.vHeadDim;
    m.ffnHidden = r.integer("intermediate_size", modelLimits::kFfnHidden);
    if (!r.has("n_routed_experts") || doc["n_routed_experts"].is_null())
        return;
    m.moe.experts = r.integer("n_routed_experts", modelLimits::kExperts);
    m.moe.expertsPerToken = r.integer("num_experts_per_tok", modelLimits::kExperts);
    m.moe.expertFfnHidden = r.integer("moe_intermediate_size", modelLimits::kFfnHidden);
    m.moe.sharedExperts = r.integerOr("n_shared_experts", 0, modelLimits::kSharedExperts);
    m.moe.sharedExpertFfnHidden = m.moe.expertFfnHidden;
    m.moe.denseLayers = r.integerOr("first_k_dense_replace", 0, modelLimits::kDenseLayers);
    const int freq = r.integerOr("moe_layer_freq", 1, modelLimits::kLayers);
    if (freq != 1)
        r.fail("moe_layer_freq", "only 1 (every layer after the dense ones is MoE) is supported");
}

// The MLP (dense) or experts (MoE) as the family names them.
void readFamilyShape(const json& doc, JsonReader& r, ModelSpec& m, const std::string& type)
{
    if (type == "mixtral") {
        m.moe.experts = r.integer("num_local_experts", modelLimits::kExperts);
        m.moe.expertsPerToken = r.integer("num_experts_per_tok", modelLimits::kExperts);
        m.moe.expertFfnHidden = r.integer("intermediate_size", modelLimits::kFfnHidden);
        m.ffnHidden = 0;
    } else if (type == "gpt_oss") {
        m.moe.experts = r.integer("num_local_experts", modelLimits::kExperts);
        m.moe.expertsPerToken = r.has("num_experts_per_tok") ? r.integer("num_experts_per_tok", modelLimits::kExperts)
                                                              : r.integer("experts_per_token", modelLimits::kExperts);
        m.moe.expertFfnHidden = r.integer("intermediate_size", modelLimits::kFfnHidden);
        m.ffnHidden = 0;
    } else if (type == "qwen3_moe" || type == "qwen2_moe" || type == "qwen3_next") {
        readQwenMoe(doc, r, m);
    } else if (isDeepseek(type)) {
        readDeepseekShape(doc, r, m);
    } else {
        m.ffnHidden = r.integer("intermediate_size", modelLimits::kFfnHidden);
    }
}

bool isDirectory(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// An entry of that name is there, whatever it is (a dangling or looping link too): reading
// it then says what is wrong, instead of the file being skipped as if absent.
bool exists(const std::string& path)
{
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

} // namespace

Parsed<HfImport> importHfTexts(const std::string& text, const std::string& file,
                               const std::optional<std::string>& quantText, const std::string& quantFile)
{
    Parsed<HfImport> result;
    json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) {
        perr.file = file;
        result.errors.push_back(perr);
        return result;
    }
    Parsed<ModelSpec> out; // errors are collected here, then moved to result
    JsonReader r(doc, "", out.errors);
    if (!r.requireObject()) {
        out.errors.front().file = file;
        result.errors = out.errors;
        return result;
    }
    ModelSpec& m = result.value.model;
    const std::string type = readFamily(doc, r);
    const bool llamaLike = isLlamaLike(type);
    if (!out.errors.empty()) {
        for (auto& e : out.errors)
            e.file = file;
        result.errors = out.errors;
        return result;
    }

    m.name = nameFrom(doc, file);
    readCommonShape(doc, r, m, isDeepseek(type));
    hf::readConfigPrecisions(doc, r, result.value);
    readFamilyShape(doc, r, m, type);
    const bool mistralWindow = (type == "mistral" || type == "mixtral") && doc.contains("sliding_window");
    if (type == "gpt_oss" || type == "qwen3_next" || (llamaLike && doc.contains("layer_types")) || mistralWindow)
        readLayerTypes(doc, r, m, type);
    if (m.expertPrecision && !m.isMoe()) { // quantized MLPs of a dense model: every weight, as modelled
        m.weightPrecision = *m.expertPrecision;
        m.expertPrecision.reset();
    }
    if (out.errors.empty()) {
        // The semantic checks speak of ShardLab's fields; the user wrote the config's keys.
        out.errors = validateModel(m, "model");
        for (auto& e : out.errors)
            renameToHfKeys(e, type, r.has("head_dim"));
    }
    for (auto& e : out.errors)
        e.file = file;
    result.errors = std::move(out.errors);
    if (result.errors.empty() && quantText)
        hf::readQuantConfig(*quantText, quantFile, result.value, result.errors);
    return result;
}

namespace {

// A folder holds config.json (when folders are allowed); a file's folder may hold
// hf_quant_config.json.
Parsed<HfImport> importFrom(const std::string& path, bool allowFolder)
{
    Parsed<HfImport> r;
    std::string configPath = path, dir;
    if (allowFolder && path != "-" && isDirectory(path)) {
        dir = path;
        while (dir.size() > 1 && dir.back() == '/')
            dir.pop_back();
        configPath = dir + "/config.json";
        if (!exists(configPath)) {
            r.errors.push_back({displayText(path), {}, "not a HuggingFace model folder: no config.json in it"});
            return r;
        }
    } else if (path != "-") {
        const auto slash = path.find_last_of('/');
        dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
    }
    auto text = readTextFile(configPath);
    if (!text.ok()) {
        r.errors.push_back(text.error());
        return r;
    }
    std::optional<std::string> quant;
    std::string quantPath;
    if (!dir.empty() && exists(dir + "/hf_quant_config.json")) {
        quantPath = dir + "/hf_quant_config.json";
        auto q = readTextFile(quantPath);
        if (!q.ok()) {
            r.errors.push_back(q.error());
            return r;
        }
        quant = q.value();
    }
    // The model is named by _name_or_path, else by its folder (nameFrom).
    return importHfTexts(text.value(), inputLabel(configPath), quant, displayText(quantPath));
}

} // namespace

Parsed<HfImport> importHfModel(const std::string& path)
{
    return importFrom(path, true);
}

Parsed<ModelSpec> importHfConfig(const std::string& text, const std::string& file)
{
    Parsed<HfImport> in = importHfTexts(text, file);
    Parsed<ModelSpec> out;
    out.value = in.value.model;
    out.errors = std::move(in.errors);
    return out;
}

Parsed<ModelSpec> importHfConfigFile(const std::string& path)
{
    // A file, as the name says: a directory is refused by the one read path like
    // everywhere else ("cannot open: is a directory").
    Parsed<HfImport> in = importFrom(path, false);
    Parsed<ModelSpec> out;
    out.value = in.value.model;
    out.errors = std::move(in.errors);
    return out;
}

} // namespace shardlab
