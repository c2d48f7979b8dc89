// The main window's searches against the real core: they run on the worker thread,
// Start/Stop cycles leave nothing running, a finished search fills the views, an edit
// cancels a running search, the limits are checked before Start, runs survive a restart.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QProcess>
#include <QCheckBox>
#include <QLabel>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QUndoStack>

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "window_fixtures.h"
#include "io/presets.h"
#include "io/profile_json.h"
#include "io/scenario_json.h"
#include "file_export.h"
#include "main_window.h"
#include "ui_format.h"
#include "scenario_editor.h"
#include "plan_view.h"
#include "search_panel.h"
#include "heatmap_widget.h"
#include "plan_topology.h"
#include "breakdown_plot.h"
#include "compare_view.h"
#include "runner/latency_floor.h"
#include "sim/megatron.h"
#include "topology_view.h"
#include <QTableWidget>
#include <QLineEdit>
#include <QUndoStack>
#include <QProgressBar>
#include "sim/simulator.h"
#include "model/plan_checks.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void opensOnABenchmarkScenarioReadyToStart();
    void startStopTwentyTimes();
    void finishedSearchFillsViews();
    void searchUnderLoadRanksByTheRun();
    void editingTheScenarioCancelsTheSearch();
    void stallMeasurementRuns();
    void staleCannotRunMessageIsCleared();
    void impossibleSloIsCaughtBeforeStart();
    void progressStaysWhereStopped();
    void runsTableFollowsARunningSearch();
    void runsTableAndElitesChangeTogether();
    void eliteRowsNameAttentionDataParallelism();
    void eliteColumnsWidenForWiderCells();
    void longRunsAreDownsampledEvenly();
    void variantsKeptAcrossAnEdit();
    void cosmeticEditCancelsNothing();
    void runsPersistAcrossRestart();
};

void TestMainWindow::init()
{
    startFreshSession();
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
        // Stop at different points: before the worker starts, after the queued start,
        // once the search has reported progress.
        if (i % 3 == 1)
            QCoreApplication::processEvents();
        else if (i % 3 == 2)
            QTRY_VERIFY_WITH_TIMEOUT(w.progressBar()->value() > 0 || !w.isSearching(), 10000);
        QSignalSpy done(&w, &MainWindow::searchDone);
        w.stopSearch();
        QVERIFY(done.wait(10000) || !done.isEmpty());
        QVERIFY(!w.isSearching());
    }
}

void TestMainWindow::finishedSearchFillsViews()
{
    MainWindow w;
    // Before any run the empty table says what will fill it.
    auto* elites = w.searchPanel()->findChild<ui::EliteTable*>(QStringLiteral("eliteTable"));
    QVERIFY(elites);
    QVERIFY(elites->emptyText().contains(QStringLiteral("No runs yet")));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 1500)); // finished with a plan
    QTRY_VERIFY(!w.searchPanel()->isReplotPending()); // the merged repaint ran
    QVERIFY(w.searchPanel()->eliteRowCount() > 0);
    QVERIFY(w.searchPanel()->curvePointCount() > 0);
    QVERIFY(w.lastResult() && w.lastResult()->outcome.found);
    QVERIFY(w.lastResult()->outcome.calls <= 1500);
}

