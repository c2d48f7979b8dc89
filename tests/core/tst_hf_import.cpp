// Import of HuggingFace config.json files (tests/data/hf/, as published on the Hub):
// dimensions per family, parameter counts against the published totals, agreement with the
// shipped presets, and errors that name the file, the field and the reason.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "io/hf_import.h"
#include "io/presets.h"
#include "spec_compare.h"
#include "tst_hf_fixtures.h"

using namespace shardlab;
using namespace shardlab::testutil;

namespace {

const std::string kQwenMoe = R"({
  "architectures": ["Qwen3MoeForCausalLM"],
  "model_type": "qwen3_moe",
  "decoder_sparse_step": 1,
  "head_dim": 128,
  "hidden_size": 2048,
  "intermediate_size": 6144,
  "mlp_only_layers": [],
  "moe_intermediate_size": 768,
  "num_attention_heads": 32,
  "num_experts": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 48,
  "num_key_value_heads": 4,
  "vocab_size": 151936
})";

const std::string kDeepseek = R"({
  "architectures": ["DeepseekV3ForCausalLM"],
  "model_type": "deepseek_v3",
  "first_k_dense_replace": 3,
  "hidden_size": 7168,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "v_head_dim": 128,
  "vocab_size": 129280
})";

const std::string kMixtral = R"({
  "architectures": ["MixtralForCausalLM"],
  "model_type": "mixtral",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "vocab_size": 32000
})";

} // namespace

class TestHfImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void families_data();
    void families();
    void parameterCounts_data();
    void parameterCounts();
    void matchesShippedPreset_data();
    void matchesShippedPreset();
    void detectedAsHuggingFace();
    void savedModelRoundTrips();
    void modelName();
    void nullMeansDerived();
    void badConfigs_data();
    void badConfigs();
    void missingFile();
};

void TestHfImport::families_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("ffn");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<bool>("mla");
    QTest::addColumn<int>("kvLoraRank");
    QTest::addColumn<int>("qLoraRank");
    QTest::addColumn<int>("experts");
    QTest::addColumn<int>("topK");
    QTest::addColumn<int>("expertFfn");
    QTest::addColumn<int>("shared");
    QTest::addColumn<int>("sharedFfn");
    QTest::addColumn<int>("denseLayers");
    QTest::addColumn<bool>("fp8");

    // file, layers, hidden, heads, kv, head_dim, ffn, vocab, mla, kv_lora, q_lora,
    // experts, top-k, expert ffn, shared, shared ffn, dense layers, fp8
    QTest::newRow("llama3-70b (llama, head_dim derived)")
        << "llama3-70b" << 80 << 8192 << 64 << 8 << 128 << 28672 << 128256 << false << 0 << 0 << 0 << 0 << 0
        << 0 << 0 << 0 << false;
    QTest::newRow("qwen3-8b (qwen3, explicit head_dim)")
        << "qwen3-8b" << 36 << 4096 << 32 << 8 << 128 << 12288 << 151936 << false << 0 << 0 << 0 << 0 << 0 << 0
        << 0 << 0 << false;
    // Qwen3-235B: head_dim 128 is explicit and differs from hidden/heads = 64.
    QTest::newRow("qwen3-235b-a22b (qwen3_moe)")
        << "qwen3-235b-a22b" << 94 << 4096 << 64 << 4 << 128 << 12288 << 151936 << false << 0 << 0 << 128 << 8
        << 1536 << 0 << 0 << 0 << false;
    // Mixtral's intermediate_size is the expert width; it has no dense FFN.
    QTest::newRow("mixtral-8x7b (mixtral)")
        << "mixtral-8x7b" << 32 << 4096 << 32 << 8 << 128 << 0 << 32000 << false << 0 << 0 << 8 << 2 << 14336
        << 0 << 0 << 0 << false;
    QTest::newRow("deepseek-v3 (deepseek_v3, MLA, fp8)")
        << "deepseek-v3" << 61 << 7168 << 128 << 128 << 128 << 18432 << 129280 << true << 512 << 1536 << 256
        << 8 << 2048 << 1 << 2048 << 3 << true;
    // q_lora_rank null: queries projected straight from the hidden state.
    QTest::newRow("deepseek-v2-lite (deepseek_v2, q_lora_rank null)")
        << "deepseek-v2-lite" << 27 << 2048 << 16 << 16 << 128 << 10944 << 102400 << true << 512 << 0 << 64 << 6
        << 1408 << 2 << 1408 << 1 << false;
}

