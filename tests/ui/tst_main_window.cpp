// The main window against the real core: searches run on the worker thread, Start/Stop
// cycles leave nothing running, a finished search fills the views, an exported plan
// evaluates through shardlab-cli to the same throughput, and the stall meter runs.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QProcess>
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
    void loadProfileAppliesKnobsAndUndoes();
    void openRefusesFifoAtOnce();
    void failedExportsKeepOldFiles_data();
    void failedExportsKeepOldFiles();
    void scriptedRunWithFailingWritesExitsNonZero_data();
    void scriptedRunWithFailingWritesExitsNonZero();
    void invalidScenarioSavesAndReopensAsDraft();
    void shippedAndReadOnlyFilesAreProtected();
    void titleMarksUnsavedChanges();
    void failedRestoreSaysSo();
    void staleCannotRunMessageIsCleared();
    void exportedPlanOfAnEditedPresetEvaluatesAlone();
    void impossibleSloIsCaughtBeforeStart();
    void progressStaysWhereStopped();
    void longRunsAreDownsampledEvenly();
    void heatmapMarksEquivalentOptionsAndExplainsCells();
    void topologyTabFollowsThePlan();
    void scriptedTopologyAndParetoTabs();
    void compareTwoPlans();
    void variantsKeptAcrossAnEdit();
    void cosmeticEditCancelsNothing();
    void undoRedoScenarioEdits();
    void runsPersistAcrossRestart();
    void whatIfIsKeptWhenTheScenarioChanges();
    void docScreenshots();
    void heatmapShowsEquivalentsOfATp1Plan();
};

namespace {

QStringList tempFilesIn(const QString& dir)
{
    return QDir(dir).entryList({QStringLiteral("*.tmp-*")}, QDir::Files | QDir::Hidden | QDir::System);
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// Runs `fn` with writes past `bytes` failing with EFBIG (RLIMIT_FSIZE, SIGXFSZ ignored): a
// full disk that also fails for root.
template <typename Fn>
auto withFileSizeLimit(rlim_t bytes, Fn fn)
{
    rlimit saved {};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
    auto result = fn();
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, oldHandler);
    return result;
}

} // namespace

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
    // Plans TensorRT-LLM runs (export refuses others): the search stays inside them.
    Scenario runnable = w.scenario();
    runnable.workload.engine = CollectiveEngine::TrtLlm;
    runnable.workload.runnable = true;
    w.setScenario(runnable);
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

    // The plan carries its scenario: evaluate --plan alone gives the window's figure.
    QProcess alone;
    alone.start(QStringLiteral(SHARDLAB_CLI), {QStringLiteral("evaluate"), QStringLiteral("--plan"), plan,
                                               QStringLiteral("--json")});
    QVERIFY(alone.waitForFinished(30000));
    QCOMPARE(alone.exitCode(), 0);
    const double aloneValue =
        QJsonDocument::fromJson(alone.readAllStandardOutput()).object().value(QStringLiteral("tokens_per_s_per_gpu")).toDouble();
    QVERIFY2(qFuzzyCompare(aloneValue, guiValue), qPrintable(QStringLiteral("%1 vs %2").arg(aloneValue).arg(guiValue)));

    // File > Export launch config writes what the core maps the same plan to, through the
    // same write path, and the YAML beside the script for TensorRT-LLM.
    const QString launch = dir.filePath(QStringLiteral("launch.sh"));
    QString error;
    QStringList warnings;
    QVERIFY2(w.exportLaunchConfig(launch, Engine::TrtLlm, {}, &error, &warnings), qPrintable(error));
    LaunchOptions trt;
    trt.engine = Engine::TrtLlm;
    trt.companionPrefix = companionPrefixFor(launch.toStdString());
    auto expected = exportLaunchConfig(w.scenario(), w.planView()->currentPlan(), trt);
    QVERIFY(expected.ok());
    QFile script(launch);
    QVERIFY(script.open(QIODevice::ReadOnly));
    QCOMPARE(script.readAll().toStdString(), launchScript(expected.value()));
    // The options file is named after its script, so a second export beside it keeps its own.
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("launch.extra_llm_api_options.yaml"))));
    QCOMPARE(warnings.size(), int(expected.value().warnings.size()));
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

