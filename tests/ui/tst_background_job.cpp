// The window's one background-job helper (ui/background_job.h): what a job posts arrives
// on the GUI thread in the order posted; a superseded job's posts are never delivered,
// whether they were queued before or after it was superseded; the work sees stop
// requests; starting a job and destroying the helper join the previous thread; an
// exception in the work is reported, not fatal.
#include <QtTest>

#include <QSemaphore>
#include <QThread>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "background_job.h"

using namespace shardlab::ui;

namespace {

bool onGuiThread() { return QThread::currentThread() == QCoreApplication::instance()->thread(); }

// Until the job's stop flag is set; the yield lets the GUI thread run on a loaded machine.
void untilStopped(const BackgroundJob::Context& job)
{
    while (!job.stopRequested())
        std::this_thread::yield();
}

} // namespace

class TestBackgroundJob : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void postsArriveInOrderOnTheGuiThread();
    void aSupersededJobDeliversNothing();
    void aCancelledJobDeliversNothing();
    void stopIsObservedAndItsPostsDelivered();
    void startJoinsThePreviousThread();
    void destructionJoinsAndDropsWhatIsQueued();
    void anExceptionIsReportedNotFatal();
};

void TestBackgroundJob::postsArriveInOrderOnTheGuiThread()
{
    BackgroundJob job;
    QSignalSpy ended(&job, &BackgroundJob::ended);
    std::vector<int> seen;
    bool allOnGui = true;
    size_t seenAtEnd = 0;
    connect(&job, &BackgroundJob::ended, this, [&] { seenAtEnd = seen.size(); });
    constexpr int kPosts = 2000;
    const int generation = job.start([&](const BackgroundJob::Context& ctx) {
        for (int i = 0; i < kPosts; ++i)
            ctx.post([&seen, &allOnGui, i] {
                allOnGui = allOnGui && onGuiThread();
                seen.push_back(i);
            });
    });
    QCOMPARE(generation, 1);
    QVERIFY(job.isRunning());
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.front().front().toInt(), generation);
    QVERIFY(!job.isRunning());
    QVERIFY(allOnGui);
    QCOMPARE(int(seen.size()), kPosts);
    for (int i = 0; i < kPosts; ++i)
        QCOMPARE(seen[i], i);
    QCOMPARE(int(seenAtEnd), kPosts); // `ended` comes after every post
}

// Job A posts, then is superseded by B before the event loop runs: neither what A queued
// before nor what it posts after is delivered; B's is. Both end, each once.
void TestBackgroundJob::aSupersededJobDeliversNothing()
{
    BackgroundJob job;
    QSignalSpy ended(&job, &BackgroundJob::ended);
    QSignalSpy failed(&job, &BackgroundJob::failed);
    std::vector<std::string> delivered;
    QSemaphore posted;
    const int a = job.start([&](const BackgroundJob::Context& ctx) {
        ctx.post([&] { delivered.push_back("A before"); });
        posted.release();
        untilStopped(ctx);
        ctx.post([&] { delivered.push_back("A after"); });
    });
    posted.acquire(); // A's first call is queued, not delivered: no event loop ran
    const int b = job.start([&](const BackgroundJob::Context& ctx) { ctx.post([&] { delivered.push_back("B"); }); });
    QVERIFY(b > a);
    QVERIFY(job.isCurrent(b) && !job.isCurrent(a));
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, 30000);
    QCOMPARE(ended.at(0).front().toInt(), a);
    QCOMPARE(ended.at(1).front().toInt(), b);
    QCOMPARE(delivered, std::vector<std::string>{"B"});
    QVERIFY(failed.isEmpty());
    QVERIFY(!job.isRunning());
}

