// Runs core searches on a worker thread and hands batched progress to the GUI thread.
//
// Threading: SearchController lives in the GUI thread and owns one QThread with a
// SearchWorker in it. A job's only shared state is its std::atomic<bool> stop flag.
// Results travel as value types through queued signals; a job id drops late results of a
// job that was stopped or replaced. Exceptions never cross the event loop.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <memory>
#include <vector>

#include <optional>

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

// A finished search's engine gap (report/engine_gap.h), measured on the worker after the
// result was handed over, so the result shows at once and the comparison follows.
struct GapResult {
    int jobId = 0;
    EngineGap gap;
};

struct SearchRequest {
    int jobId = 0;
    Scenario scenario;
    SearchOptions options;
    std::shared_ptr<std::atomic<bool>> stop;
};

class SearchWorker : public QObject {
    Q_OBJECT
public Q_SLOTS:
    void run(const shardlab::ui::SearchRequest& request);

Q_SIGNALS:
    void progressAvailable(const shardlab::ui::LiveProgress& progress);
    void searchFinished(const shardlab::ui::JobResult& result);
    void engineGapReady(const shardlab::ui::GapResult& result);
    void searchFailed(int jobId, const QString& reason);
    // The job and everything computed after its result (the engine's answers) are done.
    void jobEnded(int jobId);
};

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
    int currentJob() const { return m_job; }
    // Longest gap between GUI event-loop ticks during the last search (ms).
    double longestStallMs() const { return m_longestStallMs; }
    // Blocks until the worker thread is idle; for shutdown and tests.
    void shutdown();

Q_SIGNALS:
    void progressAvailable(const shardlab::ui::LiveProgress& progress);
    void searchFinished(const shardlab::ui::JobResult& result);
    // After searchFinished, for a scenario that names an engine: both answers (the last
    // job's only; a new search drops it).
    void engineGapReady(const shardlab::EngineGap& gap);
    void searchFailed(const QString& reason);
    void runningChanged(bool running);
    // The worker finished a job, the current one or a cancelled one, with every answer it
    // sends after the result: nothing more arrives for it.
    void workerIdle();
    // Internal: queued hand-off to the worker thread.
    void requestRun(const shardlab::ui::SearchRequest& request);

private:
    void onProgress(const LiveProgress& p);
    void onFinished(const JobResult& r);
    void onGap(const GapResult& r);
    void onFailed(int jobId, const QString& reason);
    void setRunning(bool running);

    QThread m_thread;
    SearchWorker* m_worker = nullptr;
    int m_job = 0;
    bool m_running = false;
    std::shared_ptr<std::atomic<bool>> m_stop;
    // Stall meter: a 5 ms timer; the gap between its ticks beyond 5 ms is a stall.
    QTimer m_stallTimer;
    QElapsedTimer m_stallClock;
    qint64 m_lastTickNs = 0;
    double m_longestStallMs = 0;
};

void registerSearchMetaTypes();

} // namespace shardlab::ui

Q_DECLARE_METATYPE(shardlab::ui::LiveProgress)
Q_DECLARE_METATYPE(shardlab::ui::JobResult)
Q_DECLARE_METATYPE(shardlab::ui::SearchRequest)
Q_DECLARE_METATYPE(shardlab::ui::GapResult)
Q_DECLARE_METATYPE(shardlab::EngineGap)
