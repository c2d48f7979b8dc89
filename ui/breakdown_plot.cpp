#include "breakdown_plot.h"

#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "file_export.h"
#include "plot_style.h"
#include "qcp.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QString latin(const char* s) { return QString::fromLatin1(s); }

} // namespace

BreakdownPlot::BreakdownPlot(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("breakdownPlot"));
    // QCustomPlot's size hint includes the legend laid out for the current width, which
    // would pin the width it was computed at; the legend re-wraps on resize instead.
    m_plot->setMinimumWidth(320);
    m_plot->setMinimumHeight(200);
    layout->addWidget(m_plot);
    stylePlot(m_plot);

    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), titleFont(font()));
    m_plot->plotLayout()->addElement(0, 0, m_title);

    m_computeBound = addStackedBars(m_plot, tr("roofline time (compute-bound)"), kComputeColour, nullptr, 0.66);
    m_memoryBound = addStackedBars(m_plot, tr("roofline time (memory-bound)"), kMemoryColour, m_computeBound, 0.66);
    m_overhead = addStackedBars(m_plot, tr("kernel launch overhead"), kOverheadColour, m_memoryBound, 0.66);
    m_comm = addStackedBars(m_plot, tr("communication (collectives)"), kCommColour, m_overhead, 0.66);

    m_reference = m_plot->addGraph(m_plot->yAxis, m_plot->xAxis);
    m_reference->setLineStyle(QCPGraph::lsNone);
    m_reference->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 1.2), QColor(255, 255, 255), 8));
    m_reference->setName(tr("reference total"));

    m_plot->xAxis->setLabel(tr("time per decode step, busiest pipeline stage (ms)"));
    m_plot->xAxis->setRange(0, 1);
    m_plot->yAxis->setRangeReversed(true); // first operator of the layer on top
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    placeLegendBelow(m_plot, 3);

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &BreakdownPlot::showTip);
    showMessage(tr("No plan yet."));
}

void BreakdownPlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitLegend(m_plot, width());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// Axes and legend only mean something with bars: a message stands alone.
void BreakdownPlot::setDecorationsVisible(bool on)
{
    m_plot->xAxis->setVisible(on);
    m_plot->yAxis->setVisible(on);
    m_plot->xAxis->grid()->setVisible(on);
    m_plot->legend->setVisible(on);
}

void BreakdownPlot::clearData()
{
    for (QCPBars* b : {m_computeBound, m_memoryBound, m_overhead, m_comm})
        b->data()->clear();
    m_reference->data()->clear();
    m_plot->clearItems();
    m_tips.clear();
}

void BreakdownPlot::showMessage(const QString& text)
{
    clearData();
    setDecorationsVisible(false);
    m_plot->setMinimumHeight(200);
    m_title->setText(tr("Decode time per operator"));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.5, 0.5);
    m_plot->xAxis->setRange(0, 1);
    auto* label = new QCPItemText(m_plot);
    label->position->setType(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(0.5, 0.5);
    label->setText(text);
    label->setColor(QColor(0x54, 0x6e, 0x7a));
    label->setFont(font());
    m_plot->replot();
}

