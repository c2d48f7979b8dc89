// The scenario editor: edits through the widgets update scenario() and its validation,
// problems name their JSON path and mark their widget, presets and HF import fill fields.
#include <QtTest>

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QApplication>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>

#include "io/presets.h"
#include "scenario_editor.h"
#include "topology_view.h"
#include "ui_format.h"
#include "editor_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;
using shardlab::ui::ScenarioEditor;


class TestScenarioEditor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void setScenarioEmitsNothing();
    void kvHeadsEditFlagsAndFixRestores();
    void typingIntoAFieldIsValidated();
    void problemsMapToTheirWidget_data();
    void problemsMapToTheirWidget();
    void modelPresetFillsFields();
    void collectivesEngineIsAWorkloadField();
    void speculativeDecodingIsAWorkloadField();
    void loadProtocolIsAWorkloadField();
    void clusterPresetFillsFieldsAndTopology();
    void nvl72DrawsOneDomainOf72();
    void mixtureOfExpertsCheckboxShowsExpertFields();
    void weightsLargerThanTheClusterAreAProblem();
    void mlaShowsLatentFields();
    void hfImportFillsModelAndReportsErrorsInline();
    void hfImportTakesTheCheckpointsPrecisionUnlessKept();
    void rowsStayVisibleAfterAnMlaModel();
    void implausibleHardwareWarnsWithoutBlocking();
    void problemsShowPlainNumbers();
    void bannerKeepsItsHeight();
    void draftValueSetsFieldQuietly();
};

void TestScenarioEditor::setScenarioEmitsNothing()
{
    ScenarioEditor ed;
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    ed.setScenario(preset("llama3-70b-8gpu"));
    QCOMPARE(spy.count(), 0);
    QVERIFY(ed.isRunnable());
    QCOMPARE(ed.scenario().model.kvHeads, 8);
    QCOMPARE(qobject_cast<QSpinBox*>(ed.fieldWidget(QStringLiteral("model.kv_heads")))->value(), 8);
}

void TestScenarioEditor::kvHeadsEditFlagsAndFixRestores()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    auto* kv = ed.findChild<QSpinBox*>(QStringLiteral("model.kv_heads"));
    QVERIFY(kv);

    kv->setValue(7);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(ed.scenario().model.kvHeads, 7);
    QVERIFY(!ed.isRunnable());
    QVERIFY(names(ed.problems(), QStringLiteral("model.kv_heads")));
    QVERIFY(ed.problemText().contains(QStringLiteral("attention_heads (64) must be divisible by kv_heads (7)")));
    QVERIFY(marked(kv));
    QVERIFY(kv->toolTip().contains(QStringLiteral("divisible")));
    auto* status = ed.findChild<QLabel*>(QStringLiteral("problems"));
    QVERIFY(status->text().contains(QStringLiteral("model.kv_heads")));

    kv->setValue(8);
    QCOMPARE(spy.count(), 2);
    QVERIFY(ed.isRunnable());
    QVERIFY(ed.problems().empty());
    QVERIFY(!marked(kv));
    QVERIFY(!kv->toolTip().contains(QStringLiteral("divisible")));
}

void TestScenarioEditor::typingIntoAFieldIsValidated()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    ed.show();
    auto* layers = ed.findChild<QSpinBox*>(QStringLiteral("model.layers"));
    layers->setFocus();
    layers->selectAll();
    QTest::keyClicks(layers, QStringLiteral("0"));
    QCOMPARE(ed.scenario().model.layers, 0);
    QVERIFY(names(ed.problems(), QStringLiteral("model.layers")));
    QVERIFY(marked(layers));
    layers->selectAll();
    QTest::keyClicks(layers, QStringLiteral("80"));
    QCOMPARE(ed.scenario().model.layers, 80);
    QVERIFY(ed.isRunnable());
}