// File > Load kernel profile: a bad file is refused inline and changes nothing; a good one
// prices the scenario with its knobs, one undo away from the previous ones.
void TestMainWindow::loadProfileAppliesKnobsAndUndoes()
{
    MainWindow w;
    const Scenario before = w.scenario();
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad-profile.json"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"format\": \"shardlab-profile\", \"version\": 1, \"name\": \"x\"}");
    f.close();
    QVERIFY(!w.loadProfile(bad));
    QVERIFY2(w.statusText().contains(QStringLiteral("knobs.compute: missing required field")), qPrintable(w.statusText()));
    QVERIFY(!w.scenario().cluster.profile);

    auto j = nlohmann::json::parse(profileToJson(builtinProfile()));
    j["name"] = "slow-hbm";
    j["knobs"]["hbm"]["value"] = 0.5;
    const QString good = dir.filePath(QStringLiteral("slow.json"));
    QFile g(good);
    QVERIFY(g.open(QIODevice::WriteOnly));
    g.write(QByteArray::fromStdString(j.dump()));
    g.close();
    QVERIFY2(w.loadProfile(good), qPrintable(w.statusText()));
    QVERIFY(w.scenario().cluster.profile);
    QCOMPARE(w.scenario().cluster.profile->name, std::string("slow-hbm"));
    QCOMPARE(w.scenario().cluster.gpu.efficiency.hbm, 0.5);
    w.undoStack()->undo();
    QVERIFY(!w.scenario().cluster.profile);
    QCOMPARE(w.scenario().cluster.gpu.efficiency.hbm, before.cluster.gpu.efficiency.hbm);
}

void TestMainWindow::openRefusesFifoAtOnce()
{
    MainWindow w;
    const std::string before = w.scenario().name;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("scenario.json"));
    QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(!w.openScenarioFile(path)); // used to block the window forever
    QVERIFY(clock.elapsed() < 2000);
    QVERIFY2(w.statusText().contains(QStringLiteral("is a named pipe (FIFO), not a regular file")), qPrintable(w.statusText()));
    QCOMPARE(w.scenario().name, before);
}

void TestMainWindow::failedExportsKeepOldFiles_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("file");
    QTest::newRow("throughput curve PNG") << "curve" << "curve.png";
    QTest::newRow("throughput curve PDF") << "curve" << "curve.pdf";
    QTest::newRow("breakdown plot PNG") << "breakdown" << "plan.png";
    QTest::newRow("plan JSON") << "plan" << "plan.json";
    QTest::newRow("launch script") << "launch" << "launch.sh";
}

// A write that fails half-way (the file-size limit) leaves the old file whole, no temporary
// file, and an error that names the file and the reason.
void TestMainWindow::failedExportsKeepOldFiles()
{
    QFETCH(QString, what);
    QFETCH(QString, file);
    MainWindow w;
    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    const QByteArray old("the previous export");
    QVERIFY(writeBytes(path, old));
    QString error;
    const bool ok = withFileSizeLimit(64, [&] {
        if (what == QLatin1String("curve"))
            return w.searchPanel()->exportCurve(path, &error);
        if (what == QLatin1String("breakdown"))
            return w.planView()->exportPlots(path, &error);
        if (what == QLatin1String("launch"))
            return w.exportLaunchConfig(path, Engine::Vllm, {}, &error);
        return w.exportPlan(path, &error);
    });
    QVERIFY(!ok);
    QVERIFY2(error.startsWith(path + QStringLiteral(": write failed: File too large")), qPrintable(error));
    QCOMPARE(fileBytes(path), old);
    QVERIFY2(tempFilesIn(dir.path()).isEmpty(), qPrintable(tempFilesIn(dir.path()).join(QLatin1Char(' '))));
    // Without the limit the same export replaces the file.
    QVERIFY(what == QLatin1String("curve") ? w.searchPanel()->exportCurve(path, &error)
            : what == QLatin1String("breakdown") ? w.planView()->exportPlots(path, &error)
            : what == QLatin1String("launch")    ? w.exportLaunchConfig(path, Engine::Vllm, {}, &error)
                                                 : w.exportPlan(path, &error));
    QVERIFY(fileBytes(path).size() > 100);
}

void TestMainWindow::scriptedRunWithFailingWritesExitsNonZero_data()
{
    QTest::addColumn<QString>("target"); // "limit": file-size limit; "devfull": /dev/full clone (root)
    QTest::addColumn<QString>("option");
    QTest::newRow("--export-plot, write cut short") << "limit" << "--export-plot";
    QTest::newRow("--screenshot, write cut short") << "limit" << "--screenshot";
    QTest::newRow("--export-plot to a /dev/full clone") << "devfull" << "--export-plot";
    QTest::newRow("--screenshot to a /dev/full clone") << "devfull" << "--screenshot";
}

