// What the user does with the mouse and the keyboard never does what they did not mean:
// ticking a run in the runs table only shows or hides it (never renames it), and the wheel
// scrolls the scenario dock instead of editing a field that passes under the pointer.
#include <QtTest>

#include <QAbstractScrollArea>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QStandardPaths>
#include <QTableWidget>
#include <QWheelEvent>

#include "window_fixtures.h"
#include "main_window.h"
#include "io/scenario_json.h"
#include "model/specs.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "search_toolbar.h"
#include <QAction>
#include <QProgressBar>
#include "wheel_guard.h"

using namespace shardlab;
using namespace shardlab::ui;

namespace {

void wheel(QWidget* target, int steps)
{
    const QPoint at = target->rect().center();
    QWheelEvent e(QPointF(at), QPointF(target->mapToGlobal(at)), QPoint(), QPoint(0, 120 * steps), Qt::NoButton,
                  Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &e);
}

} // namespace

class TestWindowInputs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void openKeepsValuesBeyondAFieldsRange();
    void stoppedProgressOnlyForBudgetedAlgorithms();
    void init()
    {
        startFreshSession();
    }

    // Unticking a run re-fills the table; the edited item was read after that (a use after
    // free that renamed the run to its variant, "V1").
    void tickingARunKeepsItsName()
    {
        MainWindow w;
        SearchPanel* panel = w.searchPanel();
        QVERIFY(runSearch(w, QStringLiteral("megatron"), 100));
        QVERIFY(runSearch(w, QStringLiteral("random"), 200));
        QCOMPARE(panel->runCount(), 2);
        auto* table = panel->findChild<QTableWidget*>(QStringLiteral("runsTable"));
        QVERIFY(table);
        const QString first = panel->runInfo(0).name, second = panel->runInfo(1).name;
        for (int round = 0; round < 3; ++round) {
            table->item(0, 0)->setCheckState(Qt::Unchecked);
            QVERIFY(!panel->runInfo(0).visible);
            QCOMPARE(panel->runInfo(0).name, first);
            table->item(0, 0)->setCheckState(Qt::Checked);
            QVERIFY(panel->runInfo(0).visible);
            QCOMPARE(panel->runInfo(0).name, first);
            QCOMPARE(panel->runInfo(1).name, second);
        }
        table->item(1, 0)->setText(QStringLiteral("mine"));
        QCOMPARE(panel->runInfo(1).name, QStringLiteral("mine"));
        table->item(1, 0)->setCheckState(Qt::Unchecked);
        QCOMPARE(panel->runInfo(1).name, QStringLiteral("mine"));
        QVERIFY(panel->deleteRun(0));
        QCOMPARE(panel->runCount(), 1);
        QCOMPARE(panel->runInfo(0).name, QStringLiteral("mine"));
    }

    // A huge name neither widens the window nor is kept: the window's minimum width stays
    // bounded, and the run store refuses a name beyond the one limit for names.
    void longNamesKeepTheWindowUsable()
    {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const int before = w.minimumSizeHint().width();
        QVERIFY(runSearch(w, QStringLiteral("megatron"), 100));
        Scenario s = w.scenarioEditor()->scenario();
        s.name = std::string(10000, 'S');
        s.model.name = std::string(10000, 'M');
        w.setScenario(s); // shown, and refused as a search input (the core's name rule)
        QVERIFY(!w.startSearch());
        SearchPanel* panel = w.searchPanel();
        QVERIFY(!panel->renameRun(0, QString(50000, QLatin1Char('R'))));
        QVERIFY(panel->renameRun(0, QString(200, QLatin1Char('R'))));
        QCoreApplication::processEvents();
        const int after = w.minimumSizeHint().width();
        QVERIFY2(after < std::max(2000, before + 200), qPrintable(QStringLiteral("%1 -> %2 px").arg(before).arg(after)));
    }

    // Restoring runs is linear and capped, and what is restored is checked again: an
    // elite that does not fit its scenario is not valid, a curve of 1e308 is not drawn.
    void restoredRunsAreCheckedAndCapped()
    {
        QByteArray saved;
        {
            MainWindow w;
            QVERIFY(runSearch(w, QStringLiteral("random"), 300));
            saved = w.searchPanel()->runsToJson();
        }
        QJsonObject doc = QJsonDocument::fromJson(saved).object();
        QJsonObject run = doc.value(QStringLiteral("runs")).toArray().first().toObject();
        QJsonArray elites = run.value(QStringLiteral("elites")).toArray();
        QVERIFY(!elites.isEmpty());
        QJsonObject elite = elites.first().toObject();
        const QByteArray planJson = QJsonDocument(elite.value(QStringLiteral("plan")).toObject()).toJson();
        Plan tp64 = parsePlan(planJson.toStdString(), "").value;
        tp64.tensorParallel = 64; // on an 8-GPU scenario
        elite[QStringLiteral("plan")] = QJsonDocument::fromJson(QByteArray::fromStdString(planToJson(tp64))).object();
        elite[QStringLiteral("valid")] = true;
        elites[0] = elite;
        run[QStringLiteral("elites")] = elites;
        run[QStringLiteral("curve")] = QJsonArray{QJsonArray{1, 1e308}, QJsonArray{2, 500.0}};
        QJsonArray many;
        for (int i = 0; i < 1000; ++i)
            many.append(run);
        doc[QStringLiteral("runs")] = many;

        MainWindow w;
        SearchPanel* panel = w.searchPanel();
        const int before = panel->runCount();
        QElapsedTimer t;
        t.start();
        QVERIFY(panel->restoreRuns(QJsonDocument(doc).toJson()));
        qInfo("restored 1000 saved runs (500 kept) in %lld ms", static_cast<long long>(t.elapsed()));
        QCOMPARE(panel->runCount(), before + SearchPanel::kMaxRestoredRuns);
        QVERIFY2(panel->restoreNote().contains(QStringLiteral("500 older runs not restored")),
                 qPrintable(panel->restoreNote()));
        QVERIFY(panel->selectRun(panel->runCount() - 1));
        bool sawTp64 = false;
        for (const EliteEntry& e : panel->elites())
            if (e.plan.tensorParallel == 64) {
                sawTp64 = true;
                QVERIFY(!e.valid);
            }
        QVERIFY(sawTp64);
    }

    void wheelScrollsTheDockNotAField()
    {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* nvlink = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_gb_per_s"));
        QVERIFY(nvlink);
        const double before = nvlink->value();
        // Not focused: the wheel over it does not change it.
        wheel(nvlink, -1);
        QCOMPARE(nvlink->value(), before);
        // Focused earlier, then the user scrolls the dock and the field passes under the
        // pointer: still the dock's scroll.
        nvlink->setFocus();
        QAbstractScrollArea* area = nullptr;
        for (QWidget* p = nvlink->parentWidget(); p && !area; p = p->parentWidget())
            area = qobject_cast<QAbstractScrollArea*>(p);
        QVERIFY(area);
        wheel(area->viewport(), -1);
        wheel(nvlink, -1);
        QCOMPARE(nvlink->value(), before);
        // Focused, and the wheel starts on it (no scroll in progress): the user means it.
        QVERIFY(ui::wheelGuard() && ui::wheelGuard()->isScrolling());
        QTRY_VERIFY_WITH_TIMEOUT(!ui::wheelGuard()->isScrolling(), 10 * WheelGuard::kGestureMs);
        wheel(nvlink, 1);
        QVERIFY(nvlink->value() != before);
    }
};

