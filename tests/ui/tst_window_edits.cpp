// What edits do to the window, offscreen: names that follow the scenario and cluster as
// they are edited (title, Save As, exports), runs that keep their colour and come back
// from a deletion with Undo, the elite table grouping plans that read the same, and the
// what-if editor's actions (rebalance DP, fit the batch, back to the searched plan) as
// undoable steps.
#include <QtTest>

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QUndoStack>

#include "io/presets.h"
#include "main_window.h"
#include "plan_editor.h"
#include "plan_view.h"
#include "qcp.h"
#include "scenario_editor.h"
#include "search/search_space.h"
#include "search_panel.h"
#include "sim/batch.h"
#include "window_fixtures.h"

using namespace shardlab;
using namespace shardlab::ui;

namespace {


// The runs file without its runs' colours: what a window from before colours were kept wrote.
QByteArray withoutColours(const QByteArray& json)
{
    QJsonObject doc = QJsonDocument::fromJson(json).object();
    QJsonArray runs = doc.value(QStringLiteral("runs")).toArray();
    for (qsizetype i = 0; i < runs.size(); ++i) {
        QJsonObject o = runs[i].toObject();
        o.remove(QStringLiteral("color"));
        runs[i] = o;
    }
    doc[QStringLiteral("runs")] = runs;
    return QJsonDocument(doc).toJson(QJsonDocument::Compact);
}

EliteEntry elite(const Plan& p, double value, double tpot, double ttft, double mem, int call)
{
    EliteEntry e;
    e.plan = p;
    e.valid = true;
    e.tokensPerSPerGpu = value;
    e.tpotMs = tpot;
    e.ttftMs = ttft;
    e.memoryGb = mem;
    e.call = call;
    return e;
}

} // namespace

class TestWindowEdits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }
    void namesFollowTheScenarioAndCluster();
    void runsKeepTheirColourAndDeletionIsUndone();
    void eliteTableGroupsPlansThatReadTheSame();
    void whatIfActionsAreUndoableSteps();
};

// Editing the cluster of a preset: the title and Save As say "(edited)", the cluster is no
// longer named as the preset's; renaming: the title, Save As and the exports' captions
// follow at once (a rename changes no figure, so nothing is re-evaluated).
void TestWindowEdits::namesFollowTheScenarioAndCluster()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    ScenarioEditor* editor = w.scenarioEditor();
    const std::string shippedCluster = w.scenario().cluster.name;
    QVERIFY2(w.windowTitle().contains(QStringLiteral("llama3-70b-8gpu")), qPrintable(w.windowTitle()));
    QVERIFY(!w.windowTitle().contains(QStringLiteral("edited")));

    auto* nodes = editor->findChild<QSpinBox*>(QStringLiteral("cluster.nodes"));
    QVERIFY(nodes);
    nodes->setValue(2);
    QCOMPARE(w.scenario().cluster.nodes, 2);
    QVERIFY2(w.windowTitle().contains(QStringLiteral("llama3-70b-8gpu (edited)")), qPrintable(w.windowTitle()));
    QCOMPARE(QFileInfo(w.suggestedScenarioPath()).fileName(), QStringLiteral("llama3-70b-8gpu-edited.json"));
    const QString cluster = QString::fromStdString(w.scenario().cluster.name);
    QVERIFY2(cluster.contains(QStringLiteral("x 16 (2 nodes of 8)")), qPrintable(cluster));
    QVERIFY(cluster != QString::fromStdString(shippedCluster));
    auto* clusterName = editor->findChild<QLineEdit*>(QStringLiteral("cluster.name"));
    QVERIFY(clusterName);
    QCOMPARE(clusterName->text(), cluster);
    for (const QString& caption : {w.searchPanel()->exportCaption(), w.planView()->exportCaption()}) {
        QVERIFY2(caption.contains(QStringLiteral("llama3-70b-8gpu (edited)")), qPrintable(caption));
        QVERIFY2(caption.contains(QStringLiteral("2 nodes of 8")), qPrintable(caption));
    }
    // Undo puts the preset's cluster and its name back.
    w.undoStack()->undo();
    QCOMPARE(w.scenario().cluster.name, shippedCluster);
    QVERIFY(!w.windowTitle().contains(QStringLiteral("edited")));

    auto* name = editor->findChild<QLineEdit*>(QStringLiteral("name"));
    QVERIFY(name);
    name->selectAll();
    QTest::keyClicks(name, QStringLiteral("my-llama"));
    QCOMPARE(w.scenario().name, std::string("my-llama"));
    QVERIFY2(w.windowTitle().contains(QStringLiteral("my-llama")), qPrintable(w.windowTitle()));
    QCOMPARE(QFileInfo(w.suggestedScenarioPath()).fileName(), QStringLiteral("my-llama.json"));
    for (const QString& caption : {w.searchPanel()->exportCaption(), w.planView()->exportCaption()})
        QVERIFY2(caption.contains(QStringLiteral("Scenario my-llama:")), qPrintable(caption));
}

