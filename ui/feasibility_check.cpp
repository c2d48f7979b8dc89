#include "feasibility_check.h"

#include "runner/latency_floor.h"
#include "runner/run_search.h"

namespace shardlab::ui {

FeasibilityCheck::FeasibilityCheck(QObject* parent) : QObject(parent) {}

void FeasibilityCheck::cancel()
{
    // Its thread ends at the exact search's next look at the stop flag; the next check or
    // the destructor joins it.
    m_job.cancel();
}

void FeasibilityCheck::check(const Scenario& s)
{
    m_job.start([this, s](const BackgroundJob::Context& job) {
        SearchOptions o;
        o.algorithm = "exact";
        // Disaggregated: proved over every prefill:decode split.
        const SearchOutcome out = runSearch(s, o, nullptr, job.stopFlag());
        const bool provedInfeasible = out.provedInfeasible, found = out.found;
        const double seconds = out.wallSeconds;
        if (job.stopRequested())
            return;
        const bool infeasible = provedInfeasible && !found;
        QString why = QString::fromStdString(out.message);
        // When the TPOT limit is what is out of reach, the proved minimum says by how much
        // (exact's own note can give only a lower bound from its tables).
        if (infeasible) {
            const TpotFloor floor = shortestTpot(s, s.workload.tpotSloMs, 0.01, 24, job.stopFlag());
            if (job.stopRequested())
                return;
            if (floor.reached)
                why = QString::fromStdString(describeTpotFloor(floor, s.workload.tpotSloMs));
        }
        job.post([this, infeasible, why, seconds] { Q_EMIT checked(infeasible, why, seconds); });
    });
}

} // namespace shardlab::ui
