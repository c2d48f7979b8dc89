// The plan view's two tables: the collectives a plan's decode step uses, and the
// per-operator comparison with the reference (Megatron) plan.
#pragma once

#include <QTableWidget>

#include "plan_explain.h"

namespace shardlab::ui {

// One row per operator that communicates in the busiest stage's decode step: the layout
// change that needs the collective, the collective, how many per layer, bytes sent per
// GPU and time per step (summed over the stage's layers).
class CollectivesTable : public QTableWidget {
    Q_OBJECT
public:
    // Numbers first; the (sometimes long) layout change last, where it can stretch.
    enum Column { Operator, Kind, PerLayer, Bytes, InterBytes, Time, Share, LayoutChange, ColumnCount };
    explicit CollectivesTable(QWidget* parent = nullptr);
    void setPlan(const Scenario& s, const Plan& plan, const SimResult& r);
    void showMessage(const QString& text);
};

class FittedColumns;

// Per operator: time and communication of the plan and of the reference per decode step,
// the difference per step and per generated token (see plan_explain.h).
class CompareTable : public QTableWidget {
    Q_OBJECT
public:
    enum Column { Operator, Sharding, ThisTime, ThisComm, RefTime, RefComm, DeltaStep, DeltaToken, ColumnCount };
    explicit CompareTable(QWidget* parent = nullptr);
    void setComparison(const Plan& plan, const Plan& ref, const PlanComparison& c, const QString& refName);
    void showMessage(const QString& text);

private:
    void setPartLabels(int row, const ComparedPart& r, const Plan& plan, const Plan& ref);
    FittedColumns* m_columns = nullptr;
};

} // namespace shardlab::ui
