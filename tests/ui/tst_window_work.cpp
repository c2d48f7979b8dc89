// A user's work in the window is never silently replaced: unsaved edits stay marked when an
// open is cancelled, save dialogs ask about the file really written and about the files
// written beside it, a what-if shown over is kept, clearing the runs is undoable, and the
// scripted window keeps restored edits aside and never writes over its own input.
#include <QtTest>

#include <QAbstractButton>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>

#include <functional>

#include "window_fixtures.h"
#include "document_controller.h"
#include "export_controller.h"
#include "file_export.h"
#include "io/scenario_json.h"
#include "main_window.h"
#include "plan_view.h"
#include "save_dialog.h"
#include "search_panel.h"
#include "session_store.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

namespace {

// Answers the modal widgets that open while the test waits: each step is called with the
// active modal widget once one is up, and the next step waits for the next one. Runs from
// a timer, so that it also answers a modal opened inside another modal's event loop.
class ModalAnswers : public QObject {
public:
    using Step = std::function<void(QWidget*)>;
    explicit ModalAnswers(std::vector<Step> steps) : m_steps(std::move(steps))
    {
        m_timer.setInterval(20);
        connect(&m_timer, &QTimer::timeout, this, [this] { poll(); });
        m_timer.start();
    }
    bool allAnswered() const { return m_next == m_steps.size(); }
    QStringList seen; // each answered modal's text (a message box's) or class name

private:
    void poll()
    {
        QWidget* modal = QApplication::activeModalWidget();
        if (!modal || modal == m_last || m_next >= m_steps.size())
            return;
        m_last = modal;
        auto* box = qobject_cast<QMessageBox*>(modal);
        seen << (box ? box->text() : QString::fromLatin1(modal->metaObject()->className()));
        m_steps[m_next++](modal);
    }
    std::vector<Step> m_steps;
    size_t m_next = 0;
    QWidget* m_last = nullptr;
    QTimer m_timer;
};

ModalAnswers::Step clickButton(QMessageBox::StandardButton which)
{
    return [which](QWidget* w) {
        auto* box = qobject_cast<QMessageBox*>(w);
        QVERIFY(box && box->button(which));
        box->button(which)->click();
    };
}

ModalAnswers::Step rejectDialog()
{
    return [](QWidget* w) { QMetaObject::invokeMethod(w, "reject", Qt::QueuedConnection); };
}

// Types `name` in a file dialog and presses its Save: queued, so that a question the dialog
// asks next runs in its own event loop, not inside this step.
ModalAnswers::Step typeAndAccept(const QString& name)
{
    return [name](QWidget* w) {
        auto* dialog = qobject_cast<QFileDialog*>(w);
        QVERIFY(dialog);
        // As typed: selectFile leaves the name field alone while it has the focus.
        auto* edit = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
        QVERIFY(edit);
        edit->setText(name);
        QMetaObject::invokeMethod(dialog, "accept", Qt::QueuedConnection);
    };
}

QAction* menuAction(MainWindow& w, const QString& text)
{
    for (QAction* menu : w.menuBar()->actions())
        for (QAction* a : menu->menu()->actions())
            if (a->text() == text)
                return a;
    return nullptr;
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

class TestWindowWork : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }
    void discardThenCancelledOpenKeepsEditsUnsaved();
    void saveDialogAsksAboutTheFileWritten();
    void filesBesideTheNamedOneAreAskedAbout();
    void launchOptionsFileIsAskedAbout();
    void aSearchShownOverAWhatIfKeepsIt();
    void twoPoolsWhatIfKeepsBothPools();
    void clearingRunsIsOneUndoStep();
    void scriptedScenarioKeepsRestoredEditsAside();
    void scriptedOutputsNeverReplaceTheScenario();
    void scriptedRunWritesItsSessionOnQuit();
};

// "Discard" then Cancel in the open dialog: nothing replaced the edits, so they stay
// marked (before, the window then closed without asking and the next start lost them).
void TestWindowWork::discardThenCancelledOpenKeepsEditsUnsaved()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    w.document()->setModified(true);
    ModalAnswers answers({clickButton(QMessageBox::Discard), rejectDialog()});
    w.document()->openDialog();
    QVERIFY(answers.allAnswered());
    QVERIFY(w.isModified());
    // Closing asks again; Discard there is final.
    ModalAnswers atClose({clickButton(QMessageBox::Discard)});
    QVERIFY(w.close());
    QVERIFY(atClose.allAnswered());
    QVERIFY(!w.isModified());
}

