// Runs core searches on a background job (background_job.h) and hands batched progress to
// the GUI thread.
//
// Threading: SearchController lives in the GUI thread and runs each search as a
// BackgroundJob: the job's stop flag is the only state shared with the search, results
// travel as value types through the job's queued posts, and a search that was cancelled or
// replaced delivers nothing more. Exceptions never cross the event loop.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "background_job.h"
#include "report/engine_gap.h"
#include "runner/disaggregated_search.h"
#include "runner/run_search.h"

namespace shardlab::ui {

// One row of the elite strategies table.
struct EliteEntry {
    Plan plan;
    int call = 0;               // simulator call that found it
    bool valid = false;
    double tokensPerSPerGpu = 0;
    double tpotMs = 0;
    double ttftMs = 0;
    double memoryGb = 0;
    bool refinement = false;    // the final batch refinement's plan (its own step)
};

struct LiveProgress {
    int jobId = 0;
    SearchProgress core;
    std::vector<EliteEntry> elites; // best first, at most kEliteRows
    static constexpr int kEliteRows = 12;
};

struct JobResult {
    int jobId = 0;
    // One pool or two: outcome.deployment is the best deployment, its headline what the
    // curve and the runs table read.
    SearchOutcome outcome;
    std::vector<EliteEntry> elites;
};

struct SearchRequest {
    int jobId = 0;
    Scenario scenario;
    SearchOptions options;
};

// Runs `request`'s search on the calling thread (a background job's) until it ends or
// `stop` is set, keeping the elite table from every evaluation; `progress` (may be empty)
// receives the core's throttled reports on that thread. Throws what the search throws.
JobResult runSearchJob(const SearchRequest& request, const std::atomic<bool>* stop,
                       const std::function<void(const LiveProgress&)>& progress);

class SearchController : public QObject {
    Q_OBJECT
public:
    explicit SearchController(QObject* parent = nullptr);
    ~SearchController() override;

    // Starts a search; a running one is cancelled first (its late results are dropped).
    int start(const Scenario& scenario, const SearchOptions& options);
    // Asks the running search to end; its outcome (best so far, stopped = true) still
    // arrives through searchFinished.
    void stop();
    // Ends the running search and drops everything it still sends (the scenario changed).
    void cancel();
    bool isRunning() const { return m_running; }
    int currentJob() const { return m_job.generation(); }
    // Longest gap between GUI event-loop ticks during the last search (ms).
    double longestStallMs() const { return m_longestStallMs; }
    // Stops the running search and blocks until its thread has ended; for shutdown and
    // tests. Its outcome (stopped) is still delivered if the event loop runs.
    void shutdown();
    // Loads ppo's LibTorch plugin on a thread of its own, once, so that the first ppo search
    // does not dlopen it on its worker: that dlopen (~300 ms) held the event loop as long
    // (the loader's lock). A search started sooner waits for it on its worker; shutdown
    // joins it.
    void preloadPlugin();

Q_SIGNALS:
    void progressAvailable(const shardlab::ui::LiveProgress& progress);
    void searchFinished(const shardlab::ui::JobResult& result);
    // After searchFinished, for a scenario that names an engine: both answers (the last
    // job's only; a new search drops it).
    void engineGapReady(const shardlab::EngineGap& gap);
    void searchFailed(const QString& reason);
    void runningChanged(bool running);
    // A search's job ended, the current one or a cancelled one, with every answer it sends
    // after the result: nothing more arrives for it.
    void workerIdle();

private:
    std::thread m_pluginPreload;
    // On the job's thread: runs the search and the engine gap, and posts each answer to
    // the slot below that takes it on the GUI thread. Reads no member.
    void run(const BackgroundJob::Context& job, const SearchRequest& request);
    void onProgress(const LiveProgress& p);
    void onFinished(const JobResult& r);
    void onGap(const EngineGap& gap);
    void onFailed(const QString& reason);
    void setRunning(bool running);

    bool m_running = false;
    // Stall meter: a 5 ms timer; the gap between its ticks beyond 5 ms is a stall.
    QTimer m_stallTimer;
    QElapsedTimer m_stallClock;
    qint64 m_lastTickNs = 0;
    double m_longestStallMs = 0;
    // Declared last: destroyed first, so its thread has ended before the members above go.
    BackgroundJob m_job;
};

void registerSearchMetaTypes();

} // namespace shardlab::ui

Q_DECLARE_METATYPE(shardlab::ui::LiveProgress)
Q_DECLARE_METATYPE(shardlab::ui::JobResult)
Q_DECLARE_METATYPE(shardlab::EngineGap)
