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

// `text` with each of its lines broken at spaces into lines at most `width` pixels wide
// (a word wider than that keeps a line of its own).
QString wrapLines(const QString& text, const QFontMetrics& fm, int width)
{
    QStringList out;
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        QString current;
        for (const QString& word : line.split(QLatin1Char(' '))) {
            const QString longer = current.isEmpty() ? word : current + QLatin1Char(' ') + word;
            if (!current.isEmpty() && fm.horizontalAdvance(longer) > width) {
                out << current;
                current = word;
            } else
                current = longer;
        }
        out << current;
    }
    return out.join(QLatin1Char('\n'));
}

// `text` as one word for wrapLines: its spaces made non-breaking.
QString unbreakable(QString text) { return text.replace(QLatin1Char(' '), QChar::Nbsp); }

// Pixels between a value label and a bar's end or a marker.
constexpr double kLabelGap = 4;
} // namespace

BreakdownPlot::BreakdownPlot(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("breakdownPlot"));
    // QCustomPlot's size hint includes the legend laid out for the current width, which
    // would pin the width it was computed at; the legend re-wraps on resize instead. At
    // 1024x700 the plan tab leaves ~300 px beside the what-if editor: the plot fits in it.
    m_plot->setMinimumWidth(260);
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

    m_axisLabel = tr("time per decode step, busiest pipeline stage (ms)");
    m_plot->xAxis->setRange(0, 1);
    m_plot->yAxis->setRangeReversed(true); // first operator of the layer on top
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    placeLegendBelow(m_plot, 3);

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &BreakdownPlot::showTip);
    // The labels' places depend on the pixels: they are found after every layout (the
    // screen's, a file's) and drawn in the same pass.
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        fitAxisLabel();
        fitValueTicks();
        placeValueLabels();
    });
    showMessage(tr("No plan yet."));
}

void BreakdownPlot::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    wrapTexts(width());
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
    const int axisLines = int(m_plot->xAxis->label().count(QLatin1Char('\n'))) + 1;
    const int h = 19 * m_keys + (1 + axisLines) * fm.height() + 30 + titleLines * (fm.height() + 2)
                  + legendRows * (fm.height() + 6) + 20;
    if (m_plot->minimumHeight() != h)
        m_plot->setMinimumHeight(h);
}

QString BreakdownPlot::titleText() const { return m_titleText; }

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
    m_values.clear();
}

