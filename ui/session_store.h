// The window's session on disk: the runs and the scenario being edited, each in its own
// JSON file in the user's data directory, written as they change (at most once a second,
// each file atomically through the core's write path) so that a kill, a crash or a power
// cut loses at most the last second of work. Small preferences (geometry, algorithm,
// budget, seed, recent files) stay in QSettings, synced on the same tick.
//
// Files (docs/window.md, "The session files", gives the schema):
//   runs.json   {"format": "shardlab-runs", "version": 1, "runs": [...]}
//   draft.json  {"format": "shardlab-draft", "version": 1, "path", "modified",
//                "scenario": {...}}
// A file is rewritten only when its content changed; its modification time is when the
// session was saved.
// Both are read through the core's read path: regular files only, 64 MiB at most.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

class QTimer;

namespace shardlab::ui {

class SessionStore : public QObject {
    Q_OBJECT
public:
    // `save` writes the session when called; the store calls it at most once per interval.
    SessionStore(std::function<void()> save, QObject* parent = nullptr);

    // The directory of the session files (QStandardPaths::AppDataLocation).
    static QString directory();
    static QString runsPath();
    static QString draftPath();
    // The file QSettings reads for this application (computed without constructing a
    // QSettings, which reads the file at once).
    static QString settingsPath();
    // Checked before anything reads the settings: a settings file that is not a
    // regular file (a FIFO would hang the start, a device would be read forever) or is over
    // 64 MiB is not touched; QSettings is pointed at an empty scratch directory for this
    // process. Returns why ("" when the file is fine or missing).
    static QString guardSettingsFile();

    // A change happened: the session is written within `interval` ms (the first change
    // starts the clock; later ones before it fires ride along).
    void changed();
    // Writes now (closing the window) and stops the clock.
    void flush();
    static constexpr int kIntervalMs = 1000;

    // The last session's draft: the scenario being edited, its file and whether it had
    // edits not saved to that file.
    struct Draft {
        QString path;
        bool modified = false;
        QByteArray scenarioJson;
        QDateTime savedAt;
    };
    // The saved draft, nothing when there is none; *error says why a file that exists
    // could not be used.
    static std::optional<Draft> readDraft(QString* error);
    static QByteArray draftJson(const Draft& d);
    // The runs file's bytes ("" when there is none); *error as above.
    static QByteArray readRuns(QString* error);
    // A session file that could not be used is renamed to "<name>.unreadable" (replacing an
    // earlier one) so that the next save does not overwrite what may be another version's
    // work; returns "kept as PATH", or "" when there was no file or it could not be moved.
    static QString setAside(const QString& path);
    // Writes `bytes` to `path` unless they equal what the store last wrote there; false
    // with "FILE: reason" in *error.
    bool writeIfChanged(const QString& path, const QByteArray& bytes, QString* error);

private:
    std::function<void()> m_save;
    QTimer* m_timer = nullptr;
    QHash<QString, QByteArray> m_written;
};

} // namespace shardlab::ui
