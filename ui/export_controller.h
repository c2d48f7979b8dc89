// What the window writes for others: the plan in the Plan tab as a plan file the CLI
// evaluates, as an engine's launch script (refused, or replaced by the nearest plan the
// engine runs, when the engine cannot run it as planned), and the plots as PNG or PDF.
// Each File > Export dialog and the scripted exports go through here; the files are
// written by the core's write path.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

#include "report/launch_config.h"

class QWidget;

namespace shardlab::ui {

class PlanView;
class ScenarioEditor;
class SearchPanel;

class ExportController : public QObject {
    Q_OBJECT
public:
    // `window` parents the dialogs; the plan is the plan view's, the scenario the editor's.
    ExportController(QWidget* window, ScenarioEditor* editor, PlanView* planView, SearchPanel* panel,
                     QObject* parent = nullptr);

    // The plan in the Plan tab with the editor's scenario, as a plan file.
    bool exportPlan(const QString& path, QString* error = nullptr);
    // The plan in the Plan tab as `engine`'s launch script, with any options file beside
    // it (core/report/launch_config.h, the core's write path). `warnings` receives what the
    // engine cannot express. `model` empty: the checkpoint ShardLab knows for the model.
    // A plan the engine does not run as planned is refused (error names each rule), unless
    // `nearest`: then the best plan the engine runs near it (runner/runnable_plan.h) is
    // shown in the Plan tab and exported instead, so the estimate on show is the script's.
    // `askReplacing`: options files it would write over existing ones are asked about first
    // (the script's own name was asked about by the save dialog); declined, it writes nothing
    // and returns false with `error` empty.
    bool exportLaunchConfig(const QString& path, Engine engine, const QString& model = {}, QString* error = nullptr,
                            QStringList* warnings = nullptr, bool nearest = false, bool askReplacing = false);

    // Every plot beside `path` (shardlab.png: shardlab-throughput.png, -plan, -memory and
    // -comparison, the Plan tab's comparison table with the recipe), PNG or PDF by its
    // extension. *written lists the files written; false with the reason at the first failure.
    bool exportPlots(const QString& path, QStringList* written = nullptr, QString* error = nullptr);
    // The files exportPlots(path) writes, beside `path`: NAME-throughput.EXT, -plan, -memory,
    // -comparison.
    static QStringList plotPaths(const QString& path);

    // File > Export dialogs: each says what it wrote, or why not, through message().
    void exportPlanDialog();
    void exportLaunchConfigDialog();
    void exportPlotsDialog();

Q_SIGNALS:
    void message(const QString& text, bool error);

private:
    // Before exporting for `e`: false when the engine runs the plan on show; true when it
    // does not and the user chose to export the nearest plan it runs; none: cancelled.
    std::optional<bool> askExportNearest(Engine e, const QString& engineName);

    QWidget* m_window;
    ScenarioEditor* m_editor;
    PlanView* m_planView;
    SearchPanel* m_panel;
};

} // namespace shardlab::ui