void TestScenarioEditor::problemsMapToTheirWidget_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<double>("value");
    // Values inside the widgets' ranges but outside the valid ones: the validator, not
    // the widget, must say what is wrong.
    QTest::newRow("layers") << "model.layers" << 0.0;
    QTest::newRow("layers too many") << "model.layers" << 5000.0;
    QTest::newRow("vocab") << "model.vocab_size" << 0.0;
    QTest::newRow("nodes") << "cluster.nodes" << 0.0;
    QTest::newRow("nvlink bandwidth") << "cluster.nvlink_gb_per_s" << 0.0;
    QTest::newRow("hbm efficiency above 1") << "cluster.gpu.efficiency.hbm" << 1.5;
    QTest::newRow("reserve eats the HBM") << "cluster.gpu.memory_reserve_gb" << 79.0;
    QTest::newRow("tpot slo") << "workload.tpot_slo_ms" << 0.0;
    QTest::newRow("prompt") << "workload.prompt_tokens" << 0.0;
}

void TestScenarioEditor::problemsMapToTheirWidget()
{
    QFETCH(QString, path);
    QFETCH(double, value);
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QWidget* w = ed.fieldWidget(path);
    QVERIFY2(w, qPrintable(path));
    QCOMPARE(w->objectName(), path);
    if (auto* i = qobject_cast<QSpinBox*>(w))
        i->setValue(int(value));
    else if (auto* d = qobject_cast<QDoubleSpinBox*>(w))
        d->setValue(value);
    else
        QFAIL("not a spin box");
    QVERIFY2(names(ed.problems(), path), qPrintable(ed.problemText()));
    QVERIFY(!ed.isRunnable());
    QVERIFY(marked(w));
}

void TestScenarioEditor::modelPresetFillsFields()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    auto* box = ed.findChild<QComboBox*>(QStringLiteral("model.preset"));
    QVERIFY(box);
    QCOMPARE(box->currentText(), QStringLiteral("llama3-70b"));

    activate(box, QStringLiteral("deepseek-v3"));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(ed.scenario().model.name, std::string("DeepSeek-V3"));
    QCOMPARE(ed.scenario().model.attention, AttentionKind::MLA);
    QCOMPARE(ed.findChild<QSpinBox*>(QStringLiteral("model.moe.experts"))->value(), 256);
    QCOMPARE(ed.findChild<QSpinBox*>(QStringLiteral("model.mla.kv_lora_rank"))->value(), 512);
    QVERIFY(ed.findChild<QCheckBox*>(QStringLiteral("model.moe"))->isChecked());
    // The brief's example: live parameter counts.
    QVERIFY2(ed.findChild<QLabel*>(QStringLiteral("parameterCount"))
                 ->text()
                 .contains(QStringLiteral("671.03 B total, 37.55 B active")),
             qPrintable(ed.findChild<QLabel*>(QStringLiteral("parameterCount"))->text()));
    // The cluster is untouched: DeepSeek-V3 in FP8 fits in 8 GPUs? 671 GB > 8 x 74 GB: flagged.
    QVERIFY(names(ed.problems(), QStringLiteral("cluster.nodes")));

    // Editing a field makes the model custom; the preset box says so.
    ed.findChild<QSpinBox*>(QStringLiteral("model.layers"))->setValue(60);
    QCOMPARE(box->currentIndex(), 0);
}

// Whose collectives price the plan: a workload field, edited like the others and shown
// again for a scenario that names it.
void TestScenarioEditor::collectivesEngineIsAWorkloadField()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    auto* box = ed.findChild<QComboBox*>(QStringLiteral("workload.engine"));
    QVERIFY(box);
    QCOMPARE(box->currentData().toInt(), int(CollectiveEngine::Nccl));
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    activate(box, QStringLiteral("TensorRT-LLM"));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(ed.scenario().workload.engine, CollectiveEngine::TrtLlm);
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.engine = CollectiveEngine::VllmEager;
    ed.setScenario(s);
    QCOMPARE(box->currentData().toInt(), int(CollectiveEngine::VllmEager));
}

