// shardlab: the GUI front end. Scripted use (demos, tests):
//   shardlab --scenario S.json --algo ppo --seed 0 --autostart --screenshot out.png
//            --export plan.json [--export-launch launch.sh --engine vllm] --quit-when-done
#include <QApplication>
#include <QCommandLineParser>
#include <QTextStream>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "file_export.h"
#include "io/output_apart.h"
#include "io/presets.h"
#include "runner/load_front.h"
#include "main_window.h"
#include "pareto_view.h"
#include "plan_view.h"
#include "search_panel.h"
#include "search_toolbar.h"
#include "session_store.h"

namespace {

struct Script {
    bool autostart = false;
    bool quitWhenDone = false;
    QString screenshot;
    QString exportPlan;
    QString exportLaunch;
    shardlab::Engine engine = shardlab::Engine::Vllm;
    QString exportPlots;
    int screenshotDuringMs = -1; // >= 0: screenshot mid-search instead of at the end
    bool loadFront = false;      // --tab pareto: the front under load after the others
    bool failed = false;         // a mid-search screenshot could not be written
    bool duringTaken = false;    // the mid-search screenshot was taken (or failed)
};

int finishScript(shardlab::ui::MainWindow& w, const Script& s, bool found)
{
    int code = found && !s.failed ? 0 : 1;
    QTextStream err(stderr);
    if (!found)
        err << "shardlab: the search found no valid plan: " << w.statusText() << "\n";
    if (!s.exportPlan.isEmpty() && found) {
        QString error;
        if (!w.exportPlan(s.exportPlan, &error)) {
            err << "shardlab: --export: " << error << "\n";
            code = 1;
        }
    }
    if (!s.exportLaunch.isEmpty() && found) {
        QString error;
        QStringList warnings;
        if (!w.exportLaunchConfig(s.exportLaunch, s.engine, {}, &error, &warnings)) {
            err << "shardlab: --export-launch: " << error << "\n";
            code = 1;
        }
        for (const QString& warning : warnings)
            err << "shardlab: --export-launch: warning: " << warning << "\n";
    }
    QString error;
    if (!s.exportPlots.isEmpty() && !w.searchPanel()->exportCurve(s.exportPlots, &error)) {
        err << "shardlab: --export-plot: " << error << "\n";
        code = 1;
    }
    // A search that ends before --screenshot-during's time still leaves its screenshot: of
    // the finished search, and said so.
    const bool late = s.screenshotDuringMs >= 0 && !s.duringTaken;
    if (late)
        err << "shardlab: --screenshot-during: the search ended before " << s.screenshotDuringMs
            << " ms; the screenshot shows it finished\n";
    if (!s.screenshot.isEmpty() && (s.screenshotDuringMs < 0 || late)
        && !shardlab::ui::saveScreenshot(&w, s.screenshot, &error)) {
        err << "shardlab: --screenshot: " << error << "\n";
        code = 1;
    }
    QTextStream(stdout) << "longest event-loop stall during the search: "
                        << QString::number(w.longestStallMs(), 'f', 1) << " ms\n";
    return code;
}

// An integer option within [lo, hi]: false, with the flag, the range and the value said,
// otherwise (a spin box would clamp it silently).
bool intOption(const QCommandLineParser& parser, const QCommandLineOption& opt, long long lo, long long hi, int& out,
               QTextStream& err)
{
    bool ok = false;
    const long long v = parser.value(opt).toLongLong(&ok);
    if (!ok || v < lo || v > hi) {
        err << "shardlab: --" << opt.names().front() << ": must be an integer between " << lo << " and " << hi
            << " (got '" << parser.value(opt) << "')\n";
        return false;
    }
    out = int(v);
    return true;
}

// Unsaved edits restored from the last session, about to be replaced by --scenario: kept
// in a file of their own first, and said (on stderr and in the window). False when they
// could not be kept: then nothing replaces them. `note` is what to tell the user ("" when
// there were none).
bool setAsideRestoredEdits(shardlab::ui::MainWindow& window, QString& note, QTextStream& err)
{
    QString path, error;
    if (!window.document()->setAsideUnsavedEdits(shardlab::ui::SessionStore::directory(), &path, &error)) {
        err << "shardlab: --scenario: the unsaved edits of the last session could not be kept aside (" << error
            << "); not replacing them\n";
        return false;
    }
    if (!path.isEmpty()) {
        // Kept in their own file: the draft no longer marks them, so the next start (a short
        // scripted run writes no session otherwise) sets nothing aside again.
        window.document()->setModified(false);
        window.saveSessionNow();
        note = QStringLiteral("The unsaved edits of the last session were kept in %1 (File > Open recent opens "
                              "them).").arg(path);
        err << "shardlab: " << note << "\n";
    }
    return true;
}

// The scripted outputs never replace the scenario file the window opened, as the CLI's
// --out never replaces its input, nor a plan or script file ShardLab did not write
// (io/output_apart.h).
bool outputsApartFromScenario(const QCommandLineParser& parser, const QCommandLineOption& scenario,
                              const std::vector<const QCommandLineOption*>& outputs, QTextStream& err)
{
    std::vector<std::string> inputs;
    if (parser.isSet(scenario))
        inputs.push_back(parser.value(scenario).toStdString());
    for (const QCommandLineOption* o : outputs) {
        std::string error;
        const std::string flag = "--" + o->names().front().toStdString();
        // The plan and launch outputs are ShardLab's text files: one that holds anything else
        // is a user's, never replaced (images carry no such mark and are replaced).
        const bool text = flag == "--export" || flag == "--export-launch";
        const shardlab::OutputKind kind =
            flag == "--export" ? shardlab::OutputKind::Plan : shardlab::OutputKind::LaunchScript;
        if (parser.isSet(*o)
            && (!shardlab::outputApartFrom(inputs, flag, parser.value(*o).toStdString(), error)
                || (text && !shardlab::replaceableOutput(flag, parser.value(*o).toStdString(), kind, error)))) {
            err << "shardlab: " << QString::fromStdString(error) << "\n";
            return false;
        }
    }
    return true;
}

} // namespace

