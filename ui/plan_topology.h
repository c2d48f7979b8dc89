// The Topology tab: the plan in the Plan tab drawn onto the cluster. GPUs are coloured by
// the plan's tensor-, data-, pipeline- or expert-parallel groups (the simulator's rank
// layout: TP innermost, then DP, then PP stages), and a table lists each group's traffic
// per decode step, GPU by GPU, with the link it crosses: NVLink inside a node, the
// inter-node fabric when the group spans nodes. The teaching view of "where does a plan
// put its GPUs, and what do they send".
#pragma once

#include <QWidget>

#include <vector>

#include "sim/simulator.h"
#include "topology_view.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace shardlab::ui {

// One group's traffic in one decode step of the busiest stage, per GPU.
struct GroupTraffic {
    QString group;      // "TP group (2 GPUs)", "pipeline send", …
    QString operators;  // "attn_norm, ffn_norm"
    QString collective; // "all-reduce", "all-to-all", "send/recv"
    int size = 1;       // GPUs in the group
    bool crossesNodes = false;
    double bytes = 0;   // per GPU per decode step
    double us = 0;      // time per decode step
};
struct PlanTraffic {
    std::vector<GroupTraffic> rows;
    double nvlinkBytes = 0; // per GPU per decode step, summed over rows inside a node
    double interBytes = 0;  // … over rows whose group spans nodes
};
// Qt-free arithmetic over the simulator's breakdown (public for tests).
PlanTraffic planTraffic(const Scenario& s, const Plan& p, const SimResult& r);

class PlanTopologyView : public QWidget {
    Q_OBJECT
public:
    explicit PlanTopologyView(QWidget* parent = nullptr);

    void setPlan(const Scenario& s, const QString& title, const Plan& plan, const SimResult& r);
    void showMessage(const QString& text);

    TopologyView* drawing() const { return m_drawing; }
    QTableWidget* trafficTable() const { return m_table; }
    QString summaryText() const;
    void setColourBy(TopologyView::GroupKind kind);

private:
    void refresh();

    Scenario m_scenario;
    Plan m_plan;
    SimResult m_result;
    QString m_title;
    bool m_havePlan = false;
    QLabel* m_summary = nullptr;
    QComboBox* m_colourBy = nullptr;
    TopologyView* m_drawing = nullptr;
    QTableWidget* m_table = nullptr;
};

} // namespace shardlab::ui
