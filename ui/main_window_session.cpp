// The window's session: what it keeps across starts. Preferences (geometry, algorithm,
// budget, seed, recent files) live in QSettings; the runs and the scenario being edited
// live in the session files (session_store.h). Everything is saved as it changes, at most
// once a second, so a kill loses at most the last second; the next start says what it
// restored, and a session file it cannot read is set aside, never overwritten.
#include <QCloseEvent>
#include <QCoreApplication>
#include <QLabel>
#include <QSettings>

#include "document_controller.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "main_window.h"
#include "pareto_view.h"
#include "scenario_draft.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "search_toolbar.h"
#include "session_store.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {

const char* kDefaultScenario = "llama3-70b-8gpu";

// Keys the window wrote before the session files existed: read once, then removed.
const QString kLegacyRuns = QStringLiteral("runs");
const QString kLegacyPath = QStringLiteral("lastScenarioPath");
const QString kLegacyJson = QStringLiteral("lastScenarioJson");
const QString kLegacyModified = QStringLiteral("lastScenarioModified");

} // namespace

void MainWindow::startSession()
{
    // Saved as it changes: runs, the scenario (its edits, its file), the search settings.
    m_session = new SessionStore([this] { saveSession(); }, this);
    connect(m_document, &DocumentController::documentChanged, m_session, &SessionStore::changed);
    restoreSettings();
    connect(m_panel, &SearchPanel::runsChanged, m_session, &SessionStore::changed);
    connect(this, &MainWindow::scenarioChanged, m_session, &SessionStore::changed);
    connect(m_toolbar, &SearchToolbar::settingsChanged, m_session, &SessionStore::changed);
    // Quitting the application without closing the window (a scripted run's
    // --quit-when-done, a quit from the session manager) writes the session as closing it
    // does: the search stopped first, so the runs written are the ones the window shows.
    connect(QCoreApplication::instance(), &QCoreApplication::aboutToQuit, this, [this] {
        m_controller.shutdown();
        m_session->flush();
    });
    // The Pareto tab computes on the scenario in the editor, as it is when asked.
    connect(this, &MainWindow::scenarioChanged, this, [this] { m_pareto->setScenario(m_editor->scenario()); });
    m_pareto->setScenario(m_editor->scenario());
}

void MainWindow::restoreSettings()
{
    QStringList problems;
    const QString settingsProblem = SessionStore::guardSettingsFile();
    if (!settingsProblem.isEmpty())
        problems << tr("%1; settings are neither read nor saved this session").arg(settingsProblem);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    m_toolbar->setAlgorithm(settings.value(QStringLiteral("algorithm"), QStringLiteral("anneal")).toString());
    m_toolbar->setBudget(settings.value(QStringLiteral("budget"), SearchOptions{}.budget).toInt());
    m_toolbar->setSeed(settings.value(QStringLiteral("seed"), 0).toInt());
    m_document->rebuildRecentMenu();

    QString error;
    std::optional<SessionStore::Draft> draft = SessionStore::readDraft(&error);
    if (!error.isEmpty())
        problems << error + QStringLiteral(" (") + SessionStore::setAside(SessionStore::draftPath()) + QLatin1Char(')');
    else if (!draft && (settings.contains(kLegacyPath) || settings.contains(kLegacyJson)))
        draft = SessionStore::Draft{settings.value(kLegacyPath).toString(), settings.value(kLegacyModified).toBool(),
                                    settings.value(kLegacyJson).toByteArray(), {}};
    error.clear();
    QByteArray runs = SessionStore::readRuns(&error);
    if (!error.isEmpty())
        problems << error + QStringLiteral(" (") + SessionStore::setAside(SessionStore::runsPath()) + QLatin1Char(')');
    else if (runs.isEmpty())
        runs = settings.value(kLegacyRuns).toByteArray();

    QStringList restored;
    const QString scenario = restoreScenario(draft);
    if (!scenario.isEmpty())
        restored << scenario;
    // Runs after the scenario, which would otherwise be taken as the first variant.
    bool unreadable = false;
    const QString runsNote = restoreSavedRuns(runs, &unreadable);
    if (!runsNote.isEmpty())
        restored << runsNote;
    if (unreadable)
        problems << tr("%1: %2 (%3)")
                        .arg(SessionStore::runsPath(),
                             m_panel->restoreNote().isEmpty() ? tr("not a ShardLab runs file of version 1")
                                                              : m_panel->restoreNote(),
                             SessionStore::setAside(SessionStore::runsPath()));
    reportRestore(restored, problems, draft ? draft->savedAt : QDateTime());
}

QString MainWindow::restoreSavedRuns(const QByteArray& runs, bool* unreadable)
{
    if (runs.isEmpty())
        return {};
    if (!m_panel->restoreRuns(runs)) {
        *unreadable = true;
        return {};
    }
    if (m_panel->runCount() == 0)
        return {};
    for (int i = 0; i < m_panel->runCount(); ++i) {
        const SearchPanel::RunInfo r = m_panel->runInfo(i);
        m_document->addKnownVariant(r.variant, r.scenario, r.variantNote);
    }
    QString note = m_panel->runCount() == 1 ? tr("1 run") : tr("%1 runs").arg(m_panel->runCount());
    if (!m_panel->restoreNote().isEmpty())
        note += QStringLiteral(" (") + m_panel->restoreNote() + QLatin1Char(')');
    return note;
}