// The scripted window (demos, CI screenshots) on a full disk: it used to leave a truncated
// PNG in place of the old file and exit 0.
void TestMainWindow::scriptedRunWithFailingWritesExitsNonZero()
{
    QFETCH(QString, target);
    QFETCH(QString, option);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out.png"));
    const QByteArray old("the previous image");
    if (target == QLatin1String("devfull")) {
        if (::geteuid() != 0)
            QSKIP("mknod of a character device needs root");
        QCOMPARE(::mknod(QFile::encodeName(path).constData(), S_IFCHR | 0666, makedev(1, 7)), 0);
    } else {
        QVERIFY(writeBytes(path, old));
    }
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path()); // keep the user's settings out of it
    env.insert(QStringLiteral("GUI"), QStringLiteral(SHARDLAB_GUI));
    env.insert(QStringLiteral("OUT"), path);
    env.insert(QStringLiteral("OPTION"), option);
    env.insert(QStringLiteral("SCENARIO"), QStringLiteral(SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json"));
    gui.setProcessEnvironment(env);
    // 8 blocks of file size: the PNG does not fit, a write past it fails with EFBIG.
    const QString limit = target == QLatin1String("limit") ? QStringLiteral("trap '' XFSZ; ulimit -f 8; ") : QString();
    gui.start(QStringLiteral("/bin/sh"),
              {QStringLiteral("-c"), limit + QStringLiteral(R"(exec "$GUI" --scenario "$SCENARIO" --algo random --budget 200 )"
                                                            R"(--autostart --quit-when-done "$OPTION" "$OUT")")});
    QVERIFY(gui.waitForFinished(120000));
    const QString err = QString::fromUtf8(gui.readAllStandardError());
    QVERIFY2(gui.exitStatus() == QProcess::NormalExit, qPrintable(err));
    QVERIFY2(gui.exitCode() == 1, qPrintable(QStringLiteral("exit %1: %2").arg(gui.exitCode()).arg(err)));
    const QString reason = target == QLatin1String("limit") ? QStringLiteral("write failed: File too large")
                                                            : QStringLiteral("write failed: No space left on device");
    QVERIFY2(err.contains(QStringLiteral("shardlab: ") + option + QStringLiteral(": ") + path + QStringLiteral(": ") + reason),
             qPrintable(err));
    if (target == QLatin1String("limit"))
        QCOMPARE(fileBytes(path), old);
    else
        QVERIFY(QFileInfo(path).exists() && !QFileInfo(path).isFile()); // still the device
    QVERIFY2(tempFilesIn(dir.path()).isEmpty(), qPrintable(tempFilesIn(dir.path()).join(QLatin1Char(' '))));
}

// Ctrl+S on a scenario with 0 layers and 0 nodes: the file holds exactly that, and File >
// Open brings it back into the editor with the problems marked instead of refusing it.
void TestMainWindow::invalidScenarioSavesAndReopensAsDraft()
{
    QTemporaryDir dir;
    QString path;
    {
        MainWindow w;
        auto* layers = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("model.layers"));
        auto* nodes = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("cluster.nodes"));
        auto* kv = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("model.kv_heads"));
        layers->setValue(0);
        nodes->setValue(0);
        kv->setValue(7); // validates alone, inconsistent with 64 heads
        QVERIFY(!w.scenarioEditor()->isRunnable());
        QVERIFY(w.isModified());
        QVERIFY(w.saveScenarioTo(dir.filePath(QStringLiteral("draft")))); // no extension given
        path = dir.filePath(QStringLiteral("draft.json"));
        QVERIFY(QFileInfo::exists(path));
        QCOMPARE(w.currentPath(), path);
        QVERIFY(!w.isModified());
        QVERIFY2(w.statusText().contains(QStringLiteral("problem")), qPrintable(w.statusText()));
        QVERIFY(tempFilesIn(dir.path()).isEmpty());
    }
    MainWindow w2;
    QVERIFY2(w2.openScenarioFile(path), qPrintable(w2.statusText()));
    QCOMPARE(w2.scenario().model.layers, 0);
    QCOMPARE(w2.scenario().cluster.nodes, 0);
    QCOMPARE(w2.scenario().model.kvHeads, 7);
    QCOMPARE(w2.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("model.layers"))->value(), 0);
    QStringList where;
    for (const FieldError& e : w2.scenarioEditor()->problems())
        where << QString::fromStdString(e.where);
    QVERIFY2(where.contains(QStringLiteral("model.layers")) && where.contains(QStringLiteral("cluster.nodes"))
                 && where.contains(QStringLiteral("model.kv_heads")),
             qPrintable(where.join(QLatin1Char(' '))));
    QVERIFY2(w2.statusText().contains(QStringLiteral("problem")), qPrintable(w2.statusText()));
    QVERIFY(!w2.isModified());
    QVERIFY(!w2.startSearch());
    // Saved again unchanged: byte for byte the same file.
    const QByteArray before = fileBytes(path);
    QVERIFY(w2.saveScenarioTo(path));
    QCOMPARE(fileBytes(path), before);

    // A structurally broken file is still refused, with its reason.
    const QString broken = dir.filePath(QStringLiteral("broken.json"));
    QVERIFY(writeBytes(broken, QByteArray("{\"format\": \"shardlab-scenario\", \"version\": 1, \"name\": \"x\", "
                                          "\"model\": \"llama3-70b\", \"cluster\": \"h100-8\"}")));
    QVERIFY(!w2.openScenarioFile(broken));
    QVERIFY2(w2.statusText().contains(QStringLiteral("workload")), qPrintable(w2.statusText()));
    QCOMPARE(w2.scenario().model.layers, 0); // the draft is still there
}