// Draft tokens switch MTP speculative decoding on and off; the acceptance field's lowest
// value stands for the family's published rate (absent in the file).
void TestScenarioEditor::speculativeDecodingIsAWorkloadField()
{
    ScenarioEditor ed;
    ed.setScenario(preset("deepseek-v3-256gpu"));
    auto* drafts = ed.findChild<QSpinBox*>(QStringLiteral("workload.speculative.draft_tokens"));
    auto* accept = ed.findChild<QDoubleSpinBox*>(QStringLiteral("workload.speculative.acceptance_rate"));
    QVERIFY(drafts && accept);
    QCOMPARE(drafts->value(), 0);
    QVERIFY(!accept->isEnabled());
    drafts->setValue(3);
    QVERIFY(ed.scenario().workload.speculative.on());
    QCOMPARE(ed.scenario().workload.speculative.method, SpeculativeMethod::Mtp);
    QCOMPARE(ed.scenario().workload.speculative.draftTokens, 3);
    QVERIFY(accept->isEnabled());
    QVERIFY(ed.scenario().workload.speculative.acceptanceRate < 0);
    accept->setValue(0.6);
    QCOMPARE(ed.scenario().workload.speculative.acceptanceRate, 0.6);
    accept->setValue(0);
    QVERIFY(ed.scenario().workload.speculative.acceptanceRate < 0);
    // An acceptance length replaces the rate (the field is then off) until cleared.
    auto* length = ed.findChild<QDoubleSpinBox*>(QStringLiteral("workload.speculative.acceptance_length"));
    QVERIFY(length && length->isEnabled());
    QCOMPARE(length->maximum(), 4.0); // draft tokens + 1
    accept->setValue(0.6);
    length->setValue(2.5);
    QCOMPARE(ed.scenario().workload.speculative.acceptanceLength, 2.5);
    QVERIFY(ed.scenario().workload.speculative.acceptanceRate < 0);
    QVERIFY(!accept->isEnabled());
    QVERIFY(validateScenario(ed.scenario()).empty());
    drafts->setValue(1); // 2.5 tokens per step no longer possible: back to the rate
    QVERIFY(ed.scenario().workload.speculative.acceptanceLength < 0);
    QVERIFY(accept->isEnabled());
    drafts->setValue(3);
    length->setValue(1);
    QVERIFY(ed.scenario().workload.speculative.acceptanceLength < 0);
    drafts->setValue(0);
    QVERIFY(!ed.scenario().workload.speculative.on());
}

// The load protocol: the steady state leaves its value fields off; a closed loop takes the
// concurrency field's value at once (the scenario stays valid), an open loop the rate, whose
// lowest value stands for every request at once; a file's protocol fills the fields.
void TestScenarioEditor::loadProtocolIsAWorkloadField()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    auto* protocol = ed.findChild<QComboBox*>(QStringLiteral("workload.load.protocol"));
    auto* concurrency = ed.findChild<QSpinBox*>(QStringLiteral("workload.load.concurrency"));
    auto* rate = ed.findChild<QDoubleSpinBox*>(QStringLiteral("workload.load.request_rate"));
    auto* uniform = ed.findChild<QCheckBox*>(QStringLiteral("workload.load.lengths"));
    QVERIFY(protocol && concurrency && rate && uniform);
    QVERIFY(!concurrency->isEnabled() && !rate->isEnabled());
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    activate(protocol, QStringLiteral("Concurrency"));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(ed.scenario().workload.load.protocol, LoadProtocol::Concurrency);
    QCOMPARE(ed.scenario().workload.load.concurrency, concurrency->value());
    QVERIFY(concurrency->isEnabled() && !rate->isEnabled());
    QVERIFY(ed.isRunnable());
    concurrency->setValue(16);
    QCOMPARE(ed.scenario().workload.load.concurrency, 16);
    activate(protocol, QStringLiteral("Request rate"));
    QCOMPARE(ed.scenario().workload.load.protocol, LoadProtocol::RequestRate);
    QVERIFY(ed.scenario().workload.load.requestRate > 0);
    rate->setValue(0);
    QVERIFY(std::isinf(ed.scenario().workload.load.requestRate));
    uniform->click();
    QVERIFY(ed.scenario().workload.load.uniformLengths);
    QVERIFY(ed.isRunnable());

    Scenario s = preset("llama3-70b-8gpu");
    s.workload.load.protocol = LoadProtocol::RequestRate;
    s.workload.load.requestRate = 7.5;
    ed.setScenario(s);
    QCOMPARE(protocol->currentData().toInt(), int(LoadProtocol::RequestRate));
    QCOMPARE(rate->value(), 7.5);
    QVERIFY(rate->isEnabled() && !concurrency->isEnabled());
    activate(protocol, QStringLiteral("Steady state"));
    QVERIFY(ed.scenario().workload.load.steady());
}