// A name typed without ".json" over an existing NAME.json: the dialog asks about NAME.json
// (Qt's static dialog asked about NAME, which does not exist, and the caller then added the
// extension and replaced NAME.json unasked).
void TestWindowWork::saveDialogAsksAboutTheFileWritten()
{
    QTemporaryDir dir;
    const QString existing = dir.filePath(QStringLiteral("existing.json"));
    QVERIFY(writeBytes(existing, "precious"));
    QString chosen = QStringLiteral("not asked");
    {
        ModalAnswers answers({typeAndAccept(QStringLiteral("existing")), clickButton(QMessageBox::No), rejectDialog()});
        chosen = ui::askSaveFileName(nullptr, QStringLiteral("Save"), dir.filePath(QStringLiteral("new.json")),
                                     QStringLiteral("ShardLab scenario (*.json)"));
        QVERIFY2(answers.allAnswered(), qPrintable(answers.seen.join(QStringLiteral(" | "))));
        QVERIFY2(answers.seen.at(1).contains(QStringLiteral("existing.json")), qPrintable(answers.seen.at(1)));
    }
    QVERIFY(chosen.isEmpty()); // declined, then cancelled
    ModalAnswers answers({typeAndAccept(QStringLiteral("fresh"))});
    chosen = ui::askSaveFileName(nullptr, QStringLiteral("Save"), dir.filePath(QStringLiteral("new.json")),
                                 QStringLiteral("ShardLab scenario (*.json)"));
    QCOMPARE(QFileInfo(chosen).fileName(), QStringLiteral("fresh.json"));
    QCOMPARE(fileBytes(existing), QByteArray("precious"));
}

// Export plots names "figs.png" and writes figs-throughput.png and three more: those that
// exist are asked about, once.
void TestWindowWork::filesBesideTheNamedOneAreAskedAbout()
{
    QTemporaryDir dir;
    const QStringList parts = ui::ExportController::plotPaths(dir.filePath(QStringLiteral("figs.png")));
    QCOMPARE(parts.size(), 4);
    QVERIFY(parts[0].endsWith(QStringLiteral("figs-throughput.png")));
    QVERIFY(ui::confirmReplacing(nullptr, parts)); // none exists: nothing to ask
    QVERIFY(writeBytes(parts[2], "precious"));
    ModalAnswers answers({clickButton(QMessageBox::Cancel)});
    QVERIFY(!ui::confirmReplacing(nullptr, parts));
    QVERIFY(answers.allAnswered());
    QVERIFY2(answers.seen.front().contains(QStringLiteral("figs-memory.png")), qPrintable(answers.seen.front()));
}

// Export launch config writes TensorRT-LLM's options file beside the script: an existing one
// is asked about, and declining writes nothing (no error shown); accepting writes both.
void TestWindowWork::launchOptionsFileIsAskedAbout()
{
    QTemporaryDir dir;
    MainWindow w;
    const QString launch = dir.filePath(QStringLiteral("launch.sh"));
    const QString options = dir.filePath(QStringLiteral("launch.extra_llm_api_options.yaml"));
    QVERIFY(writeBytes(options, "precious"));
    QString error = QStringLiteral("unset");
    {
        ModalAnswers answers({clickButton(QMessageBox::Cancel)});
        QVERIFY(!w.exports()->exportLaunchConfig(launch, Engine::TrtLlm, {}, &error, nullptr, false, true));
        QVERIFY(answers.allAnswered());
        QVERIFY2(answers.seen.front().contains(QStringLiteral("launch.extra_llm_api_options.yaml")),
                 qPrintable(answers.seen.front()));
    }
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(fileBytes(options), QByteArray("precious"));
    QVERIFY(!QFile::exists(launch));
    {
        ModalAnswers answers({clickButton(QMessageBox::Yes)});
        QVERIFY2(w.exports()->exportLaunchConfig(launch, Engine::TrtLlm, {}, &error, nullptr, false, true),
                 qPrintable(error));
        QVERIFY(answers.allAnswered());
    }
    QVERIFY(fileBytes(options) != QByteArray("precious"));
    QVERIFY(QFile::exists(launch));
}

// A search's answer shown over a what-if keeps the what-if in the Compare tab and says so.
void TestWindowWork::aSearchShownOverAWhatIfKeepsIt()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    auto* batch = w.planView()->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
    QVERIFY(batch);
    batch->setValue(batch->value() / 2);
    QVERIFY(w.planView()->currentTitle().endsWith(QStringLiteral(" — what-if")));
    QVERIFY(runSearch(w, QStringLiteral("megatron"), 100));
    QVERIFY2(w.statusText().contains(QStringLiteral("The what-if plan was kept as")), qPrintable(w.statusText()));
    QVERIFY(!w.planView()->currentTitle().endsWith(QStringLiteral(" — what-if")));
}