void TestMainWindow::shippedAndReadOnlyFilesAreProtected()
{
    const QString shipped = QStringLiteral(SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json");
    QVERIFY(MainWindow::isProtectedScenarioPath(shipped));
    QTemporaryDir dir;
    const QString mine = dir.filePath(QStringLiteral("mine.json"));
    QVERIFY(writeBytes(mine, "{}"));
    QVERIFY(!MainWindow::isProtectedScenarioPath(mine));
    QVERIFY(!MainWindow::isProtectedScenarioPath(dir.filePath(QStringLiteral("new.json"))));
    if (::geteuid() != 0) { // root writes read-only files anyway
        QVERIFY(QFile::setPermissions(mine, QFileDevice::ReadOwner));
        QVERIFY(MainWindow::isProtectedScenarioPath(mine));
    }
    // Opened from resources/, Save As proposes a file of the user's, named after the scenario.
    MainWindow w;
    QVERIFY(w.openScenarioFile(shipped));
    const QString suggested = w.suggestedScenarioPath();
    QVERIFY2(!suggested.contains(QStringLiteral("/resources/")), qPrintable(suggested));
    QVERIFY2(suggested.endsWith(QStringLiteral("/llama3-70b-8gpu.json")), qPrintable(suggested));
}

void TestMainWindow::titleMarksUnsavedChanges()
{
    MainWindow w;
    QVERIFY(!w.isWindowModified());
    QVERIFY(w.windowTitle().contains(QStringLiteral("[*]")));
    w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"))->setValue(777);
    QVERIFY(w.isModified());
    QVERIFY(w.isWindowModified());
    QTemporaryDir dir;
    QVERIFY(w.saveScenarioTo(dir.filePath(QStringLiteral("s.json"))));
    QVERIFY(!w.isWindowModified());
    QVERIFY(w.windowTitle().contains(QStringLiteral("s.json")));
}

void TestMainWindow::failedRestoreSaysSo()
{
    QTemporaryDir dir;
    const QString gone = dir.filePath(QStringLiteral("gone.json"));
    QSettings().setValue(QStringLiteral("lastScenarioPath"), gone);
    MainWindow w;
    QVERIFY2(w.statusText().contains(QStringLiteral("Could not reopen")), qPrintable(w.statusText()));
    QVERIFY2(w.statusText().contains(gone), qPrintable(w.statusText()));
    QVERIFY(!w.scenario().name.empty());

    // A session's unsaved draft comes back as it was, problems marked (here from the keys
    // the window wrote before it had session files).
    startFreshSession();
    Scenario draft = scenarioPreset("llama3-70b-8gpu").value;
    draft.model.layers = 0;
    QSettings().setValue(QStringLiteral("lastScenarioJson"), QByteArray::fromStdString(scenarioToJson(draft)));
    MainWindow b;
    QCOMPARE(b.scenario().model.layers, 0);
    QVERIFY(!b.scenarioEditor()->isRunnable());
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

// NVLink raised to 900 GB/s on the shipped preset: the exported plan carries the edited
// scenario under a name that is not the preset's, and evaluates alone to the window's figure.
void TestMainWindow::exportedPlanOfAnEditedPresetEvaluatesAlone()
{
    MainWindow w;
    const std::string preset = w.scenario().name;
    QVERIFY(scenarioPreset(preset).ok());
    auto* nvlink = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_gb_per_s"));
    nvlink->setValue(900);
    QCOMPARE(w.scenario().cluster.nvlinkGBps, 900.0);
    const double gui = w.planView()->currentResult().tokensPerSPerGpu;
    QVERIFY(gui > 0);
    QTemporaryDir dir;
    const QString plan = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(w.exportPlan(plan));
    auto doc = loadPlanDocument(plan.toStdString());
    QVERIFY(doc.ok());
    QVERIFY(doc.value.scenario.has_value());
    QVERIFY(doc.value.scenario->name != preset);
    QCOMPARE(doc.value.scenario->cluster.nvlinkGBps, 900.0);
    QProcess alone;
    alone.start(QStringLiteral(SHARDLAB_CLI), {QStringLiteral("evaluate"), QStringLiteral("--plan"), plan,
                                               QStringLiteral("--json")});
    QVERIFY(alone.waitForFinished(30000));
    QCOMPARE(alone.exitCode(), 0);
    const double cli =
        QJsonDocument::fromJson(alone.readAllStandardOutput()).object().value(QStringLiteral("tokens_per_s_per_gpu")).toDouble();
    QVERIFY2(qFuzzyCompare(cli, gui), qPrintable(QStringLiteral("%1 vs %2").arg(cli).arg(gui)));
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
    QTest::qWait(400);
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

void TestMainWindow::heatmapMarksEquivalentOptionsAndExplainsCells()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("anneal"));
    w.setBudget(1500);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QVERIFY(done.wait(60000));
    QTest::qWait(100);
    const Plan best = w.lastResult()->outcome.best;
    const Scenario s = w.scenario();
    const Simulator sim(s);
    const double base = sim.evaluate(best).tokensPerSPerGpu;
    ui::HeatmapWidget* h = w.searchPanel()->heatmap();
    int equivalents = 0, row = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o) {
            if (o == best.option(id)) {
                QVERIFY(!h->isEquivalent(id, o));
                continue;
            }
            Plan p = best;
            p.sharding[i] = std::uint8_t(o);
            const SimResult r = sim.evaluate(p);
            const bool same = r.valid && r.structureChecks == 0 && std::fabs(r.tokensPerSPerGpu - base) <= 1e-9 * base;
            QCOMPARE(h->isEquivalent(id, o), same);
            equivalents += same;
        }
        // Every cell explains itself.
        const QString tip = h->toolTipAt(h->cellRect(row, best.option(id)).center());
        QVERIFY2(tip.contains(QString::fromLatin1(opOption(id, best.option(id)).name)), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("best plan uses")), qPrintable(tip));
        ++row;
    }
    qInfo("%d equivalent options for the best plan", equivalents);
    const QString caption = w.searchPanel()->exportCaption();
    QVERIFY(caption.contains(QString::fromStdString(s.name)));
    QVERIFY(caption.contains(QStringLiteral("anneal seed 0")));
}

