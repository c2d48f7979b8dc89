// The scenario editor reads through the core's own functions: the KV cache per sequence is
// the cost model's, and constraint lists go through the core's count-list reader.
#include <QtTest>

#include <QLabel>
#include <QLineEdit>

#include "editor_fixtures.h"
#include "io/presets.h"
#include "scenario_editor.h"
#include "sim/cost_model.h"
#include "ui_format.h"

using namespace shardlab;
using namespace shardlab::testing;
using shardlab::ui::ScenarioEditor;

class TestEditorReadings : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void kvPerSequenceIsTheCostModels();
    void constraintListsAreReadAsTheCliReadsThem();
};

// The workload line's KV cache per sequence is the cost model's: gpt-oss-120b's
// sliding-window layers hold at most their window, so its cache at full context is far
// below every layer holding the whole context.
void TestEditorReadings::kvPerSequenceIsTheCostModels()
{
    Scenario s = preset("llama3-70b-8gpu");
    const auto model = modelPreset("gpt-oss-120b");
    QVERIFY2(model.ok(), model.firstError().c_str());
    s.model = model.value;
    QVERIFY(validateScenario(s).empty());
    ScenarioEditor editor;
    editor.setScenario(s);
    auto* info = editor.findChild<QLabel*>(QStringLiteral("workloadInfo"));
    QVERIFY(info);
    const double ctx = double(s.workload.maxContext());
    const double core = double(s.model.layers) * CostModel(s, SimConstants{}).cacheBytesPerSequence(ctx);
    const double everyLayerWhole = double(s.model.layers) * 2.0 * s.model.kvHeads * s.model.headDim
        * bytesPerElement(s.model.kvPrecision) * ctx;
    QVERIFY(ui::formatBytes(core) != ui::formatBytes(everyLayerWhole));
    QVERIFY2(info->text().contains(QStringLiteral("KV cache %1 per sequence").arg(ui::formatBytes(core))),
             qPrintable(info->text()));
}

// A constraint list is read by the core's count-list reader, as the CLI's lists are: a repeat
// or a bad item is refused at the field (naming it), the scenario keeps its last good value
// and Start is blocked until the text reads; a good list is stored sorted.
void TestEditorReadings::constraintListsAreReadAsTheCliReadsThem()
{
    ScenarioEditor editor;
    editor.setScenario(preset("llama3-70b-8gpu"));
    auto* tp = editor.findChild<QLineEdit*>(QStringLiteral("constraints.tensor_parallel"));
    QVERIFY(tp);
    auto type = [tp](const QString& text) {
        tp->setText(text);
        Q_EMIT tp->editingFinished();
    };
    type(QStringLiteral("8, 4"));
    QCOMPARE(editor.scenario().constraints.tensorParallel, (std::vector<int>{4, 8}));
    QVERIFY(editor.isRunnable());
    type(QStringLiteral("4, 4"));
    QVERIFY(!editor.isRunnable());
    QVERIFY(names(editor.problems(), QStringLiteral("constraints.tensor_parallel")));
    QVERIFY(marked(tp));
    QCOMPARE(editor.scenario().constraints.tensorParallel, (std::vector<int>{4, 8})); // the last good value
    type(QStringLiteral("0, 8"));
    QVERIFY(!editor.isRunnable());
    type(QStringLiteral("2 8"));
    QVERIFY(editor.isRunnable());
    QVERIFY(!marked(tp));
    QCOMPARE(editor.scenario().constraints.tensorParallel, (std::vector<int>{2, 8}));
    // A doubled comma is an empty item, refused as the CLI refuses it; blanks around commas
    // and at the ends are not.
    type(QStringLiteral("2,,8"));
    QVERIFY(!editor.isRunnable());
    QVERIFY(names(editor.problems(), QStringLiteral("constraints.tensor_parallel")));
    type(QStringLiteral(" 2 , 4  8 "));
    QVERIFY(editor.isRunnable());
    QCOMPARE(editor.scenario().constraints.tensorParallel, (std::vector<int>{2, 4, 8}));
    // A new scenario reloads the field and drops the refused text with its problem.
    type(QStringLiteral("8, 8"));
    QVERIFY(!editor.isRunnable());
    editor.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(editor.isRunnable());
}

QTEST_MAIN(TestEditorReadings)
#include "tst_editor_readings.moc"
