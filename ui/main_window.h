// ShardLab's main window: scenario editor (left), live search views and the plan view
// (tabs), search controls (toolbar). A view over core: every action goes through the
// same core calls the CLI uses.
#pragma once

#include <QMainWindow>
#include <QPointer>

#include "io/launch_config.h"
#include "model/specs.h"
#include "search_worker.h"

class QAction;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QMenu;
class QProgressBar;
class QSpinBox;
class QTabWidget;

namespace shardlab::ui {

class ScenarioEditor;
class SearchPanel;
class PlanView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads a scenario file; on failure shows the error inline and keeps the current one.
    bool openScenarioFile(const QString& path);
    void setScenario(const Scenario& s, const QString& path = {});
    Scenario scenario() const;
    QString statusText() const;

    // Search control, also used by scripted runs and tests.
    bool setAlgorithm(const QString& name);
    void setSeed(int seed);
    void setBudget(int budget);
    bool startSearch();
    void stopSearch();
    bool isSearching() const;
    const JobResult* lastResult() const { return m_haveResult ? &m_lastResult : nullptr; }
    double longestStallMs() const;
    bool exportPlan(const QString& path, QString* error = nullptr);
    // The plan in the Plan tab as `engine`'s launch script, with any options file beside
    // it (core/io/launch_config.h, the core's write path). `warnings` receives what the
    // engine cannot express. `model` empty: the checkpoint ShardLab knows for the model.
    bool exportLaunchConfig(const QString& path, Engine engine, const QString& model = {}, QString* error = nullptr,
                            QStringList* warnings = nullptr);
    SearchPanel* searchPanel() const { return m_panel; }
    ScenarioEditor* scenarioEditor() const { return m_editor; }
    PlanView* planView() const { return m_planView; }
    bool isModified() const { return m_modified; }
    bool showTab(const QString& name);

Q_SIGNALS:
    void scenarioChanged();
    void searchDone(bool found);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildActions();
    void buildToolbar();
    void onScenarioEdited();
    void onProgress(const LiveProgress& p);
    void onFinished(const JobResult& r);
    void onFailed(const QString& reason);
    void onRunningChanged(bool running);
    void refreshStartState();
    void refreshReferences();
    void showMessage(const QString& text, bool error);
    bool maybeSave();
    bool saveScenario();
    bool saveScenarioAs();
    void openDialog();
    void exportPlanDialog();
    void exportLaunchConfigDialog();
    void exportPlotsDialog();
    void certifyOptimum();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void restoreSettings();
    void saveSettings();
    SearchOptions currentOptions() const;

    SearchController m_controller;
    ScenarioEditor* m_editor = nullptr;
    SearchPanel* m_panel = nullptr;
    PlanView* m_planView = nullptr;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_message = nullptr;

    QComboBox* m_algo = nullptr;
    QSpinBox* m_budget = nullptr;
    QSpinBox* m_seed = nullptr;
    QSpinBox* m_eliteSize = nullptr;
    QDoubleSpinBox* m_tau = nullptr;
    QAction* m_startAction = nullptr;
    QAction* m_stopAction = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_statusLabel = nullptr;
    QMenu* m_recentMenu = nullptr;

    QString m_path;
    bool m_modified = false;
    bool m_certifying = false;
    JobResult m_lastResult;
    bool m_haveResult = false;
    double m_megatronValue = 0;
};

} // namespace shardlab::ui