void TestHfImport::families()
{
    QFETCH(QString, file);
    QFETCH(int, layers);
    QFETCH(int, hidden);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, ffn);
    QFETCH(int, vocab);
    QFETCH(bool, mla);
    QFETCH(int, kvLoraRank);
    QFETCH(int, qLoraRank);
    QFETCH(int, experts);
    QFETCH(int, topK);
    QFETCH(int, expertFfn);
    QFETCH(int, shared);
    QFETCH(int, sharedFfn);
    QFETCH(int, denseLayers);
    QFETCH(bool, fp8);

    auto r = importHfConfigFile(hfPath(file).toStdString());
    QVERIFY2(r.ok(), r.firstError().c_str());
    const ModelSpec& m = r.value;
    QCOMPARE(m.layers, layers);
    QCOMPARE(m.hiddenSize, hidden);
    QCOMPARE(m.attentionHeads, heads);
    QCOMPARE(m.kvHeads, kvHeads);
    QCOMPARE(m.headDim, headDim);
    if (m.denseLayerCount() > 0 || ffn == 0)
        QCOMPARE(m.ffnHidden, ffn);
    QCOMPARE(m.vocabSize, vocab);
    QCOMPARE(m.tieEmbeddings, false);
    QCOMPARE(m.attention == AttentionKind::MLA, mla);
    if (mla) {
        QCOMPARE(m.mla.kvLoraRank, kvLoraRank);
        QCOMPARE(m.mla.qLoraRank, qLoraRank);
        QCOMPARE(m.mla.qkNopeHeadDim, 128);
        QCOMPARE(m.mla.qkRopeHeadDim, 64);
        QCOMPARE(m.mla.vHeadDim, 128);
    }
    QCOMPARE(m.isMoe(), experts > 0);
    QCOMPARE(m.moe.experts, experts);
    QCOMPARE(m.moe.expertsPerToken, topK);
    QCOMPARE(m.moe.expertFfnHidden, expertFfn);
    QCOMPARE(m.moe.sharedExperts, shared);
    QCOMPARE(m.moe.sharedExpertFfnHidden, sharedFfn);
    QCOMPARE(m.moe.denseLayers, denseLayers);
    QCOMPARE(m.weightPrecision == Precision::FP8, fp8);
    QVERIFY(m.kvPrecision == Precision::BF16);
    QVERIFY(!m.name.empty());
    QVERIFY2(validateModel(m, "model").empty(), "imported model fails validation");
}

void TestHfImport::parameterCounts_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("totalB");
    QTest::addColumn<double>("activeB");
    QTest::addColumn<double>("activeRoundingB"); // unit the published active figure is rounded to
    QTest::addColumn<bool>("activeWithoutEmbedding");

    // Published: DeepSeek-V3 report (671 B / 37 B, MTP module excluded), DeepSeek-V2 paper
    // (Lite: 15.7 B / 2.4 B), Qwen3 model cards (235 B / 22 B; 8.2 B), Mistral (46.7 B /
    // 12.9 B), Meta (70.6 B). DeepSeek's "activated" figures leave out the input embedding
    // table (a lookup, not a matmul); ShardLab's active count includes it.
    QTest::newRow("deepseek-v3") << "deepseek-v3" << 671.0 << 37.0 << 1.0 << true;
    QTest::newRow("deepseek-v2-lite") << "deepseek-v2-lite" << 15.7 << 2.4 << 0.1 << true;
    QTest::newRow("qwen3-235b-a22b") << "qwen3-235b-a22b" << 235.0 << 22.0 << 1.0 << false;
    QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << 46.7 << 12.9 << 0.1 << false;
    QTest::newRow("llama3-70b") << "llama3-70b" << 70.6 << 70.6 << 0.1 << false;
    QTest::newRow("qwen3-8b") << "qwen3-8b" << 8.2 << 8.2 << 0.1 << false;
}

void TestHfImport::parameterCounts()
{
    QFETCH(QString, file);
    QFETCH(double, totalB);
    QFETCH(double, activeB);
    QFETCH(double, activeRoundingB);
    QFETCH(bool, activeWithoutEmbedding);
    auto r = importHfConfigFile(hfPath(file).toStdString());
    QVERIFY2(r.ok(), r.firstError().c_str());
    const ParameterCounts c = countParameters(r.value);
    const double total = c.total / 1e9;
    const double active = (c.active - (activeWithoutEmbedding ? c.embedding : 0.0)) / 1e9;
    QVERIFY2(std::abs(total / totalB - 1) < 0.01,
             qPrintable(QString("total %1 B vs published %2 B").arg(total).arg(totalB)));
    // Within 1% of the published figure, plus that figure's own rounding.
    QVERIFY2(std::abs(active - activeB) <= 0.01 * activeB + activeRoundingB / 2,
             qPrintable(QString("active %1 B vs published %2 B").arg(active).arg(activeB)));
    QVERIFY(c.active <= c.total);
    if (!r.value.isMoe())
        QCOMPARE(c.active, c.total);
}

