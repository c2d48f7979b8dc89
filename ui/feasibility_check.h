// Proves a scenario infeasible before a search spends its budget on it: the exact search
// certifies in milliseconds that no plan meets the memory, TTFT and TPOT limits, and says
// which limit is out of reach. Runs on its own thread, one check at a time; a new request
// stops the previous one. GUI thread API.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

#include "model/specs.h"

namespace shardlab::ui {

class FeasibilityCheck : public QObject {
    Q_OBJECT
public:
    explicit FeasibilityCheck(QObject* parent = nullptr);
    ~FeasibilityCheck() override;

    // Starts checking `s` (a runnable scenario), stopping any check under way.
    void check(const Scenario& s);
    // Stops the check under way, if any; no result is reported for it.
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    // infeasible: exact proved no plan is valid; `why` is its explanation: where TPOT is the
    // limit out of reach, the proved minimum (runner/latency_floor.h: "the shortest time per
    // output token any plan reaches is 13.9 ms (proved by exact: no plan reaches 13.8 ms),
    // the SLO is 0.5 ms").
    void checked(bool infeasible, const QString& why, double seconds);

private:
    void join();

    std::thread m_thread;
    std::shared_ptr<std::atomic<bool>> m_stop;
    int m_generation = 0;
    bool m_running = false;
};

} // namespace shardlab::ui