// A what-if of one pool of a disaggregated deployment, then the other pool on show, then a
// search's answer: both pools are kept (the deployment's title carries the mark, not the
// pool's on show).
void TestWindowWork::twoPoolsWhatIfKeepsBothPools()
{
    MainWindow w;
    const auto s = loadScenarioFile(SHARDLAB_RESOURCES "/examples/disaggregation/llama3-70b-8gpu-8000-1000-disaggregated.json");
    QVERIFY(s.ok());
    w.setScenario(s.value);
    QVERIFY(w.planView()->isDisaggregated());
    w.planView()->selectPool(PoolRole::Prefill);
    auto* batch = w.planView()->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
    QVERIFY(batch);
    batch->setValue(batch->value() + 1);
    w.planView()->selectPool(PoolRole::Decode);
    QVERIFY(runSearch(w, QStringLiteral("megatron"), 100));
    QVERIFY2(w.statusText().contains(QStringLiteral("The what-if plan was kept as")), qPrintable(w.statusText()));
}

// Search > Clear runs takes every run out in one step that Edit > Undo puts back.
void TestWindowWork::clearingRunsIsOneUndoStep()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(runSearch(w, QStringLiteral("megatron"), 100));
    QVERIFY(runSearch(w, QStringLiteral("random"), 50));
    QCOMPARE(w.searchPanel()->runCount(), 2);
    QAction* clear = menuAction(w, QStringLiteral("Clear &runs"));
    QVERIFY(clear);
    clear->trigger();
    QCOMPARE(w.searchPanel()->runCount(), 0);
    w.undoStack()->undo();
    QCOMPARE(w.searchPanel()->runCount(), 2);
}

namespace {
// The window started as a script, in its own session folder under `dir`.
QProcess* startGui(QTemporaryDir& dir, const QStringList& args, QObject* parent)
{
    auto* gui = new QProcess(parent);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), dir.filePath(QStringLiteral("data")));
    gui->setProcessEnvironment(env);
    gui->start(QStringLiteral(SHARDLAB_GUI), args);
    return gui;
}
} // namespace

