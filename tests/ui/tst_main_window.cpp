// The main window against the real core: searches run on the worker thread, Start/Stop
// cycles leave nothing running, a finished search fills the views, an exported plan
// evaluates through shardlab-cli to the same throughput, and the stall meter runs.
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "main_window.h"
#include "plan_view.h"
#include "search_panel.h"
#include "sim/simulator.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void opensOnABenchmarkScenarioReadyToStart();
    void startStopTwentyTimes();
    void finishedSearchFillsViews();
    void exportedPlanEvaluatesThroughCli();
    void editingTheScenarioCancelsTheSearch();
    void stallMeasurementRuns();
    void badScenarioFileShowsErrorAndKeepsCurrent();
};

void TestMainWindow::init()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
}

void TestMainWindow::opensOnABenchmarkScenarioReadyToStart()
{
    MainWindow w;
    QVERIFY(!w.scenario().name.empty());
    QVERIFY(scenarioPreset(w.scenario().name).ok());
    QVERIFY(!w.isSearching());
    QVERIFY(w.statusText().contains(QStringLiteral("Start")));
}

void TestMainWindow::startStopTwentyTimes()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(200000);
    for (int i = 0; i < 20; ++i) {
        QVERIFY(w.startSearch());
        QVERIFY(w.isSearching());
        QTest::qWait(i % 3); // stop at different points, sometimes before the worker starts
        QSignalSpy done(&w, &MainWindow::searchDone);
        w.stopSearch();
        QVERIFY(done.wait(10000) || !done.isEmpty());
        QVERIFY(!w.isSearching());
    }
}

void TestMainWindow::finishedSearchFillsViews()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("anneal"));
    w.setBudget(1500);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QVERIFY(done.wait(60000));
    QCOMPARE(done.front().front().toBool(), true);
    QTest::qWait(100); // let the merged repaint run
    QVERIFY(w.searchPanel()->eliteRowCount() > 0);
    QVERIFY(w.searchPanel()->curvePointCount() > 0);
    QVERIFY(w.lastResult() && w.lastResult()->outcome.found);
    QVERIFY(w.lastResult()->outcome.calls <= 1500);
}

void TestMainWindow::exportedPlanEvaluatesThroughCli()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(500);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QVERIFY(done.wait(60000));
    QTemporaryDir dir;
    const QString plan = dir.filePath(QStringLiteral("plan.json"));
    const QString scenario = dir.filePath(QStringLiteral("scenario.json"));
    QVERIFY(w.exportPlan(plan));
    QVERIFY(saveScenarioFile(scenario.toStdString(), w.scenario()).ok());
    QProcess cli;
    cli.start(QStringLiteral(SHARDLAB_CLI), {QStringLiteral("evaluate"), QStringLiteral("--scenario"), scenario,
                                             QStringLiteral("--plan"), plan, QStringLiteral("--json")});
    QVERIFY(cli.waitForFinished(30000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject j = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    const double cliValue = j.value(QStringLiteral("tokens_per_s_per_gpu")).toDouble();
    const double guiValue = w.lastResult()->outcome.bestResult.tokensPerSPerGpu;
    QVERIFY2(qFuzzyCompare(cliValue, guiValue), qPrintable(QStringLiteral("%1 vs %2").arg(cliValue).arg(guiValue)));
}

void TestMainWindow::editingTheScenarioCancelsTheSearch()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(500000);
    QVERIFY(w.startSearch());
    Scenario s = w.scenario();
    s.workload.tpotSloMs += 1;
    QSignalSpy done(&w, &MainWindow::searchDone);
    // What an edit in the scenario editor does: the window hears scenarioEdited.
    w.setScenario(s);
    QVERIFY(!w.isSearching());
    QTest::qWait(300);
    QVERIFY(done.isEmpty()); // the cancelled run's outcome is dropped, not shown as current
    QVERIFY(!w.lastResult());
}

void TestMainWindow::stallMeasurementRuns()
{
    MainWindow w;
    auto s = scenarioPreset("moe-1.6t-1024gpu");
    QVERIFY(s.ok());
    w.setScenario(s.value);
    w.setAlgorithm(QStringLiteral("genetic"));
    w.setBudget(4000);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QVERIFY(done.wait(120000));
    const double stall = w.longestStallMs();
    qInfo("longest event-loop stall during a genetic search on moe-1.6t-1024gpu: %.1f ms", stall);
    QVERIFY(std::isfinite(stall));
    QVERIFY(stall >= 0);
}

void TestMainWindow::badScenarioFileShowsErrorAndKeepsCurrent()
{
    MainWindow w;
    const std::string before = w.scenario().name;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"format\": \"shardlab-scenario\", \"version\": 1, \"name\": \"x\", \"model\": \"nope\"}");
    f.close();
    QVERIFY(!w.openScenarioFile(path));
    QVERIFY(w.statusText().contains(path));
    QVERIFY(w.statusText().contains(QStringLiteral("unknown model preset")));
    QCOMPARE(w.scenario().name, before);
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