// The toolbar's "under load" box: the window's search is runSearch with underLoad, the same
// plan and figures; a scenario without a closed loop is refused before the search starts.
void TestMainWindow::searchUnderLoadRanksByTheRun()
{
    MainWindow w;
    Scenario s = preset("llama3-70b-8gpu");
    w.setScenario(s);
    auto* box = w.findChild<QCheckBox*>(QStringLiteral("search.under_load"));
    QVERIFY(box);
    box->setChecked(true);
    w.setAlgorithm(QStringLiteral("anneal"));
    QVERIFY(!w.startSearch()); // steady state: nothing to rank by
    QVERIFY(!w.isSearching());

    s.workload.load.protocol = LoadProtocol::Concurrency;
    s.workload.load.concurrency = 8;
    w.setScenario(s);
    w.setSeed(2);
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 300));
    const SearchOutcome& shown = w.lastResult()->outcome;
    QVERIFY(shown.underLoad);
    const int last = w.searchPanel()->runCount() - 1;
    QVERIFY(w.searchPanel()->runInfo(last).name.contains(QStringLiteral("under load (concurrency 8)")));
    QCOMPARE(w.searchPanel()->runInfo(last).bestValue, shown.bestTokensPerSPerGpu());
    SearchOptions o;
    o.algorithm = "anneal";
    o.budget = 300;
    o.seed = 2;
    o.underLoad = true;
    const SearchOutcome core = shardlab::runSearch(s, o);
    QVERIFY(core.found);
    QVERIFY(shown.best == core.best);
    QCOMPARE(shown.bestTokensPerSPerGpu(), core.bestTokensPerSPerGpu());
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
    QSignalSpy settled(&w, &MainWindow::searchSettled);
    // What an edit in the scenario editor does: the window hears scenarioEdited.
    w.setScenario(s);
    QVERIFY(!w.isSearching());
    QVERIFY(settled.wait(30000)); // the worker ended the cancelled job: all it sent is in
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

// Typing "16" into the nodes field passes through "1"… and through 0 when the field is
// cleared: the red "cannot run" line must go once the value is valid again.
void TestMainWindow::staleCannotRunMessageIsCleared()
{
    MainWindow w;
    auto* nodes = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("cluster.nodes"));
    nodes->setValue(0);
    QVERIFY2(w.statusText().contains(QStringLiteral("cannot run")), qPrintable(w.statusText()));
    nodes->setValue(2);
    QVERIFY(w.scenarioEditor()->isRunnable());
    QVERIFY2(!w.statusText().contains(QStringLiteral("cannot run")), qPrintable(w.statusText()));
    QVERIFY(w.startSearch());
    w.stopSearch();
}

// A TPOT limit no plan can reach: the window says so, and which limit, before any search
// spends its budget; relaxing the limit lets it start again.
void TestMainWindow::impossibleSloIsCaughtBeforeStart()
{
    MainWindow w;
    QSignalSpy checked(&w, &MainWindow::feasibilityChecked);
    auto* tpot = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("workload.tpot_slo_ms"));
    tpot->setValue(0.5);
    QVERIFY(checked.wait(20000));
    QCOMPARE(checked.back().front().toBool(), true);
    QVERIFY(w.isProvedInfeasible());
    QVERIFY2(w.statusText().contains(QStringLiteral("time per output token")), qPrintable(w.statusText()));
    // The figure stated is the proved minimum (runner/latency_floor.h), not a table's bound.
    const TpotFloor floor = shortestTpot(w.scenario(), 0.5);
    QVERIFY(floor.proved);
    QVERIFY2(w.statusText().contains(QString::fromStdString(describeTpotFloor(floor, 0.5))), qPrintable(w.statusText()));
    QVERIFY(!w.startSearch());
    QVERIFY(!w.isSearching());
    tpot->setValue(50);
    QVERIFY(!w.isProvedInfeasible()); // an edit withdraws the proof at once
    QVERIFY(checked.wait(20000));
    QCOMPARE(checked.back().front().toBool(), false);
    QVERIFY2(!w.statusText().contains(QStringLiteral("No plan can meet")), qPrintable(w.statusText()));
    QVERIFY(w.startSearch());
    w.stopSearch();
}