void BreakdownPlot::showMessage(const QString& text)
{
    clearData();
    setDecorationsVisible(false);
    m_plot->setMinimumHeight(200);
    setTexts(tr("Decode time per operator"), m_axisLabel);
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
    int key = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = r.decode[i];
        if (!opPresent(s.model, id) || !o.present)
            continue;
        // The operator's work (its compute- or memory-bound time) and its kernels' fixed costs,
        // as the simulator split them (OpBreakdown::launchUs).
        const double overhead = std::clamp(plotSafe(o.launchUs), 0.0, plotSafe(o.timeUs)) / 1000 * scale;
        const double roofline = std::max(0.0, plotSafe(o.timeUs) / 1000 * scale - overhead);
        const double compute = plotSafe(o.computeUs) / 1000 * scale, memory = plotSafe(o.memoryUs) / 1000 * scale;
        const double comm = plotSafe(o.commUs) / 1000 * scale;
        const bool computeBound = o.bound == Bound::Compute;
        m_computeBound->addData(key, computeBound ? roofline : 0);
        m_memoryBound->addData(key, computeBound ? 0 : roofline);
        m_overhead->addData(key, overhead);
        m_comm->addData(key, comm);
        const double total = roofline + overhead + comm;
        maxTotal = std::max(maxTotal, total);
        stepMs += total;
        double refTotal = -1; // no marker
        if (reference && reference->decode[i].present) {
            const OpBreakdown& ref = reference->decode[i];
            refTotal = (plotSafe(ref.timeUs) + plotSafe(ref.commUs)) / 1000 * refScale;
            m_reference->addData(key, refTotal);
            maxTotal = std::max(maxTotal, refTotal);
        }
        ticker->addTick(key,
                        QStringLiteral("%1 · %2").arg(latin(opName(id)), latin(opOption(id, plan.option(id)).name)));

        addValueLabel(key, total, refTotal, formatMs(total));

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
    const QString axisLabel = m_perToken ? tr("GPU·µs per %1 (lower is better)").arg(tokenWord)
                                         : tr("ms per decode step, busiest stage");
    m_keys = key;
    m_plot->xAxis->setRange(0, maxTotal > 0 ? maxTotal * 1.16 : 1);
    QString title;
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
            // Each term ("− overlap 1,399") is one unit for wrapLines: a narrow plot breaks
            // the sum between its terms, never a number from its name.
            QString t = formatNumber(a.gpuUsPerToken, 0);
            auto term = [&t](const QString& text) { t += QLatin1Char(' ') + unbreakable(text); };
            if (overlap < 0 || bubble > 0.005 * a.gpuUsPerToken || drafting > 0) {
                term(tr("= operators %1").arg(formatNumber(ops, 0)));
                if (drafting > 0)
                    term(tr("+ drafting %1").arg(formatNumber(drafting, 0)));
                if (overlap < 0)
                    term(tr("− overlap %1").arg(formatNumber(-overlap, 0)));
                if (bubble > 0.005 * a.gpuUsPerToken)
                    term(tr("+ bubble %1").arg(formatNumber(bubble, 0)));
            }
            return t;
        };
        // Short lines: the plot may be under 300 px wide beside the what-if editor (and each
        // wraps further when it is narrower still).
        title = tr("GPU·µs per %1 %2\nthis plan %3\n%4 %5")
                    .arg(tokenWord, unbreakable(tr("(1e6 / tokens/s per GPU)")), total(account), referenceName,
                         total(refAccount));
        m_title->setFont(font());
    } else {
        m_title->setFont(titleFont(font()));
        // Speculative decoding's drafting passes follow the last stage's operators (no bar).
        const double draftMs = r.decode[static_cast<int>(OpId::LmHead)].present ? plotSafe(r.draftUs) / 1000 : 0.0;
        title = (seqs == 1 ? tr("Busiest stage: %1 ms per decode step of %2 sequence")
                           : tr("Busiest stage: %1 ms per decode step of %2 sequences"))
                    .arg(formatMs(stepMs + draftMs), formatNumber(seqs, 0));
        if (draftMs > 0)
            title += tr("\n%1 ms of it speculative drafting").arg(formatMs(draftMs));
    }
    setTexts(title, axisLabel);
    // Enough height for every operator's label, the title and the legend below (the view
    // scrolls rather than overlap them).
    updateMinimumHeight();
    m_plot->replot();
}

void BreakdownPlot::setTexts(const QString& title, const QString& axisLabel)
{
    m_titleText = title;
    m_axisLabel = axisLabel;
    wrapTexts(width());
}

void BreakdownPlot::wrapTexts(int width)
{
    // The title spans the plot, a few pixels of margin on each side.
    m_title->setText(wrapLines(m_titleText, QFontMetrics(m_title->font()), std::max(80, width - 16)));
}

void BreakdownPlot::fitAxisLabel()
{
    // The label is centred under the bars, not the plot: its lines may be twice as wide as
    // the distance from that centre to the nearer edge. The new lines are laid out by the
    // next replot, queued (the bars' width does not depend on them).
    const int centre = m_plot->axisRect()->rect().center().x();
    const int half = std::min(centre, m_plot->viewport().width() - centre);
    const QString label = wrapLines(m_axisLabel, QFontMetrics(m_plot->xAxis->labelFont()), std::max(60, 2 * half - 8));
    if (label == m_plot->xAxis->label())
        return;
    m_plot->xAxis->setLabel(label);
    updateMinimumHeight();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BreakdownPlot::addValueLabel(double key, double barEnd, double markerEnd, const QString& text)
{
    auto* value = new QCPItemText(m_plot);
    value->setClipToAxisRect(true);
    value->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    value->setPadding(QMargins(2, 0, 2, 0));
    value->setText(text);
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() - 1);
    value->setFont(f);
    value->setColor(QColor(0x37, 0x47, 0x4f));
    value->position->setCoords(barEnd, key);
    m_values.push_back({value, key, barEnd, markerEnd, QRectF()});
}