// The Topology tab draws the plan shown in the Plan tab: its groups on the GPUs (the
// simulator's rank order) and the traffic of each group per decode step.
void TestMainWindow::topologyTabFollowsThePlan()
{
    MainWindow w;
    QVERIFY(w.showTab(QStringLiteral("topology")));
    QCOMPARE(w.currentTabName(), QStringLiteral("topology"));
    QVERIFY(w.showTab(QStringLiteral("pareto"))); // the Pareto tab itself: tst_pareto_view
    QCOMPARE(w.currentTabName(), QStringLiteral("pareto"));
    QVERIFY(!w.showTab(QStringLiteral("nope")));
    QVERIFY(w.showTab(QStringLiteral("topology")));
    ui::PlanTopologyView* t = w.topologyView();
    // At start the plan view shows the Megatron recipe: TP 8 on one node of 8.
    QVERIFY2(t->summaryText().contains(QStringLiteral("Megatron")), qPrintable(t->summaryText()));
    QVERIFY(t->drawing()->hasPlanOverlay());

    Plan p = w.planView()->currentPlan();
    p.tensorParallel = 2;
    p.pipelineParallel = 2;
    p.dataParallel = 2;
    w.planView()->showPlan(QStringLiteral("by hand"), p);
    QVERIFY2(t->summaryText().contains(QStringLiteral("by hand")), qPrintable(t->summaryText()));
    using K = ui::TopologyView::GroupKind;
    const ui::TopologyView* d = t->drawing();
    // rank = (stage * DP + replica) * TP + tp
    QCOMPARE(d->groupOf(5, K::Tensor), 2);
    QCOMPARE(d->groupOf(5, K::Data), 0);
    QCOMPARE(d->groupOf(5, K::Pipeline), 1);
    QCOMPARE(d->groupOf(3, K::Data), 1);
    QCOMPARE(d->groupOf(3, K::Pipeline), 0);

    // The traffic rows add up to the simulator's bytes, and stay on NVLink inside one node.
    const Scenario s = w.scenario();
    const SimResult r = w.planView()->currentResult();
    const ui::PlanTraffic traffic = ui::planTraffic(s, p, r);
    double comm = 0;
    for (const OpBreakdown& o : r.decode)
        if (o.present)
            comm += o.commBytes;
    double rows = 0;
    bool pipeline = false;
    for (const ui::GroupTraffic& g : traffic.rows) {
        rows += g.bytes;
        pipeline = pipeline || g.collective == QStringLiteral("send/recv");
    }
    QVERIFY(pipeline);
    const double p2p = r.stepTokens * s.model.hiddenSize * 2.0 / p.tensorParallel;
    QVERIFY(std::fabs(rows - (comm + p2p)) <= 1e-6 * rows);
    QCOMPARE(traffic.interBytes, 0.0);
    QCOMPARE(t->trafficTable()->rowCount(), int(traffic.rows.size()));

    // Two nodes and TP 16: the TP group spans nodes; each all-reduce runs inside each node
    // over NVLink, then across over the fabric, and the rows split the bytes that way.
    Scenario two = s;
    two.cluster.nodes = 2;
    Plan wide = p;
    wide.tensorParallel = 16;
    wide.pipelineParallel = 1;
    wide.dataParallel = 1;
    const SimResult rw = Simulator(two).evaluate(wide);
    QCOMPARE(rw.structureChecks, 0u);
    const ui::PlanTraffic tw = ui::planTraffic(two, wide, rw);
    QVERIFY(tw.interBytes > 0);
    QVERIFY(tw.nvlinkBytes > 0);
    double inter = 0, all = 0;
    for (const OpBreakdown& o : rw.decode)
        if (o.present) {
            inter += o.commInterBytes;
            all += o.commBytes;
        }
    QVERIFY(std::fabs(tw.interBytes - inter) <= 1e-6 * inter);
    QVERIFY(std::fabs(tw.interBytes + tw.nvlinkBytes - all) <= 1e-6 * all);
}