void BreakdownPlot::setPlan(const Scenario& s, const Plan& plan, const SimResult& r, const SimResult* reference,
                            const QString& referenceName)
{
    clearData();
    setDecorationsVisible(true);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double maxTotal = 0, stepMs = 0;
    struct ValueLabel {
        QCPItemText* item;
        double barEnd, markerEnd;
    };
    std::vector<ValueLabel> labels;
    int key = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = r.decode[i];
        if (!opPresent(s.model, id) || !o.present)
            continue;
        const double compute = plotSafe(o.computeUs) / 1000, memory = plotSafe(o.memoryUs) / 1000;
        const double roofline = std::max(compute, memory);
        const double overhead = std::max(0.0, plotSafe(o.timeUs) / 1000 - roofline);
        const double comm = plotSafe(o.commUs) / 1000;
        const bool computeBound = o.bound == Bound::Compute;
        m_computeBound->addData(key, computeBound ? roofline : 0);
        m_memoryBound->addData(key, computeBound ? 0 : roofline);
        m_overhead->addData(key, overhead);
        m_comm->addData(key, comm);
        const double total = roofline + overhead + comm;
        maxTotal = std::max(maxTotal, total);
        stepMs += total;
        double labelAt = total;
        if (reference && reference->decode[i].present) {
            const OpBreakdown& ref = reference->decode[i];
            const double refTotal = (plotSafe(ref.timeUs) + plotSafe(ref.commUs)) / 1000;
            m_reference->addData(key, refTotal);
            maxTotal = std::max(maxTotal, refTotal);
            labelAt = std::max(labelAt, refTotal);
        }
        ticker->addTick(key,
                        QStringLiteral("%1 · %2").arg(latin(opName(id)), latin(opOption(id, plan.option(id)).name)));

        auto* value = new QCPItemText(m_plot);
        value->setClipToAxisRect(true);
        value->position->setCoords(labelAt, key);
        value->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        value->setPadding(QMargins(labelAt > total ? 8 : 4, 0, 0, 0)); // clear of the reference marker
        labels.push_back({value, total, labelAt});
        value->setText(formatMs(total));
        QFont f = font();
        f.setPointSizeF(f.pointSizeF() - 1);
        value->setFont(f);
        value->setColor(QColor(0x37, 0x47, 0x4f));

        QString tip = QStringLiteral("<b>%1</b> — %2 <i>%3</i><br>%4")
                          .arg(latin(opInfo(id).label).toHtmlEscaped(), latin(opName(id)),
                               latin(opOption(id, plan.option(id)).name),
                               latin(opOption(id, plan.option(id)).summary).toHtmlEscaped());
        tip += tr("<table><tr><td>compute (FLOPs / achieved peak)</td><td align=right>%1 ms</td></tr>"
                  "<tr><td>memory (HBM bytes / achieved bandwidth)</td><td align=right>%2 ms</td></tr>"
                  "<tr><td>bound by</td><td align=right>%3</td></tr>"
                  "<tr><td>kernel launch overhead</td><td align=right>%4 ms</td></tr>"
                  "<tr><td>communication</td><td align=right>%5 ms</td></tr>"
                  "<tr><td>collective</td><td align=right>%6</td></tr>"
                  "<tr><td>FLOPs per GPU per step</td><td align=right>%7 GFLOP</td></tr>"
                  "<tr><td>HBM traffic per GPU per step</td><td align=right>%8</td></tr></table>")
                   .arg(formatMs(compute), formatMs(memory), computeBound ? tr("compute") : tr("memory"),
                        formatMs(overhead), formatMs(comm),
                        o.commUs > 0
                            ? latin(collectiveName(o.collective)) + tr(", %1 per GPU").arg(formatBytes(o.commBytes))
                            : tr("none"),
                        formatNumber(o.flops / 1e9, 2), formatBytes(o.hbmBytes));
        if (reference && reference->decode[i].present)
            tip += tr("<br>%1: %2 ms")
                       .arg(referenceName,
                            formatMs((plotSafe(reference->decode[i].timeUs) + plotSafe(reference->decode[i].commUs))
                                     / 1000));
        m_tips.push_back(tip);
        ++key;
    }
    if (key == 0) {
        showMessage(tr("No per-operator breakdown for this plan."));
        return;
    }
    m_reference->setName(tr("%1 total").arg(referenceName));
    m_reference->setVisible(reference != nullptr && !m_reference->data()->isEmpty());
    if (m_reference->visible())
        m_reference->addToLegend();
    else
        m_reference->removeFromLegend();
    fitLegend(m_plot, width());
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, key - 0.4);
    // Enough height for every operator's label (the view scrolls rather than overlap them).
    m_plot->setMinimumHeight(110 + 19 * key);
    m_plot->xAxis->setRange(0, maxTotal > 0 ? maxTotal * 1.16 : 1);
    // A value sits after the reference marker only when the marker is near the bar's
    // end; a distant marker must not look like it carries the bar's number.
    for (const ValueLabel& l : labels)
        if (l.markerEnd - l.barEnd > 0.05 * maxTotal) {
            l.item->position->setCoords(l.barEnd, l.item->position->coords().y());
            l.item->setPadding(QMargins(4, 0, 0, 0));
        }
    m_title->setText(tr("Busiest stage: %1 ms per decode step of %2 sequences")
                         .arg(formatMs(stepMs), formatNumber(double(plan.batch) / std::max(1, plan.microBatches), 0)));
    m_plot->replot();
}

void BreakdownPlot::showTip(QMouseEvent* event)
{
    const double key = m_plot->yAxis->pixelToCoord(event->position().y());
    const double x = m_plot->xAxis->pixelToCoord(event->position().x());
    const int i = int(std::lround(key));
    if (i < 0 || i >= int(m_tips.size()) || std::fabs(key - i) > 0.4 || x < m_plot->xAxis->range().lower
        || !m_plot->axisRect()->rect().contains(event->position().toPoint())) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), m_tips[i], m_plot);
}

bool BreakdownPlot::save(const QString& path, QString* error)
{
    // Export at a fixed, legible size: the on-screen plot may be squeezed into a dock.
    const int w = std::max(900, m_plot->width()), h = std::max(520, m_plot->height());
    return savePlot(m_plot, path, w, h, 2.0, error);
}

std::vector<double> BreakdownPlot::plottedValues() const
{
    std::vector<double> v;
    for (QCPBars* b : {m_computeBound, m_memoryBound, m_overhead, m_comm})
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
            v.push_back(it->value);
    for (auto it = m_reference->data()->constBegin(); it != m_reference->data()->constEnd(); ++it)
        v.push_back(it->value);
    v.push_back(m_plot->xAxis->range().lower);
    v.push_back(m_plot->xAxis->range().upper);
    return v;
}

} // namespace shardlab::ui