void TestScenarioEditor::clusterPresetFillsFieldsAndTopology()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    auto* box = ed.findChild<QComboBox*>(QStringLiteral("cluster.preset"));
    activate(box, QStringLiteral("h100-64"));
    QCOMPARE(ed.scenario().cluster.totalGpus(), 64LL);
    QCOMPARE(ed.findChild<QSpinBox*>(QStringLiteral("cluster.nodes"))->value(), 8);
    QCOMPARE(ed.findChild<QSpinBox*>(QStringLiteral("cluster.gpus_per_node"))->value(), 8);
    QCOMPARE(ed.findChild<QDoubleSpinBox*>(QStringLiteral("cluster.inter_node_gb_per_s"))->value(), 50.0);
    QVERIFY(ed.findChild<QLabel*>(QStringLiteral("totalGpus"))->text().contains(QStringLiteral("64")));
    auto* topo = ed.findChild<shardlab::ui::TopologyView*>(QStringLiteral("topology"));
    QVERIFY(topo->summary().startsWith(QStringLiteral("8 node(s) × 8 GPUs = 64 GPUs")));

    // The drawing follows the fields.
    ed.findChild<QSpinBox*>(QStringLiteral("cluster.nodes"))->setValue(2);
    QVERIFY(topo->summary().startsWith(QStringLiteral("2 node(s) × 8 GPUs = 16 GPUs")));
    QCOMPARE(box->currentIndex(), 0); // no longer a preset
}

// GB200 NVL72: one node, one NVLink domain of 72 GPUs. The drawing shows one node box with
// 72 GPU dots (counted as separate blobs of the GPU colour) and no inter-node fabric.
void TestScenarioEditor::nvl72DrawsOneDomainOf72()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    activate(ed.findChild<QComboBox*>(QStringLiteral("cluster.preset")), QStringLiteral("gb200-nvl72"));
    QCOMPARE(ed.scenario().cluster.gpusPerNode, 72);
    auto* topo = ed.findChild<shardlab::ui::TopologyView*>(QStringLiteral("topology"));
    QVERIFY(topo->summary().startsWith(QStringLiteral("1 node(s) × 72 GPUs = 72 GPUs. Each node is one NVLink domain")));
    QVERIFY(!topo->summary().contains(QStringLiteral("inter-node")));

    topo->resize(340, 118);
    const QImage img = topo->grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QRgb gpu = qRgb(0x37, 0x47, 0x4f);
    std::vector<char> seen(size_t(img.width()) * img.height(), 0);
    int blobs = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            if (seen[size_t(y) * img.width() + x] || img.pixel(x, y) != gpu)
                continue;
            ++blobs;
            std::vector<QPoint> stack{{x, y}};
            seen[size_t(y) * img.width() + x] = 1;
            while (!stack.empty()) {
                const QPoint q = stack.back();
                stack.pop_back();
                for (const QPoint d : {QPoint(1, 0), QPoint(-1, 0), QPoint(0, 1), QPoint(0, -1)}) {
                    const QPoint n = q + d;
                    if (n.x() < 0 || n.y() < 0 || n.x() >= img.width() || n.y() >= img.height())
                        continue;
                    char& v = seen[size_t(n.y()) * img.width() + n.x()];
                    if (!v && img.pixel(n) == gpu) {
                        v = 1;
                        stack.push_back(n);
                    }
                }
            }
        }
    QCOMPARE(blobs, 72);
}

