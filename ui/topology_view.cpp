#include "topology_view.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

#include "model/placement.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
// Colours: NVLink in blue, the inter-node fabric in orange (as in the plan view's
// communication bars), GPUs in a neutral dark grey so the links carry the meaning.
const QColor kNvlinkFill(0xe8, 0xf1, 0xfb);
const QColor kNvlinkEdge(0x3b, 0x6f, 0xb6);
const QColor kFabric(0xe0, 0x7b, 0x1f);
const QColor kGpu(0x37, 0x47, 0x4f);
const QColor kText(0x26, 0x32, 0x38);

constexpr int kMaxDrawnGpus = 128; // dots per node; larger domains are summarized
constexpr double kFabricBand = 14; // px below the nodes for the inter-node bus
} // namespace

TopologyView::TopologyView(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize TopologyView::sizeHint() const { return m_overlay ? QSize(640, 360) : QSize(340, 118); }
QSize TopologyView::minimumSizeHint() const { return m_overlay ? QSize(300, 200) : QSize(200, 118); }

void TopologyView::setMaxDrawnNodes(int n)
{
    m_maxDrawnNodes = std::max(2, n);
    update();
}

void TopologyView::setPlanOverlay(const Plan& plan, GroupKind colourBy, const QString& nvlinkTraffic,
                                  const QString& interTraffic)
{
    m_overlay = true;
    m_plan = plan;
    m_colourBy = colourBy;
    m_nvlinkTraffic = nvlinkTraffic;
    m_interTraffic = interTraffic;
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    updateGeometry();
    update();
}

void TopologyView::clearPlanOverlay()
{
    m_overlay = false;
    m_nvlinkTraffic.clear();
    m_interTraffic.clear();
    update();
}

int TopologyView::groupOf(int rank, GroupKind kind) const
{
    if (!m_overlay)
        return -1;
    // The one rank layout the cost model places groups by (model/placement.h).
    const RankCoordinates c = rankCoordinates(m_plan, rank);
    switch (kind) {
    case GroupKind::Tensor: return c.stage * std::max(1, m_plan.dataParallel) + c.data; // TP groups: consecutive ranks
    case GroupKind::Data: return c.data;
    case GroupKind::Pipeline: return c.stage;
    case GroupKind::Expert: return c.expertShard; // ranks of one shard hold the same experts
    case GroupKind::Instance: return c.instance;  // MoE: the engine instance
    }
    return -1;
}

QColor TopologyView::groupColour(int index)
{
    // Tableau 10, then darker and lighter turns of it: neighbours stay distinguishable.
    static const QColor base[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
                                  QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
                                  QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7), QColor(0x9c, 0x75, 0x5f),
                                  QColor(0xba, 0xb0, 0xac)};
    if (index < 0)
        return kGpu;
    const QColor c = base[index % 10];
    const int turn = (index / 10) % 3;
    return turn == 0 ? c : turn == 1 ? c.darker(140) : c.lighter(130);
}

void TopologyView::setCluster(const ClusterSpec& cluster)
{
    m_cluster = cluster;
    setToolTip(summary());
    update();
}

QString TopologyView::summary() const
{
    const ClusterSpec& c = m_cluster;
    if (c.gpusPerNode < 1 || c.nodes < 1)
        return tr("No GPUs: GPUs per node and nodes must be at least 1.");
    QString s = tr("%1 node(s) × %2 GPUs = %3 GPUs. Each node is one NVLink domain (%4 GB/s per GPU per direction, %5 "
                   "µs per step).")
                    .arg(c.nodes)
                    .arg(c.gpusPerNode)
                    .arg(c.totalGpus())
                    .arg(formatNumber(c.nvlinkGBps, 0), formatNumber(c.nvlinkLatencyUs, 1));
    if (c.nodes > 1)
        s += QLatin1Char(' ')
             + tr("Nodes are joined by one inter-node port per GPU (%1 GB/s per direction, %2 µs per step).")
                   .arg(formatNumber(c.interNodeGBps, 0), formatNumber(c.interNodeLatencyUs, 1));
    return s;
}