// Unsaved edits restored from the last session, then --scenario: the edits go to a file of
// their own first, named on stderr (before, they were replaced and the draft rewritten).
void TestWindowWork::scriptedScenarioKeepsRestoredEditsAside()
{
    QTemporaryDir dir;
    const QString session = dir.filePath(QStringLiteral("data/ShardLab/ShardLab"));
    QVERIFY(QDir().mkpath(session));
    Scenario edited = preset("llama3-70b-8gpu");
    edited.name = "my edits";
    edited.model.layers = 60;
    const ui::SessionStore::Draft draft{QString(), true, QByteArray::fromStdString(scenarioToJson(edited)), {}};
    QVERIFY(writeBytes(session + QStringLiteral("/draft.json"), ui::SessionStore::draftJson(draft)));
    const QStringList pattern{QStringLiteral("unsaved-edits-*.json")};
    // A call refused for its options changes nothing.
    QProcess* refused = startGui(dir, {QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"),
                                       QStringLiteral("--algo"), QStringLiteral("nonsense"),
                                       QStringLiteral("--quit-when-done")}, this);
    QVERIFY(refused->waitForFinished(120000));
    QCOMPARE(refused->exitCode(), 2);
    QVERIFY(QDir(session).entryList(pattern).isEmpty());
    const QStringList args{QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"), QStringLiteral("--quit-when-done")};
    QProcess* gui = startGui(dir, args, this);
    QVERIFY(gui->waitForFinished(120000));
    const QString err = QString::fromUtf8(gui->readAllStandardError());
    QCOMPARE(gui->exitCode(), 0);
    const QStringList kept = QDir(session).entryList(pattern);
    QCOMPARE(kept.size(), 1);
    QVERIFY2(err.contains(QStringLiteral("were kept in ") + session + QLatin1Char('/') + kept.front()), qPrintable(err));
    const auto back = loadScenarioFile(ui::localPath(session + QLatin1Char('/') + kept.front()));
    QVERIFY(back.ok());
    QCOMPARE(back.value.model.layers, 60);
    // Kept once: the next start finds no unsaved edits to keep.
    QProcess* again = startGui(dir, args, this);
    QVERIFY(again->waitForFinished(120000));
    QCOMPARE(again->exitCode(), 0);
    QVERIFY(!QString::fromUtf8(again->readAllStandardError()).contains(QStringLiteral("were kept in")));
    QCOMPARE(QDir(session).entryList(pattern).size(), 1);
}

// --export (and the other outputs) naming the scenario file the window opened is refused,
// as the CLI refuses --out over its input; out-of-range --budget and --seed are refused.
void TestWindowWork::scriptedOutputsNeverReplaceTheScenario()
{
    QTemporaryDir dir;
    const QString scenario = dir.filePath(QStringLiteral("mine.json"));
    QVERIFY(QFile::copy(QStringLiteral(SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json"), scenario));
    const QByteArray before = fileBytes(scenario);
    for (const QString& option : {QStringLiteral("--export"), QStringLiteral("--screenshot")}) {
        QProcess* gui = startGui(dir, {QStringLiteral("--scenario"), scenario, QStringLiteral("--algo"),
                                       QStringLiteral("megatron"), QStringLiteral("--autostart"),
                                       QStringLiteral("--quit-when-done"), option, scenario}, this);
        QVERIFY(gui->waitForFinished(120000));
        const QString err = QString::fromUtf8(gui->readAllStandardError());
        QCOMPARE(gui->exitCode(), 2);
        QVERIFY2(err.contains(option + QStringLiteral(": ") + scenario + QStringLiteral(" is the input")), qPrintable(err));
        QCOMPARE(fileBytes(scenario), before);
    }
    const std::pair<QString, QString> outOfRange[] = {{QStringLiteral("--budget"), QStringLiteral("0")},
                                                      {QStringLiteral("--budget"), QStringLiteral("200000000")},
                                                      {QStringLiteral("--seed"), QStringLiteral("-1")}};
    for (const auto& [flag, value] : outOfRange) {
        QProcess* gui = startGui(dir, {QStringLiteral("--scenario"), scenario, flag, value,
                                       QStringLiteral("--quit-when-done")}, this);
        QVERIFY(gui->waitForFinished(120000));
        const QString err = QString::fromUtf8(gui->readAllStandardError());
        QCOMPARE(gui->exitCode(), 2);
        QVERIFY2(err.contains(flag + QStringLiteral(": must be an integer between")), qPrintable(err));
    }
    // The Pareto tab runs no search: an export of a search's plan is refused, not skipped.
    QProcess* pareto = startGui(dir, {QStringLiteral("--scenario"), scenario, QStringLiteral("--tab"),
                                      QStringLiteral("pareto"), QStringLiteral("--autostart"),
                                      QStringLiteral("--quit-when-done"), QStringLiteral("--export"),
                                      dir.filePath(QStringLiteral("front.json"))}, this);
    QVERIFY(pareto->waitForFinished(120000));
    QCOMPARE(pareto->exitCode(), 2);
    QVERIFY2(QString::fromUtf8(pareto->readAllStandardError()).contains(QStringLiteral("--tab pareto computes the front")),
             "no refusal");
    // Help needs no display: printed with no platform to open a window on.
    auto* help = new QProcess(this);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    help->setProcessEnvironment(env);
    help->start(QStringLiteral(SHARDLAB_GUI), {QStringLiteral("--help")});
    QVERIFY(help->waitForFinished(60000));
    QCOMPARE(help->exitStatus(), QProcess::NormalExit);
    QCOMPARE(help->exitCode(), 0);
    QVERIFY(QString::fromUtf8(help->readAllStandardOutput()).contains(QStringLiteral("--scenario")));
}

// A scripted run that quits when done (not by closing the window) writes its session as
// closing does: the run is in runs.json at once, so the next scripted run with the same
// session folders shows it beside its own.
void TestWindowWork::scriptedRunWritesItsSessionOnQuit()
{
    QTemporaryDir dir;
    QProcess* gui = startGui(dir, {QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"),
                                   QStringLiteral("--algo"), QStringLiteral("random"), QStringLiteral("--budget"),
                                   QStringLiteral("200"), QStringLiteral("--autostart"),
                                   QStringLiteral("--quit-when-done")}, this);
    QVERIFY(gui->waitForFinished(120000));
    const QString err = QString::fromUtf8(gui->readAllStandardError());
    QVERIFY2(gui->exitStatus() == QProcess::NormalExit && gui->exitCode() == 0, qPrintable(err));
    QDirIterator it(dir.path(), {QStringLiteral("runs.json")}, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    QVERIFY2(it.hasNext(), "no runs.json in the scripted run's session folders");
    const QJsonObject runs = QJsonDocument::fromJson(fileBytes(it.next())).object();
    QCOMPARE(runs.value(QStringLiteral("runs")).toArray().size(), 1);
}

QTEST_MAIN(TestWindowWork)
#include "tst_window_work.moc"
