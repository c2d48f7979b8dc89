#include "io/model_json.h"

#include "model/model_limits.h"

namespace shardlab::io {

using ojson = nlohmann::ordered_json;

namespace {

// Weights may be stored in any precision; the KV cache in bf16 or fp8 (validateModel).
Precision readPrecision(JsonReader& r, const char* key, Precision fallback = Precision::BF16)
{
    const std::string s = r.stringOr(key, precisionName(fallback));
    Precision p = fallback;
    if (!precisionFromName(s, p))
        r.fail(r.path(key), "must be one of " + knownPrecisions() + ", got \"" + s + "\"");
    return p;
}

void readMla(JsonReader& r, ModelSpec& m)
{
    JsonReader d = r.child("mla");
    if (!r.has("mla"))
        r.fail(r.path("mla"), "missing required field (attention is \"mla\")");
    else if (d.requireObject()) {
        d.rejectUnknownKeys({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
        m.mla.qLoraRank = d.integerOr("q_lora_rank", 0, modelLimits::kQLoraRank);
        m.mla.kvLoraRank = d.integer("kv_lora_rank", modelLimits::kKvLoraRank);
        m.mla.qkNopeHeadDim = d.integer("qk_nope_head_dim", modelLimits::kHeadDim);
        m.mla.qkRopeHeadDim = d.integer("qk_rope_head_dim", modelLimits::kRopeHeadDim);
        m.mla.vHeadDim = d.integer("v_head_dim", modelLimits::kHeadDim);
    }
}

void readMoe(JsonReader& r, ModelSpec& m)
{
    JsonReader e = r.child("moe");
    if (!e.requireObject())
        return;
    e.rejectUnknownKeys({"experts", "experts_per_token", "expert_ffn_hidden", "shared_experts",
                         "shared_expert_ffn_hidden", "dense_layers"});
    m.moe.experts = e.integer("experts", modelLimits::kExperts);
    m.moe.expertsPerToken = e.integer("experts_per_token", modelLimits::kExperts);
    m.moe.expertFfnHidden = e.integer("expert_ffn_hidden", modelLimits::kFfnHidden);
    m.moe.sharedExperts = e.integerOr("shared_experts", 0, modelLimits::kSharedExperts);
    m.moe.sharedExpertFfnHidden =
        e.integerOr("shared_expert_ffn_hidden", m.moe.sharedExperts > 0 ? m.moe.expertFfnHidden : 0,
                    modelLimits::kOptionalFfnHidden);
    m.moe.denseLayers = e.integerOr("dense_layers", 0, modelLimits::kDenseLayers);
}

// "sliding_window": {"layers", "window"}; "linear_attention": {"layers", "key_heads",
// "value_heads", "key_head_dim", "value_head_dim", "conv_kernel"}.
void readAttentionMix(JsonReader& r, ModelSpec& m)
{
    AttentionMix& x = m.attentionMix;
    if (r.has("sliding_window")) {
        JsonReader w = r.child("sliding_window");
        if (w.requireObject()) {
            w.rejectUnknownKeys({"layers", "window"});
            x.slidingLayers = w.integer("layers", modelLimits::kLayers);
            x.slidingWindow = w.integer("window", modelLimits::kSlidingWindow);
        }
    }
    if (r.has("linear_attention")) {
        JsonReader l = r.child("linear_attention");
        if (l.requireObject()) {
            l.rejectUnknownKeys({"layers", "key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel"});
            x.linearLayers = l.integer("layers", modelLimits::kLayers);
            x.linear.keyHeads = l.integer("key_heads", modelLimits::kHeads);
            x.linear.valueHeads = l.integer("value_heads", modelLimits::kHeads);
            x.linear.keyHeadDim = l.integer("key_head_dim", modelLimits::kHeadDim);
            x.linear.valueHeadDim = l.integer("value_head_dim", modelLimits::kHeadDim);
            x.linear.convKernel = l.integerOr("conv_kernel", 4, modelLimits::kConvKernel);
        }
    }
}

} // namespace

ModelSpec readModel(JsonReader r)
{
    ModelSpec m;
    if (!r.requireObject())
        return m;
    r.rejectUnknownKeys({"format", "version", "name", "description", "layers", "hidden_size", "attention_heads",
                         "kv_heads", "head_dim", "ffn_hidden", "vocab_size", "tie_embeddings", "attention", "mla",
                         "moe", "weight_precision", "expert_precision", "kv_precision", "sliding_window",
                         "linear_attention", "source"});
    m.name = r.string("name");
    m.layers = r.integer("layers", modelLimits::kLayers);
    m.hiddenSize = r.integer("hidden_size", modelLimits::kHiddenSize);
    m.attentionHeads = r.integer("attention_heads", modelLimits::kHeads);
    m.vocabSize = r.integer("vocab_size", modelLimits::kVocabSize);
    m.tieEmbeddings = r.booleanOr("tie_embeddings", false);
    const std::string attn = r.stringOr("attention", "gqa");
    if (attn == "mla") {
        m.attention = AttentionKind::MLA;
        readMla(r, m);
        m.kvHeads = r.integerOr("kv_heads", m.attentionHeads, modelLimits::kHeads);
        m.headDim = r.integerOr("head_dim", m.mla.vHeadDim, modelLimits::kHeadDim);
    } else if (attn == "gqa" && !(r.has("attention") && !r.json()["attention"].is_string())) {
        m.kvHeads = r.integer("kv_heads", modelLimits::kHeads);
        m.headDim = r.integer("head_dim", modelLimits::kHeadDim);
    } else {
        // The kind could not be read (its error says so once); which head fields are
        // required depends on it, so they are only checked where given.
        if (r.json()["attention"].is_string())
            r.fail(r.path("attention"), "must be \"gqa\" or \"mla\", got \"" + attn + "\"");
        m.kvHeads = r.integerOr("kv_heads", 1, modelLimits::kHeads);
        m.headDim = r.integerOr("head_dim", 1, modelLimits::kHeadDim);
    }
    if (r.has("moe"))
        readMoe(r, m);
    readAttentionMix(r, m);
    const bool needsFfn = !m.isMoe() || m.moe.denseLayers > 0;
    m.ffnHidden = needsFfn ? r.integer("ffn_hidden", modelLimits::kFfnHidden)
                           : r.integerOr("ffn_hidden", 0, modelLimits::kOptionalFfnHidden);
    m.weightPrecision = readPrecision(r, "weight_precision");
    if (r.has("expert_precision")) {
        const Precision e = readPrecision(r, "expert_precision", m.weightPrecision);
        if (e != m.weightPrecision)
            m.expertPrecision = e;
    }
    m.kvPrecision = readPrecision(r, "kv_precision");
    return m;
}

ojson modelJson(const ModelSpec& m)
{
    ojson j;
    j["name"] = m.name;
    j["layers"] = m.layers;
    j["hidden_size"] = m.hiddenSize;
    j["attention_heads"] = m.attentionHeads;
    j["attention"] = m.attention == AttentionKind::MLA ? "mla" : "gqa";
    if (m.attention == AttentionKind::MLA) {
        j["mla"] = {{"q_lora_rank", m.mla.qLoraRank},
                    {"kv_lora_rank", m.mla.kvLoraRank},
                    {"qk_nope_head_dim", m.mla.qkNopeHeadDim},
                    {"qk_rope_head_dim", m.mla.qkRopeHeadDim},
                    {"v_head_dim", m.mla.vHeadDim}};
    } else {
        j["kv_heads"] = m.kvHeads;
        j["head_dim"] = m.headDim;
    }
    const AttentionMix& x = m.attentionMix;
    if (x.slidingLayers > 0)
        j["sliding_window"] = {{"layers", x.slidingLayers}, {"window", x.slidingWindow}};
    if (x.linearLayers > 0)
        j["linear_attention"] = {{"layers", x.linearLayers},
                                 {"key_heads", x.linear.keyHeads},
                                 {"value_heads", x.linear.valueHeads},
                                 {"key_head_dim", x.linear.keyHeadDim},
                                 {"value_head_dim", x.linear.valueHeadDim},
                                 {"conv_kernel", x.linear.convKernel}};
    if (m.denseLayerCount() > 0 || m.ffnHidden > 0)
        j["ffn_hidden"] = m.ffnHidden;
    j["vocab_size"] = m.vocabSize;
    j["tie_embeddings"] = m.tieEmbeddings;
    if (m.isMoe()) {
        j["moe"] = {{"experts", m.moe.experts},
                    {"experts_per_token", m.moe.expertsPerToken},
                    {"expert_ffn_hidden", m.moe.expertFfnHidden},
                    {"shared_experts", m.moe.sharedExperts},
                    {"shared_expert_ffn_hidden", m.moe.sharedExpertFfnHidden},
                    {"dense_layers", m.moe.denseLayers}};
    }
    j["weight_precision"] = precisionName(m.weightPrecision);
    if (m.expertPrecision && *m.expertPrecision != m.weightPrecision)
        j["expert_precision"] = precisionName(*m.expertPrecision);
    j["kv_precision"] = precisionName(m.kvPrecision);
    return j;
}

} // namespace shardlab::io
