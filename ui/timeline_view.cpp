#include "timeline_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace shardlab::ui {

namespace {

constexpr double kLabelWidth = 92;
constexpr double kLaneHeight = 46;
constexpr double kAxisHeight = 18;

QColor colourOf(const TimelineBar& b)
{
    switch (b.kind) {
    case BarKind::Compute: return {0x2f, 0x5f, 0x9e};
    case BarKind::Memory: return {0x8f, 0xb3, 0xe0};
    case BarKind::Launch: return {0x9e, 0x9e, 0x9e};
    case BarKind::Comm:
    case BarKind::Transfer: return b.link == "inter-node fabric" ? QColor(0xb5, 0x42, 0x0f) : QColor(0xe0, 0x7b, 0x1f);
    case BarKind::Overlap: return {0x3a, 0x8f, 0x4c};
    case BarKind::Step: return {0x2f, 0x5f, 0x9e};
    case BarKind::Wait: return {0xe0, 0xe0, 0xe0};
    case BarKind::Draft: return {0x7b, 0x4f, 0x9e};
    }
    return Qt::gray;
}

QString kindWords(const TimelineBar& b)
{
    switch (b.kind) {
    case BarKind::Compute: return QObject::tr("compute-bound (FLOPs / achieved peak)");
    case BarKind::Memory: return QObject::tr("memory-bound (HBM bytes / achieved bandwidth)");
    case BarKind::Launch: return QObject::tr("kernel launch overhead");
    case BarKind::Comm: return QObject::tr("communication over %1").arg(QString::fromStdString(b.link));
    case BarKind::Overlap: return QObject::tr("hidden by two-batch overlap: one half-batch's expert exchange runs beside "
                                              "the other's compute, so the step ends this much earlier");
    case BarKind::Step: return QObject::tr("one micro-batch step of this stage");
    case BarKind::Transfer: return QObject::tr("hidden states to the next stage over %1").arg(QString::fromStdString(b.link));
    case BarKind::Wait: return QObject::tr("waiting for the other stages (pipeline bubble)");
    case BarKind::Draft: return QObject::tr("speculative decoding: the MTP module drafting the next tokens");
    }
    return {};
}

// The colour key under the lanes.
void drawLegend(QPainter& p, double top, double width)
{
    struct Key {
        TimelineBar bar;
        const char* words;
    };
    const Key keys[] = {
        {{BarKind::Compute, OpId::Count, {}, {}, 0, 0}, QT_TR_NOOP("compute-bound")},
        {{BarKind::Memory, OpId::Count, {}, {}, 0, 0}, QT_TR_NOOP("memory-bound")},
        {{BarKind::Launch, OpId::Count, {}, {}, 0, 0}, QT_TR_NOOP("launch overhead")},
        {{BarKind::Comm, OpId::Count, {}, "NVLink", 0, 0}, QT_TR_NOOP("NVLink")},
        {{BarKind::Comm, OpId::Count, {}, "inter-node fabric", 0, 0}, QT_TR_NOOP("inter-node fabric")},
        {{BarKind::Overlap, OpId::Count, {}, {}, 0, 0}, QT_TR_NOOP("hidden by overlap")},
        {{BarKind::Wait, OpId::Count, {}, {}, 0, 0}, QT_TR_NOOP("waiting")},
    };
    double x = 8, y = top;
    for (const Key& k : keys) {
        const QString text = QObject::tr(k.words);
        const double w = 14 + 4 + p.fontMetrics().horizontalAdvance(text) + 14;
        if (x + w > width) {
            x = 8;
            y += 18;
        }
        const QRectF box(x, y, 14, 12);
        p.fillRect(box, colourOf(k.bar));
        if (k.bar.kind == BarKind::Overlap)
            p.fillRect(box, QBrush(Qt::white, Qt::BDiagPattern));
        p.drawText(QPointF(x + 18, y + 11), text);
        x += w;
    }
}

} // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("stepTimeline"));
    setMouseTracking(true);
}

void TimelineView::setTimeline(const StepTimeline& t)
{
    m_timeline = t;
    m_message.clear();
    update();
}

void TimelineView::showMessage(const QString& text)
{
    m_timeline = StepTimeline{};
    m_message = text;
    update();
}

TimelineView::LaneGeometry TimelineView::lane(int i) const
{
    const double top = 28 + i * (kLaneHeight * 2 + kAxisHeight + 30);
    const QRectF area(kLabelWidth, top, std::max(10.0, width() - kLabelWidth - 12), kLaneHeight * 2);
    double span = 1e-9;
    for (const TimelineBar& b : i == 0 ? m_timeline.step : m_timeline.cycle)
        span = std::max(span, b.startUs + b.durationUs);
    return {area, span};
}