void TestMainWindow::progressStaysWhereStopped()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(1000000);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QTRY_VERIFY_WITH_TIMEOUT(w.progressBar()->value() > 0, 20000); // stopped part-way
    w.stopSearch();
    QVERIFY(done.wait(20000));
    QVERIFY(w.lastResult());
    QVERIFY(w.lastResult()->outcome.stopped);
    const double fraction = double(w.lastResult()->outcome.calls) / 1000000;
    QVERIFY(fraction < 0.9);
    QVERIFY2(w.progressBar()->value() < 1000, qPrintable(QString::number(w.progressBar()->value())));
    QVERIFY(std::abs(w.progressBar()->value() - int(fraction * 1000)) <= 1);
    QVERIFY(w.progressBar()->text().contains(QStringLiteral("stopped")));
    QVERIFY(w.statusText().contains(QStringLiteral("stopped early")));
}

// 20,000 samples through the live curve: the scatter stays bounded, the first tenth of
// the run keeps about a tenth of the points (it used to be halved over and over), and the
// extremes survive.
void TestMainWindow::longRunsAreDownsampledEvenly()
{
    ui::SearchPanel panel;
    panel.setScenario(scenarioPreset("llama3-70b-8gpu").value);
    panel.beginRun(QStringLiteral("synthetic"));
    const int total = 20000;
    for (int start = 0; start < total; start += 200) {
        ui::LiveProgress p;
        p.core.budget = total;
        for (int call = start; call < start + 200; ++call) {
            double v = 100 + (call * 7919 % 97); // 100..196
            if (call == 123)
                v = 5000; // an early spike
            if (call == 17000)
                v = 1; // a late dip
            p.core.recentSamples.emplace_back(call, v);
        }
        p.core.calls = start + 200;
        panel.addProgress(p);
    }
    const auto points = panel.samplePoints();
    QVERIFY2(points.size() <= 2000, qPrintable(QString::number(points.size())));
    QVERIFY(points.size() >= 500);
    int early = 0;
    bool spike = false, dip = false;
    for (const auto& [call, value] : points) {
        early += call < total / 10;
        spike = spike || value == 5000;
        dip = dip || value == 1;
    }
    const double share = double(early) / points.size();
    if (!(share > 0.07 && share < 0.14)) {
        int hist[10] = {};
        for (const auto& pt : points)
            ++hist[std::min(9, int(pt.first * 10 / total))];
        for (int i = 0; i < 10; ++i)
            qInfo("decile %d: %d points", i, hist[i]);
    }
    QVERIFY2(share > 0.07 && share < 0.14, qPrintable(QString::number(share)));
    QVERIFY(spike && dip);
}

// NVLink 450 vs 900: the first run survives the edit, the second is another variant, both
// sit on the curve and in the runs table, and the elites follow the selected run.
void TestMainWindow::variantsKeptAcrossAnEdit()
{
    MainWindow w;
    ui::SearchPanel* panel = w.searchPanel();
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 800));
    QCOMPARE(panel->runCount(), 1);
    const ui::SearchPanel::RunInfo first = panel->runInfo(0);
    QCOMPARE(first.variant, QStringLiteral("V1"));
    QCOMPARE(first.scenario.cluster.nvlinkGBps, 450.0);

    w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_gb_per_s"))->setValue(900);
    QCOMPARE(panel->runCount(), 1); // the edit kept the run
    QVERIFY(panel->runInfo(0).found);
    QVERIFY(runSearch(w, QStringLiteral("random"), 800));
    QCOMPARE(panel->runCount(), 2);
    const ui::SearchPanel::RunInfo second = panel->runInfo(1);
    QCOMPARE(second.variant, QStringLiteral("V2"));
    QVERIFY2(second.variantNote.contains(QStringLiteral("cluster.nvlink_gb_per_s")) && second.variantNote.contains(QStringLiteral("900")),
             qPrintable(second.variantNote));
    QCOMPARE(second.scenario.cluster.nvlinkGBps, 900.0);
    QCOMPARE(panel->runInfo(0).scenario.cluster.nvlinkGBps, 450.0);
    QVERIFY(panel->runInfo(0).visible && panel->runInfo(1).visible);
    QCOMPARE(panel->findChild<QTableWidget*>(QStringLiteral("runsTable"))->rowCount(), 2);

    // Selecting the first run brings back its elites and shows its best in the plan view.
    QVERIFY(panel->selectRun(0));
    QTRY_VERIFY(panel->eliteRowCount() > 0);
    QVERIFY(panel->elites().front().plan == first.best || panel->elites().front().tokensPerSPerGpu <= first.bestValue + 1e-9);
    QVERIFY2(w.planView()->currentTitle().contains(first.name), qPrintable(w.planView()->currentTitle()));
    QVERIFY(w.planView()->currentPlan() == first.best);
    QVERIFY2(w.statusText().contains(QStringLiteral("V1")), qPrintable(w.statusText()));

    // Hide, rename, delete.
    QVERIFY(panel->setRunVisible(0, false));
    QVERIFY(!panel->runInfo(0).visible);
    QVERIFY(panel->renameRun(1, QStringLiteral("fast NVLink")));
    QCOMPARE(panel->runInfo(1).name, QStringLiteral("fast NVLink"));
    bool listed = false;
    for (const ui::NamedPlan& p : w.compareView()->candidates())
        listed = listed || p.name.startsWith(QStringLiteral("Best of fast NVLink"));
    QVERIFY(listed);
    QVERIFY(panel->deleteRun(0));
    QCOMPARE(panel->runCount(), 1);
    QCOMPARE(panel->runInfo(0).name, QStringLiteral("fast NVLink"));
}