// The last scenario: its file when it had no unsaved edits, else the session's copy, else
// the first benchmark scenario. Returns what was restored ("" for the preset); a restore
// that fails says so (and why) in the message line.
QString MainWindow::restoreScenario(const std::optional<SessionStore::Draft>& draft)
{
    QString failure;
    if (draft && !draft->path.isEmpty() && !draft->modified) {
        if (m_document->openScenarioFile(draft->path))
            return tr("reopened %1").arg(draft->path);
        // The reader's message names the file; the path is not repeated before it.
        failure = statusText().contains(draft->path)
            ? tr("Could not reopen the last scenario: %1").arg(statusText())
            : tr("Could not reopen the last scenario, %1: %2").arg(draft->path, statusText());
    }
    if (draft && !draft->scenarioJson.isEmpty()) {
        const ScenarioLoad load = readScenarioForEditor(draft->scenarioJson.toStdString(), "(last session)");
        if (load.ok) {
            m_document->applyLoad(load, draft->modified ? draft->path : QString(), tr("the last session's scenario"));
            if (draft->modified)
                m_document->setModified(true); // still not saved to its file
            if (!failure.isEmpty())
                showMessage(failure + tr("; showing the last session's copy instead."), true);
            const QString name = shownName(load.scenario.name);
            return draft->modified && !draft->path.isEmpty()
                ? tr("scenario %1 with the edits not saved to %2").arg(name, draft->path)
                : tr("scenario %1 as it was being edited").arg(name);
        }
        const QString why = load.errors.join(QStringLiteral("; "));
        failure = failure.isEmpty() ? tr("Could not restore the last session's scenario: %1").arg(why)
                                    : failure + QStringLiteral("; ") + why;
    }
    auto s = scenarioPreset(kDefaultScenario);
    if (s.ok())
        m_document->setScenario(s.value);
    if (!failure.isEmpty())
        showMessage(failure + tr(" Showing the preset %1 instead.").arg(QString::fromLatin1(kDefaultScenario)), true);
    return {};
}

// One line first in the message area: what came back from the last session and what could
// not, above whatever the restore itself reported (a draft's problems, a file not found).
void MainWindow::reportRestore(const QStringList& restored, const QStringList& problems, const QDateTime& savedAt)
{
    QString line;
    if (!restored.isEmpty())
        line = (savedAt.isValid() ? tr("Restored the last session (saved %1): %2.")
                                        .arg(QLocale().toString(savedAt.toLocalTime(), QLocale::ShortFormat))
                                  : tr("Restored the last session: %1."))
                   .arg(restored.join(QStringLiteral("; ")));
    if (!problems.isEmpty())
        line += (line.isEmpty() ? QString() : QStringLiteral(" "))
            + tr("Not restored: %1.").arg(problems.join(QStringLiteral("; ")));
    if (line.isEmpty())
        return;
    const QString before = statusText();
    showMessage(before.isEmpty() ? line : line + QLatin1Char('\n') + before, m_messageIsError || !problems.isEmpty());
}

// Preferences to QSettings, runs and the scenario to the session files (each rewritten
// only when it changed). A failure is said once, not at every tick.
void MainWindow::saveSession()
{
    const SessionStore::Draft draft{m_document->currentPath(), m_document->isModified(), QByteArray::fromStdString(scenarioToJson(m_editor->scenario())), {}};
    QString error;
    const bool ok = m_session->writeIfChanged(SessionStore::runsPath(), m_panel->runsToJson(), &error)
        && m_session->writeIfChanged(SessionStore::draftPath(), SessionStore::draftJson(draft), &error);
    // QSettings rewrites its file on every setValue or remove, changed or not: only what
    // changed is set (this runs every second during a search), and the old keys go once
    // their content is in the session files.
    QSettings settings;
    const std::pair<QString, QVariant> prefs[] = {{QStringLiteral("geometry"), saveGeometry()},
                                                  {QStringLiteral("windowState"), saveState()},
                                                  {QStringLiteral("algorithm"), m_toolbar->algorithm()},
                                                  {QStringLiteral("budget"), m_toolbar->budget()},
                                                  {QStringLiteral("seed"), m_toolbar->seed()}};
    for (const auto& [key, value] : prefs)
        if (settings.value(key) != value)
            settings.setValue(key, value);
    for (const QString& key : {kLegacyRuns, kLegacyPath, kLegacyJson, kLegacyModified})
        if (ok && settings.contains(key))
            settings.remove(key);
    settings.sync();
    if (!ok && error != m_sessionError)
        showMessage(tr("Could not save the session (runs and the scenario being edited): %1").arg(error), true);
    m_sessionError = ok ? QString() : error;
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!m_document->maybeSave()) {
        event->ignore();
        return;
    }
    // Saved, or discarded: the next start reopens the file, not the discarded edits.
    m_document->setModified(false);
    m_controller.shutdown();
    m_session->flush();
    event->accept();
}

} // namespace shardlab::ui
