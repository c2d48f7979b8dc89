#include "document_controller.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QUndoStack>
#include <QWidget>

#include <algorithm>

#include "file_export.h"
#include "io/input_file.h"
#include "io/presets.h"
#include "io/profile_json.h"
#include "io/scenario_json.h"
#include "live_edit_command.h"
#include "save_dialog.h"
#include "scenario_draft.h"
#include "scenario_editor.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {

constexpr int kMaxRecent = 8;

QStringList changedPaths(const Scenario& a, const Scenario& b)
{
    QStringList paths;
    for (const ScenarioDifference& d : scenarioFieldDifferences(a, b))
        paths << QString::fromStdString(d.path);
    return paths;
}

// One scenario edit on the undo stack; edits of the same fields merge (LiveEditCommand),
// names and descriptions included.
class ScenarioEditCommand : public LiveEditCommand<Scenario, QStringList> {
public:
    ScenarioEditCommand(DocumentController* d, const Scenario& before, const Scenario& after, const QString& text = {})
        : LiveEditCommand(before, after, changedPaths(before, after), true), m_d(d)
    {
        // The fields in the words of the editor ("Edit TPOT SLO"), not their JSON paths.
        QStringList words;
        for (const QString& path : key())
            if (const QString w = d->fieldWords(path); !words.contains(w))
                words << w;
        if (words.size() > 3)
            words = words.mid(0, 3) << QObject::tr("%n more", nullptr, int(key().size()) - 3);
        setText(!text.isEmpty()   ? text
                : words.isEmpty() ? QObject::tr("Rename")
                                  : QObject::tr("Edit %1").arg(words.join(QStringLiteral(", "))));
    }
    int id() const override { return 16; }

private:
    void apply(const Scenario& s) override { m_d->applyScenarioState(s); }
    DocumentController* m_d;
};

} // namespace

DocumentController::DocumentController(QWidget* window, ScenarioEditor* editor, QObject* parent)
    : QObject(parent), m_window(window), m_editor(editor), m_undo(new QUndoStack(this))
{
    connect(m_editor, &ScenarioEditor::scenarioEdited, this, &DocumentController::onEditorEdited);
}

void DocumentController::setScenario(const Scenario& s, const QString& path)
{
    Q_EMIT aboutToReplaceScenario();
    m_editor->setScenario(s);
    m_shownScenario = s;
    m_undo->clear(); // another scenario: its edits start here
    m_path = path;
    m_modified = false;
    updateTitle();
    Q_EMIT scenarioReplaced(s);
}

void DocumentController::setModified(bool modified)
{
    m_modified = modified;
    updateTitle();
}

void DocumentController::updateTitle()
{
    // "[*]" is where Qt puts the "*" of windowModified.
    const QString name = scenarioTitle(m_editor->scenario());
    m_window->setWindowTitle(
        tr("ShardLab — %1%2[*]")
            .arg(name.isEmpty() ? tr("(unnamed)") : name,
                 m_path.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(QFileInfo(m_path).fileName())));
    m_window->setWindowModified(m_modified);
    Q_EMIT documentChanged(); // the file, its edits or the name changed
}

void DocumentController::onEditorEdited()
{
    const Scenario before = m_shownScenario;
    const Scenario now = m_editor->scenario();
    if (!m_applyingUndo)
        m_undo->push(new ScenarioEditCommand(this, before, now));
    applyScenarioChange(before, now);
}

void DocumentController::applyScenarioState(const Scenario& s)
{
    m_applyingUndo = true;
    const Scenario before = m_shownScenario;
    m_editor->setScenario(s);
    applyScenarioChange(before, s);
    m_applyingUndo = false;
}

QString DocumentController::fieldWords(const QString& path) const { return m_editor->fieldLabel(path); }

bool DocumentController::applyEdit(const Scenario& now, const QString& undoText)
{
    const Scenario before = m_editor->scenario();
    if (scenarioDifferences(now, before).empty() && now.name == before.name)
        return false;
    m_undo->push(new ScenarioEditCommand(this, before, now, undoText));
    applyScenarioState(now);
    return true;
}

void DocumentController::applyScenarioChange(const Scenario& before, const Scenario& now)
{
    m_shownScenario = now;
    m_modified = true;
    updateTitle();
    Q_EMIT scenarioEdited(before, now);
}

void DocumentController::loadProfileDialog()
{
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Load kernel profile"), QFileInfo(m_path).path(),
                                                      tr("ShardLab kernel profile (*.json)"));
    if (!path.isEmpty())
        loadProfile(path);
}

