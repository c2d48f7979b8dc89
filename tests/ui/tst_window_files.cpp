// The main window's files: scenarios opened, saved and protected, kernel profiles, plan
// and launch-config exports (evaluated again through shardlab-cli), failed writes that
// keep the old file, the restored session, undo of scenario edits.
#include <QtTest>

#include <QComboBox>
#include <QMenuBar>
#include <QToolBar>

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
#include "help_menu.h"
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
#include <QProgressBar>
#include "sim/simulator.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

class TestWindowFiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void exportedPlanEvaluatesThroughCli();
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
    void exportedPlanOfAnEditedPresetEvaluatesAlone();
    void undoRedoScenarioEdits();
    void menusHaveUniqueMnemonicsHelpAndWords();
    void invalidPlanIsNotExportedAsALaunchConfig();
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

void TestWindowFiles::init()
{
    startFreshSession();
}

void TestWindowFiles::exportedPlanEvaluatesThroughCli()
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

void TestWindowFiles::badScenarioFileShowsErrorAndKeepsCurrent()
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
void TestWindowFiles::loadProfileAppliesKnobsAndUndoes()
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

void TestWindowFiles::openRefusesFifoAtOnce()
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

void TestWindowFiles::failedExportsKeepOldFiles_data()
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
void TestWindowFiles::failedExportsKeepOldFiles()
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

void TestWindowFiles::scriptedRunWithFailingWritesExitsNonZero_data()
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
void TestWindowFiles::scriptedRunWithFailingWritesExitsNonZero()
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
void TestWindowFiles::invalidScenarioSavesAndReopensAsDraft()
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
    QCOMPARE(w2.scenario().model.layers, 0); // the draft is still there, and the message says so
    const QString kept = QStringLiteral("Not opened: the editor still shows %1.").arg(QString::fromStdString(w2.scenario().name));
    QVERIFY2(w2.statusText().contains(kept), qPrintable(w2.statusText()));

    // Values that only disagree with each other (every one in range) open as a draft too.
    Scenario inconsistent = scenarioPreset("llama3-70b-8gpu").value;
    inconsistent.model.kvHeads = 7; // 64 heads do not group over 7
    const QString kv = dir.filePath(QStringLiteral("kv.json"));
    QVERIFY(writeBytes(kv, QByteArray::fromStdString(scenarioToJson(inconsistent))));
    QVERIFY2(w2.openScenarioFile(kv), qPrintable(w2.statusText()));
    QCOMPARE(w2.scenario().model.kvHeads, 7);
    QVERIFY(!w2.scenarioEditor()->isRunnable());

    // So does a constraint the cluster cannot meet (pipeline parallel 3 on 8 GPUs).
    Scenario constrained = scenarioPreset("llama3-70b-8gpu").value;
    constrained.constraints.pipelineParallel = {3};
    const QString pp = dir.filePath(QStringLiteral("pp3.json"));
    QVERIFY(writeBytes(pp, QByteArray::fromStdString(scenarioToJson(constrained))));
    QVERIFY2(w2.openScenarioFile(pp), qPrintable(w2.statusText()));
    QCOMPARE(w2.scenario().constraints.pipelineParallel, std::vector<int>{3});
    QVERIFY(!w2.scenarioEditor()->isRunnable());
}

void TestWindowFiles::shippedAndReadOnlyFilesAreProtected()
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

void TestWindowFiles::titleMarksUnsavedChanges()
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

void TestWindowFiles::failedRestoreSaysSo()
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

// NVLink raised to 900 GB/s on the shipped preset: the exported plan carries the edited
// scenario under a name that is not the preset's, and evaluates alone to the window's figure.
void TestWindowFiles::exportedPlanOfAnEditedPresetEvaluatesAlone()
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

void TestWindowFiles::undoRedoScenarioEdits()
{
    MainWindow w;
    auto* nodes = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("cluster.nodes"));
    auto* output = w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"));
    const int outputBefore = output->value();
    nodes->setValue(2);
    // Another field: a separate step (edits merge only when they change the same fields).
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

