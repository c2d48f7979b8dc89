// Parameter counts against published totals, and semantic validation of specs.
#include <QtTest>

#include "io/presets.h"

using namespace shardlab;

class TestSpecs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void publishedParameterCounts_data();
    void publishedParameterCounts();
    void llamaCountByHand();
    void modelValidation_data();
    void modelValidation();
    void everyPresetIsValid();
};

void TestSpecs::publishedParameterCounts_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("totalB");
    QTest::addColumn<double>("activeB");
    // Published totals: DeepSeek-V3 tech report (671 B / 37 B), Qwen3 model card
    // (235 B / 22 B), Mistral's Mixtral announcements (46.7 B / 12.9 B; 141 B / 39 B).
    QTest::newRow("deepseek-v3") << "deepseek-v3" << 671.0 << 37.0;
    QTest::newRow("qwen3-235b-a22b") << "qwen3-235b-a22b" << 235.0 << 22.0;
    QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << 46.7 << 12.9;
    QTest::newRow("mixtral-8x22b") << "mixtral-8x22b" << 141.0 << 39.0;
    QTest::newRow("llama3-70b") << "llama3-70b" << 70.6 << 70.6;
}

void TestSpecs::publishedParameterCounts()
{
    QFETCH(QString, preset);
    QFETCH(double, totalB);
    QFETCH(double, activeB);
    auto m = modelPreset(preset.toStdString());
    QVERIFY2(m.ok(), m.firstError().c_str());
    const ParameterCounts c = countParameters(m.value);
    const double total = c.total / 1e9, active = c.active / 1e9;
    QVERIFY2(std::abs(total / totalB - 1) < 0.01, qPrintable(QString::number(total)));
    // Published active counts are rounded to the billion (22 B, 37 B): allow the rounding.
    const double activeTol = activeB < 30 ? 0.5 / activeB + 0.01 : 0.02;
    QVERIFY2(std::abs(active / activeB - 1) < activeTol, qPrintable(QString::number(active)));
}

void TestSpecs::llamaCountByHand()
{
    // Llama-3-70B by hand: attention 8192*(8192 + 2*1024) + 8192*8192 = 150,994,944;
    // FFN 3*8192*28672 = 704,643,072; norms 2*8192; per layer 855,654,400; x 80 =
    // 68,452,352,000; embeddings 2*128256*8192 = 2,101,346,304; final norm 8192.
    auto m = modelPreset("llama3-70b");
    QVERIFY(m.ok());
    const ParameterCounts c = countParameters(m.value);
    QCOMPARE(c.total, 68452352000.0 + 2101346304.0 + 8192.0);
    QCOMPARE(c.active, c.total);
}

void TestSpecs::modelValidation_data()
{
    QTest::addColumn<int>("field");
    QTest::addColumn<int>("value");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("reason");
    QTest::newRow("zero layers") << 0 << 0 << "m.layers" << "between 1";
    QTest::newRow("negative hidden") << 1 << -5 << "m.hidden_size" << "between 1";
    QTest::newRow("heads not divisible by kv") << 2 << 7 << "m.kv_heads" << "divisible";
    QTest::newRow("top-k above experts") << 3 << 300 << "m.moe.experts_per_token" << "between 1";
}

void TestSpecs::modelValidation()
{
    QFETCH(int, field);
    QFETCH(int, value);
    QFETCH(QString, path);
    QFETCH(QString, reason);
    ModelSpec m = modelPreset("qwen3-235b-a22b").value;
    switch (field) {
    case 0: m.layers = value; break;
    case 1: m.hiddenSize = value; break;
    case 2: m.kvHeads = value; break;
    case 3: m.moe.expertsPerToken = value; break;
    }
    const FieldErrors e = validateModel(m, "m");
    QVERIFY(!e.empty());
    QCOMPARE(QString::fromStdString(e.front().where), path);
    QVERIFY2(QString::fromStdString(e.front().reason).contains(reason), e.front().reason.c_str());
}

void TestSpecs::everyPresetIsValid()
{
    for (const PresetFile& f : scenarioPresetFiles()) {
        auto s = scenarioPreset(f.name);
        QVERIFY2(s.ok(), s.firstError().c_str());
    }
    for (const PresetFile& f : clusterPresetFiles())
        QVERIFY2(clusterPreset(f.name).ok(), f.name.c_str());
    QCOMPARE(int(scenarioPresetFiles().size()), 4);
    QVERIFY(modelPresetFiles().size() >= 6);
}

QTEST_APPLESS_MAIN(TestSpecs)
#include "tst_specs.moc"