bool DocumentController::loadProfile(const QString& path)
{
    auto p = loadProfileFile(localPath(path));
    if (!p.ok()) {
        QStringList lines;
        for (const FieldError& e : p.errors)
            lines << plainNumbers(QString::fromStdString(e.toString()));
        Q_EMIT message(lines.join(QLatin1Char('\n')), true);
        return false;
    }
    // The profile's kernel tables and knobs replace the scenario's (docs/profiles.md): one
    // undoable edit, so the previous figures are one Ctrl+Z away.
    const Scenario before = m_editor->scenario();
    Scenario now = before;
    const QString name = QString::fromStdString(p.value.name);
    applyProfile(now.cluster, std::make_shared<const KernelProfile>(std::move(p.value)));
    m_undo->push(new ScenarioEditCommand(this, before, now, tr("Load kernel profile %1").arg(name)));
    applyScenarioState(now);
    // Measured on another GPU model than the cluster's: said inline, as the CLI warns.
    const std::string mismatch = profileGpuMismatch(now.cluster);
    Q_EMIT message(tr("Kernel profile %1 loaded from %2: its kernel tables and efficiencies now price every plan "
                      "(Edit > Undo restores the previous ones)")
                           .arg(name, path)
                       + (mismatch.empty() ? QString() : tr(". Warning: %1").arg(QString::fromStdString(mismatch))),
                   !mismatch.empty());
    return true;
}

QString DocumentController::variantFor(const Scenario& s, QString* note)
{
    for (const Variant& v : m_variants)
        if (scenarioDifferences(v.scenario, s).empty()) {
            if (note)
                note->clear();
            return v.name;
        }
    Variant v;
    v.name = tr("V%1").arg(m_variants.size() + 1);
    v.scenario = s;
    QString text;
    if (m_variants.empty()) {
        text = tr("%1 as first run").arg(shownName(s.name));
    } else {
        QStringList lines;
        for (const ScenarioDifference& d : scenarioFieldDifferences(m_variants.back().scenario, s))
            lines << plainNumbers(QString::fromStdString(d.path + ": " + d.first + " → " + d.second));
        text = tr("vs %1: %2").arg(m_variants.back().name, lines.join(QStringLiteral("; ")));
    }
    m_variants.push_back(v);
    if (note)
        *note = text;
    m_variantNotes[v.name] = text;
    return v.name;
}

void DocumentController::addKnownVariant(const QString& name, const Scenario& s, const QString& note)
{
    if (std::any_of(m_variants.begin(), m_variants.end(), [&](const Variant& v) { return v.name == name; }))
        return;
    m_variants.push_back({name, s});
    m_variantNotes[name] = note;
}

void DocumentController::newFromPreset(const QString& name)
{
    if (!maybeSave())
        return;
    auto s = scenarioPreset(name.toStdString());
    if (s.ok())
        setScenario(s.value);
}

// A file that could not be opened leaves the editor as it was: the message says so, and
// which scenario it still shows, so nobody runs that one taking it for the file's.
QString DocumentController::notOpened(const QString& why) const
{
    return why + QLatin1Char('\n')
        + tr("Not opened: the editor still shows %1.").arg(QString::fromStdString(m_editor->scenario().name));
}

bool DocumentController::openScenarioFile(const QString& path)
{
    const auto text = readTextFile(localPath(path));
    if (!text.ok()) {
        Q_EMIT message(notOpened(QString::fromStdString(text.error().toString())), true);
        return false;
    }
    const ScenarioLoad load = readScenarioForEditor(text.value(), inputLabel(localPath(path)));
    if (!applyLoad(load, path, path))
        return false;
    addRecent(path);
    return true;
}

bool DocumentController::applyLoad(const ScenarioLoad& load, const QString& path, const QString& source)
{
    if (!load.ok) {
        Q_EMIT message(notOpened(load.errors.join(QLatin1Char('\n'))), true);
        return false;
    }
    setScenario(load.scenario, path);
    if (!load.draft)
        return true;
    for (const auto& [field, value] : load.rawValues)
        m_editor->setFieldValue(field, value);
    // The values put back change the scenario: the panel and plan view follow.
    m_shownScenario = m_editor->scenario();
    Q_EMIT draftValuesRestored(m_shownScenario);
    updateTitle();
    // Cleared once the problems are fixed.
    Q_EMIT problemsMessage(tr("Opened %1 as saved, with %n problem(s) marked in the scenario editor: fix them to run "
                              "a search.",
                              nullptr, int(m_editor->problems().size()))
                               .arg(source));
    return true;
}

void DocumentController::openDialog()
{
    if (!maybeSave())
        return;
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Open scenario"), QFileInfo(m_path).path(),
                                                      tr("ShardLab scenario (*.json)"));
    if (!path.isEmpty())
        openScenarioFile(path);
}