// Three runs, three colours. Deleting the middle one and undoing brings it back in its
// place with its colour and curve; the colours survive a restart even after deletions (a
// counter restarting at the first colour gave the remaining run another one), and a runs
// file without colours still loads.
void TestWindowEdits::runsKeepTheirColourAndDeletionIsUndone()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    SearchPanel* panel = w.searchPanel();
    for (int seed : {1, 2, 3}) {
        w.setSeed(seed);
        QVERIFY(runSearch(w, QStringLiteral("random"), 200));
    }
    QCOMPARE(panel->runCount(), 3);
    const QColor c1 = panel->runColor(1), c2 = panel->runColor(2);
    QVERIFY(panel->runColor(0) != c1 && c1 != c2 && panel->runColor(0) != c2);
    const QString name1 = panel->runInfo(1).name;
    const int graphs = panel->curvePlot()->graphCount();

    QVERIFY(panel->deleteRun(1));
    QCOMPARE(panel->runCount(), 2);
    QCOMPARE(panel->curvePlot()->graphCount(), graphs - 3);
    QVERIFY2(w.undoStack()->undoText().contains(name1), qPrintable(w.undoStack()->undoText()));
    w.undoStack()->undo();
    QCOMPARE(panel->runCount(), 3);
    QCOMPARE(panel->runInfo(1).name, name1);
    QCOMPARE(panel->runColor(1), c1);
    QCOMPARE(panel->curvePlot()->graphCount(), graphs);
    QCOMPARE(panel->selectedRun(), 1);
    w.undoStack()->redo();
    QCOMPARE(panel->runCount(), 2);
    QCOMPARE(panel->runColor(1), c2);
    QVERIFY(panel->deleteRun(0));
    QCOMPARE(panel->runCount(), 1);
    QCOMPARE(panel->runColor(0), c2);

    // A restart: the remaining run keeps its colour; a new run takes one no run has.
    SearchPanel restarted;
    QVERIFY(restarted.restoreRuns(panel->runsToJson()));
    QCOMPARE(restarted.runCount(), 1);
    QCOMPARE(restarted.runColor(0), c2);
    restarted.beginRun(QStringLiteral("next"));
    QVERIFY(restarted.runColor(1) != c2);

    // A runs file from before colours were kept loads, each run with a colour of its own.
    SearchPanel older;
    w.undoStack()->undo();
    w.undoStack()->undo();
    QCOMPARE(panel->runCount(), 3);
    QVERIFY(older.restoreRuns(withoutColours(panel->runsToJson())));
    QCOMPARE(older.runCount(), 3);
    QVERIFY(older.runColor(0).isValid() && older.runColor(0) != older.runColor(1)
            && older.runColor(1) != older.runColor(2));
}

// The batch refinement's plan (found again), then four elites: two within 0.5 % with the
// same TPOT, TTFT and memory that differ in EP and an operator's option, one as fast with
// another TPOT, one 1 % slower. Four rows: the refinement's and the pair's say ×2 (the
// pair's tooltip how the second plan differs); selecting a row opens its best plan.
void TestWindowEdits::eliteTableGroupsPlansThatReadTheSame()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    SearchPanel panel;
    panel.setScenario(s);
    Plan a;
    a.tensorParallel = 8;
    a.expertParallel = 32;
    a.dataParallel = 32;
    a.batch = 64;
    Plan b = a;
    b.expertParallel = 64;
    b.setOption(OpId::LmHead, a.option(OpId::LmHead) == 0 ? 1 : 0);
    Plan c = a;
    c.batch = 96;
    Plan d = a;
    d.pipelineParallel = 2;
    d.dataParallel = 16;
    Plan refined = a;
    refined.batch = 80;
    JobResult r;
    r.outcome.algorithm = "anneal";
    // The batch refinement's plan first; the same plan found again is its row's.
    EliteEntry last = elite(refined, 1100.0, 49.00, 520.0, 66.0, 60);
    last.refinement = true;
    r.elites = {last, elite(refined, 1100.0, 49.00, 520.0, 66.0, 60), elite(a, 1000.0, 40.00, 500.0, 60.0, 10),
                elite(b, 997.0, 40.00, 500.0, 60.0, 20), elite(c, 996.0, 45.00, 600.0, 70.0, 30),
                elite(d, 990.0, 40.00, 500.0, 60.0, 40)};
    panel.beginRun(QStringLiteral("anneal"));
    panel.finishRun(r);
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("eliteTable"));
    QVERIFY(table);
    QTRY_COMPARE(table->rowCount(), 4);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("1100.0 ×2"));
    QVERIFY(table->item(0, 10)->text().contains(QStringLiteral("batch refinement")));
    QVERIFY2(table->item(0, 0)->toolTip().contains(QStringLiteral("the same plan")), qPrintable(table->item(0, 0)->toolTip()));
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("1000.0 ×2"));
    QCOMPARE(table->item(2, 0)->text(), QStringLiteral("996.0"));
    QCOMPARE(table->item(3, 0)->text(), QStringLiteral("990.0"));
    const QString tip = table->item(1, 0)->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("EP 32 → 64")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String(opInfo(OpId::LmHead).name)), qPrintable(tip));
    QSignalSpy selected(&panel, &SearchPanel::eliteSelected);
    table->selectRow(3);
    QCOMPARE(selected.count(), 1);
    QVERIFY(selected.front().front().value<Plan>() == d);
    QVERIFY2(selected.front().at(1).toString().contains(QStringLiteral("#6")), qPrintable(selected.front().at(1).toString()));
    // The run keeps every elite: the grouping is the table's.
    QCOMPARE(panel.elites().size(), size_t(6));
}

