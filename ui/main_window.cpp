#include "main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include "compare_candidates.h"
#include "compare_view.h"
#include "elided_label.h"
#include "export_controller.h"
#include "feasibility_check.h"
#include "help_menu.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "model/engine_caps.h"
#include "pareto_view.h"
#include "plan_topology.h"
#include "plan_view.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "search_toolbar.h"
#include "ui_format.h"
#include "wheel_guard.h"

namespace shardlab::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("ShardLab"));
    ui::installWheelGuard(); // the wheel scrolls the docks; it edits a field only when meant

    buildTabs();
    buildEditorDock();
    m_candidates = new CompareCandidates(m_compare, m_planView, m_panel, m_editor, this);
    // A search's answer, a run, an elite or a Pareto point shown over a what-if: the what-if
    // is kept in the Compare tab, as it is over a scenario edit.
    connect(m_planView, &PlanView::whatIfAboutToBeReplaced, this,
            [this](const QString& by) { keepWhatIf(tr("replaced in the Plan tab by %1").arg(by)); });
    m_document = new DocumentController(this, m_editor, this);
    // Plan edits and run deletions are undone with the scenario's edits, in one history.
    m_planView->setUndoStack(m_document->undoStack());
    m_panel->setUndoStack(m_document->undoStack());
    m_exports = new ExportController(this, m_editor, m_planView, m_panel, this);
    connect(m_exports, &ExportController::message, this, &MainWindow::showMessage);
    buildActions();
    m_toolbar = new SearchToolbar(m_startAction, m_stopAction, this);
    addToolBar(m_toolbar);
    m_statusLabel = new QLabel(this);
    m_statusLabel->setObjectName(QStringLiteral("searchStatus"));
    statusBar()->addPermanentWidget(m_statusLabel, 1);
    connectDocument();
    connectSearch();
    // ppo chosen (by hand, by --algo or by the restored session): its plugin loads now, in
    // the background, instead of in the first ppo search's worker; other algorithms never
    // load LibTorch.
    auto preloadForPpo = [this] {
        if (m_toolbar->algorithm() == QLatin1String("ppo"))
            m_controller.preloadPlugin();
    };
    connect(m_toolbar, &SearchToolbar::settingsChanged, this, preloadForPpo);
    preloadForPpo();
    buildFeasibilityCheck();
    resize(1440, 900);
    startSession();
}

void MainWindow::buildTabs()
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    // Two lines at most, always there: a long message is elided (all of it in the
    // tooltip) instead of pushing the tabs down, and a new message never moves them.
    m_message = new ElidedLabel(2, central);
    m_message->setObjectName(QStringLiteral("messageLine"));
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);
    m_tabs = new QTabWidget(central);
    m_panel = new SearchPanel(m_tabs);
    m_planView = new PlanView(m_tabs);
    m_topology = new PlanTopologyView(m_tabs);
    m_tabs->addTab(m_panel, tr("Search"));
    m_tabs->addTab(m_planView, tr("Plan"));
    m_tabs->addTab(m_topology, tr("Topology"));
    m_tabs->setTabToolTip(2, tr("The plan in the Plan tab drawn onto the cluster: its groups on the GPUs and each "
                                "link's traffic per decode step."));
    m_compare = new CompareView(m_tabs);
    m_tabs->addTab(m_compare, tr("Compare"));
    m_tabs->setTabToolTip(3, tr("Any two plans side by side, per generated token: run bests, elites, the what-if, the "
                                "Megatron recipe, plan files (File > Open plan)."));
    m_pareto = new ParetoView(m_tabs);
    m_tabs->addTab(m_pareto, tr("Pareto"));
    m_tabs->setTabToolTip(4, tr("The choices: output tokens/s per GPU against tokens/s per user (every point proved "
                                "optimal), the fewest GPUs for a request rate, and throughput per cluster size."));
    connect(m_pareto, &ParetoView::planActivated, this, [this](const Deployment& d, const QString& title) {
        m_planView->showDeployment(title, d);
        m_tabs->setCurrentWidget(m_planView);
    });
    // The Topology tab follows whatever the plan view shows (best plan, elite, what-if).
    connect(m_planView, &PlanView::currentPlanChanged, this, [this] {
        // currentScenario: a disaggregated scenario's shown pool, on its own GPUs.
        if (m_editor && validateScenario(m_editor->scenario()).empty())
            m_topology->setPlan(m_planView->currentScenario(), m_planView->currentTitle(), m_planView->currentPlan(),
                                m_planView->currentResult(), m_planView->poolContext());
        else
            m_topology->showMessage(tr("No plan to draw: the scenario has problems, or no plan is shown yet."));
        refreshCompareCandidates();
    });
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
}