void TestHfImport::matchesShippedPreset_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("preset");
    QTest::newRow("deepseek-v3") << "deepseek-v3" << "deepseek-v3";
    QTest::newRow("qwen3-235b-a22b") << "qwen3-235b-a22b" << "qwen3-235b-a22b";
    QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << "mixtral-8x7b";
    QTest::newRow("llama3-70b") << "llama3-70b" << "llama3-70b";
}

void TestHfImport::matchesShippedPreset()
{
    QFETCH(QString, file);
    QFETCH(QString, preset);
    auto imported = importHfConfigFile(hfPath(file).toStdString());
    QVERIFY2(imported.ok(), imported.firstError().c_str());
    auto shipped = modelPreset(preset.toStdString());
    QVERIFY2(shipped.ok(), shipped.firstError().c_str());
    compareModelDims(imported.value, shipped.value, file + " vs preset " + preset);
    if (QTest::currentTestFailed())
        return;
    const ParameterCounts a = countParameters(imported.value), b = countParameters(shipped.value);
    QCOMPARE(a.total, b.total);
    QCOMPARE(a.active, b.active);
}

void TestHfImport::detectedAsHuggingFace()
{
    const QStringList files = QDir(QStringLiteral(SHARDLAB_TEST_DATA "/hf")).entryList({"*.json"}, QDir::Files);
    QVERIFY(files.size() >= 6);
    for (const QString& f : files) {
        const std::string text = readFileText(QStringLiteral(SHARDLAB_TEST_DATA "/hf/") + f);
        QVERIFY2(detectFileKind(text) == FileKind::HuggingFaceConfig, qPrintable(f));
    }
}

void TestHfImport::savedModelRoundTrips()
{
    // import-hf --out writes modelToJson; reading that back must give the same model.
    for (const char* name : {"llama3-70b", "qwen3-8b", "qwen3-235b-a22b", "mixtral-8x7b", "deepseek-v3",
                             "deepseek-v2-lite"}) {
        auto imported = importHfConfigFile(hfPath(name).toStdString());
        QVERIFY2(imported.ok(), imported.firstError().c_str());
        const std::string json = modelToJson(imported.value);
        QVERIFY(detectFileKind(json) == FileKind::Model);
        auto back = parseModel(json, "saved.json");
        QVERIFY2(back.ok(), back.firstError().c_str());
        compareModel(back.value, imported.value, name);
        if (QTest::currentTestFailed())
            return;
    }
}

void TestHfImport::modelName()
{
    // "_name_or_path" wins when present.
    std::string withName = replaceOnce(kLlama, "\"model_type\"", "\"_name_or_path\": \"org/My-Model\", \"model_type\"");
    QCOMPARE(qs(importHfConfig(withName, "x/config.json").value.name), QString("org/My-Model"));
    // ".../Meta-Llama-3-8B/config.json" is named after its folder (the Hub's layout).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkdir("Meta-Llama-3-8B"));
    const QString path = dir.path() + "/Meta-Llama-3-8B/config.json";
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(kLlama.c_str());
    f.close();
    auto r = importHfConfigFile(path.toStdString());
    QVERIFY2(r.ok(), r.firstError().c_str());
    QCOMPARE(qs(r.value.name), QString("Meta-Llama-3-8B"));
    // Any other file name: its stem.
    QCOMPARE(qs(importHfConfig(kLlama, "dir/llama-8b.json").value.name), QString("llama-8b"));
}