bool DocumentController::isProtectedScenarioPath(const QString& path)
{
    const QFileInfo fi(path);
    if (fi.exists() && !fi.isWritable())
        return true;
    // A shipped preset: resources/scenarios/NAME.json where NAME is a preset's name.
    const QDir dir = fi.absoluteDir();
    if (dir.dirName() != QLatin1String("scenarios") || QFileInfo(dir.absolutePath()).dir().dirName() != QLatin1String("resources"))
        return false;
    for (const PresetFile& f : scenarioPresetFiles())
        if (fi.completeBaseName() == QString::fromStdString(f.name))
            return true;
    return false;
}

QString DocumentController::suggestedScenarioPath() const
{
    QString dir;
    if (!m_path.isEmpty() && !isProtectedScenarioPath(m_path))
        dir = QFileInfo(m_path).absolutePath();
    else
        dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    // Named as the title shows it: an edited preset suggests "NAME-edited", not the preset.
    QString base = QString::fromStdString(shownScenarioName(m_editor->scenario())).trimmed();
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    while (base.endsWith(QLatin1Char('-')))
        base.chop(1);
    if (base.isEmpty())
        base = QStringLiteral("scenario");
    return QDir(dir).filePath(base + QStringLiteral(".json"));
}

bool DocumentController::saveScenarioTo(const QString& requested, QString* error)
{
    QString path = requested;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".json");
    // Saved as it is, problems included: the file reopens in the editor with them marked.
    const Status st = saveScenarioFile(localPath(path), m_editor->scenario());
    if (!st.ok()) {
        const QString text = QString::fromStdString(st.error->toString());
        if (error)
            *error = text;
        Q_EMIT message(text, true);
        return false;
    }
    m_path = path;
    m_modified = false;
    updateTitle();
    addRecent(m_path);
    const int problems = int(m_editor->problems().size());
    if (problems == 0)
        Q_EMIT message(tr("Saved %1").arg(m_path), false);
    else
        Q_EMIT problemsMessage(tr("Saved %1 with %n problem(s): it reopens in the scenario editor with them marked, "
                                  "and cannot run until they are fixed.",
                                  nullptr, problems)
                                   .arg(m_path));
    return true;
}

bool DocumentController::saveScenario()
{
    if (m_path.isEmpty() || isProtectedScenarioPath(m_path))
        return saveScenarioAs();
    return saveScenarioTo(m_path);
}

bool DocumentController::saveScenarioAs()
{
    QString note;
    if (!m_path.isEmpty() && isProtectedScenarioPath(m_path))
        note = tr(" (%1 is a shipped or read-only file: save a copy)").arg(QFileInfo(m_path).fileName());
    // ".json" is added to a name typed without one before the dialog asks about replacing it.
    const QString path = askSaveFileName(m_window, tr("Save scenario%1").arg(note), suggestedScenarioPath(),
                                         tr("ShardLab scenario (*.json)"));
    if (path.isEmpty())
        return false;
    return saveScenarioTo(path);
}

bool DocumentController::maybeSave()
{
    if (!m_modified)
        return true;
    const auto answer = QMessageBox::question(m_window, tr("Unsaved changes"),
                                              tr("The scenario has unsaved changes. Save them first?"),
                                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return saveScenario();
    // Discard: the edits stay marked as unsaved until something replaces them (an open
    // that is cancelled or fails keeps them, and asks again), or the window closes.
    return answer == QMessageBox::Discard;
}

bool DocumentController::setAsideUnsavedEdits(const QString& dir, QString* path, QString* error)
{
    path->clear();
    if (!m_modified)
        return true;
    if (!QDir().mkpath(dir)) {
        *error = tr("%1: cannot create the folder").arg(dir);
        return false;
    }
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString file = QDir(dir).filePath(QStringLiteral("unsaved-edits-%1.json").arg(stamp));
    for (int n = 2; QFileInfo::exists(file); ++n) // never over an earlier set-aside
        file = QDir(dir).filePath(QStringLiteral("unsaved-edits-%1-%2.json").arg(stamp).arg(n));
    const Status st = saveScenarioFile(localPath(file), m_editor->scenario());
    if (!st.ok()) {
        *error = QString::fromStdString(st.error->toString());
        return false;
    }
    *path = file;
    addRecent(file);
    return true;
}

void DocumentController::addRecent(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    rebuildRecentMenu();
}

void DocumentController::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] {
            if (maybeSave())
                openScenarioFile(path);
        });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

} // namespace shardlab::ui