void TestMainWindow::scriptedTopologyAndParetoTabs()
{
    QTemporaryDir dir;
    for (const QString& tab : {QStringLiteral("topology"), QStringLiteral("pareto"), QStringLiteral("nope")}) {
        QProcess gui;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());
        gui.setProcessEnvironment(env);
        const QString shot = dir.filePath(tab + QStringLiteral(".png"));
        // The topology run names the shipped scenario as the CLI takes it, the others its file.
        const QString scenario = tab == QLatin1String("topology")
            ? QStringLiteral("llama3-70b-8gpu")
            : QStringLiteral(SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json");
        gui.start(QStringLiteral(SHARDLAB_GUI),
                  {QStringLiteral("--scenario"), scenario,
                   QStringLiteral("--tab"), tab, QStringLiteral("--size"), QStringLiteral("1024x700"),
                   QStringLiteral("--screenshot"), shot, QStringLiteral("--quit-when-done")});
        QVERIFY(gui.waitForFinished(60000));
        const QString err = QString::fromUtf8(gui.readAllStandardError());
        if (tab == QLatin1String("nope")) {
            QCOMPARE(gui.exitCode(), 2);
            QVERIFY2(err.contains(QStringLiteral("topology")), qPrintable(err));
            continue;
        }
        QVERIFY2(gui.exitCode() == 0, qPrintable(err));
        const QImage image(shot);
        QCOMPARE(image.size(), QSize(1024, 700));
        // The Pareto tab computes the scenario's front before the screenshot (tst_pareto_view).
        QVERIFY2(!err.contains(QStringLiteral("not available yet")), qPrintable(err));
    }
}