void TestHfImport::nullMeansDerived()
{
    // Some configs write null for "derive it": head_dim from hidden/heads.
    auto r = importHfConfig(replaceOnce(kLlama, "\"rope_theta\"", "\"head_dim\": null, \"rope_theta\""), "c.json");
    QVERIFY2(r.ok(), r.firstError().c_str());
    QCOMPARE(r.value.headDim, 128);
    // No num_key_value_heads: multi-head attention.
    auto mha = importHfConfig(replaceOnce(kLlama, "\"num_key_value_heads\": 8,", ""), "c.json");
    QVERIFY2(mha.ok(), mha.firstError().c_str());
    QCOMPARE(mha.value.kvHeads, 32);
    // DeepSeek-V2-style dense model: n_routed_experts null means no MoE.
    auto dense = importHfConfig(replaceOnce(kDeepseek, "\"n_routed_experts\": 256", "\"n_routed_experts\": null"),
                                "c.json");
    QVERIFY2(dense.ok(), dense.firstError().c_str());
    QVERIFY(!dense.value.isMoe());
    // Mixtral's (and Mistral's) sliding_window: null is none; a number is a window on every layer.
    auto full = importHfConfig(replaceOnce(kMixtral, "\"vocab_size\"", "\"sliding_window\": null, \"vocab_size\""), "c.json");
    QVERIFY2(full.ok(), full.firstError().c_str());
    QCOMPARE(full.value.attentionMix.slidingLayers, 0);
    auto windowed = importHfConfig(replaceOnce(kMixtral, "\"vocab_size\"", "\"sliding_window\": 4096, \"vocab_size\""), "c.json");
    QVERIFY2(windowed.ok(), windowed.firstError().c_str());
    QCOMPARE(windowed.value.attentionMix.slidingLayers, 32);
    QCOMPARE(windowed.value.attentionMix.slidingWindow, 4096);
}

