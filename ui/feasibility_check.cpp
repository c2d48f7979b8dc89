#include "feasibility_check.h"

#include <QMetaObject>
#include <QPointer>

#include "runner/latency_floor.h"
#include "runner/run_search.h"

namespace shardlab::ui {

FeasibilityCheck::FeasibilityCheck(QObject* parent) : QObject(parent) {}

FeasibilityCheck::~FeasibilityCheck()
{
    cancel();
}

void FeasibilityCheck::join()
{
    if (m_thread.joinable())
        m_thread.join();
}

void FeasibilityCheck::cancel()
{
    ++m_generation;
    if (m_stop)
        m_stop->store(true);
    join();
    m_running = false;
}

void FeasibilityCheck::check(const Scenario& s)
{
    cancel();
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    const int generation = m_generation;
    QPointer<FeasibilityCheck> self(this);
    m_thread = std::thread([self, generation, s, stop = m_stop] {
        SearchOptions o;
        o.algorithm = "exact";
        // Disaggregated: proved over every prefill:decode split.
        const SearchOutcome out = runSearch(s, o, nullptr, stop.get());
        const bool provedInfeasible = out.provedInfeasible, found = out.found;
        const double seconds = out.wallSeconds;
        if (stop->load())
            return;
        const bool infeasible = provedInfeasible && !found;
        QString why = QString::fromStdString(out.message);
        const QString prefix = QStringLiteral("no valid plan exists: ");
        if (why.startsWith(prefix))
            why.remove(0, prefix.size());
        // When the TPOT limit is what is out of reach, the proved minimum says by how much
        // (exact's own note can give only a lower bound from its tables).
        if (infeasible) {
            const TpotFloor floor = shortestTpot(s, s.workload.tpotSloMs, 0.01, 24, stop.get());
            if (stop->load())
                return;
            if (floor.reached)
                why = QString::fromStdString(describeTpotFloor(floor, s.workload.tpotSloMs));
        }
        // Queued to the GUI thread; the destructor joins this thread first, so `self`
        // outlives the call or the queued call is dropped with it.
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, infeasible, why, seconds] {
                if (!self || generation != self->m_generation)
                    return;
                self->m_running = false;
                Q_EMIT self->checked(infeasible, why, seconds);
            },
            Qt::QueuedConnection);
    });
}

} // namespace shardlab::ui
