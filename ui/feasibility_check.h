// Proves a scenario infeasible before a search spends its budget on it: the exact search
// certifies in milliseconds that no plan meets the memory, TTFT and TPOT limits, and says
// which limit is out of reach. Runs as a background job (background_job.h), one check at a
// time; a new request stops the previous one. GUI thread API.
#pragma once

#include <QObject>
#include <QString>

#include "background_job.h"
#include "model/specs.h"

namespace shardlab::ui {

class FeasibilityCheck : public QObject {
    Q_OBJECT
public:
    explicit FeasibilityCheck(QObject* parent = nullptr);

    // Starts checking `s` (a runnable scenario), stopping any check under way.
    void check(const Scenario& s);
    // Stops the check under way, if any; no result is reported for it.
    void cancel();
    bool isRunning() const { return m_job.isRunning(); }

Q_SIGNALS:
    // infeasible: exact proved no plan is valid; `why` is its explanation: where TPOT is the
    // limit out of reach, the proved minimum (runner/latency_floor.h: "the shortest time per
    // output token any plan reaches is 13.9 ms (proved by exact: no plan reaches 13.8 ms),
    // the SLO is 0.5 ms").
    void checked(bool infeasible, const QString& why, double seconds);

private:
    BackgroundJob m_job;
};

} // namespace shardlab::ui
