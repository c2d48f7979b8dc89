#include "background_job.h"

#include <QMetaObject>

#include <exception>

namespace shardlab::ui {

void BackgroundJob::Context::post(std::function<void()> fn) const
{
    // The owner outlives this call: it joins the thread before it is destroyed. The queued
    // call is discarded with the owner if the owner goes first; otherwise it runs only
    // while its job is still the current one.
    BackgroundJob* owner = m_owner;
    const int generation = m_generation;
    QMetaObject::invokeMethod(
        owner,
        [owner, generation, fn = std::move(fn)] {
            if (owner->isCurrent(generation))
                fn();
        },
        Qt::QueuedConnection);
}

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {}

BackgroundJob::~BackgroundJob()
{
    cancel();
    join();
}

void BackgroundJob::join()
{
    if (m_thread.joinable())
        m_thread.join();
}

int BackgroundJob::start(Work work)
{
    cancel();
    join();
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    m_threadGeneration = m_generation;
    const Context context(this, m_generation, m_stop);
    m_thread = std::thread([context, work = std::move(work)] { run(context, work); });
    return m_generation;
}

void BackgroundJob::requestStop()
{
    if (m_stop)
        m_stop->store(true);
}

void BackgroundJob::cancel()
{
    ++m_generation;
    m_running = false;
    requestStop();
}

void BackgroundJob::wait()
{
    join();
}

// On the job's thread. An exception ends the work but not the program: it is reported
// through `failed`.
void BackgroundJob::run(const Context& context, const Work& work)
{
    bool threw = false;
    QString reason;
    try {
        work(context);
    } catch (const std::exception& e) {
        threw = true;
        reason = QString::fromUtf8(e.what());
    } catch (...) {
        threw = true;
    }
    // The last call this thread posts, so it arrives after everything the work posted.
    BackgroundJob* owner = context.m_owner;
    const int generation = context.m_generation;
    QMetaObject::invokeMethod(
        owner, [owner, generation, threw, reason] { owner->onThreadEnded(generation, threw, reason); },
        Qt::QueuedConnection);
}

void BackgroundJob::onThreadEnded(int generation, bool threw, const QString& reason)
{
    // The thread has posted its last call, so joining waits only for it to return. A
    // thread already joined (by start or wait) has been replaced or left unjoinable.
    if (generation == m_threadGeneration)
        join();
    if (isCurrent(generation)) {
        m_running = false;
        if (threw)
            Q_EMIT failed(reason);
    }
    Q_EMIT ended(generation);
}

} // namespace shardlab::ui