void TestScenarioEditor::mixtureOfExpertsCheckboxShowsExpertFields()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    ed.show();
    auto* experts = ed.findChild<QSpinBox*>(QStringLiteral("model.moe.experts"));
    auto* check = ed.findChild<QCheckBox*>(QStringLiteral("model.moe"));
    QVERIFY(!experts->isVisibleTo(&ed));
    QTest::mouseClick(check, Qt::LeftButton, {}, QPoint(6, check->height() / 2)); // on the box, not the empty row
    QVERIFY(check->isChecked());
    QVERIFY(experts->isVisibleTo(&ed));
    QVERIFY(ed.scenario().model.isMoe());
    QCOMPARE(experts->value(), ed.scenario().model.moe.experts);

    // Ticked with no experts: the editor's own check names the field.
    experts->setValue(0);
    QVERIFY(names(ed.problems(), QStringLiteral("model.moe.experts")));
    QTest::mouseClick(check, Qt::LeftButton, {}, QPoint(6, check->height() / 2)); // on the box, not the empty row
    QVERIFY(!ed.scenario().model.isMoe());
    QVERIFY(!experts->isVisibleTo(&ed));
    QVERIFY2(ed.isRunnable(), qPrintable(ed.problemText()));
}

void TestScenarioEditor::weightsLargerThanTheClusterAreAProblem()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(ed.applyModelPreset(QStringLiteral("llama3-405b")));
    // 405 B parameters x 2 bytes = 811 GB > 8 GPUs x (80 - 6) GB = 592 GB.
    QVERIFY(names(ed.problems(), QStringLiteral("cluster.nodes")));
    QVERIFY(ed.problemText().contains(QStringLiteral("no plan can fit")));
    ed.findChild<QSpinBox*>(QStringLiteral("cluster.nodes"))->setValue(2);
    QVERIFY2(ed.isRunnable(), qPrintable(ed.problemText()));
}

void TestScenarioEditor::mlaShowsLatentFields()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    ed.show();
    auto* attention = ed.findChild<QComboBox*>(QStringLiteral("model.attention"));
    auto* latent = ed.findChild<QSpinBox*>(QStringLiteral("model.mla.kv_lora_rank"));
    auto* kv = ed.findChild<QSpinBox*>(QStringLiteral("model.kv_heads"));
    QVERIFY(!latent->isVisibleTo(&ed));
    QVERIFY(kv->isVisibleTo(&ed));
    attention->setCurrentIndex(1);
    Q_EMIT attention->activated(1);
    QCOMPARE(ed.scenario().model.attention, AttentionKind::MLA);
    QVERIFY(latent->isVisibleTo(&ed));
    // The GQA rows stay in place, greyed out: rows that vanish move the fields below them.
    QVERIFY(kv->isVisibleTo(&ed));
    QVERIFY(!kv->isEnabled());
    QVERIFY(latent->value() > 0);
    QVERIFY2(ed.isRunnable(), qPrintable(ed.problemText()));
}

void TestScenarioEditor::hfImportFillsModelAndReportsErrorsInline()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    auto* error = ed.findChild<QLabel*>(QStringLiteral("importError"));

    const QString bad = QStringLiteral(SHARDLAB_TEST_DATA "/bad/hf-missing-layers.config.json");
    QVERIFY(!ed.importHfConfig(bad));
    QCOMPARE(spy.count(), 0);
    QVERIFY(!error->isHidden());
    QVERIFY2(error->text().contains(QStringLiteral("hf-missing-layers.config.json")), qPrintable(error->text()));
    QCOMPARE(ed.scenario().model.name, std::string("Llama-3-70B")); // unchanged

    QVERIFY(ed.importHfConfig(QStringLiteral(SHARDLAB_TEST_DATA "/hf/mixtral-8x7b.config.json")));
    QCOMPARE(spy.count(), 1);
    QVERIFY(error->isHidden());
    QCOMPARE(ed.scenario().model.moe.experts, 8);
    QCOMPARE(ed.findChild<QSpinBox*>(QStringLiteral("model.moe.experts"))->value(), 8);
}