// Any two plans side by side: a run's best against the recipe, per generated token, and a
// plan file opened with File > Open plan against the best.
void TestMainWindow::compareTwoPlans()
{
    MainWindow w;
    w.setAlgorithm(QStringLiteral("anneal"));
    w.setBudget(1500);
    QSignalSpy done(&w, &MainWindow::searchDone);
    QVERIFY(w.startSearch());
    QVERIFY(done.wait(60000));
    QTest::qWait(100);
    ui::CompareView* c = w.compareView();
    QStringList names;
    for (const ui::NamedPlan& p : c->candidates())
        names << p.name;
    QVERIFY2(names.contains(QStringLiteral("Megatron recipe")), qPrintable(names.join(QLatin1Char('|'))));
    QVERIFY2(names.contains(QStringLiteral("Best plan (anneal)")), qPrintable(names.join(QLatin1Char('|'))));
    QVERIFY(names.filter(QStringLiteral("Elite #")).size() >= 2);
    QVERIFY(w.showTab(QStringLiteral("compare")));

    QVERIFY(c->compare(QStringLiteral("Best plan (anneal)"), QStringLiteral("Megatron recipe")));
    const Scenario s = w.scenario();
    const Simulator sim(s);
    const double best = sim.evaluate(w.lastResult()->outcome.best).tokensPerSPerGpu;
    const double recipe = sim.evaluate(megatronPlan(sim).plan).tokensPerSPerGpu;
    QCOMPARE(c->resultA().tokensPerSPerGpu, best);
    QCOMPARE(c->resultB().tokensPerSPerGpu, recipe);
    QVERIFY(c->comparison().comparable);
    // Per token: GPU·µs per generated token is what tokens/s per GPU inverts.
    QVERIFY(std::fabs(c->comparison().thisPerToken - 1e6 / best) <= 1e-6 * c->comparison().thisPerToken);
    QVERIFY(std::fabs(c->comparison().refPerToken - 1e6 / recipe) <= 1e-6 * c->comparison().refPerToken);
    QVERIFY2(c->headlineText().contains(QLocale().toString(best / recipe, 'f', 3) + QStringLiteral("×")),
             qPrintable(c->headlineText()));
    QVERIFY(c->breakdown()->isPerToken());
    // NVLink and inter-node bytes apart, from the same traffic model as the Topology tab.
    const ui::PlanTraffic ta = ui::planTraffic(s, w.lastResult()->outcome.best, c->resultA());
    QTableWidget* links = c->linkTable();
    QVERIFY(links->rowCount() >= 4);
    QCOMPARE(links->item(0, 1)->text(), ui::formatBytes(ta.nvlinkBytes));
    QCOMPARE(links->item(1, 1)->text(), ui::formatBytes(ta.interBytes));

    // A plan file: the window's own export comes back as a candidate and compares equal.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("best.json"));
    w.planView()->showPlan(QStringLiteral("best"), w.lastResult()->outcome.best);
    QVERIFY(w.exportPlan(file));
    QVERIFY2(w.openPlanFile(file), qPrintable(w.statusText()));
    QCOMPARE(w.currentTabName(), QStringLiteral("compare"));
    QVERIFY(c->compare(QStringLiteral("best.json"), QStringLiteral("Best plan (anneal)")));
    QCOMPARE(c->resultA().tokensPerSPerGpu, best);
    QVERIFY2(c->headlineText().contains(QLocale().toString(1.0, 'f', 3) + QStringLiteral("×")), qPrintable(c->headlineText()));

    // A plan made for 256 GPUs does not fit 8: refused with the reason, nothing added.
    const Scenario big = scenarioPreset("deepseek-v3-256gpu").value;
    const QString other = dir.filePath(QStringLiteral("other.json"));
    QVERIFY(savePlanFile(other.toStdString(), megatronPlan(Simulator(big)).plan, &big).ok());
    const size_t before = c->candidates().size();
    QVERIFY(!w.openPlanFile(other));
    QVERIFY2(w.statusText().contains(QStringLiteral("does not fit")), qPrintable(w.statusText()));
    QCOMPARE(c->candidates().size(), before);
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
    QTest::qWait(80);
    QVERIFY(panel->eliteRowCount() > 0);
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

void TestMainWindow::undoRedoScenarioEdits()
{
    MainWindow w;
    auto* nodes = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("cluster.nodes"));
    auto* output = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"));
    const int outputBefore = output->value();
    nodes->setValue(2);
    QTest::qWait(2100); // a separate step, not merged with the next edit
    output->setValue(outputBefore + 100);
    QCOMPARE(w.undoStack()->count(), 2);
    w.undoStack()->undo();
    QCOMPARE(w.scenario().workload.outputTokens, outputBefore);
    QCOMPARE(output->value(), outputBefore);
    QCOMPARE(w.scenario().cluster.nodes, 2);
    w.undoStack()->undo();
    QCOMPARE(w.scenario().cluster.nodes, 1);
    QCOMPARE(nodes->value(), 1);
    QCOMPARE(w.planView()->currentResult().valid, true);
    w.undoStack()->redo();
    QCOMPARE(w.scenario().cluster.nodes, 2);
    QCOMPARE(nodes->value(), 2);
    // Typing a number in two key presses is one undo step.
    nodes->setValue(1);
    nodes->setValue(16);
    w.undoStack()->undo();
    QCOMPARE(w.scenario().cluster.nodes, 2);
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
    QVERIFY(panel->eliteRowCount() > 0 || (QTest::qWait(80), panel->eliteRowCount() > 0));
    // A new run on the same scenario is the same variant.
    QVERIFY(runSearch(w2, QStringLiteral("random"), 200));
    QCOMPARE(panel->runCount(), 2);
    QCOMPARE(panel->runInfo(1).variant, r.variant);
}

void TestMainWindow::whatIfIsKeptWhenTheScenarioChanges()
{
    MainWindow w;
    auto* batch = w.planView()->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
    QVERIFY(batch);
    batch->setValue(batch->value() / 2);
    QVERIFY(w.planView()->currentTitle().endsWith(QStringLiteral("what-if")));
    const Plan whatIf = w.planView()->currentPlan();
    w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"))->setValue(1000);
    bool kept = false;
    for (const ui::NamedPlan& p : w.compareView()->candidates())
        kept = kept || (p.name.startsWith(QStringLiteral("What-if kept")) && p.plan == whatIf);
    QVERIFY(kept);
    QVERIFY2(w.statusText().contains(QStringLiteral("What-if kept")), qPrintable(w.statusText()));
}