// The Pareto tab scripted: compute its front, sweep and sizing, then take the screenshot
// and quit if asked.
void runParetoScript(shardlab::ui::MainWindow& window, Script& script, QTextStream& err)
{
    // The tab shows the scenario's front, a sweep and a sizing: compute them, then take
    // the screenshot.
    QObject::connect(window.paretoView(), &shardlab::ui::ParetoView::allFinished, &window,
                     [&window, &script, &err](bool ok) {
        QTimer::singleShot(300, &window, [&window, &script, &err, ok] {
            QString error;
            const bool shot = script.screenshot.isEmpty()
                || shardlab::ui::saveScreenshot(&window, script.screenshot, &error);
            if (!shot)
                err << "shardlab: --screenshot: " << error << "\n";
            if (!ok)
                err << "shardlab: --tab pareto: " << window.paretoView()->statusText() << "\n";
            else
                QTextStream(stdout) << "Pareto front: " << window.paretoView()->front().points.size()
                                    << " points\n";
            if (script.quitWhenDone)
                QApplication::exit(shot && ok ? 0 : 1);
        });
    });
    QTimer::singleShot(200, &window, [&window, &script, &err] {
        if (!window.paretoView()->computeAll(script.loadFront)) {
            err << "shardlab: --tab pareto: " << window.paretoView()->statusText() << "\n";
            QApplication::exit(1);
        }
    });
}

namespace {
// Whether the command line asks only for help, which needs no window system.
bool asksForHelp(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const QLatin1String a(argv[i]);
        if (a == QLatin1String("-h") || a == QLatin1String("--help") || a == QLatin1String("--help-all")
            || a == QLatin1String("-?"))
            return true;
    }
    return false;
}
} // namespace

