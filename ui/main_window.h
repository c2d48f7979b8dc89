// ShardLab's main window: scenario editor (left), live search views and the plan view
// (tabs), search controls (toolbar). A view over core: every action goes through the
// same core calls the CLI uses. The window runs the searches and wires its parts: the
// scenario as a document (document_controller.h), the exports (export_controller.h), the
// search settings (search_toolbar.h) and the views.
#pragma once

#include <QMainWindow>

#include <optional>

#include <vector>

#include "document_controller.h"
#include "export_controller.h"
#include "model/specs.h"
#include "report/launch_config.h"
#include "search_toolbar.h"
#include "search_worker.h"
#include "session_store.h"

class QAction;
class QLabel;
class QProgressBar;
class QTabWidget;
class QTimer;
class QUndoStack;

namespace shardlab::ui {

class CompareCandidates;
class CompareView;
class ElidedLabel;
class FeasibilityCheck;
class ParetoView;
class PlanTopologyView;
class ScenarioEditor;
class SearchPanel;
class PlanView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The scenario as a document (document_controller.h): its file, unsaved edits, undo
    // stack and variants. The calls below are its, kept here for scripted runs and tests.
    DocumentController* document() const { return m_document; }
    // Loads a scenario file; on failure shows the error inline and keeps the current one.
    bool openScenarioFile(const QString& path) { return m_document->openScenarioFile(path); }
    bool saveScenarioTo(const QString& path, QString* error = nullptr) { return m_document->saveScenarioTo(path, error); }
    static bool isProtectedScenarioPath(const QString& path) { return DocumentController::isProtectedScenarioPath(path); }
    QString suggestedScenarioPath() const { return m_document->suggestedScenarioPath(); }
    QString currentPath() const { return m_document->currentPath(); }
    void setScenario(const Scenario& s, const QString& path = {}) { m_document->setScenario(s, path); }
    Scenario scenario() const;
    QString statusText() const;
    // A note in the message area (not an error), as the window's own notes are.
    void showNote(const QString& text) { showMessage(text, false); }
    // Writes the session files now (the window writes them a second after a change).
    void saveSessionNow() { saveSession(); }

