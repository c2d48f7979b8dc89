#include "search_worker.h"

#include <QMetaType>

#include "model/plan_checks.h"

#include <algorithm>
#include <exception>

namespace shardlab::ui {

namespace {

// Core observer on the worker thread: keeps the elite set (top plans by throughput,
// deduplicated) from every evaluation and forwards the core's throttled progress.
class Observer : public SearchObserver {
public:
    Observer(SearchWorker& worker, int jobId) : m_worker(worker), m_jobId(jobId) {}

    void evaluated(int call, const Plan& plan, const SimResult& r) override
    {
        if (!r.valid)
            return;
        if (m_elites.size() >= size_t(LiveProgress::kEliteRows)
            && r.tokensPerSPerGpu <= m_elites.back().tokensPerSPerGpu)
            return;
        // Plans that differ only in choices that cannot matter are one strategy.
        const Plan canonical = canonicalPlan(plan);
        for (const EliteEntry& e : m_elites)
            if (e.plan == canonical)
                return;
        EliteEntry e{canonical, call, r.valid, r.tokensPerSPerGpu, r.tpotMs, r.ttftMs, r.memory.totalGb};
        auto at = std::upper_bound(m_elites.begin(), m_elites.end(), e, [](const EliteEntry& a, const EliteEntry& b) {
            return a.tokensPerSPerGpu > b.tokensPerSPerGpu;
        });
        m_elites.insert(at, e);
        if (m_elites.size() > size_t(LiveProgress::kEliteRows))
            m_elites.pop_back();
    }

    void progress(const SearchProgress& p) override
    {
        LiveProgress lp;
        lp.jobId = m_jobId;
        lp.core = p;
        lp.elites = m_elites;
        Q_EMIT m_worker.progressAvailable(lp);
    }

