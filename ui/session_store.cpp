#include "session_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <sys/stat.h>

#include "file_export.h"
#include "io/atomic_file.h"
#include "io/input_file.h"

namespace shardlab::ui {

namespace {

constexpr auto kDraftFormat = "shardlab-draft";
constexpr int kDraftVersion = 1;

// The file's bytes; "" and no error when it does not exist.
QByteArray readIfPresent(const QString& path, QString* error)
{
    struct stat st {};
    if (::lstat(localPath(path).c_str(), &st) != 0)
        return {};
    const auto text = readTextFile(localPath(path));
    if (!text.ok()) {
        if (error)
            *error = QString::fromStdString(text.error().toString());
        return {};
    }
    return QByteArray::fromStdString(text.value());
}

} // namespace

SessionStore::SessionStore(std::function<void()> save, QObject* parent) : QObject(parent), m_save(std::move(save))
{
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(kIntervalMs);
    connect(m_timer, &QTimer::timeout, this, [this] { m_save(); });
}

QString SessionStore::directory() { return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation); }

QString SessionStore::runsPath() { return directory() + QStringLiteral("/runs.json"); }

QString SessionStore::draftPath() { return directory() + QStringLiteral("/draft.json"); }

QString SessionStore::settingsPath()
{
    // QSettings' NativeFormat on Unix: <config>/<organization>/<application>.conf, with
    // "Unknown Organization" when none is set.
    QString org = QCoreApplication::organizationName();
    if (org.isEmpty())
        org = QStringLiteral("Unknown Organization");
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) + QLatin1Char('/') + org
        + QLatin1Char('/') + QCoreApplication::applicationName() + QStringLiteral(".conf");
}

QString SessionStore::guardSettingsFile()
{
    // Checked at every start of a window (a stat); once redirected, this process's settings
    // stay in the scratch directory.
    const QString path = settingsPath();
    struct stat st {};
    if (::stat(localPath(path).c_str(), &st) != 0)
        return {}; // missing (or a dangling link): QSettings creates it
    if (S_ISREG(st.st_mode) && st.st_size <= kMaxInputBytes)
        return {};
    const auto text = readTextFile(localPath(path)); // the same refusal every input gets
    const QString problem =
        text.ok() ? QStringLiteral("%1: not usable").arg(path) : QString::fromStdString(text.error().toString());
    // Settings of this process go to a scratch directory that starts empty: the window
    // starts with defaults, and the file is neither read nor replaced.
    // A fresh private directory (mkdtemp), never a predictable name in /tmp that another user
    // could have placed; it lives as long as the process and is removed at exit.
    static QTemporaryDir scratch(QDir::tempPath() + QStringLiteral("/shardlab-settings-XXXXXX"));
    // Without one (no writable temporary directory), a directory that does not exist: the
    // settings read as empty and are not saved, which is still not a hang.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                       scratch.isValid() ? scratch.path() : QStringLiteral("/nonexistent/shardlab-settings"));
    return problem;
}

void SessionStore::changed()
{
    if (!m_timer->isActive())
        m_timer->start();
}

void SessionStore::flush()
{
    m_timer->stop();
    m_save();
}

std::optional<SessionStore::Draft> SessionStore::readDraft(QString* error)
{
    const QString path = draftPath();
    const QByteArray bytes = readIfPresent(path, error);
    if (bytes.isEmpty())
        return std::nullopt;
    QJsonParseError parse{};
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parse);
    const QJsonObject o = doc.object();
    auto fail = [&](const QString& why) -> std::optional<Draft> {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, why);
        return std::nullopt;
    };
    if (!doc.isObject())
        return fail(QStringLiteral("not a JSON object (%1)").arg(parse.errorString()));
    if (o.value(QStringLiteral("format")).toString() != QLatin1String(kDraftFormat))
        return fail(QStringLiteral("format: expected \"%1\"").arg(QLatin1String(kDraftFormat)));
    if (o.value(QStringLiteral("version")).toInt() != kDraftVersion)
        return fail(QStringLiteral("version: %1 is not %2, the version this ShardLab reads")
                        .arg(o.value(QStringLiteral("version")).toVariant().toString())
                        .arg(kDraftVersion));
    if (!o.value(QStringLiteral("scenario")).isObject())
        return fail(QStringLiteral("scenario: expected an object"));
    Draft d;
    d.path = o.value(QStringLiteral("path")).toString();
    d.modified = o.value(QStringLiteral("modified")).toBool();
    d.scenarioJson = QJsonDocument(o.value(QStringLiteral("scenario")).toObject()).toJson(QJsonDocument::Compact);
    d.savedAt = QFileInfo(path).lastModified();
    return d;
}

QByteArray SessionStore::draftJson(const Draft& d)
{
    QJsonObject o{{QStringLiteral("format"), QLatin1String(kDraftFormat)},
                  {QStringLiteral("version"), kDraftVersion},
                  {QStringLiteral("path"), d.path},
                  {QStringLiteral("modified"), d.modified},
                  {QStringLiteral("scenario"), QJsonDocument::fromJson(d.scenarioJson).object()}};
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

QByteArray SessionStore::readRuns(QString* error) { return readIfPresent(runsPath(), error); }

QString SessionStore::setAside(const QString& path)
{
    struct stat st {};
    if (::lstat(localPath(path).c_str(), &st) != 0)
        return {};
    const QString aside = path + QStringLiteral(".unreadable");
    if (::rename(localPath(path).c_str(), localPath(aside).c_str()) != 0)
        return {};
    return tr("kept as %1").arg(aside);
}

bool SessionStore::writeIfChanged(const QString& path, const QByteArray& bytes, QString* error)
{
    const auto last = m_written.constFind(path);
    if (last != m_written.constEnd() && *last == bytes)
        return true;
    QDir().mkpath(QFileInfo(path).path());
    const Status st = writeFileAtomically(localPath(path), std::string_view(bytes.constData(), size_t(bytes.size())));
    if (!st.ok()) {
        if (error)
            *error = QString::fromStdString(st.error->toString());
        m_written.remove(path);
        return false;
    }
    m_written.insert(path, bytes);
    return true;
}

} // namespace shardlab::ui