void TestMainWindow::cosmeticEditCancelsNothing()
{
    MainWindow w;
    QVERIFY(runSearch(w, QStringLiteral("random"), 300));
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(1000000);
    QVERIFY(w.startSearch());
    auto* name = w.scenarioEditor()->findChild<QLineEdit*>(QStringLiteral("name"));
    auto* gpu = w.scenarioEditor()->findChild<QLineEdit*>(QStringLiteral("cluster.gpu.name"));
    QVERIFY(name && gpu);
    QTest::keyClicks(name, QStringLiteral(" renamed"));
    QTest::keyClicks(gpu, QStringLiteral("x"));
    QVERIFY(w.scenario().name.find("renamed") != std::string::npos);
    QVERIFY(w.isSearching());
    QVERIFY(w.isModified());
    QCOMPARE(w.searchPanel()->runCount(), 2);
    QSignalSpy done(&w, &MainWindow::searchDone);
    w.stopSearch();
    QVERIFY(done.wait(20000));
    QCOMPARE(w.searchPanel()->runCount(), 2);
    // Both runs ran on one variant: a rename is not a new one.
    QCOMPARE(w.searchPanel()->runInfo(1).variant, w.searchPanel()->runInfo(0).variant);
}

void TestMainWindow::runsPersistAcrossRestart()
{
    double best = 0;
    QString name;
    {
        MainWindow w;
        QVERIFY(runSearch(w, QStringLiteral("anneal"), 600));
        QVERIFY(w.searchPanel()->renameRun(0, QStringLiteral("kept run")));
        best = w.searchPanel()->runInfo(0).bestValue;
        QVERIFY(w.close());
    }
    MainWindow w2;
    ui::SearchPanel* panel = w2.searchPanel();
    QCOMPARE(panel->runCount(), 1);
    const ui::SearchPanel::RunInfo r = panel->runInfo(0);
    QCOMPARE(r.name, QStringLiteral("kept run"));
    QCOMPARE(r.bestValue, best);
    QVERIFY(r.found);
    QCOMPARE(Simulator(r.scenario).evaluate(r.best).tokensPerSPerGpu, best);
    QTRY_VERIFY(panel->eliteRowCount() > 0);
    // A new run on the same scenario is the same variant.
    QVERIFY(runSearch(w2, QStringLiteral("random"), 200));
    QCOMPARE(panel->runCount(), 2);
    QCOMPARE(panel->runInfo(1).variant, r.variant);
}

