#include "export_controller.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>

#include <functional>
#include <utility>

#include "file_export.h"
#include "save_dialog.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "plan_view.h"
#include "runner/runnable_plan.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "sim/deployment.h"
#include "ui_format.h"

namespace shardlab::ui {

ExportController::ExportController(QWidget* window, ScenarioEditor* editor, PlanView* planView, SearchPanel* panel,
                                   QObject* parent)
    : QObject(parent), m_window(window), m_editor(editor), m_planView(planView), m_panel(panel)
{
}

bool ExportController::exportPlan(const QString& path, QString* error)
{
    Scenario s = m_editor->scenario();
    // An edited preset must not travel under the preset's name: `evaluate --scenario NAME`
    // would evaluate the shipped one and disagree with the window.
    s.name = shownScenarioName(s);
    const Status st = saveDeploymentFile(localPath(path), m_planView->currentDeployment(), s);
    if (!st.ok()) {
        if (error)
            *error = QString::fromStdString(st.error->toString());
        return false;
    }
    return true;
}

void ExportController::exportPlanDialog()
{
    // ".json" is added to a name typed without one before the dialog asks about replacing it.
    const QString path = askSaveFileName(m_window, tr("Export plan"), QStringLiteral("plan.json"),
                                         tr("ShardLab plan (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (exportPlan(path, &error))
        Q_EMIT message(tr("Exported the plan in the Plan tab to %1 (shardlab-cli evaluate accepts it).").arg(path),
                       false);
    else
        Q_EMIT message(error, true);
}

bool ExportController::exportLaunchConfig(const QString& path, Engine engine, const QString& model, QString* error,
                                          QStringList* warnings, bool nearest, bool askReplacing)
{
    LaunchOptions o;
    o.engine = engine;
    o.model = scriptModelPath(model.trimmed().toStdString());
    o.companionPrefix = companionPrefixFor(localPath(path));
    Scenario s = m_editor->scenario();
    if (nearest && !m_planView->isDisaggregated()) {
        const Plan p = m_planView->currentPlan();
        if (!engineViolations(engine, p, s).empty()) {
            const NearestRunnable n = nearestRunnablePlan(s, p, engine);
            if (!n.found) {
                if (error)
                    *error = tr("%1 runs no valid plan near this one (exact under its rules found none).")
                                 .arg(QString::fromUtf8(engineInfo(engine).label));
                return false;
            }
            // The plan on show is the plan exported; the script's estimate prices it with the
            // engine's collectives (n.scenario), as `export --write-nearest` does.
            m_planView->showPlan(tr("Nearest plan %1 runs (keeps %2)")
                                     .arg(QString::fromUtf8(engineInfo(engine).label), QString::fromStdString(n.kept)),
                                 n.plan);
            s = n.scenario;
        }
    }
    // The core refuses a deployment that breaks the scenario's limits (a what-if past the
    // memory or the TPOT limit), with the reasons: a launch config starts a real deployment.
    const Deployment d = m_planView->currentDeployment();
    // Disaggregated: both pools, their role flags and the router (docs/launch.md).
    auto c = shardlab::exportLaunchConfig(s, d, o);
    if (c.ok() && askReplacing) {
        QStringList companions;
        for (const std::string& f : launchConfigPaths(c.value(), localPath(path)))
            if (f != localPath(path))
                companions << QString::fromStdString(f);
        if (!confirmReplacing(m_window, companions)) {
            if (error)
                error->clear();
            return false;
        }
    }
    Status st = c.ok() ? writeLaunchConfig(c.value(), localPath(path)) : Status::failure(c.error());
    if (!st.ok()) {
        if (error)
            *error = QString::fromStdString(st.error->toString());
        return false;
    }
    if (warnings)
        for (const std::string& w : c.value().warnings)
            *warnings << QString::fromStdString(w);
    return true;
}

std::optional<bool> ExportController::askExportNearest(Engine e, const QString& engineName)
{
    if (m_planView->isDisaggregated())
        return false; // the core refuses a pool the engine does not run, naming the rule
    const FieldErrors broken = engineViolations(e, m_planView->currentPlan(), m_editor->scenario());
    if (broken.empty())
        return false;
    QStringList rules;
    for (const FieldError& f : broken)
        rules << QString::fromStdString(f.where + ": " + f.reason);
    QMessageBox box(QMessageBox::Warning, tr("Export launch config"),
                    tr("%1 does not run this plan as planned, so it is not exported as it is:\n• %2\n\n"
                       "Export the best plan %1 runs near it instead (exact under the engine's rules, this plan's "
                       "degrees kept where possible)? It is shown in the Plan tab.")
                        .arg(engineName, rules.join(QStringLiteral("\n• "))),
                    QMessageBox::Cancel, m_window);
    const QPushButton* accept = box.addButton(tr("Export the nearest plan"), QMessageBox::AcceptRole);
    box.exec();
    if (box.clickedButton() != accept)
        return std::nullopt;
    return true;
}

void ExportController::exportLaunchConfigDialog()
{
    QDialog dialog(m_window);
    dialog.setWindowTitle(tr("Export launch config"));
    auto* form = new QFormLayout(&dialog);
    auto* engine = new QComboBox(&dialog);
    for (const EngineInfo& e : launchEngines())
        engine->addItem(QStringLiteral("%1 %2").arg(QString::fromUtf8(e.label), QString::fromUtf8(e.version)),
                        static_cast<int>(e.engine));
    form->addRow(tr("Engine"), engine);
    auto* model = new QLineEdit(&dialog);
    model->setPlaceholderText(tr("HuggingFace id or path (default: the preset's checkpoint)"));
    form->addRow(tr("Checkpoint"), model);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const Engine e = static_cast<Engine>(engine->currentData().toInt());
    // A plan the engine does not run: say why, and offer the nearest plan it runs.
    const std::optional<bool> nearest = askExportNearest(e, engine->currentText());
    if (!nearest)
        return;
    const QString path = askSaveFileName(
        m_window, tr("Export launch config"), QStringLiteral("launch-%1.sh").arg(QString::fromUtf8(engineInfo(e).name)),
        tr("Shell script (*.sh)"));
    if (path.isEmpty())
        return;
    QString error;
    QStringList warnings;
    if (!exportLaunchConfig(path, e, model->text(), &error, &warnings, *nearest, true)) {
        if (!error.isEmpty()) // empty: the user kept the files it would have replaced
            Q_EMIT message(error, true);
        return;
    }
    QString text = tr("Wrote the %1 launch config for the plan in the Plan tab to %2.")
                       .arg(engine->currentText(), path);
    if (!warnings.isEmpty())
        text += QLatin1Char(' ') + tr("%n note(s) for the serving team (also in the script):", nullptr,
                                      int(warnings.size()))
            + QStringLiteral("\n• ") + warnings.join(QStringLiteral("\n• "));
    Q_EMIT message(text, false);
}

QStringList ExportController::plotPaths(const QString& path)
{
    const QFileInfo fi(path);
    QStringList out;
    for (const char* part : {"throughput", "plan", "memory", "comparison"})
        out << fi.path() + QLatin1Char('/') + fi.completeBaseName() + QLatin1Char('-') + QLatin1String(part)
                + QLatin1Char('.') + fi.suffix();
    return out;
}

bool ExportController::exportPlots(const QString& path, QStringList* written, QString* error)
{
    const QStringList files = plotPaths(path);
    const std::pair<QString, std::function<bool(const QString&, QString*)>> parts[] = {
        {files[0], [this](const QString& p, QString* e) { return m_panel->exportCurve(p, e); }},
        {files[1], [this](const QString& p, QString* e) { return m_planView->exportPlots(p, e); }},
        {files[2], [this](const QString& p, QString* e) { return m_planView->exportMemoryPlot(p, e); }},
        {files[3], [this](const QString& p, QString* e) { return m_planView->exportComparisonTable(p, e); }},
    };
    for (const auto& [file, write] : parts) {
        if (!write(file, error))
            return false;
        if (written)
            *written << file;
    }
    return true;
}

void ExportController::exportPlotsDialog()
{
    const QString path = askSaveFileName(m_window, tr("Export plots"), QStringLiteral("shardlab.png"),
                                         tr("PNG image (*.png);;PDF document (*.pdf)"));
    // The dialog asked about `path`, which is not written: the files beside it are.
    if (path.isEmpty() || !confirmReplacing(m_window, plotPaths(path)))
        return;
    QStringList written;
    QString error;
    const bool ok = exportPlots(path, &written, &error);
    Q_EMIT message(ok ? tr("Exported %1").arg(written.join(QStringLiteral(", ")))
                      : tr("Could not export the plots: %1").arg(error),
                   !ok);
}

} // namespace shardlab::ui
