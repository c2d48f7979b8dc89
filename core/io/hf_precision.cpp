#include "io/hf_precision.h"

#include <cctype>

namespace shardlab::hf {

using nlohmann::json;
using io::JsonReader;

namespace {

std::string upper(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// ModelOpt's algorithm names (quant_algo, kv_cache_quant_algo) as ShardLab precisions.
// FP8 variants are FP8; INT8 ones have FP8's bytes; NVFP4 and MXFP4 are themselves; the
// 4-bit integer ones (AWQ, W4A*) are INT4 (ModelOpt's AWQ block size is 128). A 4-bit KV
// cache is not modelled: it maps to FP8, with a warning. Unknown names are errors: their
// size cannot be guessed.
struct AlgoPrecision {
    bool known = false;
    Precision precision = Precision::BF16;
    std::string note; // non-empty: the warning for an approximate mapping
};

AlgoPrecision precisionOfAlgo(const std::string& algo, const char* what)
{
    const std::string a = upper(algo);
    const bool kv = std::string(what) == "KV cache";
    AlgoPrecision r;
    r.known = true;
    r.precision = Precision::FP8;
    if (a.rfind("FP8", 0) == 0)
        return r;
    if (a.rfind("INT8", 0) == 0 || a.rfind("W8A8", 0) == 0) {
        r.note = std::string(what) + " " + algo + " (8-bit integer) modelled as FP8: same bytes, FP8 tensor-core rate";
        return r;
    }
    const bool fp4 = a.find("FP4") != std::string::npos;
    if (fp4 || a.find("AWQ") != std::string::npos || a.rfind("W4A", 0) == 0 || a.rfind("INT4", 0) == 0) {
        if (kv) {
            r.note = std::string(what) + " " + algo + " is 4-bit; a 4-bit KV cache is not modelled, so it is modelled "
                "as FP8: cache bytes are overstated about 2x";
            return r;
        }
        r.precision = a.find("MXFP4") != std::string::npos ? Precision::MXFP4
            : fp4                                         ? Precision::NVFP4
                                                          : Precision::INT4;
        return r;
    }
    r.known = false;
    return r;
}

// Does the list of modules left unquantized (modules_to_not_convert, compressed-tensors'
// ignore) leave out the attention? Then only the MLP weights, in an MoE the routed experts,
// are quantized.
bool attentionLeftOut(const nlohmann::json& list)
{
    if (!list.is_array())
        return false;
    for (const auto& e : list)
        if (e.is_string() && e.get<std::string>().find("attn") != std::string::npos)
            return true;
    return false;
}

// compressed-tensors (llm-compressor): the first config group's weights. 4-bit integers by
// their group size (32: INT4_G32, else INT4, groups of 128), 4-bit floats as NVFP4, 8 bits
// as FP8; an ignore list that leaves attention out quantizes the routed experts only
// (Kimi-K2-Thinking: "re:.*self_attn.*", shared experts and dense MLPs left out too).
void readCompressedTensors(const json& q, JsonReader& qr, HfImport& out)
{
    ModelSpec& m = out.model;
    const json* weights = nullptr;
    auto groups = q.find("config_groups");
    if (groups != q.end() && groups->is_object())
        for (const auto& [name, g] : groups->items())
            if (g.is_object() && g.contains("weights") && g["weights"].is_object()) {
                weights = &g["weights"];
                break;
            }
    if (!weights) {
        out.warnings.push_back("quantization_config (compressed-tensors) has no config group with weights: weights "
                               "modelled as " + std::string(precisionName(m.weightPrecision)));
        return;
    }
    const int bits = weights->value("num_bits", 0);
    const std::string type = weights->value("type", std::string("int"));
    const json& gs = weights->contains("group_size") ? (*weights)["group_size"] : json();
    const int group = gs.is_number_integer() ? gs.get<int>() : 0;
    Precision p = m.weightPrecision;
    if (bits == 4 && type == "float")
        p = Precision::NVFP4;
    else if (bits == 4) {
        p = group > 0 && group <= 32 ? Precision::INT4_G32 : Precision::INT4;
        if (group != 32 && group != 128)
            out.warnings.push_back("quantization_config: int4 with group_size " + std::to_string(group)
                                   + " modelled as " + precisionName(p) + " (scales of groups of "
                                   + (p == Precision::INT4 ? "128" : "32") + ")");
        if (!weights->value("symmetric", true))
            out.warnings.push_back("quantization_config: asymmetric int4 (a zero point per group) modelled as "
                                   "symmetric: weight bytes understated by 4 bits per group");
    } else if (bits == 8) {
        p = Precision::FP8;
        if (type == "int")
            out.warnings.push_back("quantization_config: int8 weights modelled as FP8: same bytes, FP8 tensor-core rate");
    } else {
        qr.fail(qr.path("config_groups"), "weights of " + std::to_string(bits) + " bits (" + type
                                              + ") are not a precision ShardLab models (4 or 8 bits)");
        return;
    }
    if (attentionLeftOut(q.value("ignore", json())))
        m.expertPrecision = p;
    else
        m.weightPrecision = p;
    out.weightsQuantized = true;
}

} // namespace

// Weights and KV precisions from config.json: torch_dtype / dtype, then quantization_config.
void readConfigPrecisions(const json& doc, JsonReader& r, HfImport& out)
{
    ModelSpec& m = out.model;
    m.weightPrecision = Precision::BF16;
    m.kvPrecision = Precision::BF16;
    m.expertPrecision.reset();
    const char* dtypeKey = doc.contains("torch_dtype") ? "torch_dtype" : doc.contains("dtype") ? "dtype" : nullptr;
    if (dtypeKey && !doc[dtypeKey].is_null()) {
        const std::string d = r.string(dtypeKey);
        if (d == "float32")
            out.warnings.push_back(std::string(dtypeKey)
                                   + " float32: modelled as 2-byte weights (engines serve float32 checkpoints in "
                                     "bf16/fp16 with --dtype auto)");
        else if (d == "float8_e4m3fn" || d == "float8_e5m2")
            m.weightPrecision = Precision::FP8;
        else if (!d.empty() && d != "bfloat16" && d != "float16")
            out.warnings.push_back(std::string(dtypeKey) + " \"" + d + "\" is not a precision ShardLab knows: "
                                   "modelled as bf16");
    }
    auto q = doc.find("quantization_config");
    if (q == doc.end() || q->is_null())
        return;
    JsonReader qr = r.child("quantization_config");
    if (!qr.requireObject())
        return;
    const std::string method = qr.stringOr("quant_method", "");
    if (method == "fp8") {
        // DeepSeek-V3 style: FP8 weights (block-wise scales), activations quantized at run time.
        m.weightPrecision = Precision::FP8;
        out.weightsQuantized = true;
        return;
    }
    if (method == "modelopt") {
        // Newer ModelOpt exports put hf_quant_config.json's content here, flat or under "quantization".
        const json& body = q->contains("quantization") && (*q)["quantization"].is_object() ? (*q)["quantization"] : *q;
        JsonReader br = body.is_object() && &body != &*q ? qr.child("quantization") : qr;
        auto readAlgo = [&](const char* key, bool kv) {
            if (!body.contains(key) || body[key].is_null())
                return;
            const std::string algo = br.string(key);
            const AlgoPrecision ap = precisionOfAlgo(algo, kv ? "KV cache" : "weights");
            if (!ap.known) {
                br.fail(br.path(key), "unknown ModelOpt algorithm \"" + algo + "\" (ShardLab reads FP8*, INT8*, "
                                      "NVFP4*, MXFP4, W4A*, *AWQ)");
                return;
            }
            (kv ? m.kvPrecision : m.weightPrecision) = ap.precision;
            (kv ? out.kvQuantized : out.weightsQuantized) = true;
            if (!ap.note.empty())
                out.warnings.push_back(ap.note);
        };
        readAlgo("quant_algo", false);
        readAlgo("kv_cache_quant_algo", true);
        return;
    }
    if (method.empty())
        return;
    if (method == "mxfp4") {
        // gpt-oss: MXFP4 MoE weights; modules_to_not_convert keeps attention, router,
        // embeddings and LM head in BF16.
        const bool expertsOnly = attentionLeftOut(q->value("modules_to_not_convert", json()));
        if (expertsOnly)
            m.expertPrecision = Precision::MXFP4;
        else
            m.weightPrecision = Precision::MXFP4;
        out.weightsQuantized = true;
        return;
    }
    if (method == "compressed-tensors") {
        readCompressedTensors(*q, qr, out);
        return;
    }
    // GPTQ, AWQ, bitsandbytes, ...: their bit widths vary per file.
    out.warnings.push_back("quantization_config.quant_method \"" + method
                           + "\" is not read: weights modelled as " + precisionName(m.weightPrecision)
                           + "; set weight_precision by hand if the checkpoint is smaller");
}

// hf_quant_config.json (ModelOpt): {"quantization": {"quant_algo": ..., "kv_cache_quant_algo": ...}}.
void readQuantConfig(const std::string& text, const std::string& file, HfImport& out, FieldErrors& errors)
{
    json doc;
    FieldError perr;
    if (!io::parseJsonText(text, doc, perr)) {
        perr.file = file;
        errors.push_back(perr);
        return;
    }
    FieldErrors local;
    JsonReader r(doc, "", local);
    if (r.requireObject()) {
        if (!r.has("quantization"))
            r.fail("quantization", "missing required field (a ModelOpt hf_quant_config.json has "
                                   "quantization.quant_algo and quantization.kv_cache_quant_algo)");
        else {
            JsonReader q = r.child("quantization");
            if (q.requireObject()) {
                auto readAlgo = [&](const char* key, bool kv) {
                    if (!q.has(key) || q.json()[key].is_null())
                        return;
                    const std::string algo = q.string(key);
                    if (algo.empty())
                        return;
                    const AlgoPrecision ap = precisionOfAlgo(algo, kv ? "KV cache" : "weights");
                    if (!ap.known) {
                        q.fail(q.path(key), "unknown ModelOpt algorithm \"" + algo
                                                + "\" (ShardLab reads FP8*, INT8*, NVFP4*, MXFP4, W4A*, *AWQ)");
                        return;
                    }
                    Precision& target = kv ? out.model.kvPrecision : out.model.weightPrecision;
                    bool& flag = kv ? out.kvQuantized : out.weightsQuantized;
                    if (flag && target != ap.precision)
                        out.warnings.push_back(file + ": quantization." + key + " " + algo
                                               + " overrides config.json's quantization_config");
                    target = ap.precision;
                    flag = true;
                    if (!ap.note.empty())
                        out.warnings.push_back(ap.note);
                };
                readAlgo("quant_algo", false);
                readAlgo("kv_cache_quant_algo", true);
            }
        }
    }
    for (FieldError& e : local) {
        e.file = file;
        errors.push_back(std::move(e));
    }
    out.quantFile = file;
}


} // namespace shardlab::hf