    const std::vector<EliteEntry>& elites() const { return m_elites; }

private:
    SearchWorker& m_worker;
    int m_jobId;
    std::vector<EliteEntry> m_elites;
};

} // namespace

void registerSearchMetaTypes()
{
    qRegisterMetaType<shardlab::ui::LiveProgress>();
    qRegisterMetaType<shardlab::ui::JobResult>();
    qRegisterMetaType<shardlab::ui::SearchRequest>();
    qRegisterMetaType<shardlab::ui::GapResult>();
    qRegisterMetaType<shardlab::EngineGap>();
}

void SearchWorker::run(const SearchRequest& request)
{
    try {
        Observer observer(*this, request.jobId);
        JobResult result;
        result.jobId = request.jobId;
        result.outcome = runSearch(request.scenario, request.options, &observer, request.stop.get());
        // Two pools per plan: the elite table of one-pool plans stays empty.
        if (!result.outcome.twoPools())
            result.elites = observer.elites();
        if (result.outcome.found && !result.outcome.twoPools() && result.elites.empty()) {
            const SimResult& r = result.outcome.bestResult;
            result.elites.push_back({result.outcome.best, result.outcome.calls, true, r.tokensPerSPerGpu, r.tpotMs,
                                     r.ttftMs, r.memory.totalGb});
        }
        // The batch refinement is the search's last step: its plan heads the table, marked.
        const SearchOutcome& o = result.outcome;
        if (o.found && !o.twoPools() && o.refinement.improved()) {
            const SimResult& r = o.bestResult;
            result.elites.insert(result.elites.begin(), {o.best, o.refinement.firstCall + o.refinement.calls, true,
                                                         r.tokensPerSPerGpu, r.tpotMs, r.ttftMs, r.memory.totalGb, true});
            if (int(result.elites.size()) > LiveProgress::kEliteRows)
                result.elites.resize(LiveProgress::kEliteRows);
        }
        Q_EMIT searchFinished(result);
        // Both answers under an engine, after the result is on screen; a new search's stop
        // flag (set by start) ends it early.
        if (!o.failed && !o.stopped && engineOfCollectives(request.scenario.workload.engine)
            && !request.stop->load()) {
            GapResult gap;
            gap.jobId = request.jobId;
            gap.gap = measureEngineGap(request.scenario, &o, request.stop.get());
            if (!gap.gap.stopped)
                Q_EMIT engineGapReady(gap);
        }
    } catch (const std::exception& e) {
        Q_EMIT searchFailed(request.jobId, QString::fromUtf8(e.what()));
    } catch (...) {
        Q_EMIT searchFailed(request.jobId, QStringLiteral("unknown error in the search"));
    }
    Q_EMIT jobEnded(request.jobId);
}

SearchController::SearchController(QObject* parent) : QObject(parent)
{
    registerSearchMetaTypes();
    m_worker = new SearchWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(this, &SearchController::requestRun, m_worker, &SearchWorker::run, Qt::QueuedConnection);
    connect(m_worker, &SearchWorker::progressAvailable, this, &SearchController::onProgress, Qt::QueuedConnection);
    connect(m_worker, &SearchWorker::searchFinished, this, &SearchController::onFinished, Qt::QueuedConnection);
    connect(m_worker, &SearchWorker::searchFailed, this, &SearchController::onFailed, Qt::QueuedConnection);
    connect(m_worker, &SearchWorker::engineGapReady, this, &SearchController::onGap, Qt::QueuedConnection);
    connect(m_worker, &SearchWorker::jobEnded, this, &SearchController::workerIdle, Qt::QueuedConnection);
    m_thread.setObjectName(QStringLiteral("search"));
    m_thread.start();

    m_stallTimer.setInterval(5);
    m_stallClock.start();
    connect(&m_stallTimer, &QTimer::timeout, this, [this] {
        const qint64 now = m_stallClock.nsecsElapsed();
        if (m_lastTickNs > 0)
            m_longestStallMs = std::max(m_longestStallMs, (now - m_lastTickNs) / 1e6 - 5.0);
        m_lastTickNs = now;
    });
}

SearchController::~SearchController()
{
    shutdown();
}

void SearchController::shutdown()
{
    if (m_stop)
        m_stop->store(true);
    if (m_thread.isRunning()) {
        m_thread.quit();
        m_thread.wait();
    }
    m_stallTimer.stop();
}

int SearchController::start(const Scenario& scenario, const SearchOptions& options)
{
    cancel();
    SearchRequest req;
    req.jobId = ++m_job;
    req.scenario = scenario;
    req.options = options;
    req.stop = std::make_shared<std::atomic<bool>>(false);
    m_stop = req.stop;
    m_longestStallMs = 0;
    m_lastTickNs = 0;
    m_stallTimer.start();
    setRunning(true);
    Q_EMIT requestRun(req);
    return req.jobId;
}

void SearchController::stop()
{
    if (m_stop)
        m_stop->store(true);
}

void SearchController::cancel()
{
    if (m_stop)
        m_stop->store(true);
    // Late progress and the outcome of this job are dropped by their job id; the worker
    // finishes it within one evaluation batch.
    if (m_running) {
        ++m_job;
        m_stallTimer.stop();
        setRunning(false);
    }
}

void SearchController::onProgress(const LiveProgress& p)
{
    if (p.jobId == m_job && m_running)
        Q_EMIT progressAvailable(p);
}

void SearchController::onFinished(const JobResult& r)
{
    if (r.jobId != m_job || !m_running)
        return;
    m_stallTimer.stop();
    setRunning(false);
    Q_EMIT searchFinished(r);
}

void SearchController::onGap(const GapResult& r)
{
    if (r.jobId == m_job && !m_running)
        Q_EMIT engineGapReady(r.gap);
}

void SearchController::onFailed(int jobId, const QString& reason)
{
    if (jobId != m_job)
        return;
    m_stallTimer.stop();
    setRunning(false);
    Q_EMIT searchFailed(reason);
}

void SearchController::setRunning(bool running)
{
    if (m_running == running)
        return;
    m_running = running;
    Q_EMIT runningChanged(running);
}

} // namespace shardlab::ui
