// The window never loses work: the runs and the scenario being edited are on disk within a
// second of changing, so a window that is destroyed without closing (as a kill, a crash or
// a power cut would end it) comes back with them; the next start says what it restored; a
// session or settings file that is not a regular file, or another version's, neither hangs
// the start nor is overwritten.
#include <QtTest>

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTimer>

#include <sys/stat.h>
#include <unistd.h>

#include "qcp.h"
#include "window_fixtures.h"
#include "main_window.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "session_store.h"

using namespace shardlab;
using namespace shardlab::ui;

namespace {

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

int savedOutputTokens()
{
    return readJson(SessionStore::draftPath())
        .value(QStringLiteral("scenario"))
        .toObject()
        .value(QStringLiteral("workload"))
        .toObject()
        .value(QStringLiteral("output_tokens"))
        .toInt();
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }

    // Edits and runs reach the disk within a second, without the window closing; a new
    // window restores them and says so.
    void aKilledWindowLosesAtMostASecond()
    {
        {
            auto* w = new MainWindow;
            QVERIFY(runSearch(*w, QStringLiteral("random"), 200));
            QVERIFY(w->searchPanel()->renameRun(0, QStringLiteral("before the kill")));
            // The rename started the store's clock; write it out so that the clock is stopped
            // and only the edit below can start it again.
            auto* store = w->findChild<SessionStore*>();
            QVERIFY(store);
            auto* clock = store->findChild<QTimer*>();
            QVERIFY(clock && clock->isSingleShot());
            store->flush();
            QVERIFY(!clock->isActive());
            w->scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"))->setValue(777);
            QVERIFY(w->isModified());
            // The edit started the clock, a single shot of the store's interval. The write itself
            // is waited for with room to spare, since a loaded machine (the suite runs two tests
            // at a time) can delay any event loop by seconds.
            QVERIFY(clock->isActive());
            QElapsedTimer t;
            t.start();
            QTRY_COMPARE_WITH_TIMEOUT(savedOutputTokens(), 777, 15000);
            qInfo("the edit was on disk after %lld ms", static_cast<long long>(t.elapsed()));
            const QJsonObject runs = readJson(SessionStore::runsPath());
            QCOMPARE(runs.value(QStringLiteral("format")).toString(), QStringLiteral("shardlab-runs"));
            QCOMPARE(runs.value(QStringLiteral("version")).toInt(), 1);
            delete w; // no closeEvent: nothing is saved on the way out, as after a kill
        }
        MainWindow b;
        QCOMPARE(b.scenario().workload.outputTokens, 777);
        QVERIFY(b.isModified());
        QCOMPARE(b.searchPanel()->runCount(), 1);
        QCOMPARE(b.searchPanel()->runInfo(0).name, QStringLiteral("before the kill"));
        QVERIFY(b.searchPanel()->runInfo(0).found);
        QVERIFY2(b.statusText().contains(QStringLiteral("Restored the last session")), qPrintable(b.statusText()));
        QVERIFY2(b.statusText().contains(QStringLiteral("1 run")), qPrintable(b.statusText()));
    }

    // A search cut off by the kill comes back as "interrupted", with its curve so far.
    void aRunningSearchComesBackInterrupted()
    {
        {
            auto* w = new MainWindow;
            w->setAlgorithm(QStringLiteral("random"));
            w->setBudget(1000000);
            QVERIFY(w->startSearch());
            QTRY_VERIFY_WITH_TIMEOUT(
                readJson(SessionStore::runsPath()).value(QStringLiteral("runs")).toArray().size() == 1
                    && !readJson(SessionStore::runsPath())
                            .value(QStringLiteral("runs"))
                            .toArray()
                            .first()
                            .toObject()
                            .value(QStringLiteral("curve"))
                            .toArray()
                            .isEmpty(),
                10000);
            delete w; // stops the worker; saves nothing
        }
        MainWindow b;
        QCOMPARE(b.searchPanel()->runCount(), 1);
        QCOMPARE(b.searchPanel()->runInfo(0).status, QStringLiteral("interrupted"));
        QVERIFY(!b.searchPanel()->runInfo(0).found);
    }

