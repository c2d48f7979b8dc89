// A small drawing of a cluster: nodes as boxes, each holding its GPUs inside one NVLink
// domain, joined by the inter-node fabric. Purely decorative feedback for the scenario
// editor; it paints from a copy of the ClusterSpec and never edits it.
#pragma once

#include <QWidget>

#include "model/specs.h"

namespace shardlab::ui {

class TopologyView : public QWidget {
    Q_OBJECT
public:
    explicit TopologyView(QWidget* parent = nullptr);

    void setCluster(const ClusterSpec& cluster);
    // What the drawing says in words (also its tooltip): "2 nodes × 8 GPUs = 16 GPUs …".
    QString summary() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void paintNode(class QPainter& p, const QRectF& box, int index) const;

    ClusterSpec m_cluster;
};

} // namespace shardlab::ui