int main(int argc, char** argv)
{
    // Help is printed by a core application, which needs no display; the window's is a
    // QApplication.
    const std::unique_ptr<QCoreApplication> app = asksForHelp(argc, argv)
        ? std::make_unique<QCoreApplication>(argc, argv)
        : std::make_unique<QApplication>(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ShardLab"));
    QApplication::setOrganizationName(QStringLiteral("ShardLab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Find how to shard LLM inference across a GPU cluster."));
    parser.addHelpOption();
    const QCommandLineOption scenarioOpt(QStringLiteral("scenario"), QStringLiteral("Scenario file to open, or a shipped scenario's name (shardlab-cli presets)."),
                                         QStringLiteral("S.json"));
    const QCommandLineOption algoOpt(QStringLiteral("algo"), QStringLiteral("Search algorithm."), QStringLiteral("NAME"));
    const QCommandLineOption seedOpt(QStringLiteral("seed"), QStringLiteral("Search seed."), QStringLiteral("N"));
    const QCommandLineOption budgetOpt(QStringLiteral("budget"), QStringLiteral("Simulator calls."), QStringLiteral("N"));
    const QCommandLineOption autoOpt(QStringLiteral("autostart"), QStringLiteral("Start the search at once."));
    const QCommandLineOption shotOpt(QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window when done."),
                                     QStringLiteral("out.png"));
    const QCommandLineOption exportOpt(QStringLiteral("export"), QStringLiteral("Write the best plan as JSON when done."),
                                       QStringLiteral("plan.json"));
    const QCommandLineOption launchOpt(QStringLiteral("export-launch"),
                                       QStringLiteral("Write the best plan's launch script for --engine when done."),
                                       QStringLiteral("launch.sh"));
    const QCommandLineOption engineOpt(QStringLiteral("engine"),
                                       QStringLiteral("Engine of --export-launch: vllm, sglang or trtllm (default vllm)."),
                                       QStringLiteral("NAME"));
    const QCommandLineOption plotOpt(QStringLiteral("export-plot"),
                                     QStringLiteral("Write the throughput curve (PNG or PDF) when done."),
                                     QStringLiteral("curve.png"));
    const QCommandLineOption quitOpt(QStringLiteral("quit-when-done"),
                                     QStringLiteral("Exit when the search (or, without --autostart, the start-up) is done."));
    const QCommandLineOption duringOpt(QStringLiteral("screenshot-during"),
                                       QStringLiteral("Take the --screenshot this many ms after the start, mid-search (at the end, said on stderr, when the search ends first)."),
                                       QStringLiteral("MS"));
    const QCommandLineOption tabOpt(QStringLiteral("tab"),
                                    QStringLiteral("Tab to show: search, plan, topology, compare or pareto (pareto computes the scenario's front first)."),
                                    QStringLiteral("NAME"));
    const QCommandLineOption sizeOpt(QStringLiteral("size"),
                                     QStringLiteral("Window size for screenshots, e.g. 1024x700."), QStringLiteral("WxH"));
    const QCommandLineOption loadFrontOpt(QStringLiteral("load-front"),
                                          QStringLiteral("With --tab pareto: also the front under load at these "
                                                         "closed-loop concurrencies, e.g. 1,4,16,64."),
                                          QStringLiteral("LIST"));
    parser.addOptions({scenarioOpt, algoOpt, seedOpt, budgetOpt, autoOpt, shotOpt, exportOpt, launchOpt, engineOpt, plotOpt,
                       quitOpt, tabOpt, duringOpt, sizeOpt, loadFrontOpt});
    parser.process(*app);

    QTextStream err(stderr);
    if (!outputsApartFromScenario(parser, scenarioOpt, {&shotOpt, &exportOpt, &launchOpt, &plotOpt}, err))
        return 2;
    shardlab::ui::MainWindow window;
    if (parser.isSet(algoOpt) && !window.setAlgorithm(parser.value(algoOpt))) {
        err << "shardlab: --algo: unknown algorithm '" << parser.value(algoOpt) << "'\n";
        return 2;
    }
    bool ok = true;
    int number = 0;
    if (parser.isSet(seedOpt)) {
        if (!intOption(parser, seedOpt, 0, shardlab::ui::SearchToolbar::kMaxSeed, number, err))
            return 2;
        window.setSeed(number);
    }
    if (parser.isSet(budgetOpt)) {
        if (!intOption(parser, budgetOpt, 1, shardlab::ui::SearchToolbar::kMaxBudget, number, err))
            return 2;
        window.setBudget(number);
    }
    const bool paretoTab = parser.isSet(tabOpt) && parser.value(tabOpt) == QLatin1String("pareto");
    // The Pareto tab computes a front, not a search's answer: nothing would be exported.
    if (paretoTab && (parser.isSet(exportOpt) || parser.isSet(launchOpt) || parser.isSet(plotOpt))) {
        err << "shardlab: --export, --export-launch and --export-plot write a search's best plan; --tab pareto "
               "computes the front instead (shardlab-cli pareto --json or --csv prints it)\n";
        return 2;
    }
    if (parser.isSet(tabOpt) && !window.showTab(parser.value(tabOpt))) {
        err << "shardlab: --tab: expects search, plan, topology, compare or pareto\n";
        return 2;
    }
    if (parser.isSet(sizeOpt)) {
        const QStringList wh = parser.value(sizeOpt).split(QLatin1Char('x'));
        const int width = wh.size() == 2 ? wh[0].toInt() : 0, height = wh.size() == 2 ? wh[1].toInt() : 0;
        if (width < 200 || height < 200 || width > 16384 || height > 16384) {
            err << "shardlab: --size: expects WIDTHxHEIGHT, e.g. 1024x700\n";
            return 2;
        }
        window.resize(width, height);
    }
    window.show();

    Script script;
    script.autostart = parser.isSet(autoOpt);
    script.quitWhenDone = parser.isSet(quitOpt);
    script.screenshot = parser.value(shotOpt);
    script.exportPlan = parser.value(exportOpt);
    script.exportPlots = parser.value(plotOpt);
    script.exportLaunch = parser.value(launchOpt);
    if (parser.isSet(engineOpt) && !shardlab::engineFromName(parser.value(engineOpt).toStdString(), script.engine)) {
        err << "shardlab: --engine: unknown engine '" << parser.value(engineOpt) << "' (known: "
            << QString::fromStdString(shardlab::knownEngines()) << ")\n";
        return 2;
    }
    if (parser.isSet(loadFrontOpt)) {
        if (!paretoTab) {
            err << "shardlab: --load-front: only with --tab pareto\n";
            return 2;
        }
        std::vector<int> concurrencies;
        std::string why;
        if (!shardlab::parseConcurrencies(parser.value(loadFrontOpt).toStdString(), concurrencies, why)
            || !(why = shardlab::concurrencyListError(concurrencies)).empty()) {
            err << "shardlab: --load-front: " << QString::fromStdString(why) << "\n";
            return 2;
        }
        script.loadFront = true;
        window.paretoView()->setLoadConcurrencies(parser.value(loadFrontOpt));
    }
    if (parser.isSet(duringOpt)) {
        script.screenshotDuringMs = parser.value(duringOpt).toInt(&ok);
        if (!ok || script.screenshotDuringMs < 0 || script.screenshot.isEmpty()) {
            err << "shardlab: --screenshot-during: expects milliseconds and --screenshot\n";
            return 2;
        }
    }

    // The scenario last, once every option is known good: a refused call changes nothing.
    QString keptEdits;
    if (parser.isSet(scenarioOpt)) {
        if (!setAsideRestoredEdits(window, keptEdits, err))
            return 1;
        // A file, or a shipped scenario's name as the CLI takes it (opened without a path).
        const std::string arg = parser.value(scenarioOpt).toStdString();
        if (shardlab::classifyScenarioArg(arg) == shardlab::ScenarioArg::Preset)
            window.setScenario(shardlab::scenarioPreset(arg).value);
        else if (!window.openScenarioFile(parser.value(scenarioOpt))) {
            err << "shardlab: " << window.statusText() << "\n";
            // A script fails; a person sees the window with the reason in its message area.
            if (parser.isSet(quitOpt))
                return 1;
        }
        if (!keptEdits.isEmpty()) // after the scenario's own messages, which would replace it
            QTimer::singleShot(0, &window, [&window, keptEdits] { window.showNote(keptEdits); });
    }
    // --tab pareto: what the tab shows (the front, a sweep, a sizing) is what
    // --autostart starts, as the search is on the other tabs.
    if (paretoTab && (script.autostart || script.quitWhenDone || !script.screenshot.isEmpty())) {
        runParetoScript(window, script, err);
    } else if (script.autostart) {
        QObject::connect(&window, &shardlab::ui::MainWindow::searchDone, &window, [&](bool found) {
            // Let the last repaint land before the screenshot.
            QTimer::singleShot(300, &window, [&, found] {
                const int code = finishScript(window, script, found);
                script.duringTaken = true; // taken now if it was not: a later search leaves it be
                if (script.quitWhenDone)
                    QApplication::exit(code);
            });
        });
        QTimer::singleShot(200, &window, [&] {
            if (!window.startSearch()) {
                err << "shardlab: cannot start: " << window.statusText() << "\n";
                QApplication::exit(1);
                return;
            }
            if (script.screenshotDuringMs >= 0)
                QTimer::singleShot(script.screenshotDuringMs, &window, [&] {
                    if (script.duringTaken || !window.isSearching())
                        return; // the search ended first: finishScript took it
                    script.duringTaken = true;
                    QString error;
                    if (!shardlab::ui::saveScreenshot(&window, script.screenshot, &error)) {
                        err << "shardlab: --screenshot: " << error << "\n";
                        script.failed = true; // the run's exit code says so too
                    }
                });
        });
    } else if (script.quitWhenDone || !script.screenshot.isEmpty()) {
        QTimer::singleShot(500, &window, [&] {
            QString error;
            const bool ok = script.screenshot.isEmpty() || shardlab::ui::saveScreenshot(&window, script.screenshot, &error);
            if (!ok)
                err << "shardlab: --screenshot: " << error << "\n";
            const int code = ok ? 0 : 1;
            if (script.quitWhenDone)
                QApplication::exit(code);
        });
    }
    return QApplication::exec();
}