    // Another version's runs file and a FIFO as the draft: the start neither hangs nor
    // guesses, says why, and keeps the files aside instead of overwriting them.
    void unreadableSessionFilesAreSetAside()
    {
        QDir().mkpath(SessionStore::directory());
        const QByteArray newer = R"({"format": "shardlab-runs", "version": 2, "runs": [{"name": "future"}]})";
        {
            QFile f(SessionStore::runsPath());
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(newer);
        }
        QCOMPARE(::mkfifo(SessionStore::draftPath().toLocal8Bit().constData(), 0600), 0);
        MainWindow w;
        const QString text = w.statusText();
        QVERIFY2(text.contains(QStringLiteral("Not restored")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("named pipe")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("version 1")), qPrintable(text));
        QFile aside(SessionStore::runsPath() + QStringLiteral(".unreadable"));
        QVERIFY(aside.open(QIODevice::ReadOnly));
        QCOMPARE(aside.readAll(), newer);
        // The next save writes a fresh session beside what was set aside.
        w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"))->setValue(555);
        QTRY_COMPARE_WITH_TIMEOUT(savedOutputTokens(), 555, 15000);
    }

    // A FIFO where QSettings keeps its file would block the start in QSettings' read.
    void aFifoAsTheSettingsFileDoesNotHang()
    {
        const QString settings = SessionStore::settingsPath();
        {
            QSettings s;
            s.setValue(QStringLiteral("probe"), 1);
            s.sync();
            QCOMPARE(s.fileName(), settings); // the path computed without opening it
        }
        QVERIFY(QFile::remove(settings));
        QCOMPARE(::mkfifo(settings.toLocal8Bit().constData(), 0600), 0);
        {
            MainWindow w;
            QVERIFY2(w.statusText().contains(QStringLiteral("named pipe")), qPrintable(w.statusText()));
            QVERIFY2(w.statusText().contains(QStringLiteral("neither read nor saved")), qPrintable(w.statusText()));
            QVERIFY(!w.scenario().name.empty());
        }
        struct stat st {};
        QCOMPARE(::stat(settings.toLocal8Bit().constData(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode)); // not replaced
        QVERIFY(QFile::remove(settings));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation));
    }

    // Thirty restored runs (the most a session keeps) leave the curve its room at 1024x700:
    // the legend names the newest four visible runs and counts the others in one line.
    void manyRestoredRunsLeaveTheCurveItsRoom()
    {
        QByteArray json;
        {
            MainWindow w;
            w.setScenario(preset("llama3-70b-8gpu"));
            QVERIFY(runSearch(w, QStringLiteral("random"), 50));
            QJsonObject doc = QJsonDocument::fromJson(w.searchPanel()->runsToJson()).object();
            const QJsonValue one = doc.value(QStringLiteral("runs")).toArray().last();
            QJsonArray runs;
            for (int i = 0; i < 30; ++i)
                runs.append(one);
            doc[QStringLiteral("runs")] = runs;
            json = QJsonDocument(doc).toJson(QJsonDocument::Compact);
        }
        startFreshSession();
        MainWindow w;
        w.setScenario(preset("llama3-70b-8gpu"));
        QVERIFY(w.searchPanel()->restoreRuns(json));
        QCOMPARE(w.searchPanel()->runCount(), 30);
        w.resize(1024, 700);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* curve = w.searchPanel()->findChild<QCustomPlot*>(QStringLiteral("throughputCurve"));
        QVERIFY(curve);
        auto namedRuns = [&](QString* older) {
            int n = 0;
            for (int i = 0; i < curve->legend->itemCount(); ++i)
                if (auto* item = qobject_cast<QCPPlottableLegendItem*>(curve->legend->item(i))) {
                    const QString name = item->plottable()->name();
                    if (name.contains(QStringLiteral("older run")))
                        *older = name;
                    else
                        n += name.startsWith(QStringLiteral("random"));
                }
            return n;
        };
        QString older;
        QCOMPARE(namedRuns(&older), 4);
        QVERIFY2(older.contains(QStringLiteral("+26 older runs")), qPrintable(older));
        curve->replot();
        QVERIFY2(curve->axisRect()->height() > curve->height() / 3,
                 qPrintable(QStringLiteral("axis rect %1 px of a %2 px curve").arg(curve->axisRect()->height()).arg(curve->height())));
        // Runs hidden in the Run table leave the count; with four visible none is left over.
        for (int i = 0; i < 26; ++i)
            QVERIFY(w.searchPanel()->setRunVisible(i, false));
        older.clear();
        QCOMPARE(namedRuns(&older), 4);
        QVERIFY2(older.isEmpty(), qPrintable(older));
    }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
