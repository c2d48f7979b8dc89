// A small drawing of a cluster: nodes as boxes, each holding its GPUs inside one NVLink
// domain, joined by the inter-node fabric. Feedback for the scenario editor; with a plan
// overlay (the Topology tab) the GPUs are coloured by the plan's TP, DP, PP or EP groups
// and the links carry their traffic per decode step. It paints from copies and never
// edits them.
#pragma once

#include <QColor>
#include <QWidget>

#include "model/plan.h"
#include "model/specs.h"

namespace shardlab::ui {

class TopologyView : public QWidget {
    Q_OBJECT
public:
    explicit TopologyView(QWidget* parent = nullptr);

    void setCluster(const ClusterSpec& cluster);
    // What the drawing says in words (also its tooltip): "2 nodes × 8 GPUs = 16 GPUs …".
    QString summary() const;

    // The plan overlay. GPU rank r sits on node r / gpus_per_node; ranks are laid out as the
    // simulator places groups: TP innermost (consecutive ranks), then DP, then PP stages.
    enum class GroupKind { Tensor, Data, Pipeline, Expert, Instance };
    void setPlanOverlay(const Plan& plan, GroupKind colourBy, const QString& nvlinkTraffic,
                        const QString& interTraffic);
    void clearPlanOverlay();
    bool hasPlanOverlay() const { return m_overlay; }
    // The group of `kind` that GPU `rank` belongs to under the overlay's plan (-1 without).
    int groupOf(int rank, GroupKind kind) const;
    static QColor groupColour(int index);
    // Nodes drawn before "… × N" (4 in the editor's small drawing).
    void setMaxDrawnNodes(int n);

    // The words the drawing writes: a node's title ("node 3"), and the legend's NVLink entry,
    // which carries the overlay's NVLink traffic (one figure per GPU, the same on every
    // node, so said once where it has room rather than cut short in every node's title).
    QString nodeCaption(int index) const;
    QString nvlinkLegendText() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void paintNode(class QPainter& p, const QRectF& box, int index) const;
    void paintLegend(class QPainter& p, const QRectF& all, double legendH) const;
    void paintGpuLabel(class QPainter& p, const QRectF& cell, int rank, const QColor& fill) const;

    ClusterSpec m_cluster;
    bool m_overlay = false;
    Plan m_plan;
    GroupKind m_colourBy = GroupKind::Tensor;
    QString m_nvlinkTraffic, m_interTraffic;
    int m_maxDrawnNodes = 4;
};

} // namespace shardlab::ui