QRectF TimelineView::barRect(int i, const TimelineBar& b) const
{
    const LaneGeometry g = lane(i);
    const double x = g.area.left() + b.startUs / g.spanUs * g.area.width();
    const double w = std::max(1.0, b.durationUs / g.spanUs * g.area.width());
    // The hidden time sits below the step it shortens.
    const bool lower = b.kind == BarKind::Overlap;
    return {x, g.area.top() + (lower ? kLaneHeight + 4 : 0), w, kLaneHeight - 4};
}

void TimelineView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(rect(), palette().base());
    if (!m_timeline.ok) {
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   m_message.isEmpty() ? tr("No timeline: the plan is not costed.") : m_message);
        return;
    }
    const QString titles[2] = {
        tr("One micro-batch step of the busiest stage: %1 ms (hover a bar)").arg(m_timeline.stepUs / 1000, 0, 'f', 3),
        tr("That stage over one cycle: %1 micro-batch(es) over %2 stage(s), %3 ms")
            .arg(m_timeline.microBatches)
            .arg(m_timeline.stages)
            .arg(m_timeline.cycleUs / 1000, 0, 'f', 3)};
    for (int i = 0; i < 2; ++i) {
        const LaneGeometry g = lane(i);
        p.setPen(palette().text().color());
        p.drawText(QPointF(8, g.area.top() - 8), titles[i]);
        p.drawText(QRectF(4, g.area.top(), kLabelWidth - 8, kLaneHeight), Qt::AlignVCenter | Qt::AlignRight,
                   i == 0 ? tr("operators") : tr("stage"));
        if (i == 0)
            p.drawText(QRectF(4, g.area.top() + kLaneHeight, kLabelWidth - 8, kLaneHeight),
                       Qt::AlignVCenter | Qt::AlignRight, tr("overlap"));
        for (const TimelineBar& b : i == 0 ? m_timeline.step : m_timeline.cycle) {
            const QRectF r = barRect(i, b);
            p.fillRect(r, colourOf(b));
            if (b.kind == BarKind::Overlap)
                p.fillRect(r, QBrush(Qt::white, Qt::BDiagPattern));
            // Names where they fit: operators on their roofline bar, every cycle bar.
            const bool named = b.kind == BarKind::Compute || b.kind == BarKind::Memory || i == 1;
            const QString name = QString::fromStdString(b.label);
            if (named && r.width() > p.fontMetrics().horizontalAdvance(name) + 6) {
                p.setPen(b.kind == BarKind::Memory || b.kind == BarKind::Wait ? Qt::black : Qt::white);
                p.drawText(r, Qt::AlignCenter, name);
            }
        }
        // The time axis: 0, the middle and the end in ms.
        p.setPen(palette().text().color());
        const double y = g.area.bottom() + 4;
        p.drawLine(QPointF(g.area.left(), y), QPointF(g.area.right(), y));
        for (int k = 0; k <= 4; ++k) {
            const double x = g.area.left() + g.area.width() * k / 4;
            p.drawLine(QPointF(x, y), QPointF(x, y + 4));
            const QString t = QString::number(g.spanUs * k / 4 / 1000, 'f', 2) + QStringLiteral(" ms");
            const double w = p.fontMetrics().horizontalAdvance(t);
            p.drawText(QPointF(std::clamp(x - w / 2, 0.0, width() - w), y + 4 + p.fontMetrics().ascent()), t);
        }
    }
    p.setPen(palette().text().color());
    drawLegend(p, lane(1).area.bottom() + kAxisHeight + 12, width());
}

bool TimelineView::barAt(const QPointF& pos, int& laneOut, int& index) const
{
    for (int i = 0; i < 2; ++i) {
        const std::vector<TimelineBar>& bars = i == 0 ? m_timeline.step : m_timeline.cycle;
        for (size_t k = 0; k < bars.size(); ++k)
            if (barRect(i, bars[k]).adjusted(-1, 0, 1, 0).contains(pos)) {
                laneOut = i;
                index = static_cast<int>(k);
                return true;
            }
    }
    return false;
}

QString TimelineView::barText(int i, int index) const
{
    const std::vector<TimelineBar>& bars = i == 0 ? m_timeline.step : m_timeline.cycle;
    if (index < 0 || index >= int(bars.size()))
        return {};
    const TimelineBar& b = bars[size_t(index)];
    return tr("<b>%1</b><br>%2<br>%3 ms, from %4 to %5 ms")
        .arg(QString::fromStdString(b.label).toHtmlEscaped(), kindWords(b).toHtmlEscaped())
        .arg(b.durationUs / 1000, 0, 'f', 3)
        .arg(b.startUs / 1000, 0, 'f', 3)
        .arg((b.startUs + b.durationUs) / 1000, 0, 'f', 3);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e)
{
    int i = 0, k = 0;
    if (barAt(e->position(), i, k))
        QToolTip::showText(e->globalPosition().toPoint(), barText(i, k), this);
    else
        QToolTip::hideText();
}

} // namespace shardlab::ui
