#include "breakdown_plot.h"

#include "report/cost_account.h"

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
    updateMinimumHeight();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BreakdownPlot::updateMinimumHeight()
{
    if (m_keys <= 0)
        return;
    // Rows of the legend at this width, the title's lines and the axis label: the operators
    // keep 19 px each whatever the window (they overlapped at 1024x700).
    const QFontMetrics fm(m_plot->font());
    const int legendItems = m_plot->legend->itemCount();
    const int perRow = std::max(1, m_plot->legend->wrap());
    const int legendRows = (legendItems + perRow - 1) / perRow;
    const int titleLines = int(m_title->text().count(QLatin1Char('\n'))) + 1;
    const int h = 19 * m_keys + 2 * fm.height() + 30 + titleLines * (fm.height() + 2) + legendRows * (fm.height() + 6) + 20;
    if (m_plot->minimumHeight() != h)
        m_plot->setMinimumHeight(h);
}

QString BreakdownPlot::titleText() const { return m_title->text(); }

std::vector<double> BreakdownPlot::referenceValues() const
{
    std::vector<double> v;
    for (auto it = m_reference->data()->constBegin(); it != m_reference->data()->constEnd(); ++it)
        v.push_back(it->value);
    return v;
}

std::vector<double> BreakdownPlot::barTotals() const
{
    std::vector<double> v(size_t(m_comm->data()->size()), 0.0);
    for (QCPBars* b : {m_computeBound, m_memoryBound, m_overhead, m_comm}) {
        size_t i = 0;
        for (auto it = b->data()->constBegin(); it != b->data()->constEnd() && i < v.size(); ++it, ++i)
            v[i] += it->value;
    }
    return v;
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
                            const QString& referenceName, const Plan* referencePlan)
{
    clearData();
    // Beside a reference, a step is charged to its tokens by the core's cost account
    // (report/cost_account.h): one µs of the busiest stage's step costs `perStepUs` GPU·µs
    // per token (micro-batches x GPUs / (batch x DP), per prompt token for a prefill pool),
    // and the account's total is what tokens/s per GPU inverts.
    auto sequences = [](const Plan& p) { return std::max(1.0, double(p.batch) / std::max(1, p.microBatches)); };
    const double seqs = sequences(plan);
    m_perToken = reference != nullptr;
    const CostAccount account = costAccount(poolOutcome(s, plan, r));
    const CostAccount refAccount = reference && referencePlan ? costAccount(poolOutcome(s, *referencePlan, *reference))
                                                              : CostAccount{};
    if (m_perToken && (!account.costed || !refAccount.costed))
        m_perToken = false; // nothing served to charge a step to: per step, as without a reference
    // ms per step -> the unit drawn: GPU·µs per token beside a reference, else ms per step.
    const double scale = m_perToken ? 1000.0 * account.perStepUs : 1.0;
    const double refScale = m_perToken ? 1000.0 * refAccount.perStepUs : 1.0;
    const QString unit = m_perToken ? tr("GPU·µs") : tr("ms");
    const QString tokenWord = QString::fromStdString(account.unit);
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
        const double compute = plotSafe(o.computeUs) / 1000 * scale, memory = plotSafe(o.memoryUs) / 1000 * scale;
        const double roofline = std::max(compute, memory);
        const double overhead = std::max(0.0, plotSafe(o.timeUs) / 1000 * scale - roofline);
        const double comm = plotSafe(o.commUs) / 1000 * scale;
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
            const double refTotal = (plotSafe(ref.timeUs) + plotSafe(ref.commUs)) / 1000 * refScale;
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
        tip += tr("<table><tr><td>compute (FLOPs / achieved peak)</td><td align=right>%1 %9</td></tr>"
                  "<tr><td>memory (HBM bytes / achieved bandwidth)</td><td align=right>%2 %9</td></tr>"
                  "<tr><td>bound by</td><td align=right>%3</td></tr>"
                  "<tr><td>kernel launch overhead</td><td align=right>%4 %9</td></tr>"
                  "<tr><td>communication</td><td align=right>%5 %9</td></tr>"
                  "<tr><td>collective</td><td align=right>%6</td></tr>"
                  "<tr><td>FLOPs per GPU per step</td><td align=right>%7 GFLOP</td></tr>"
                  "<tr><td>HBM traffic per GPU per step</td><td align=right>%8</td></tr></table>")
                   .arg(formatMs(compute), formatMs(memory), computeBound ? tr("compute") : tr("memory"),
                        formatMs(overhead), formatMs(comm),
                        o.commUs > 0
                            ? latin(collectiveName(o.collective)) + tr(", %1 per GPU").arg(formatBytes(o.commBytes))
                            : tr("none"),
                        formatNumber(o.flops / 1e9, 2), formatBytes(o.hbmBytes))
                   .arg(unit);
        if (m_perToken)
            tip += tr("<br>Per %1: this plan's step time × %2 (micro-batches × GPUs ÷ the tokens a cycle serves).")
                       .arg(tokenWord, formatNumber(account.perStepUs, 4));
        if (reference && reference->decode[i].present)
            tip += tr("<br>%1: %2 %3%4")
                       .arg(referenceName,
                            formatMs((plotSafe(reference->decode[i].timeUs) + plotSafe(reference->decode[i].commUs))
                                     / 1000 * refScale),
                            unit,
                            m_perToken ? tr(" (its step time × %1)").arg(formatNumber(refAccount.perStepUs, 4))
                                       : QString());
        m_tips.push_back(tip);
        ++key;
    }
    if (key == 0) {
        showMessage(tr("No per-operator breakdown for this plan."));
        return;
    }
    m_reference->setName(m_perToken ? tr("%1 total, per token").arg(referenceName) : tr("%1 total").arg(referenceName));
    m_reference->setVisible(reference != nullptr && !m_reference->data()->isEmpty());
    if (m_reference->visible())
        m_reference->addToLegend();
    else
        m_reference->removeFromLegend();
    fitLegend(m_plot, width());
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, key - 0.4);
    m_plot->xAxis->setLabel(m_perToken ? tr("GPU·µs per %1 (lower is better)").arg(tokenWord)
                                       : tr("ms per decode step, busiest stage"));
    // Enough height for every operator's label, the title and the legend below (the view
    // scrolls rather than overlap them).
    m_keys = key;
    updateMinimumHeight();
    m_plot->xAxis->setRange(0, maxTotal > 0 ? maxTotal * 1.16 : 1);
    // A value sits after the reference marker only when the marker is near the bar's
    // end; a distant marker must not look like it carries the bar's number.
    for (const ValueLabel& l : labels)
        if (l.markerEnd - l.barEnd > 0.05 * maxTotal) {
            l.item->position->setCoords(l.barEnd, l.item->position->coords().y());
            l.item->setPadding(QMargins(4, 0, 0, 0));
        }
    if (m_perToken) {
        // The bars are the operators; the total also counts what two-batch overlap hides
        // and the pipeline bubble, so it is the headline's inverse.
        auto total = [](const CostAccount& a) {
            double ops = 0, bubble = 0, overlap = 0, drafting = 0;
            for (const CostPart& p : a.parts)
                (p.kind == CostPartKind::Operator   ? ops
                     : p.kind == CostPartKind::Overlap  ? overlap
                     : p.kind == CostPartKind::Drafting ? drafting
                                                        : bubble) += p.gpuUsPerToken;
            QString t = formatNumber(a.gpuUsPerToken, 0);
            if (overlap < 0 || bubble > 0.005 * a.gpuUsPerToken || drafting > 0) {
                t += tr(" = operators %1").arg(formatNumber(ops, 0));
                if (drafting > 0)
                    t += tr(" + drafting %1").arg(formatNumber(drafting, 0));
                if (overlap < 0)
                    t += tr(" − overlap %1").arg(formatNumber(-overlap, 0));
                if (bubble > 0.005 * a.gpuUsPerToken)
                    t += tr(" + bubble %1").arg(formatNumber(bubble, 0));
            }
            return t;
        };
        // Short lines: the plot may be under 300 px wide beside the what-if editor.
        m_title->setText(tr("GPU·µs per %1 (1e6 / tokens/s per GPU)\nthis plan %2\n%3 %4")
                             .arg(tokenWord, total(account), referenceName, total(refAccount)));
        m_title->setFont(font());
    } else {
        m_title->setFont(titleFont(font()));
        // Speculative decoding's drafting passes follow the last stage's operators (no bar).
        const double draftMs = r.decode[static_cast<int>(OpId::LmHead)].present ? plotSafe(r.draftUs) / 1000 : 0.0;
        QString title = tr("Busiest stage: %1 ms per decode step of %2 sequences")
                            .arg(formatMs(stepMs + draftMs), formatNumber(seqs, 0));
        if (draftMs > 0)
            title += tr("\n%1 ms of it speculative drafting").arg(formatMs(draftMs));
        m_title->setText(title);
    }
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

bool BreakdownPlot::save(const QString& path, QString* error, const QString& caption)
{
    // Export at a fixed, legible size: the on-screen plot may be squeezed into a dock.
    const int w = std::max(900, m_plot->width()), h = std::max(560, m_plot->height() + 60);
    return savePlot(m_plot, path, w, h, 2.0, error, caption);
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
