// Precisions of HuggingFace checkpoints (io/hf_precision): config.json's torch_dtype and
// quantization_config, ModelOpt's hf_quant_config.json, the 4-bit formats of gpt-oss,
// Kimi-K2 and ModelOpt, and errors that name the file and the field.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "io/hf_import.h"
#include "io/presets.h"
#include "spec_compare.h"
#include "tst_hf_fixtures.h"

using namespace shardlab;
using namespace shardlab::testutil;

class TestHfPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void checkpointPrecisions_data();
    void checkpointPrecisions();
    void modelOptFolder();
    void fourBitFamilies_data();
    void fourBitFamilies();
    void quantConfigErrors_data();
    void quantConfigErrors();
};

// Precisions read from the checkpoint: config.json's torch_dtype and quantization_config,
// and a ModelOpt hf_quant_config.json. Each row is one config (+ quant file) and what it
// must give; 4-bit weights import as their format, a 4-bit KV cache maps to FP8 with a
// warning that says so.
void TestHfPrecision::checkpointPrecisions_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("quant"); // empty: no hf_quant_config.json
    QTest::addColumn<QString>("weights");
    QTest::addColumn<QString>("kv");
    QTest::addColumn<QString>("warning"); // substring of the one warning, empty: none

    const QString llama = QString::fromStdString(kLlama);
    auto with = [&](const char* extra) {
        QString c = llama;
        c.replace(QStringLiteral("\"vocab_size\": 128256"), QStringLiteral("\"vocab_size\": 128256, ") + extra);
        return c;
    };
    QTest::newRow("bf16 checkpoint") << llama << "" << "bf16" << "bf16" << "";
    QTest::newRow("float32 is read as 2 bytes, said") << QString(llama).replace("bfloat16", "float32") << ""
                                                       << "bf16" << "bf16" << "float32";
    QTest::newRow("DeepSeek-V3 block FP8 (quant_method fp8)")
        << with(R"("quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})")
        << "" << "fp8" << "bf16" << "";
    QTest::newRow("ModelOpt FP8 weights and KV")
        << llama << R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}})"
        << "fp8" << "fp8" << "";
    QTest::newRow("ModelOpt FP8 weights, no KV quantization")
        << llama << R"({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": null}})" << "fp8" << "bf16" << "";
    QTest::newRow("ModelOpt per-channel FP8") << llama << R"({"quantization": {"quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}})"
                                              << "fp8" << "bf16" << "";
    QTest::newRow("ModelOpt NVFP4")
        << llama << R"({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}})"
        << "nvfp4" << "fp8" << "";
    QTest::newRow("ModelOpt W4A16 AWQ: int4, groups of 128")
        << llama << R"({"quantization": {"quant_algo": "W4A16_AWQ"}})" << "int4" << "bf16" << "";
    QTest::newRow("ModelOpt NVFP4 KV cache -> FP8, said")
        << llama << R"({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "NVFP4"}})" << "fp8" << "fp8"
        << "a 4-bit KV cache is not modelled";
    QTest::newRow("mxfp4 (gpt-oss style) on a dense model: every weight")
        << with(R"("quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]})")
        << "" << "mxfp4" << "bf16" << "";
    QTest::newRow("compressed-tensors int4, groups of 128")
        << with(R"("quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": true}}}, "ignore": ["lm_head"]})")
        << "" << "int4" << "bf16" << "";
    QTest::newRow("compressed-tensors int4, groups of 32")
        << with(R"("quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 32}}}})")
        << "" << "int4_g32" << "bf16" << "";
    QTest::newRow("compressed-tensors nvfp4")
        << with(R"("quantization_config": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}})")
        << "" << "nvfp4" << "bf16" << "";
    QTest::newRow("ModelOpt inside config.json (quant_method modelopt)")
        << with(R"("quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"})")
        << "" << "fp8" << "fp8" << "";
    QTest::newRow("GPTQ is not read, said") << with(R"("quantization_config": {"quant_method": "gptq", "bits": 4})") << ""
                                            << "bf16" << "bf16" << "\"gptq\" is not read";
}

void TestHfPrecision::checkpointPrecisions()
{
    QFETCH(QString, config);
    QFETCH(QString, quant);
    QFETCH(QString, weights);
    QFETCH(QString, kv);
    QFETCH(QString, warning);
    std::optional<std::string> q;
    if (!quant.isEmpty())
        q = quant.toStdString();
    auto r = importHfTexts(config.toStdString(), "config.json", q, "hf_quant_config.json");
    QVERIFY2(r.ok(), r.firstError().c_str());
    QCOMPARE(QString(precisionName(r.value.model.weightPrecision)), weights);
    QCOMPARE(QString(precisionName(r.value.model.kvPrecision)), kv);
    QCOMPARE(r.value.weightsQuantized, weights != "bf16" && !config.contains("float32"));
    if (warning.isEmpty()) {
        QVERIFY2(r.value.warnings.empty(), r.value.warnings.empty() ? "" : r.value.warnings.front().c_str());
    } else {
        QCOMPARE(int(r.value.warnings.size()), 1);
        QVERIFY2(QString::fromStdString(r.value.warnings.front()).contains(warning), r.value.warnings.front().c_str());
        return;
    }
}