// One GPU's label in `cell`: its TP/DP/PP (or instance/expert/PP) coordinates; a label
// that does not fit is cut to the coloured group's number, and left out when even that does
// not fit (the colour still names the group).
void TopologyView::paintGpuLabel(QPainter& p, const QRectF& cell, int rank, const QColor& fill) const
{
    p.setPen(fill.lightness() > 150 ? kText : QColor(Qt::white));
    QString label = m_colourBy == GroupKind::Expert || m_colourBy == GroupKind::Instance
        ? tr("i%1 e%2\np%3")
              .arg(groupOf(rank, GroupKind::Instance))
              .arg(groupOf(rank, GroupKind::Expert))
              .arg(groupOf(rank, GroupKind::Pipeline))
        : tr("t%1 d%2\np%3")
              .arg(rankCoordinates(m_plan, rank).tensor)
              .arg(groupOf(rank, GroupKind::Data))
              .arg(groupOf(rank, GroupKind::Pipeline));
    const QFontMetrics fm = p.fontMetrics();
    const int room = int(cell.width()) - 2;
    // Measured line by line: horizontalAdvance would measure both lines as one.
    auto fits = [&](const QString& t) {
        const QRect need = fm.boundingRect(QRect(0, 0, 1000, 1000), Qt::AlignCenter, t);
        return need.width() <= room && need.height() <= room;
    };
    if (!fits(label))
        label = QString::number(groupOf(rank, m_colourBy));
    if (fits(label))
        p.drawText(cell, Qt::AlignCenter, label);
}

QString TopologyView::nodeCaption(int index) const { return tr("node %1").arg(index); }

QString TopologyView::nvlinkLegendText() const
{
    const QString domain = tr("NVLink domain %1 GB/s").arg(formatNumber(m_cluster.nvlinkGBps, 0));
    return m_overlay && !m_nvlinkTraffic.isEmpty() ? domain + QStringLiteral(" · ") + m_nvlinkTraffic : domain;
}

void TopologyView::paintNode(QPainter& p, const QRectF& box, int index) const
{
    const int gpus = std::min(m_cluster.gpusPerNode, kMaxDrawnGpus);
    p.setPen(QPen(kNvlinkEdge, 1.2));
    p.setBrush(kNvlinkFill);
    p.drawRoundedRect(box, 5, 5);

    QFont f = font();
    f.setPointSizeF(std::max(6.5, f.pointSizeF() - 1.5));
    p.setFont(f);
    p.setPen(kText);
    const QRectF title(box.left() + 4, box.top() + 1, box.width() - 8, 14);
    p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(nodeCaption(index), Qt::ElideRight, int(title.width())));

    // GPU dots in the grid with the largest cells (8 GPUs in a wide box: one row of 8).
    const QRectF area = box.adjusted(6, 17, -6, -5);
    int cols = gpus, rows = 1;
    double cell = 0, best = 0;
    for (int r = 1; r <= gpus; ++r) {
        const int c = (gpus + r - 1) / r;
        const double size = std::min(area.width() / c, area.height() / r);
        // A full last row reads as a rack; prefer it unless cells get much smaller.
        const double score = size * (gpus % c == 0 ? 1.0 : 0.85);
        if (score > best + 1e-9) {
            best = score;
            cell = size;
            rows = r;
            cols = c;
        }
    }
    const double r = m_overlay ? std::clamp(cell * 0.4, 1.2, 22.0) : std::clamp(cell * 0.32, 1.2, 6.0);
    const double gridW = cell * cols, gridH = cell * rows;
    const QPointF origin(area.center().x() - gridW / 2, area.center().y() - gridH / 2);
    p.setPen(Qt::NoPen);
    p.setBrush(kGpu);
    for (int g = 0; g < gpus; ++g) {
        const QPointF c(origin.x() + (g % cols + 0.5) * cell, origin.y() + (g / cols + 0.5) * cell);
        if (!m_overlay) {
            p.drawEllipse(c, r, r);
            continue;
        }
        // Coloured by the chosen group; with room, each GPU names its TP/DP/PP coordinates.
        const int rank = index * m_cluster.gpusPerNode + g;
        const QColor fill = groupColour(groupOf(rank, m_colourBy));
        p.setPen(QPen(fill.darker(150), 1));
        p.setBrush(fill);
        p.drawRoundedRect(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), r * 0.3, r * 0.3);
        if (r >= 11)
            paintGpuLabel(p, QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), rank, fill);
    }
    p.setPen(Qt::NoPen);
    if (m_cluster.gpusPerNode > kMaxDrawnGpus) {
        p.setPen(kText);
        p.drawText(box, Qt::AlignCenter, tr("%1 GPUs").arg(m_cluster.gpusPerNode));
    }
}

// The legend row: what the colours mean, with the bandwidths they stand for.
void TopologyView::paintLegend(QPainter& p, const QRectF& all, double legendH) const
{
    const ClusterSpec& c = m_cluster;
    double x = all.left();
    const double ly = all.top() + legendH / 2;
    p.setPen(QPen(kNvlinkEdge, 1.2));
    p.setBrush(kNvlinkFill);
    p.drawRoundedRect(QRectF(x, ly - 5, 14, 10), 2, 2);
    x += 18;
    const QString nvl = nvlinkLegendText();
    p.setPen(kText);
    p.drawText(QRectF(x, all.top(), all.width() - x, legendH), Qt::AlignLeft | Qt::AlignVCenter, nvl);
    x += p.fontMetrics().horizontalAdvance(nvl) + 12;
    if (c.nodes > 1) {
        p.setPen(QPen(kFabric, 2));
        p.drawLine(QPointF(x, ly), QPointF(x + 14, ly));
        x += 18;
        p.setPen(kText);
        p.drawText(QRectF(x, all.top(), all.right() - x, legendH), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("inter-node %1 GB/s").arg(formatNumber(c.interNodeGBps, 0)));
    }
}