namespace {
QChar mnemonic(const QString& text)
{
    const int i = text.indexOf(QLatin1Char('&'));
    return i >= 0 && i + 1 < text.size() ? text.at(i + 1).toLower() : QChar();
}
} // namespace

// Every menu's items have distinct mnemonics (Alt+F, L opens one item), there is a Help
// menu with the version, the algorithm choice says what it does, and undo steps are
// named in the editor's words, not JSON paths.
void TestWindowFiles::menusHaveUniqueMnemonicsHelpAndWords()
{
    MainWindow w;
    QStringList titles;
    for (QAction* top : w.menuBar()->actions()) {
        titles << top->text();
        QMenu* menu = top->menu();
        QVERIFY(menu);
        QSet<QChar> seen;
        for (QAction* a : menu->actions()) {
            if (a->isSeparator())
                continue;
            const QChar m = mnemonic(a->text());
            QVERIFY2(!m.isNull(), qPrintable(a->text()));
            QVERIFY2(!seen.contains(m), qPrintable(top->text() + QStringLiteral(": ") + a->text()));
            seen.insert(m);
        }
    }
    QVERIFY2(titles.contains(QStringLiteral("&Help")), qPrintable(titles.join(QLatin1Char(' '))));
    QVERIFY(ui::aboutText().contains(QStringLiteral(SHARDLAB_VERSION_TEXT)));
    QVERIFY(ui::howToReadText().contains(QStringLiteral("heatmap")));

    auto* algo = w.findChild<QToolBar*>(QStringLiteral("SearchToolbar"))->findChild<QComboBox*>();
    QVERIFY(algo);
    QVERIFY(!algo->toolTip().isEmpty());
    for (int i = 0; i < algo->count(); ++i)
        QVERIFY2(!algo->itemData(i, Qt::ToolTipRole).toString().isEmpty(), qPrintable(algo->itemText(i)));

    auto* tpot = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("workload.tpot_slo_ms"));
    tpot->setValue(tpot->value() + 5);
    QCOMPARE(w.undoStack()->undoText(), QStringLiteral("Edit TPOT SLO"));
    auto* latency = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_latency_us"));
    latency->setValue(latency->value() + 1);
    QVERIFY2(!w.undoStack()->undoText().contains(QLatin1Char('.')) && !w.undoStack()->undoText().contains(QLatin1Char('_')),
             qPrintable(w.undoStack()->undoText()));
    QVERIFY2(w.undoStack()->undoText().startsWith(QStringLiteral("Edit Latency")), qPrintable(w.undoStack()->undoText()));
}

// A what-if past the scenario's limits (a batch whose KV cache cannot fit) is refused as
// a launch config, with the reason, and no file is written; a valid plan is exported.
void TestWindowFiles::invalidPlanIsNotExportedAsALaunchConfig()
{
    MainWindow w;
    Scenario runnable = w.scenario();
    runnable.workload.engine = CollectiveEngine::TrtLlm;
    runnable.workload.runnable = true;
    w.setScenario(runnable);
    QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
    Plan bad = w.planView()->currentPlan();
    bad.batch *= 1000;
    w.planView()->showPlan(QStringLiteral("What-if"), bad);
    QVERIFY(!w.planView()->currentResult().valid);
    QTemporaryDir dir;
    const QString launch = dir.filePath(QStringLiteral("launch.sh"));
    QString error;
    QVERIFY(!w.exportLaunchConfig(launch, Engine::TrtLlm, {}, &error));
    QVERIFY2(error.contains(QStringLiteral("not valid")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("memory"), Qt::CaseInsensitive) || error.contains(QStringLiteral("TPOT")),
             qPrintable(error));
    QVERIFY(!QFile::exists(launch));
    w.planView()->showPlan(QStringLiteral("Best"), w.lastResult()->outcome.best);
    QVERIFY2(w.exportLaunchConfig(launch, Engine::TrtLlm, {}, &error), qPrintable(error));
    QVERIFY(QFile::exists(launch));
}

QTEST_MAIN(TestWindowFiles)
#include "tst_window_files.moc"