// Values beyond a field's own range (a negative count, a huge capacity) come back as saved:
// the field widens rather than clamps, and the problem names the value.
void TestWindowInputs::openKeepsValuesBeyondAFieldsRange()
{
    QTemporaryDir dir;
    const QString saved = dir.filePath(QStringLiteral("saved.json"));
    {
        MainWindow w0; // the default scenario, written out whole
        QVERIFY(w0.saveScenarioTo(saved));
    }
    QFile in(saved);
    QVERIFY(in.open(QIODevice::ReadOnly));
    QJsonObject doc = QJsonDocument::fromJson(in.readAll()).object();
    QJsonObject model = doc.value(QStringLiteral("model")).toObject();
    model.insert(QStringLiteral("layers"), -5);
    doc.insert(QStringLiteral("model"), model);
    QJsonObject cluster = doc.value(QStringLiteral("cluster")).toObject();
    QJsonObject gpu = cluster.value(QStringLiteral("gpu")).toObject();
    QVERIFY(gpu.contains(QStringLiteral("hbm_gb")));
    gpu.insert(QStringLiteral("hbm_gb"), 1e9);
    cluster.insert(QStringLiteral("gpu"), gpu);
    doc.insert(QStringLiteral("cluster"), cluster);
    const QString beyond = dir.filePath(QStringLiteral("beyond.json"));
    QFile out(beyond);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(doc).toJson());
    out.close();
    MainWindow w;
    QVERIFY2(w.openScenarioFile(beyond), qPrintable(w.statusText()));
    QCOMPARE(w.scenario().model.layers, -5);
    QCOMPARE(w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("model.layers"))->value(), -5);
    QCOMPARE(w.scenario().cluster.gpu.hbmGb, 1e9);
    QString problems;
    for (const FieldError& e : w.scenarioEditor()->problems())
        problems += QString::fromStdString(e.toString()) + QLatin1Char('\n');
    QVERIFY2(problems.contains(QStringLiteral("model.layers")) && problems.contains(QStringLiteral("got -5")),
             qPrintable(problems));
}

// A stopped search's bar shows calls over the budget only for an algorithm the registry
// says spends one: megatron and exact ignore the budget, so their bar does not claim a share
// of it; anneal's does.
void TestWindowInputs::stoppedProgressOnlyForBudgetedAlgorithms()
{
    QAction start(QStringLiteral("Start")), stop(QStringLiteral("Stop"));
    SearchToolbar bar(&start, &stop);
    bar.setBudget(100);
    SearchOutcome o;
    o.stopped = true;
    o.calls = 50;
    for (const char* name : {"megatron", "exact", "anneal"}) {
        SearchAlgorithmInfo info;
        QVERIFY(findSearchAlgorithm(name, info));
        QVERIFY(bar.setAlgorithm(QString::fromLatin1(name)));
        bar.showStarted();
        bar.showFinished(o);
        QCOMPARE(bar.progressBar()->value(), info.budgeted ? 500 : 0);
    }
    QCOMPARE(bar.budget(), 100);
    SearchToolbar fresh(&start, &stop);
    QCOMPARE(fresh.budget(), SearchOptions{}.budget);
}

QTEST_MAIN(TestWindowInputs)
#include "tst_window_inputs.moc"