// The deliverable: a model folder with a ModelOpt hf_quant_config.json gives FP8 weights and
// an FP8 KV cache, whether the folder or its config.json is named.
void TestHfPrecision::modelOptFolder()
{
    const QString dir = QStringLiteral(SHARDLAB_TEST_DATA "/hf/modelopt-llama3-70b-fp8");
    for (const QString& path : {dir, dir + "/", dir + "/config.json"}) {
        auto r = importHfModel(path.toStdString());
        QVERIFY2(r.ok(), r.firstError().c_str());
        QVERIFY(r.value.model.weightPrecision == Precision::FP8);
        QVERIFY(r.value.model.kvPrecision == Precision::FP8);
        QVERIFY(r.value.weightsQuantized && r.value.kvQuantized);
        QVERIFY2(r.value.warnings.empty(), r.value.warnings.empty() ? "" : r.value.warnings.front().c_str());
        QVERIFY(QString::fromStdString(r.value.quantFile).endsWith("modelopt-llama3-70b-fp8/hf_quant_config.json"));
        QCOMPARE(QString::fromStdString(r.value.model.name), QString("modelopt-llama3-70b-fp8"));
        QCOMPARE(r.value.model.layers, 80);
    }
    // The same config without the quant file beside it is a bf16 model.
    auto plain = importHfModel(hfPath("llama3-70b").toStdString());
    QVERIFY2(plain.ok(), plain.firstError().c_str());
    QVERIFY(plain.value.model.weightPrecision == Precision::BF16 && plain.value.model.kvPrecision == Precision::BF16);
    QVERIFY(plain.value.quantFile.empty());

    auto fp4 = importHfModel(SHARDLAB_TEST_DATA "/hf/modelopt-deepseek-v3-nvfp4");
    QVERIFY2(fp4.ok(), fp4.firstError().c_str());
    QVERIFY(fp4.value.model.weightPrecision == Precision::NVFP4 && fp4.value.model.kvPrecision == Precision::FP8);
    QCOMPARE(int(fp4.value.warnings.size()), 0);
}

void TestHfPrecision::quantConfigErrors_data()
{
    QTest::addColumn<QString>("quant");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not an object") << "[]" << "(root)" << "must be an object";
    QTest::newRow("no quantization") << R"({"producer": {}})" << "quantization" << "missing required field";
    QTest::newRow("quantization not an object") << R"({"quantization": 8})" << "quantization" << "must be an object";
    QTest::newRow("algo not a string") << R"({"quantization": {"quant_algo": 8}})" << "quantization.quant_algo"
                                       << "must be a string";
    QTest::newRow("unknown algo") << R"({"quantization": {"quant_algo": "FP3_EXPERIMENTAL"}})"
                                  << "quantization.quant_algo" << "unknown ModelOpt algorithm \"FP3_EXPERIMENTAL\"";
    QTest::newRow("unknown KV algo") << R"({"quantization": {"kv_cache_quant_algo": "MAGIC"}})"
                                     << "quantization.kv_cache_quant_algo" << "unknown ModelOpt algorithm";
    QTest::newRow("malformed") << "{" << "" << "malformed JSON";
}

void TestHfPrecision::quantConfigErrors()
{
    QFETCH(QString, quant);
    QFETCH(QString, where);
    QFETCH(QString, reason);
    auto r = importHfTexts(kLlama, "m/config.json", quant.toStdString(), "m/hf_quant_config.json");
    QVERIFY(!r.ok());
    const FieldError& e = r.errors.front();
    QCOMPARE(QString::fromStdString(e.file), QString("m/hf_quant_config.json"));
    QCOMPARE(QString::fromStdString(e.where), where);
    QVERIFY2(QString::fromStdString(e.reason).contains(reason), e.reason.c_str());

    // A folder without config.json is refused, naming the folder.
    QTemporaryDir empty;
    auto none = importHfModel(empty.path().toStdString());
    QVERIFY(!none.ok());
    QVERIFY2(none.firstError().find("no config.json") != std::string::npos, none.firstError().c_str());
}


// gpt-oss (MXFP4 experts, alternating sliding-window layers), Qwen3-Next (3 of 4 layers
// Gated DeltaNet) and Kimi-K2-Thinking (INT4 experts, groups of 32) as published: the
// import equals the shipped preset, and the totals are the published ones within 1%.
void TestHfPrecision::fourBitFamilies_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("total");
    QTest::addColumn<double>("tolerance");
    // gpt-oss model card: 116.83 B; Qwen3-Coder-Next (the same architecture): 79,674,391,296
    // from its safetensors; Kimi-K2 model card: "1T" (rounded).
    QTest::newRow("gpt-oss-120b") << "gpt-oss-120b" << "gpt-oss-120b" << 116.83e9 << 0.01;
    QTest::newRow("Qwen3-Next-80B-A3B") << "qwen3-next-80b-a3b" << "qwen3-next-80b-a3b" << 79.674e9 << 0.01;
    QTest::newRow("Kimi-K2-Thinking") << "kimi-k2-thinking" << "kimi-k2-thinking" << 1.0e12 << 0.05;
}

void TestHfPrecision::fourBitFamilies()
{
    QFETCH(QString, file);
    QFETCH(QString, preset);
    QFETCH(double, total);
    QFETCH(double, tolerance);
    auto r = importHfModel(hfPath(file).toStdString());
    QVERIFY2(r.ok(), r.firstError().c_str());
    QVERIFY2(r.value.warnings.empty(), r.value.warnings.empty() ? "" : r.value.warnings.front().c_str());
    auto p = modelPreset(preset.toStdString());
    QVERIFY2(p.ok(), p.firstError().c_str());
    compareModelDims(r.value.model, p.value, file);
    const double counted = countParameters(r.value.model).total;
    QVERIFY2(std::abs(counted / total - 1) < tolerance, qPrintable(QString::number(counted)));
}

QTEST_APPLESS_MAIN(TestHfPrecision)
#include "tst_hf_precision.moc"