void TopologyView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ClusterSpec& c = m_cluster;
    const QRectF all = QRectF(rect()).adjusted(2, 2, -2, -2);
    if (c.gpusPerNode < 1 || c.nodes < 1) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(all, Qt::AlignCenter, tr("no GPUs to draw"));
        return;
    }
    QFont small = font();
    small.setPointSizeF(std::max(6.5, small.pointSizeF() - 1.5));
    p.setFont(small);
    const double legendH = 15;
    paintLegend(p, all, legendH);
    const bool multiNode = c.nodes > 1;

    const bool many = c.nodes > m_maxDrawnNodes;
    const int drawn = many ? m_maxDrawnNodes - 1 : c.nodes;
    const double ellipsisW = many ? 62 : 0;
    const double gap = 10;
    const double nodeTop = all.top() + legendH + 3;
    const double nodesBottom = all.bottom() - (multiNode ? (m_overlay ? 2.2 * kFabricBand : kFabricBand) : 2);
    // Capped so one node does not become a long empty box.
    const double nodeW = std::min(m_overlay ? 420.0 : 190.0,
                                  (all.width() - ellipsisW - gap * (drawn - 1 + (many ? 1 : 0))) / drawn);
    const double nodeH = nodesBottom - nodeTop;
    const double ellipsisX = all.left() + drawn * (nodeW + gap); // right after the last drawn node

    // The inter-node fabric first, so node boxes sit on top of their drop lines.
    if (multiNode) {
        const double busY = all.bottom() - 6;
        const double lastX = many ? ellipsisX + ellipsisW / 2 : all.left() + (drawn - 1) * (nodeW + gap) + nodeW / 2;
        p.setPen(QPen(kFabric, 2));
        p.drawLine(QPointF(all.left() + nodeW / 2, busY), QPointF(lastX, busY));
        for (int i = 0; i < drawn; ++i) {
            const double nx = all.left() + i * (nodeW + gap) + nodeW / 2;
            p.drawLine(QPointF(nx, nodesBottom), QPointF(nx, busY));
        }
        if (many)
            p.drawLine(QPointF(lastX, nodesBottom), QPointF(lastX, busY));
        if (m_overlay && !m_interTraffic.isEmpty()) {
            p.setPen(kFabric.darker(130));
            const QRectF label(all.left() + nodeW / 2 + 6, busY - 13, std::max(10.0, lastX - all.left() - nodeW / 2), 12);
            // On the widget's background, so the drop lines do not run through the words.
            const QString text = p.fontMetrics().elidedText(m_interTraffic, Qt::ElideRight, int(label.width()));
            p.fillRect(QRectF(label.left() - 2, label.top(), p.fontMetrics().horizontalAdvance(text) + 4, label.height()),
                       palette().window());
            p.drawText(label, Qt::AlignLeft | Qt::AlignVCenter, text);
        }
    }

    for (int i = 0; i < drawn; ++i)
        paintNode(p, QRectF(all.left() + i * (nodeW + gap), nodeTop, nodeW, nodeH), i);

    if (many) {
        const QRectF box(ellipsisX, nodeTop, ellipsisW, nodeH);
        p.setPen(QPen(kNvlinkEdge, 1.0, Qt::DashLine));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(box, 5, 5);
        p.setPen(kText);
        // The count in the box's width: the font shrinks to fit (down to 6 pt), else "+N".
        QString text = tr("… %1 more\nnodes").arg(c.nodes - drawn);
        QFont f = font();
        const QRectF room = box.adjusted(2, 2, -2, -2);
        auto fits = [&](const QFont& font, const QString& t) {
            const QRectF need = QFontMetricsF(font).boundingRect(room, Qt::AlignCenter, t);
            return need.width() <= room.width() && need.height() <= room.height();
        };
        while (!fits(f, text) && f.pointSizeF() > 6)
            f.setPointSizeF(std::max(6.0, f.pointSizeF() - 0.5));
        if (!fits(f, text))
            text = QStringLiteral("+%1").arg(c.nodes - drawn);
        p.setFont(f);
        p.drawText(box, Qt::AlignCenter, text);
    }
}

} // namespace shardlab::ui