void MainWindow::buildEditorDock()
{
    m_editor = new ScenarioEditor(this);
    auto* dock = new QDockWidget(tr("Scenario"), this);
    dock->setObjectName(QStringLiteral("ScenarioDock"));
    dock->setWidget(m_editor);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {400}, Qt::Horizontal);
}

// The document changes the editor; the search and the views follow here.
void MainWindow::connectDocument()
{
    connect(m_document, &DocumentController::aboutToReplaceScenario, this, [this] {
        if (m_controller.isRunning())
            m_panel->abandonRun(tr("cancelled"));
        m_controller.cancel();
        m_candidates->clearKept();
    });
    connect(m_document, &DocumentController::scenarioReplaced, this, &MainWindow::onScenarioReplaced);
    connect(m_document, &DocumentController::draftValuesRestored, this, [this](const Scenario& s) {
        m_panel->setScenario(s);
        refreshReferences();
        scheduleFeasibilityCheck();
        refreshStartState();
    });
    connect(m_document, &DocumentController::scenarioEdited, this, &MainWindow::onScenarioEdited);
    connect(m_document, &DocumentController::message, this, &MainWindow::showMessage);
    connect(m_document, &DocumentController::problemsMessage, this, [this](const QString& text) {
        showMessage(text, true);
        m_cannotRunShown = true; // cleared once the scenario can run
    });
    connect(m_panel, &SearchPanel::loadVariantRequested, this, [this](int i) {
        const SearchPanel::RunInfo run = m_panel->runInfo(i);
        if (!m_document->applyEdit(run.scenario, tr("Load variant %1").arg(run.variant)))
            return;
        showMessage(tr("Loaded variant %1 (of run %2) into the editor; Edit > Undo goes back.").arg(run.variant, run.name),
                    false);
    });
}

void MainWindow::connectSearch()
{
    connect(&m_controller, &SearchController::progressAvailable, this, &MainWindow::onProgress);
    connect(&m_controller, &SearchController::searchFinished, this, &MainWindow::onFinished);
    connect(&m_controller, &SearchController::searchFailed, this, &MainWindow::onFailed);
    connect(&m_controller, &SearchController::engineGapReady, this, &MainWindow::onEngineGap);
    connect(&m_controller, &SearchController::runningChanged, this, &MainWindow::onRunningChanged);
    connect(&m_controller, &SearchController::workerIdle, this, &MainWindow::searchSettled);
    connect(m_panel, &SearchPanel::eliteSelected, this, [this](const Plan& p, const QString& title) {
        m_planView->showPlan(title, p);
    });
    connect(m_panel, &SearchPanel::runSelected, this, &MainWindow::onRunSelected);
    connect(m_panel, &SearchPanel::runsChanged, this, &MainWindow::refreshCompareCandidates);
    // "Back to searched plan" in the what-if editor: the selected run's best.
    connect(m_panel, &SearchPanel::runSelected, this, &MainWindow::refreshSearchedPlan);
    connect(m_panel, &SearchPanel::runsChanged, this, &MainWindow::refreshSearchedPlan);
}

void MainWindow::buildFeasibilityCheck()
{
    m_feasibility = new FeasibilityCheck(this);
    connect(m_feasibility, &FeasibilityCheck::checked, this, &MainWindow::onFeasibilityChecked);
    m_feasibilityTimer = new QTimer(this);
    m_feasibilityTimer->setSingleShot(true);
    m_feasibilityTimer->setInterval(250); // after typing pauses, not on every digit
    connect(m_feasibilityTimer, &QTimer::timeout, this, [this] {
        if (m_editor->isRunnable())
            m_feasibility->check(m_editor->scenario());
    });
}