QRectF BreakdownPlot::markerRect(const ValueLabel& l) const
{
    if (l.markerEnd < 0)
        return {};
    // The diamond (8 px) and its pen.
    const QPointF c(m_plot->xAxis->coordToPixel(l.markerEnd), m_plot->yAxis->coordToPixel(l.key));
    return {c.x() - 5, c.y() - 5, 10, 10};
}

void BreakdownPlot::fitValueTicks()
{
    // As many ticks as their widest label allows side by side (QCustomPlot's default of
    // five ran "0 1000 2000" together in a 150 px axis); a changed count takes effect on
    // the next layout, one more replot, queued. The widest label is taken as the range's
    // end and one digit more (a tick such as "0.25" has one): a count read from the range
    // alone cannot flip between two layouts.
    QCPAxis* x = m_plot->xAxis;
    const QFontMetrics fm(x->tickLabelFont());
    const int widest = fm.horizontalAdvance(m_plot->locale().toString(x->range().upper, 'g', 6))
                       + fm.horizontalAdvance(QLatin1Char('0'));
    const int count = std::clamp(m_plot->axisRect()->width() / (widest + 16), 2, 5);
    if (x->ticker()->tickCount() != count) {
        x->ticker()->setTickCount(count);
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void BreakdownPlot::placeValueLabels()
{
    const QRectF area = m_plot->axisRect()->rect();
    const double zero = m_plot->xAxis->coordToPixel(0);
    std::vector<QRectF> taken;
    for (ValueLabel& l : m_values) {
        const QSizeF text = QFontMetricsF(l.item->font()).boundingRect(QRectF(), Qt::TextDontClip, l.item->text()).size();
        const QSizeF box(text.width() + 4, text.height()); // with the item's padding
        const double y = m_plot->yAxis->coordToPixel(l.key), bar = m_plot->xAxis->coordToPixel(l.barEnd);
        const QRectF marker = markerRect(l);
        auto at = [&](double left) { return QRectF(QPointF(left, y - box.height() / 2), box); };
        auto isFree = [&](const QRectF& r) {
            if (!area.contains(r) || (!marker.isNull() && r.adjusted(-kLabelGap, 0, kLabelGap, 0).intersects(marker)))
                return false;
            return std::none_of(taken.begin(), taken.end(), [&](const QRectF& t) { return t.intersects(r); });
        };
        // After the bar; after a marker that lies just beyond it; else inside the bar's
        // end on a white box. A distant marker never carries the bar's number: the label
        // goes after the marker only when the place after the bar is the marker's.
        std::vector<std::pair<QRectF, bool>> places{{at(bar + kLabelGap), false}};
        if (!marker.isNull() && marker.right() > bar)
            places.push_back({at(marker.right() + kLabelGap), false});
        places.push_back({at(bar - kLabelGap - box.width()), true});
        l.placed = QRectF();
        for (const auto& [r, inside] : places) {
            if (!isFree(r) || (inside && r.left() < zero))
                continue;
            l.placed = r;
            l.item->position->setPixelPosition(QPointF(r.left(), y));
            l.item->setBrush(inside ? QBrush(QColor(255, 255, 255, 220)) : QBrush(Qt::NoBrush));
            taken.push_back(r);
            break;
        }
        l.item->setVisible(!l.placed.isNull());
    }
}

std::vector<QRectF> BreakdownPlot::valueLabelRects() const
{
    std::vector<QRectF> out;
    for (const ValueLabel& l : m_values)
        if (!l.placed.isNull())
            out.push_back(l.placed);
    return out;
}

std::vector<QRectF> BreakdownPlot::markerRects() const
{
    std::vector<QRectF> out;
    for (const ValueLabel& l : m_values)
        if (l.markerEnd >= 0)
            out.push_back(markerRect(l));
    return out;
}

int BreakdownPlot::hiddenValueLabels() const
{
    return int(std::count_if(m_values.begin(), m_values.end(), [](const ValueLabel& l) { return l.placed.isNull(); }));
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
    wrapTexts(w); // the file's lines are as long as its width allows
    const bool ok = savePlot(m_plot, path, w, h, 2.0, error, caption);
    wrapTexts(width());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    return ok;
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