void TestBackgroundJob::aCancelledJobDeliversNothing()
{
    BackgroundJob job;
    QSignalSpy ended(&job, &BackgroundJob::ended);
    std::vector<std::string> delivered;
    QSemaphore posted;
    const int a = job.start([&](const BackgroundJob::Context& ctx) {
        ctx.post([&] { delivered.push_back("before"); });
        posted.release();
        untilStopped(ctx);
        ctx.post([&] { delivered.push_back("after"); });
    });
    posted.acquire();
    job.cancel(); // returns at once: the thread is joined when its end arrives
    QVERIFY(!job.isRunning());
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.front().front().toInt(), a);
    QVERIFY(delivered.empty());
}

// requestStop: the work sees the flag (through stopRequested and the raw flag core calls
// poll) and what it posts afterwards, a stopped search's best plan, is delivered.
void TestBackgroundJob::stopIsObservedAndItsPostsDelivered()
{
    BackgroundJob job;
    QSignalSpy ended(&job, &BackgroundJob::ended);
    std::vector<std::string> delivered;
    QSemaphore started;
    job.start([&](const BackgroundJob::Context& ctx) {
        started.release();
        untilStopped(ctx);
        const bool flagSet = ctx.stopFlag()->load();
        ctx.post([&delivered, flagSet] { delivered.push_back(flagSet ? "stopped" : "flag not set"); });
    });
    started.acquire();
    QVERIFY(job.isRunning());
    job.requestStop();
    QVERIFY(ended.wait(30000));
    QCOMPARE(delivered, std::vector<std::string>{"stopped"});
    QVERIFY(!job.isRunning());
}

// start waits for the superseded job's thread (which sees its stop flag) before it
// returns, and wait() blocks until the current one ends.
void TestBackgroundJob::startJoinsThePreviousThread()
{
    BackgroundJob job;
    QSignalSpy ended(&job, &BackgroundJob::ended);
    std::atomic<bool> firstExited{false}, secondExited{false};
    QSemaphore started;
    job.start([&](const BackgroundJob::Context& ctx) {
        started.release();
        untilStopped(ctx);
        firstExited = true;
    });
    started.acquire();
    job.start([&](const BackgroundJob::Context& ctx) {
        untilStopped(ctx);
        secondExited = true;
    });
    QVERIFY(firstExited.load());
    job.requestStop();
    job.wait();
    QVERIFY(secondExited.load());
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, 30000); // both ends still arrive, each once
}

// Destruction supersedes and joins: the thread has ended when delete returns, and what it
// posted is never run.
void TestBackgroundJob::destructionJoinsAndDropsWhatIsQueued()
{
    auto* job = new BackgroundJob;
    std::atomic<bool> exited{false};
    bool ran = false;
    QSemaphore started;
    job->start([&](const BackgroundJob::Context& ctx) {
        ctx.post([&ran] { ran = true; });
        started.release();
        untilStopped(ctx);
        ctx.post([&ran] { ran = true; });
        exited = true;
    });
    started.acquire();
    delete job;
    QVERIFY(exited.load());
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    QVERIFY(!ran);
}

void TestBackgroundJob::anExceptionIsReportedNotFatal()
{
    BackgroundJob job;
    std::vector<QString> events;
    connect(&job, &BackgroundJob::failed, this, [&](const QString& why) { events.push_back(QStringLiteral("failed: ") + why); });
    connect(&job, &BackgroundJob::ended, this, [&] { events.push_back(QStringLiteral("ended")); });
    QSignalSpy ended(&job, &BackgroundJob::ended);
    job.start([](const BackgroundJob::Context& ctx) {
        ctx.post([] {});
        throw std::runtime_error("out of range");
    });
    QVERIFY(ended.wait(30000));
    QCOMPARE(events, (std::vector<QString>{QStringLiteral("failed: out of range"), QStringLiteral("ended")}));
    QVERIFY(!job.isRunning());
    events.clear();
    job.start([](const BackgroundJob::Context&) { throw 42; }); // not a std::exception: no message
    QVERIFY(ended.wait(30000));
    QCOMPARE(events, (std::vector<QString>{QStringLiteral("failed: "), QStringLiteral("ended")}));
}

QTEST_MAIN(TestBackgroundJob)
#include "tst_background_job.moc"