void TestHfImport::badConfigs_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where"); // JSON path of the problem ("" for malformed JSON)
    QTest::addColumn<QString>("reason");

    auto row = [](const char* name, const std::string& text, const char* where, const char* reason) {
        QTest::newRow(name) << qs(text) << QString(where) << QString(reason);
    };
    row("unsupported model_type",
        R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": 12, "n_embd": 768,
            "n_head": 12, "vocab_size": 50257})",
        "model_type", "unsupported model family \"gpt2\" (supported: llama");
    row("missing model_type", replaceOnce(kLlama, "\"model_type\": \"llama\",", ""), "model_type",
        "missing required field");
    row("missing num_hidden_layers", replaceOnce(kLlama, "\"num_hidden_layers\": 32,", ""), "num_hidden_layers",
        "missing required field");
    row("string where a number is needed", replaceOnce(kLlama, "\"hidden_size\": 4096", "\"hidden_size\": \"4096\""),
        "hidden_size", "must be an integer, got a string");
    row("fractional layers", replaceOnce(kLlama, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 32.5"),
        "num_hidden_layers", "must be an integer, got 32.5");
    row("negative vocab", replaceOnce(kLlama, "\"vocab_size\": 128256", "\"vocab_size\": -1"), "vocab_size",
        "must be between 1 and");
    row("boolean tie_word_embeddings as string",
        replaceOnce(kLlama, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": \"no\""),
        "tie_word_embeddings", "must be true or false, got a string");
    row("malformed JSON", replaceOnce(kLlama, "\"hidden_size\": 4096,", "\"hidden_size\": 4096,,"), "",
        "malformed JSON: parse error at line 4");
    row("truncated JSON", kLlama.substr(0, kLlama.size() / 2), "", "malformed JSON: parse error");
    row("not an object", "[1, 2, 3]", "(root)", "must be an object, got an array");
    row("heads not divisible by kv heads",
        replaceOnce(kLlama, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5"), "num_key_value_heads",
        "num_attention_heads (32) must be divisible by num_key_value_heads (5)");
    row("mixtral without num_local_experts", replaceOnce(kMixtral, "\"num_local_experts\": 8,", ""),
        "num_local_experts", "missing required field");
    row("qwen3_moe interleaved dense layers",
        replaceOnce(kQwenMoe, "\"mlp_only_layers\": []", "\"mlp_only_layers\": [0, 47]"), "mlp_only_layers",
        "not supported");
    row("qwen3_moe sparse step 2", replaceOnce(kQwenMoe, "\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 2"),
        "decoder_sparse_step", "only 1");
    row("qwen3_moe top-k above experts",
        replaceOnce(kQwenMoe, "\"num_experts_per_tok\": 8", "\"num_experts_per_tok\": 129"),
        "num_experts_per_tok", "between 1 and 128");
    row("deepseek without kv_lora_rank", replaceOnce(kDeepseek, "\"kv_lora_rank\": 512,", ""), "kv_lora_rank",
        "missing required field");
    row("deepseek moe_layer_freq 2", replaceOnce(kDeepseek, "\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2"),
        "moe_layer_freq", "only 1");
    row("deepseek all layers dense",
        replaceOnce(kDeepseek, "\"first_k_dense_replace\": 3", "\"first_k_dense_replace\": 61"),
        "first_k_dense_replace", "must leave at least one MoE layer");
    // Semantic checks name the config's own keys, which differ between families.
    row("mixtral top-k above num_local_experts",
        replaceOnce(kMixtral, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9"), "num_experts_per_tok",
        "between 1 and 8");
    row("deepseek top-k above n_routed_experts",
        replaceOnce(kDeepseek, "\"n_routed_experts\": 256", "\"n_routed_experts\": 4"), "num_experts_per_tok",
        "between 1 and 4");
    row("derived head_dim of 0", replaceOnce(kLlama, "\"hidden_size\": 4096", "\"hidden_size\": 16"), "head_dim",
        "is not given and hidden_size (16) is not divisible by num_attention_heads (32)");
    row("hidden_size not divisible by heads", replaceOnce(kLlama, "\"hidden_size\": 4096", "\"hidden_size\": 4095"),
        "head_dim", "is not given and hidden_size (4095) is not divisible by num_attention_heads (32): give head_dim");
    // The family decides how the rest is read: never guessed.
    row("empty model_type", replaceOnce(kDeepseek, "\"model_type\": \"deepseek_v3\"", "\"model_type\": \"\""),
        "model_type", "is empty; it names the model family (supported: llama");
    row("mlp_only_layers not an array", replaceOnce(kQwenMoe, "\"mlp_only_layers\": []", "\"mlp_only_layers\": \"0\""),
        "mlp_only_layers", "must be an array of layer indices, got string");
    row("_name_or_path a number", replaceOnce(kLlama, "\"model_type\"", "\"_name_or_path\": 5, \"model_type\""),
        "_name_or_path", "must be a string (the model's HuggingFace id or path), got number");
    row("_name_or_path too long",
        replaceOnce(kLlama, "\"model_type\"", "\"_name_or_path\": \"org/" + std::string(300, 'x') + "\", \"model_type\""),
        "_name_or_path", "is 304 bytes long; names are limited to 256 bytes");
    // The shared parser's checks apply to HuggingFace configs too.
    row("duplicate key", replaceOnce(kLlama, "\"num_hidden_layers\": 32,", "\"num_hidden_layers\": 32, \"num_hidden_layers\": 16,"),
        "num_hidden_layers", "duplicate key");
    row("nested too deep", replaceOnce(kLlama, "\"rope_theta\": 500000.0", "\"rope_scaling\": " + std::string(200, '[') + std::string(200, ']')),
        "", "nested deeper than 128 levels");
}

void TestHfImport::badConfigs()
{
    QFETCH(QString, text);
    QFETCH(QString, where);
    QFETCH(QString, reason);
    const std::string file = "models/bad.config.json";
    auto r = importHfConfig(text.toStdString(), file);
    QVERIFY2(!r.ok(), "bad config accepted");
    const FieldError* hit = nullptr;
    QStringList all;
    for (const FieldError& e : r.errors) {
        all << qs(e.toString());
        QCOMPARE(qs(e.file), qs(file)); // every error names the file
        if (!hit && qs(e.where) == where)
            hit = &e;
    }
    QVERIFY2(hit, qPrintable("no error at '" + where + "'; got: " + all.join(" | ")));
    QVERIFY2(qs(hit->reason).contains(reason), qPrintable(qs(hit->reason)));
    // One line that names the file, the field and the reason, in that order.
    const QString line = qs(hit->toString());
    const QString expected = where.isEmpty() ? qs(file) + ": " + qs(hit->reason)
                                             : qs(file) + ": " + where + ": " + qs(hit->reason);
    QCOMPARE(line, expected);
    QVERIFY(!line.contains('\n'));
    QCOMPARE(qs(r.firstError()), qs(r.errors.front().toString()));
}

void TestHfImport::missingFile()
{
    const std::string path = SHARDLAB_TEST_DATA "/hf/no-such-model.config.json";
    auto r = importHfConfigFile(path);
    QVERIFY(!r.ok());
    QVERIFY2(qs(r.firstError()).startsWith(qs(path) + ": "), r.firstError().c_str());
    QVERIFY2(qs(r.firstError()).contains("no such file"), r.firstError().c_str());
}

QTEST_APPLESS_MAIN(TestHfImport)
#include "tst_hf_import.moc"
