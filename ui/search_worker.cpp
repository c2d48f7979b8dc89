#include "search_worker.h"

#include <QMetaType>

#include "model/plan_checks.h"
#include "plugin/rl_plugin.h"

#include <algorithm>
#include <limits>

namespace shardlab::ui {

namespace {

// Core observer on the job's thread: keeps the elite set (top plans by throughput,
// deduplicated) from every evaluation and forwards the core's throttled progress.
class Observer : public SearchObserver {
public:
    Observer(const std::function<void(const LiveProgress&)>& sink, int jobId) : m_sink(sink), m_jobId(jobId) {}

    void evaluated(int call, const Plan& plan, const SimResult& r) override
    {
        if (!r.valid)
            return;
        if (m_elites.size() >= kKept && r.tokensPerSPerGpu <= m_elites.back().tokensPerSPerGpu)
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
        if (m_elites.size() > kKept)
            m_elites.pop_back();
    }

    void progress(const SearchProgress& p) override
    {
        if (!m_sink)
            return;
        LiveProgress lp;
        lp.jobId = m_jobId;
        lp.core = p;
        lp.elites.assign(m_elites.begin(), m_elites.begin() + std::min(m_elites.size(), size_t(LiveProgress::kEliteRows)));
        m_sink(lp);
    }

    // The elites the search found before call `lastCall` (after it, the final batch
    // refinement's probes: one strategy at several batches), best first, at most kEliteRows.
    std::vector<EliteEntry> elitesUpTo(int lastCall) const
    {
        std::vector<EliteEntry> out;
        for (const EliteEntry& e : m_elites)
            if (e.call <= lastCall && out.size() < size_t(LiveProgress::kEliteRows))
                out.push_back(e);
        return out;
    }

private:
    const std::function<void(const LiveProgress&)>& m_sink;
    int m_jobId;
    // More than the table's rows: the batch refinement's probes, which come last and are
    // left out of the final list, must not push the search's own elites out first. A
    // refinement gallops and bisects over the batch, well under 64 probes.
    static constexpr size_t kKept = LiveProgress::kEliteRows + 64;
    std::vector<EliteEntry> m_elites;
};

} // namespace

void registerSearchMetaTypes()
{
    qRegisterMetaType<shardlab::ui::LiveProgress>();
    qRegisterMetaType<shardlab::ui::JobResult>();
    qRegisterMetaType<shardlab::EngineGap>();
}

JobResult runSearchJob(const SearchRequest& request, const std::atomic<bool>* stop,
                       const std::function<void(const LiveProgress&)>& progress)
{
    Observer observer(progress, request.jobId);
    JobResult result;
    result.jobId = request.jobId;
    result.outcome = runSearch(request.scenario, request.options, &observer, stop);
    // Two pools per plan: the elite table of one-pool plans stays empty.
    // The refinement's probes are one strategy at several batches: its plan is one row of
    // its own (below), so the elites are the search's own up to the refinement.
    const BatchRefinement& refined = result.outcome.refinement;
    if (!result.outcome.twoPools())
        result.elites = observer.elitesUpTo(refined.ran ? refined.firstCall : std::numeric_limits<int>::max());
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
    return result;
}

SearchController::SearchController(QObject* parent) : QObject(parent)
{
    registerSearchMetaTypes();
    connect(&m_job, &BackgroundJob::failed, this, [this](const QString& reason) {
        onFailed(reason.isEmpty() ? QStringLiteral("unknown error in the search") : reason);
    });
    connect(&m_job, &BackgroundJob::ended, this, &SearchController::workerIdle);

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
    m_job.requestStop();
    m_job.wait();
    m_stallTimer.stop();
    if (m_pluginPreload.joinable())
        m_pluginPreload.join();
}

void SearchController::preloadPlugin()
{
    if (m_pluginPreload.joinable() || rlPluginLoaded())
        return;
    m_pluginPreload = std::thread([] { (void)loadRlPlugin(); });
}

int SearchController::start(const Scenario& scenario, const SearchOptions& options)
{
    cancel();
    m_longestStallMs = 0;
    m_lastTickNs = 0;
    m_stallTimer.start();
    setRunning(true);
    const SearchRequest request{0, scenario, options};
    // Waits for a cancelled search's thread to notice its stop flag (within one
    // evaluation batch) before this one starts.
    return m_job.start([this, request](const BackgroundJob::Context& job) { run(job, request); });
}

void SearchController::run(const BackgroundJob::Context& job, const SearchRequest& request)
{
    SearchRequest r = request;
    r.jobId = job.generation();
    const JobResult result = runSearchJob(r, job.stopFlag(), [this, &job](const LiveProgress& p) {
        job.post([this, p] { onProgress(p); });
    });
    job.post([this, result] { onFinished(result); });
    // Both answers under an engine, after the result is on screen; a new search (or
    // cancel) sets the stop flag and ends it early.
    const SearchOutcome& o = result.outcome;
    if (!o.failed && !o.stopped && engineOfCollectives(r.scenario.workload.engine) && !job.stopRequested()) {
        const EngineGap gap = measureEngineGap(r.scenario, &o, job.stopFlag());
        if (!gap.stopped)
            job.post([this, gap] { onGap(gap); });
    }
}

void SearchController::stop()
{
    m_job.requestStop();
}

void SearchController::cancel()
{
    // Whatever the job still sends (progress, outcome, engine gap) is dropped; its thread
    // ends within one evaluation batch and is joined by the next start.
    m_job.cancel();
    if (m_running) {
        m_stallTimer.stop();
        setRunning(false);
    }
}

void SearchController::onProgress(const LiveProgress& p)
{
    if (m_running)
        Q_EMIT progressAvailable(p);
}

void SearchController::onFinished(const JobResult& r)
{
    if (!m_running)
        return;
    m_stallTimer.stop();
    setRunning(false);
    Q_EMIT searchFinished(r);
}

void SearchController::onGap(const EngineGap& gap)
{
    if (!m_running)
        Q_EMIT engineGapReady(gap);
}

void SearchController::onFailed(const QString& reason)
{
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