// Through the editor's buttons: DP rebalanced to the cluster, the batch fitted to the
// limits (the core's largestValidBatch, the search's final refinement), back to the
// searched plan; each is one step of the window's undo stack, and a typed batch is one.
void TestWindowEdits::whatIfActionsAreUndoableSteps()
{
    MainWindow w;
    const Scenario s = preset("llama3-70b-8gpu");
    w.setScenario(s);
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 400));
    PlanView* view = w.planView();
    PlanEditor* editor = view->whatIfEditor();
    const Plan searched = w.searchPanel()->runInfo(0).best;
    QVERIFY(view->currentPlan() == searched);
    auto* back = editor->findChild<QPushButton*>(QStringLiteral("whatIf.searched"));
    auto* rebalance = editor->findChild<QPushButton*>(QStringLiteral("whatIf.rebalanceDp"));
    auto* fit = editor->findChild<QPushButton*>(QStringLiteral("whatIf.fitBatch"));
    auto* undo = editor->findChild<QPushButton*>(QStringLiteral("whatIf.undo"));
    auto* dp = editor->findChild<QSpinBox*>(QStringLiteral("whatIf.data_parallel"));
    auto* batch = editor->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
    QVERIFY(back && rebalance && fit && undo && dp && batch);
    QVERIFY(back->isEnabled());
    QUndoStack* stack = w.undoStack();
    const int steps = stack->count();

    // DP off the cluster, then rebalanced: TP x PP x DP uses the 8 GPUs again.
    dp->setValue(searched.dataParallel == 1 ? 2 : 1);
    QVERIFY(view->currentPlan().gpus() != 8);
    QCOMPARE(stack->count(), steps + 1);
    rebalance->click();
    QCOMPARE(view->currentPlan().gpus(), 8LL);
    QCOMPARE(view->currentPlan().dataParallel, tilingDataParallel(view->currentPlan(), s));
    QCOMPARE(stack->count(), steps + 2);

    // A typed batch is one step; the fit is the core's largest valid batch.
    batch->setValue(1);
    batch->setValue(12);
    QCOMPARE(stack->count(), steps + 3);
    QCOMPARE(view->currentPlan().batch, 12);
    fit->click();
    const SearchSpace space(s);
    SimResult r;
    int evaluations = 0;
    Plan small = view->currentPlan();
    small.batch = 12;
    const int largest = largestValidBatch(Simulator(s), small, space.batchMin(), space.batchMax(), r, evaluations);
    QVERIFY(largest > 12);
    QCOMPARE(view->currentPlan().batch, largest);
    QVERIFY(view->currentResult().valid);
    QCOMPARE(stack->count(), steps + 4);
    QVERIFY2(editor->note().contains(QString::number(largest)), qPrintable(editor->note()));

    // Back to the searched plan, and undo walks back through each step.
    back->click();
    QVERIFY(view->currentPlan() == searched);
    QVERIFY(!view->currentTitle().contains(QStringLiteral("what-if")));
    QVERIFY2(undo->toolTip().contains(QStringLiteral("Back to")), qPrintable(undo->toolTip()));
    undo->click();
    QCOMPARE(view->currentPlan().batch, largest);
    stack->undo();
    QCOMPARE(view->currentPlan().batch, 12);
    stack->undo();
    QCOMPARE(view->currentPlan().dataParallel, tilingDataParallel(view->currentPlan(), s));
    QCOMPARE(view->currentPlan().batch, searched.batch);
    stack->undo();
    QVERIFY(view->currentPlan().gpus() != 8);
    stack->undo();
    QVERIFY(view->currentPlan() == searched);
    stack->redo();
    QVERIFY(view->currentPlan().gpus() != 8);
}

QTEST_MAIN(TestWindowEdits)
#include "tst_window_edits.moc"