// The runs table while a search runs: its calls and best so far, not "calls 0"; a run
// cancelled by an edit keeps the best it found; an exact run is not named with a seed.
void TestMainWindow::runsTableFollowsARunningSearch()
{
    MainWindow w;
    auto* table = w.searchPanel()->findChild<QTableWidget*>(QStringLiteral("runsTable"));
    QVERIFY(table);
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(1000000);
    QVERIFY(w.startSearch());
    QTRY_VERIFY_WITH_TIMEOUT(table->item(0, 3) && table->item(0, 3)->text().toInt() > 0, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(table->item(0, 2)->text().toDouble() > 0, 20000);
    QVERIFY(w.isSearching());
    QTRY_VERIFY_WITH_TIMEOUT(w.searchPanel()->eliteRowCount() > 0, 20000);
    Scenario s = w.scenario();
    s.workload.tpotSloMs += 1;
    w.setScenario(s); // cancels the search
    QVERIFY(!w.isSearching());
    const ui::SearchPanel::RunInfo run = w.searchPanel()->runInfo(0);
    QCOMPARE(run.status, QStringLiteral("cancelled"));
    QVERIFY(run.found);
    QVERIFY(run.bestValue > 0);
    QCOMPARE(table->item(0, 2)->text(), QString::number(run.bestValue, 'f', 1));

    QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
    const QString exact = w.searchPanel()->runInfo(w.searchPanel()->runCount() - 1).name;
    QVERIFY2(!exact.contains(QStringLiteral("seed")), qPrintable(exact));
    // Its status counts its branch-and-bound nodes beside its few simulator calls.
    const auto* status = w.findChild<QLabel*>(QStringLiteral("searchStatus"));
    QVERIFY(status);
    QVERIFY2(status->text().contains(QStringLiteral("branch-and-bound nodes")), qPrintable(status->text()));
}

// A progress that brings a new best changes the runs table's best, the elite table and the
// curve on one replot: the runs table never shows a best the elites and curve do not have
// yet (early in a ppo run it did, since it was updated at each progress and they 40 ms later).
void TestMainWindow::runsTableAndElitesChangeTogether()
{
    ui::SearchPanel panel;
    panel.setScenario(scenarioPreset("llama3-70b-8gpu").value);
    panel.beginRun(QStringLiteral("synthetic"));
    auto* runs = panel.findChild<QTableWidget*>(QStringLiteral("runsTable"));
    auto* elites = panel.findChild<QTableWidget*>(QStringLiteral("eliteTable"));
    QVERIFY(runs && elites);
    const Plan plan = megatronPlan(Simulator(scenarioPreset("llama3-70b-8gpu").value)).plan;
    auto progress = [&](int calls, double best) {
        ui::LiveProgress p;
        p.core.budget = 1000;
        p.core.calls = calls;
        p.core.haveBest = true;
        p.core.bestTokensPerSPerGpu = best;
        ui::EliteEntry e;
        e.plan = plan;
        e.plan.batch = calls; // a plan of its own per best
        e.call = calls;
        e.valid = true;
        e.tokensPerSPerGpu = best;
        p.elites = {e};
        panel.addProgress(p);
    };
    auto shown = [&](QTableWidget* t, int column) { return t->item(0, column) ? t->item(0, column)->text() : QString(); };
    progress(50, 100);
    QTRY_VERIFY(!panel.isReplotPending());
    QCOMPARE(shown(runs, 2), QStringLiteral("100.0"));
    QCOMPARE(shown(elites, 0), QStringLiteral("100.0"));
    progress(80, 150);
    QVERIFY(panel.isReplotPending());
    QCOMPARE(shown(runs, 2), shown(elites, 0)); // both still the last replot's
    QTRY_VERIFY(!panel.isReplotPending());
    QCOMPARE(shown(runs, 2), QStringLiteral("150.0"));
    QCOMPARE(shown(elites, 0), QStringLiteral("150.0"));
    QCOMPARE(shown(runs, 3), QStringLiteral("80"));
}

// Under attention data parallelism the TP degree splits no head: the elite row's TP cell
// says so, where a head-split plan of the same degrees shows the number alone.
void TestMainWindow::eliteRowsNameAttentionDataParallelism()
{
    ui::SearchPanel panel;
    const Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    panel.setScenario(s);
    panel.beginRun(QStringLiteral("synthetic"));
    Plan heads = megatronPlan(Simulator(s)).plan;
    QVERIFY(heads.tensorParallel > 1 && !attentionDataParallel(heads));
    Plan tokens = heads;
    for (int o = 0; o < opInfo(OpId::Attention).optionCount; ++o)
        if (opOption(OpId::Attention, o).split == Split::Tokens)
            tokens.setOption(OpId::Attention, o);
    QVERIFY(attentionDataParallel(tokens));
    ui::LiveProgress p;
    p.core.budget = 1000;
    p.core.calls = 2;
    p.core.haveBest = true;
    p.core.bestTokensPerSPerGpu = 200;
    for (const auto& [plan, value] : {std::pair{tokens, 200.0}, std::pair{heads, 100.0}}) {
        ui::EliteEntry e;
        e.plan = plan;
        e.valid = true;
        e.tokensPerSPerGpu = value;
        e.call = int(value);
        p.elites.push_back(e);
    }
    panel.addProgress(p);
    QTRY_VERIFY(!panel.isReplotPending());
    auto* elites = panel.findChild<QTableWidget*>(QStringLiteral("eliteTable"));
    QVERIFY(elites && elites->rowCount() == 2);
    const QString tp = QString::number(heads.tensorParallel);
    QCOMPARE(elites->item(0, 1)->text(), tp + QStringLiteral(" aDP"));
    QCOMPARE(elites->item(1, 1)->text(), tp);
    QVERIFY(elites->horizontalHeaderItem(1)->toolTip().contains(QStringLiteral("attention data parallelism")));
}

// A refresh whose cells ask for more than their columns were measured for widens them
// (EP 8 became 65536 mid-run), where the text used to elide to "…".
void TestMainWindow::eliteColumnsWidenForWiderCells()
{
    ui::SearchPanel panel;
    const Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    panel.setScenario(s);
    panel.resize(1600, 900); // wide enough that every column shows
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.beginRun(QStringLiteral("synthetic"));
    auto* elites = panel.findChild<QTableWidget*>(QStringLiteral("eliteTable"));
    QVERIFY(elites);
    const Plan plan = megatronPlan(Simulator(s)).plan;
    auto progress = [&](int calls, int ep) {
        ui::LiveProgress p;
        p.core.budget = 1000;
        p.core.calls = calls;
        p.core.haveBest = true;
        p.core.bestTokensPerSPerGpu = calls;
        ui::EliteEntry e;
        e.plan = plan;
        e.plan.expertParallel = ep; // only the cell's text matters here
        e.plan.batch = calls;
        e.call = calls;
        e.valid = true;
        e.tokensPerSPerGpu = calls;
        p.elites = {e};
        panel.addProgress(p);
        QTRY_VERIFY(!panel.isReplotPending());
    };
    progress(10, 8);
    const int before = elites->columnWidth(2);
    QVERIFY(before > 0);
    progress(20, 65536);
    QCOMPARE(elites->item(0, 2)->text(), QStringLiteral("65536"));
    QVERIFY2(elites->columnWidth(2) >= elites->sizeHintForIndex(elites->model()->index(0, 2)).width(),
             qPrintable(QStringLiteral("column %1 px (was %2), the cell asks %3")
                            .arg(elites->columnWidth(2))
                            .arg(before)
                            .arg(elites->sizeHintForIndex(elites->model()->index(0, 2)).width())));
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