// A bf16 checkpoint imported over an FP8 model is bf16 (the note says so), unless the
// user keeps the current precisions; a quantized checkpoint's precision always wins.
void TestScenarioEditor::hfImportTakesTheCheckpointsPrecisionUnlessKept()
{
    ScenarioEditor ed;
    ed.setScenario(preset("deepseek-v3-256gpu"));
    QCOMPARE(ed.scenario().model.weightPrecision, Precision::FP8);
    const QString qwen = QStringLiteral(SHARDLAB_TEST_DATA "/hf/qwen3-235b-a22b.config.json");

    QVERIFY(ed.importHfConfig(qwen));
    QCOMPARE(ed.scenario().model.weightPrecision, Precision::BF16);
    QVERIFY2(ed.importNote().contains(QStringLiteral("weights BF16")), qPrintable(ed.importNote()));
    QVERIFY2(ed.importNote().contains(QStringLiteral("weights BF16 (from the checkpoint)")), qPrintable(ed.importNote()));
    auto* params = ed.findChild<QLabel*>(QStringLiteral("parameterCount"));
    QVERIFY2(!params->text().contains(QStringLiteral("FP8")), qPrintable(params->text()));

    QVERIFY(ed.applyModelPreset(QStringLiteral("deepseek-v3")));
    ed.setKeepPrecisionOnImport(true);
    QVERIFY(ed.importHfConfig(qwen));
    QCOMPARE(ed.scenario().model.weightPrecision, Precision::FP8);
    QVERIFY2(ed.importNote().contains(QStringLiteral("weights FP8 (kept, as chosen; the checkpoint's is BF16)")),
             qPrintable(ed.importNote()));

    // DeepSeek-V3's checkpoint declares FP8 weights: kept or not, FP8 over a bf16 model.
    ed.setScenario(preset("llama3-70b-8gpu"));
    QCOMPARE(ed.scenario().model.weightPrecision, Precision::BF16);
    QVERIFY(ed.importHfConfig(QStringLiteral(SHARDLAB_TEST_DATA "/hf/deepseek-v3.config.json")));
    QCOMPARE(ed.scenario().model.weightPrecision, Precision::FP8);
    QVERIFY2(ed.importNote().contains(QStringLiteral("weights FP8 (quantized in the checkpoint)")),
             qPrintable(ed.importNote()));
}

// Loading an MLA model (preset or HF import) and then a GQA one, or a failed import,
// leaves every GQA row on screen and usable.
void TestScenarioEditor::rowsStayVisibleAfterAnMlaModel()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    ed.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ed));
    auto* kv = ed.findChild<QSpinBox*>(QStringLiteral("model.kv_heads"));
    auto* headDim = ed.findChild<QSpinBox*>(QStringLiteral("model.head_dim"));
    auto* layers = ed.findChild<QSpinBox*>(QStringLiteral("model.layers"));
    const int layersY = layers->mapTo(&ed, QPoint(0, 0)).y();

    QVERIFY(ed.applyModelPreset(QStringLiteral("deepseek-v3")));
    QCOMPARE(ed.scenario().model.attention, AttentionKind::MLA);
    QVERIFY(kv->isVisibleTo(&ed) && headDim->isVisibleTo(&ed));
    QVERIFY(!kv->isEnabled() && !headDim->isEnabled());

    QVERIFY(ed.applyModelPreset(QStringLiteral("llama3-70b")));
    QCOMPARE(ed.scenario().model.attention, AttentionKind::GQA);
    QVERIFY(kv->isVisibleTo(&ed) && headDim->isVisibleTo(&ed));
    QVERIFY(kv->isEnabled() && headDim->isEnabled());
    QApplication::processEvents();
    // Nothing above the model's fields moved them on the way.
    QCOMPARE(layers->mapTo(&ed, QPoint(0, 0)).y(), layersY);

    QVERIFY(ed.applyModelPreset(QStringLiteral("deepseek-v3")));
    QVERIFY(!ed.importHfConfig(QStringLiteral(SHARDLAB_TEST_DATA "/bad/hf-missing-layers.config.json")));
    QVERIFY(kv->isVisibleTo(&ed) && headDim->isVisibleTo(&ed));
    QVERIFY(ed.importHfConfig(QStringLiteral(SHARDLAB_TEST_DATA "/hf/mixtral-8x7b.config.json")));
    QVERIFY(kv->isVisibleTo(&ed) && headDim->isVisibleTo(&ed));
    QVERIFY(kv->isEnabled() && headDim->isEnabled());
}