// The screenshots of docs/window.md, regenerated with
//   SHARDLAB_DOC_SHOTS=docs/images build/tests/ui/tst_main_window docScreenshots
// (skipped otherwise). Real window, real searches: two variants (NVLink 450 and 900 GB/s).
void TestMainWindow::docScreenshots()
{
    const QString dir = qEnvironmentVariable("SHARDLAB_DOC_SHOTS");
    if (dir.isEmpty())
        QSKIP("set SHARDLAB_DOC_SHOTS=DIR to write the documentation's screenshots");
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 3000));
    w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_gb_per_s"))->setValue(900);
    QVERIFY(runSearch(w, QStringLiteral("genetic"), 3000));
    w.searchPanel()->renameRun(0, QStringLiteral("anneal, NVLink 450"));
    w.searchPanel()->renameRun(1, QStringLiteral("genetic, NVLink 900"));
    QTest::qWait(300);
    auto shoot = [&](const QString& tab, const QString& file) {
        QVERIFY(w.showTab(tab));
        QTest::qWait(300);
        QString error;
        QVERIFY2(ui::saveScreenshot(&w, dir + QLatin1Char('/') + file, &error), qPrintable(error));
    };
    shoot(QStringLiteral("search"), QStringLiteral("window-runs.png"));
    QVERIFY(w.compareView()->compare(QStringLiteral("Best of genetic, NVLink 900 [V2]"), QStringLiteral("Megatron recipe")));
    shoot(QStringLiteral("compare"), QStringLiteral("window-compare.png"));
    w.planView()->showPlan(QStringLiteral("Best of genetic, NVLink 900"), w.searchPanel()->runInfo(1).best);
    shoot(QStringLiteral("topology"), QStringLiteral("window-topology.png"));
    QString error;
    QVERIFY(ui::saveScreenshot(w.searchPanel()->heatmap(), dir + QStringLiteral("/window-heatmap.png"), &error));
    // The larger cluster: the topology of a 256-GPU mixture of experts.
    w.setScenario(scenarioPreset("deepseek-v3-256gpu").value);
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 3000));
    w.topologyView()->setColourBy(ui::TopologyView::GroupKind::Expert);
    shoot(QStringLiteral("topology"), QStringLiteral("window-topology-moe.png"));
    w.resize(1024, 700);
    shoot(QStringLiteral("search"), QStringLiteral("window-1024x700.png"));
}

// With TP 1 every sharding of an operator is the same computation on one GPU: the heatmap
// must mark the options the best plan did not pick as equivalent, not leave a frame that
// reads "chosen" on one of them only.
void TestMainWindow::heatmapShowsEquivalentsOfATp1Plan()
{
    Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    s.workload.tpotSloMs = 10000; // the point is the sharding, not the limits
    s.workload.ttftSloMs = 1e6;
    const Simulator sim(s);
    Plan p = megatronPlan(sim).plan;
    p.tensorParallel = 1;
    p.pipelineParallel = 8;
    p.dataParallel = 1;
    p.microBatches = 8;
    p.batch = 64;
    const SimResult r = sim.evaluate(p);
    QVERIFY2(r.valid, "the TP 1 plan must be valid for this test");
    ui::SearchPanel panel;
    panel.setScenario(s);
    panel.beginRun(QStringLiteral("synthetic"));
    ui::JobResult job;
    job.outcome.found = true;
    job.outcome.best = p;
    job.outcome.bestResult = r;
    job.outcome.calls = 1;
    ui::EliteEntry e;
    e.plan = p;
    e.valid = true;
    e.tokensPerSPerGpu = r.tokensPerSPerGpu;
    job.elites = {e};
    panel.finishRun(job);
    int equivalents = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o) {
            if (o == p.option(id))
                continue;
            Plan q = p;
            q.sharding[i] = std::uint8_t(o);
            const SimResult rq = sim.evaluate(q);
            const bool same = rq.valid && rq.structureChecks == 0
                && std::fabs(rq.tokensPerSPerGpu - r.tokensPerSPerGpu) <= 1e-9 * r.tokensPerSPerGpu;
            QCOMPARE(panel.heatmap()->isEquivalent(id, o), same);
            equivalents += same;
        }
    }
    QVERIFY2(equivalents > 0, "a TP 1 plan has options that change nothing");
    QVERIFY(panel.heatmap()->toolTipAt(panel.heatmap()->cellRect(1, p.option(OpId::AttnNorm) == 0 ? 1 : 0).center())
                .contains(QStringLiteral("Equivalent")));
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
