#include "memory_plot.h"

#include <QVBoxLayout>

#include <algorithm>

#include "plot_style.h"
#include "qcp.h"
#include "ui_format.h"

namespace shardlab::ui {

MemoryPlot::MemoryPlot(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("memoryPlot"));
    // QCustomPlot's size hint includes the legend laid out for the current width, which
    // would pin the width it was computed at; the legend re-wraps on resize instead. As
    // narrow as the breakdown above it (the plan tab at 1024x700).
    m_plot->setMinimumWidth(260);
    layout->addWidget(m_plot);
    setFixedHeight(150);
    stylePlot(m_plot);
    m_weights = addStackedBars(m_plot, tr("weights"), kWeightsColour, nullptr, 0.6);
    m_kv = addStackedBars(m_plot, tr("KV cache"), kKvColour, m_weights, 0.6);
    m_heldBack = addStackedBars(m_plot, tr("kept out of the KV pool"), kKvColour.lighter(160), m_kv, 0.6);
    m_activations = addStackedBars(m_plot, tr("activations / sampler"), kActivationColour, m_heldBack, 0.6);
    m_heldBack->removeFromLegend();
    m_reserve = addStackedBars(m_plot, tr("reserve (context, NCCL)"), kReserveColour, m_activations, 0.6);
    m_plot->xAxis->setLabel(tr("memory per GPU, fullest pipeline stage (GB)"));
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    placeLegendBelow(m_plot, 4);
    showMessage(tr("No plan yet."));
}

void MemoryPlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitLegend(m_plot, width());
    // Two bars need little height; a wrapped legend needs one more row.
    const int rows = (m_plot->legend->itemCount() + m_plot->legend->wrap() - 1) / std::max(1, m_plot->legend->wrap());
    setFixedHeight(130 + 20 * rows);
    fitRange();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryPlot::setDecorationsVisible(bool on)
{
    m_plot->xAxis->setVisible(on);
    m_plot->yAxis->setVisible(on);
    m_plot->xAxis->grid()->setVisible(on);
    m_plot->legend->setVisible(on);
}

void MemoryPlot::fitRange()
{
    if (!m_capacityLabel)
        return;
    // The x range must end far enough right of the capacity line for its label:
    // cap / upper * W + label + pad <= W.
    const double w = std::max(50, m_plot->axisRect()->width());
    const double label = QFontMetrics(m_capacityLabel->font()).horizontalAdvance(m_capacityLabel->text()) + 12;
    double upper = std::max(m_maxTotalGb * 1.15, m_capacityGb * 1.05);
    if (w > label + 20)
        upper = std::max(upper, m_capacityGb * w / (w - label));
    m_plot->xAxis->setRange(0, upper + 1e-9);
}

void MemoryPlot::clearData()
{
    m_capacityLabel = nullptr;
    for (QCPBars* b : {m_weights, m_kv, m_heldBack, m_activations, m_reserve})
        b->data()->clear();
    m_plot->clearItems();
}

void MemoryPlot::showMessage(const QString& text)
{
    clearData();
    setDecorationsVisible(false);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    m_plot->yAxis->setRange(-0.5, 0.5);
    m_plot->xAxis->setRange(0, 1);
    auto* label = new QCPItemText(m_plot);
    label->position->setType(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(0.5, 0.5);
    label->setText(text);
    label->setColor(QColor(0x54, 0x6e, 0x7a));
    m_plot->replot();
}

void MemoryPlot::setMemory(const SimResult& planResult, const SimResult* referenceResult, const QString& referenceName)
{
    const MemoryBreakdown& plan = planResult.memory;
    clearData();
    setDecorationsVisible(true);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double maxTotal = plotSafe(plan.capacityGb);
    int key = 0;
    bool heldBack = false;
    auto add = [&](const SimResult& result, const QString& label) {
        const MemoryBreakdown& m = result.memory;
        const double w = plotSafe(m.weightsGb), kv = plotSafe(m.kvCacheGb), h = plotSafe(m.kvHeldBackGb),
                     a = plotSafe(m.activationGb), r = plotSafe(m.reserveGb);
        m_weights->addData(key, w);
        m_kv->addData(key, kv);
        m_heldBack->addData(key, h);
        m_activations->addData(key, a);
        m_reserve->addData(key, r);
        heldBack = heldBack || h > 0;
        // The label is the simulator's own total (every term, the sampler's warm-up
        // included), red when the simulator judged the plan over its memory.
        const double total = plotSafe(m.totalGb);
        const bool over = result.violations & (1u << static_cast<int>(Violation::Memory));
        maxTotal = std::max({maxTotal, total, w + kv + h + a + r});
        ticker->addTick(key, label);
        auto* value = new QCPItemText(m_plot);
        value->position->setCoords(total, key);
        value->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        value->setPadding(QMargins(4, 0, 0, 0));
        value->setText(tr("%1 GB").arg(formatNumber(total, 1)));
        value->setColor(over ? kLimitColour : QColor(0x37, 0x47, 0x4f));
        ++key;
    };
    add(planResult, tr("this plan"));
    if (referenceResult)
        add(*referenceResult, referenceName);
    if (heldBack)
        m_heldBack->addToLegend();
    else
        m_heldBack->removeFromLegend();
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, key - 0.4);
    m_maxTotalGb = maxTotal;

    const double cap = plotSafe(plan.capacityGb);
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setCoords(cap, 0);
    line->point2->setCoords(cap, 1);
    line->setPen(QPen(kLimitColour, 1.5, Qt::DashLine));
    auto* capLabel = new QCPItemText(m_plot);
    capLabel->position->setTypeX(QCPItemPosition::ptPlotCoords);
    capLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    capLabel->position->setCoords(cap, 0.0);
    // Right of the line: the x range always leaves >= 15 % of room there, and bars end left of it.
    capLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    capLabel->setPadding(QMargins(4, 1, 0, 0));
    capLabel->setText(tr("HBM capacity %1 GB").arg(formatCapacityGb(cap)));
    capLabel->setColor(kLimitColour);
    m_capacityGb = cap;
    m_capacityLabel = capLabel;
    fitRange();
    m_plot->replot();
}

} // namespace shardlab::ui