MainWindow::~MainWindow()
{
    m_controller.shutdown();
    m_feasibility->cancel();
    m_pareto->stop();
}

void MainWindow::scheduleFeasibilityCheck()
{
    m_infeasible = false;
    m_infeasibleWhy.clear();
    m_feasibility->cancel();
    if (m_editor->isRunnable())
        m_feasibilityTimer->start();
    else
        m_feasibilityTimer->stop();
}

void MainWindow::onFeasibilityChecked(bool infeasible, const QString& why, double seconds)
{
    m_infeasible = infeasible;
    m_infeasibleWhy = why;
    refreshStartState();
    if (infeasible) {
        showMessage(tr("No plan can meet this scenario's limits, so a search would only spend its budget. The exact "
                       "search proved it in %2 s: %1. Relax that limit (or add GPUs, a larger GPU, FP8) to search.")
                        .arg(plainNumbers(why))
                        .arg(seconds, 0, 'f', 2),
                    true);
        m_cannotRunShown = true;
    }
    Q_EMIT feasibilityChecked(infeasible);
}

void MainWindow::buildActions()
{
    auto* file = menuBar()->addMenu(tr("&File"));
    auto* presets = file->addMenu(tr("New from &preset"));
    for (const PresetFile& f : scenarioPresetFiles()) {
        const QString name = QString::fromStdString(f.name);
        presets->addAction(name, this, [this, name] {
            m_document->newFromPreset(name);
        });
    }
    file->addAction(tr("&Open scenario…"), QKeySequence::Open, m_document, &DocumentController::openDialog);
    file->addAction(tr("Open plan to &compare…"), this, &MainWindow::openPlanDialog);
    file->addAction(tr("Load &kernel profile…"), m_document, &DocumentController::loadProfileDialog);
    m_document->setRecentMenu(file->addMenu(tr("Open &recent")));
    file->addAction(tr("&Save scenario"), QKeySequence::Save, m_document, &DocumentController::saveScenario);
    file->addAction(tr("Save scenario &as…"), QKeySequence::SaveAs, m_document, &DocumentController::saveScenarioAs);
    file->addSeparator();
    file->addAction(tr("&Export plan JSON…"), m_exports, &ExportController::exportPlanDialog);
    file->addAction(tr("Export &launch config…"), m_exports, &ExportController::exportLaunchConfigDialog);
    file->addAction(tr("Export plo&ts (PNG/PDF)…"), m_exports, &ExportController::exportPlotsDialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    auto* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undoStack()->createUndoAction(this, tr("&Undo:"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = undoStack()->createRedoAction(this, tr("&Redo:"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);

    auto* search = menuBar()->addMenu(tr("&Search"));
    m_startAction = search->addAction(tr("&Start"), this, [this] { startSearch(); });
    m_startAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_stopAction = search->addAction(tr("S&top"), this, &MainWindow::stopSearch);
    m_stopAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stopAction->setEnabled(false);
    search->addAction(tr("&Certify the optimum (exact)"), this, &MainWindow::certifyOptimum);
    search->addAction(tr("Clear &runs"), this, [this] {
        const int n = m_panel->deleteAllRuns();
        refreshReferences();
        showMessage(n > 0 ? tr("Cleared %n run(s) (Edit > Undo puts them back).", nullptr, n)
                          : tr("No runs to clear (a run still searching stays)."),
                    false);
    });
    addHelpMenu(this);
}

Scenario MainWindow::scenario() const { return m_editor->scenario(); }

void MainWindow::onScenarioReplaced(const Scenario& s)
{
    m_haveResult = false;
    m_panel->setScenario(s);
    refreshReferences();
    m_cannotRunShown = false;
    showMessage(tr("Scenario %1 ready: press Start (Ctrl+R) to search.").arg(shownName(s.name)), false);
    scheduleFeasibilityCheck();
    refreshStartState();
    Q_EMIT scenarioChanged();
}

void MainWindow::refreshCompareCandidates()
{
    if (m_candidates)
        m_candidates->refresh(lastResult());
}

void MainWindow::openPlanDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open plan to compare"),
                                                      QFileInfo(m_document->currentPath()).path(),
                                                      tr("ShardLab plan (*.json)"));
    if (!path.isEmpty())
        openPlanFile(path);
}

bool MainWindow::openPlanFile(const QString& path)
{
    QString error;
    const QString name = m_candidates->addPlanFile(path, &error);
    if (name.isEmpty()) {
        showMessage(error, true);
        return false;
    }
    refreshCompareCandidates();
    m_compare->compare(name, m_compare->candidates().front().name);
    m_tabs->setCurrentWidget(m_compare);
    showMessage(tr("Opened the plan %1 in the Compare tab.").arg(path), false);
    return true;
}

void MainWindow::refreshReferences()
{
    // The plan view evaluates the Megatron recipe for its comparison; the throughput
    // curve's reference line reuses that result instead of running the recipe again.
    m_planView->setScenario(m_editor->scenario());
    m_compare->setScenario(m_planView->currentScenario());
    // Disaggregated: the recipe's deployment over both pools, as the search's objective.
    if (m_planView->isDisaggregated()) {
        const DisaggregatedRecipe& dr = m_planView->poolsReference();
        m_megatronValue = dr.found ? dr.result.tokensPerSPerGpu : 0;
    } else {
        const RecipePlan& rp = m_planView->reference();
        m_megatronValue = rp.found ? rp.result.tokensPerSPerGpu : 0;
    }
    if (m_megatronValue > 0)
        m_panel->setMegatronReference(m_megatronValue);
}

void MainWindow::onScenarioEdited(const Scenario& before, const Scenario& now)
{
    // Names and descriptions change no figure: the search goes on, the views stay.
    if (scenarioDifferences(before, now).empty() && m_editor->isRunnable() == validateScenario(before).empty()) {
        // The names still follow: exports and captions name the scenario as it is now.
        m_panel->setScenarioNames(now);
        m_planView->setScenarioNames(now);
        Q_EMIT scenarioChanged();
        return;
    }
    if (m_controller.isRunning()) {
        m_controller.cancel();
        m_panel->abandonRun(tr("cancelled"));
        showMessage(tr("The search was cancelled because the scenario changed; its curve stays in the runs table."),
                    false);
    }
    keepWhatIf(tr("made on the scenario before the edit"));
    m_haveResult = false;
    m_panel->setScenario(now);
    refreshReferences();
    scheduleFeasibilityCheck();
    refreshStartState();
    Q_EMIT scenarioChanged();
}

QString MainWindow::keptWhatIfText() const
{
    return tr("The what-if plan was kept as \"%1\" in the Compare tab.").arg(m_keptWhatIf);
}

void MainWindow::keepWhatIf(const QString& note)
{
    m_keptWhatIf = m_candidates->keepWhatIf(note);
    if (m_keptWhatIf.isEmpty())
        return;
    showMessage(QString(), false);
    // Every message shown while this event is handled (a search's result, a run's variant
    // note, an export's report) says it too, instead of replacing it.
    QTimer::singleShot(0, this, [this] { m_keptWhatIf.clear(); });
}

void MainWindow::onRunSelected(int index)
{
    const SearchPanel::RunInfo run = m_panel->runInfo(index);
    if (!run.found)
        return;
    if (run.prefill.has_value() != m_planView->isDisaggregated()) {
        showMessage(run.prefill ? tr("Run %1 searched disaggregated serving (two pools); the scenario in the editor does "
                                     "not. \"Load variant\" puts the run's scenario back.")
                                      .arg(run.name)
                                : tr("Run %1 searched one-pool serving; the scenario in the editor is disaggregated. "
                                     "\"Load variant\" puts the run's scenario back.")
                                      .arg(run.name),
                    false);
        return;
    }
    if (run.prefill)
        m_planView->showPools(tr("Best of %1").arg(run.name), {*run.prefill, run.best});
    else
        m_planView->showPlan(tr("Best of %1").arg(run.name), run.best);
    const auto diff = scenarioDifferences(run.scenario, m_editor->scenario());
    if (!diff.empty())
        showMessage(tr("Run %1 ran on variant %2, not the scenario in the editor (%3%4): the Plan tab evaluates its best "
                       "plan on the editor's scenario. \"Load variant\" puts the run's scenario back.")
                        .arg(run.name, run.variant, plainNumbers(QString::fromStdString(diff.front())),
                             diff.size() > 1 ? tr(" and %n more", nullptr, int(diff.size() - 1)) : QString()),
                    false);
}

void MainWindow::refreshSearchedPlan()
{
    const SearchPanel::RunInfo run = m_panel->runInfo(m_panel->selectedRun());
    if (!run.found) {
        m_planView->setSearchedPlan({}, std::nullopt);
        return;
    }
    m_planView->setSearchedPlan(tr("Best of %1").arg(run.name),
                                run.prefill ? Deployment::twoPools({*run.prefill, run.best}) : Deployment::onePool(run.best));
}

void MainWindow::refreshStartState()
{
    const bool runnable = m_editor->isRunnable() && !m_infeasible;
    const bool running = m_controller.isRunning();
    m_startAction->setEnabled(runnable && !running);
    m_stopAction->setEnabled(running);
    m_editor->setStartBlocked(m_editor->isRunnable() && m_infeasible
                                  ? tr("no plan can meet the limits (%1)").arg(plainNumbers(m_infeasibleWhy))
                                  : QString(),
                              running);
    if (m_editor->isRunnable() && m_infeasible) {
        m_startAction->setToolTip(tr("Cannot start: no plan can meet the limits (%1)").arg(plainNumbers(m_infeasibleWhy)));
    } else if (!runnable) {
        QStringList why;
        for (const FieldError& e : m_editor->problems())
            why << QString::fromStdString(e.toString());
        const QString text = plainNumbers(why.join(QStringLiteral("; ")));
        m_startAction->setToolTip(tr("Cannot start: %1").arg(text));
        showMessage(tr("The scenario cannot run: %1").arg(text), true);
        m_cannotRunShown = true;
    } else {
        m_startAction->setToolTip(tr("Start the search (Ctrl+R)"));
        // The "cannot run" line was about a state that no longer exists (typing "16" passes
        // through "1"): replace it rather than leave a stale error in red.
        if (m_cannotRunShown) {
            m_cannotRunShown = false;
            showMessage(tr("The scenario can run again: press Start (Ctrl+R) to search."), false);
        }
    }
}

bool MainWindow::showTab(const QString& name)
{
    if (name == QLatin1String("search"))
        m_tabs->setCurrentWidget(m_panel);
    else if (name == QLatin1String("plan"))
        m_tabs->setCurrentWidget(m_planView);
    else if (name == QLatin1String("topology"))
        m_tabs->setCurrentWidget(m_topology);
    else if (name == QLatin1String("compare"))
        m_tabs->setCurrentWidget(m_compare);
    else if (name == QLatin1String("pareto"))
        m_tabs->setCurrentWidget(m_pareto);
    else
        return false;
    return true;
}

QString MainWindow::currentTabName() const
{
    QWidget* w = m_tabs->currentWidget();
    return w == m_panel      ? QStringLiteral("search")
           : w == m_planView ? QStringLiteral("plan")
           : w == m_compare  ? QStringLiteral("compare")
           : w == m_pareto   ? QStringLiteral("pareto")
                             : QStringLiteral("topology");
}

void MainWindow::showMessage(const QString& text, bool error)
{
    m_cannotRunShown = false; // refreshStartState sets it again after its own message
    const QString kept = m_keptWhatIf.isEmpty() ? QString() : keptWhatIfText(); // keepWhatIf
    m_message->setFullText(text.isEmpty() ? kept : kept.isEmpty() ? text : text + QLatin1Char(' ') + kept);
    m_message->setStyleSheet(error ? QStringLiteral("QLabel { color: #b00020; font-weight: bold; }")
                                   : QStringLiteral("QLabel { color: palette(text); }"));
    m_messageIsError = error;
}

QString MainWindow::statusText() const { return m_message->fullText(); }

} // namespace shardlab::ui
