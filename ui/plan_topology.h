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
    bool handoff = false;      // the pipeline's stage-to-stage send, not a collective group
    bool crossesNodes = false; // the worst group of its kind, as placed (model/placement.h)
    int nodes = 1;             // nodes that group spans
    int fewestPerNode = 1;     // its fewest GPUs in one node
    double bytes = 0;   // per GPU per decode step
    double interBytes = 0; // of which over the inter-node fabric
    double us = 0;      // time per decode step
};
struct PlanTraffic {
    std::vector<GroupTraffic> rows;
    double nvlinkBytes = 0; // per GPU per decode step, summed over the rows' NVLink legs
    double interBytes = 0;  // … over their inter-node legs
};
// Qt-free arithmetic over the simulator's breakdown (public for tests).
PlanTraffic planTraffic(const Scenario& s, const Plan& p, const SimResult& r);

class FittedColumns;

// A pool of a disaggregated deployment, drawn alone: its GPUs are the drawing, the other
// pool's and the KV cache's hand-over between them are said in words beside it.
struct PoolContext {
    bool active = false;        // false: the plan runs on the whole cluster
    QString shown, other;       // "decode", "prefill"
    long long otherGpus = 0;    // the pool not drawn
    long long clusterGpus = 0;
    double kvBytesPerRequest = 0; // from the prefill to the decode pool, per request
    double kvLinkLoad = 0;        // fraction of the KV links' capacity the served rate uses
    bool kvOverNvlink = false;    // the workload's kv_transfer: NVLink, else the inter-node fabric
};

class PlanTopologyView : public QWidget {
    Q_OBJECT
public:
    explicit PlanTopologyView(QWidget* parent = nullptr);

    void setPlan(const Scenario& s, const QString& title, const Plan& plan, const SimResult& r,
                 const PoolContext& pool = {});
    void showMessage(const QString& text);

    TopologyView* drawing() const { return m_drawing; }
    QTableWidget* trafficTable() const { return m_table; }
    QString summaryText() const;
    void setColourBy(TopologyView::GroupKind kind);

private:
    void refresh();
    QString summaryHtml(const PlanTraffic& t) const; // the placement in words, worst group of each kind
    QString poolHtml() const;                         // what a pool's drawing leaves out, "" for one pool
    void fillTable(const PlanTraffic& t);

    Scenario m_scenario;
    Plan m_plan;
    SimResult m_result;
    PoolContext m_pool;
    QString m_title;
    bool m_havePlan = false;
    QLabel* m_summary = nullptr;
    QComboBox* m_colourBy = nullptr;
    TopologyView* m_drawing = nullptr;
    QTableWidget* m_table = nullptr;
    FittedColumns* m_columns = nullptr;
};

} // namespace shardlab::ui