void TestScenarioEditor::implausibleHardwareWarnsWithoutBlocking()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(ed.warnings().empty());
    auto* fp8 = ed.findChild<QDoubleSpinBox*>(QStringLiteral("cluster.gpu.peak_tflops_fp8"));
    fp8->setValue(1.5); // TFLOP/s: a thousand times too small for any GPU preset
    QVERIFY(ed.isRunnable());
    QVERIFY(names(ed.warnings(), QStringLiteral("cluster.gpu.peak_tflops_fp8")));
    auto* status = ed.findChild<QLabel*>(QStringLiteral("problems"));
    QVERIFY2(status->text().contains(QStringLiteral("far from every known GPU")), qPrintable(status->text()));
    fp8->setValue(1979);
    QVERIFY(ed.warnings().empty());
    QVERIFY(!ed.findChild<QLabel*>(QStringLiteral("problems"))->text().contains(QStringLiteral("far from")));
}

void TestScenarioEditor::problemsShowPlainNumbers()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    auto* vocab = ed.findChild<QSpinBox*>(QStringLiteral("model.vocab_size"));
    vocab->setValue(20000000); // above the validator's 1e7
    QVERIFY(!ed.isRunnable());
    const QString text = ed.problemText();
    QVERIFY2(text.contains(QStringLiteral("model.vocab_size")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("e+")), qPrintable(text));
    QVERIFY2(text.contains(QLocale().toString(10000000)), qPrintable(text));
    QVERIFY(!vocab->toolTip().contains(QStringLiteral("e+")));
    QCOMPARE(ui::plainNumbers(QStringLiteral("between 1 and 1e+07 (got 2.5e-05)")),
             QStringLiteral("between 1 and %1 (got %2)").arg(QLocale().toString(10000000), QLocale().toString(0.000025, 'f', 6)));
    QCOMPARE(ui::plainNumbers(QStringLiteral("model v1e3 stays")), QStringLiteral("model v1e3 stays"));
}

void TestScenarioEditor::bannerKeepsItsHeight()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    ed.resize(380, 900);
    ed.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ed));
    auto* area = ed.findChild<QWidget*>(QStringLiteral("problemArea"));
    QVERIFY(area);
    const int h = area->height();
    for (const char* path : {"model.layers", "model.hidden_size", "model.attention_heads", "cluster.nodes"})
        ed.findChild<QSpinBox*>(QString::fromLatin1(path))->setValue(0);
    QVERIFY(ed.problems().size() >= 4);
    QApplication::processEvents();
    QCOMPARE(area->height(), h);
}

void TestScenarioEditor::draftValueSetsFieldQuietly()
{
    ScenarioEditor ed;
    ed.setScenario(preset("llama3-70b-8gpu"));
    QSignalSpy spy(&ed, &ScenarioEditor::scenarioEdited);
    QVERIFY(ed.setFieldValue(QStringLiteral("cluster.nodes"), 0));
    QCOMPARE(spy.count(), 0);
    QCOMPARE(ed.scenario().cluster.nodes, 0);
    QVERIFY(names(ed.problems(), QStringLiteral("cluster.nodes")));
    QVERIFY(!ed.setFieldValue(QStringLiteral("no.such.field"), 1));
}

QTEST_MAIN(TestScenarioEditor)
#include "tst_scenario_editor.moc"
