// Runs one computation at a time on a thread of its own and hands what it produces to the
// GUI thread: the window's searches, Pareto fronts and feasibility checks all run through
// it. GUI thread API, except Context, which the work uses on its thread.
//
// Each job has a generation number (1, 2, ...) and a stop flag of its own, which the work
// polls (core calls take it as their stop flag). Starting a job supersedes the previous
// one: its flag is set, its thread joined (the GUI waits only as long as the work takes to
// notice the flag), and nothing it still posts is delivered. The work hands values to the
// GUI thread with Context::post: queued calls, run there in the order posted, dropped when
// their job is no longer the current one. The thread is joined when its end reaches the
// GUI thread, at the next start, or on destruction; it is never detached.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace shardlab::ui {

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    // What the work sees on its thread. Copyable; valid while the work runs.
    class Context {
    public:
        bool stopRequested() const { return m_stop->load(); }
        // The flag itself, for core calls that poll it (runSearch, computeParetoFront, ...).
        const std::atomic<bool>* stopFlag() const { return m_stop.get(); }
        int generation() const { return m_generation; }
        // Queues `fn` to the GUI thread. It runs there after everything this job posted
        // before it, unless the job has been superseded (cancel, a newer start) or the
        // BackgroundJob destroyed by then.
        void post(std::function<void()> fn) const;

    private:
        friend class BackgroundJob;
        Context(BackgroundJob* owner, int generation, std::shared_ptr<std::atomic<bool>> stop)
            : m_owner(owner), m_generation(generation), m_stop(std::move(stop))
        {
        }
        BackgroundJob* m_owner;
        int m_generation;
        std::shared_ptr<std::atomic<bool>> m_stop;
    };
    using Work = std::function<void(const Context&)>;

    explicit BackgroundJob(QObject* parent = nullptr);
    // Supersedes the current job and joins its thread.
    ~BackgroundJob() override;

    // Supersedes the current job, joins its thread, and runs `work` on a new one. Returns
    // the new job's generation.
    int start(Work work);
    // Sets the current job's stop flag. Unlike cancel, what it posts is still delivered
    // (a stopped search still reports its best plan).
    void requestStop();
    // Supersedes the current job: sets its stop flag, and nothing it still posts is
    // delivered. Does not wait for its thread.
    void cancel();
    // Blocks until the last job's thread has ended (requestStop or cancel first to make
    // that soon). What it posted is still queued: delivered when the event loop runs.
    void wait();

    // A job was started, is the current one, and has not ended yet.
    bool isRunning() const { return m_running; }
    // The current job's generation (0 before the first start).
    int generation() const { return m_generation; }
    bool isCurrent(int generation) const { return generation == m_generation; }

Q_SIGNALS:
    // The current job's work threw: the exception's message (empty when it was not a
    // std::exception). Emitted after everything it posted, before `ended`.
    void failed(const QString& reason);
    // Job `generation`'s thread has ended and everything it posted that is delivered has
    // run: nothing more comes from it. Emitted for superseded jobs too (isCurrent tells).
    void ended(int generation);

private:
    static void run(const Context& context, const Work& work);
    void onThreadEnded(int generation, bool threw, const QString& reason);
    void join();

    int m_generation = 0;
    bool m_running = false;
    std::shared_ptr<std::atomic<bool>> m_stop; // the current job's
    std::thread m_thread;                      // the last job's, until joined
    int m_threadGeneration = 0;                // whose thread m_thread is
};

} // namespace shardlab::ui
