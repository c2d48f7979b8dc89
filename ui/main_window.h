// ShardLab's main window: the scenario on the left; search views join it later.
#pragma once

#include <QMainWindow>

#include "model/specs.h"

class QComboBox;
class QLabel;

namespace shardlab::ui {

class ScenarioView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Loads a scenario file; on failure shows the error inline and keeps the current one.
    bool openScenarioFile(const QString& path);
    void setScenario(const Scenario& s);
    const Scenario& scenario() const { return m_scenario; }
    QString statusText() const;

Q_SIGNALS:
    void scenarioChanged();

private Q_SLOTS:
    void choosePreset(int index);
    void openDialog();

private:
    void showError(const QString& message);

    Scenario m_scenario;
    QComboBox* m_presetBox = nullptr;
    ScenarioView* m_view = nullptr;
    QLabel* m_message = nullptr;
};

} // namespace shardlab::ui