    // Search control, also used by scripted runs and tests.
    bool setAlgorithm(const QString& name) { return m_toolbar->setAlgorithm(name); }
    void setSeed(int seed) { m_toolbar->setSeed(seed); }
    void setBudget(int budget) { m_toolbar->setBudget(budget); }
    bool startSearch();
    void stopSearch();
    bool isSearching() const;
    const JobResult* lastResult() const { return m_haveResult ? &m_lastResult : nullptr; }
    const EngineGap& lastEngineGap() const { return m_lastGap; }
    double longestStallMs() const;
    // The plan file, launch config and plot exports (export_controller.h); the two calls
    // below are its, kept here for scripted runs and tests.
    ExportController* exports() const { return m_exports; }
    bool exportPlan(const QString& path, QString* error = nullptr) { return m_exports->exportPlan(path, error); }
    bool exportLaunchConfig(const QString& path, Engine engine, const QString& model = {}, QString* error = nullptr,
                            QStringList* warnings = nullptr, bool nearest = false)
    {
        return m_exports->exportLaunchConfig(path, engine, model, error, warnings, nearest);
    }
    SearchPanel* searchPanel() const { return m_panel; }
    ScenarioEditor* scenarioEditor() const { return m_editor; }
    PlanView* planView() const { return m_planView; }
    PlanTopologyView* topologyView() const { return m_topology; }
    CompareView* compareView() const { return m_compare; }
    ParetoView* paretoView() const { return m_pareto; }
    // File > Open plan: a plan file (with or without its embedded scenario) becomes a
    // candidate of the Compare tab, evaluated on the current scenario. False, with the
    // reasons in the message line, when it cannot be read or does not fit the scenario.
    bool openPlanFile(const QString& path);
    bool loadProfile(const QString& path) { return m_document->loadProfile(path); }
    QString variantFor(const Scenario& s, QString* note = nullptr) { return m_document->variantFor(s, note); }
    QUndoStack* undoStack() const { return m_document->undoStack(); }
    void applyScenarioState(const Scenario& s) { m_document->applyScenarioState(s); }
    QString currentTabName() const;
    bool isModified() const { return m_document->isModified(); }
    bool isProvedInfeasible() const { return m_infeasible; }
    QProgressBar* progressBar() const { return m_toolbar->progressBar(); }
    // "search", "plan", "topology", "compare" or "pareto"; false for another name.
    bool showTab(const QString& name);

Q_SIGNALS:
    void scenarioChanged();
    void searchDone(bool found);
    // The background exact check of the current scenario ended (infeasible: proved that no
    // plan meets its limits; Start stays disabled and the message says which to relax).
    void feasibilityChecked(bool infeasible);
    // The worker finished the last search it was given (or the cancelled one) with every
    // answer it sends after the result: nothing more arrives for it.
    void searchSettled();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildTabs();
    void buildEditorDock();
    void buildActions();
    void connectDocument();
    void connectSearch();
    void buildFeasibilityCheck();
    void onScenarioReplaced(const Scenario& s);
    void onScenarioEdited(const Scenario& before, const Scenario& now);
    void onRunSelected(int index);
    void onProgress(const LiveProgress& p);
    void onFinished(const JobResult& r);
    void onEngineGap(const EngineGap& g);
    void onFailed(const QString& reason);
    void onRunningChanged(bool running);
    void refreshStartState();
    void refreshSearchedPlan();
    void scheduleFeasibilityCheck();
    void onFeasibilityChecked(bool infeasible, const QString& why, double seconds);
    void refreshReferences();
    void refreshCompareCandidates();
    void openPlanDialog();
    void showMessage(const QString& text, bool error);
    void certifyOptimum();
    // The session (main_window_session.cpp): restored at start, saved as it changes.
    void startSession();
    void restoreSettings();
    QString restoreScenario(const std::optional<SessionStore::Draft>& draft);
    QString restoreSavedRuns(const QByteArray& runs, bool* unreadable);
    void reportRestore(const QStringList& restored, const QStringList& problems, const QDateTime& savedAt);
    void saveSession();

    SearchController m_controller;
    DocumentController* m_document = nullptr;
    ExportController* m_exports = nullptr;
    ScenarioEditor* m_editor = nullptr;
    SearchPanel* m_panel = nullptr;
    PlanView* m_planView = nullptr;
    PlanTopologyView* m_topology = nullptr;
    CompareView* m_compare = nullptr;
    ParetoView* m_pareto = nullptr;
    CompareCandidates* m_candidates = nullptr;
    QTabWidget* m_tabs = nullptr;
    ElidedLabel* m_message = nullptr;
    bool m_messageIsError = false;
    SessionStore* m_session = nullptr;
    QString m_sessionError; // the last save failure, said once

    SearchToolbar* m_toolbar = nullptr;
    QAction* m_startAction = nullptr;
    QAction* m_stopAction = nullptr;
    QLabel* m_statusLabel = nullptr;

    bool m_cannotRunShown = false;
    FeasibilityCheck* m_feasibility = nullptr;
    QTimer* m_feasibilityTimer = nullptr;
    bool m_infeasible = false;
    QString m_infeasibleWhy; // the message line holds the "cannot run" text
    bool m_certifying = false;
    JobResult m_lastResult;
    EngineGap m_lastGap; // the last search's both answers (applies false: none yet)
    bool m_haveResult = false;
    QString m_keptWhatIf; // the name the last what-if was kept under in the Compare tab
    QString keptWhatIfText() const;
    void keepWhatIf(const QString& note);
    double m_megatronValue = 0;
};

} // namespace shardlab::ui
