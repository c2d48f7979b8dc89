// The Pareto tab's plots: drawing the fronts (the scenario's own, the recipe's, under an
// engine the other space's, and the front under load) and the scaling curve, finding the point under the mouse for
// its tooltip and click, and exporting either plot as PNG, PDF or CSV.
#include "pareto_view.h"

#include <QFileDialog>
#include <QDir>
#include <QFileInfo>
#include <QLayout>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "save_dialog.h"
#include "file_export.h"
#include "io/scenario_json.h"
#include "plot_style.h"
#include "qcp.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {

// A point answers the mouse within this many pixels (squared).
constexpr double kHoverRadius2 = 12 * 12;

// The per-user axis for data spanning `data`: from zero when the data reach down to half of
// their top, else around the data (`lowPad` and `highPad` of their span each side), so a
// front far from zero, such as a decode pool's fast per-user speeds, spreads over the axis
// instead of its last quarter. Throughput keeps its zero: it is read as a height.
QCPRange perUserRange(const QCPRange& data, double lowPad, double highPad)
{
    if (!(data.upper > 0))
        return QCPRange(0, 1);
    if (data.lower <= 0.5 * data.upper || !(data.size() > 0)) // a lone point reads against zero
        return QCPRange(0, data.upper * (1 + highPad));
    return QCPRange(std::max(0.0, data.lower - lowPad * data.size()), data.upper + highPad * data.size());
}

// The keys (`keys`) or values of every visible graph's finite points, from the data itself:
// QCPAxis's rescale centres a lone value on the axis's previous width, which would make the
// range depend on what was drawn before. (0, 1) when there is none.
QCPRange visibleData(const QCustomPlot* plot, bool keys)
{
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int i = 0; i < plot->graphCount(); ++i) {
        const QCPGraph* g = plot->graph(i);
        if (!g->visible())
            continue;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
            const double v = keys ? it->key : it->value;
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    }
    return lo <= hi ? QCPRange(lo, hi) : QCPRange(0, 1);
}

// Squared pixel distance from `pos` to the data point (x, y) of `plot`.
double pixelDistance2(const QCustomPlot* plot, double x, double y, const QPointF& pos)
{
    const double dx = plot->xAxis->coordToPixel(x) - pos.x();
    const double dy = plot->yAxis->coordToPixel(y) - pos.y();
    return dx * dx + dy * dy;
}

// The found point of `points` nearest to `pos` within kHoverRadius2 pixels, with its data
// coordinates from `at` (x, y); false when none is that close.
template <class Point, class At>
bool nearestFound(const QCustomPlot* plot, const std::vector<Point>& points, const QPointF& pos, At at, Point& out)
{
    double best = kHoverRadius2;
    bool found = false;
    for (const Point& p : points) {
        if (!p.found)
            continue;
        const auto [x, y] = at(p);
        const double d = pixelDistance2(plot, x, y, pos);
        if (d < best) {
            best = d;
            out = p;
            found = true;
        }
    }
    return found;
}

} // namespace

QString ParetoView::engineGapText() const
{
    const double gain = paretoGainAtSlo(m_front);
    if (!(gain > 0))
        return QString();
    return tr(" At the TPOT SLO the per-operator optimum is %1x the best plan %2 runs (green: the other space).")
        .arg(gain, 0, 'f', 3)
        .arg(QString::fromStdString(m_front.engineName));
}

void ParetoView::showFront()
{
    auto fill = [](QCPGraph* g, const std::vector<ParetoPoint>& v) {
        QVector<double> x, y;
        for (const ParetoPoint& p : v) {
            x.push_back(p.tokensPerSPerUser);
            y.push_back(p.outputTokensPerSPerGpu);
        }
        g->setData(x, y, true);
    };
    fill(m_frontPlot->graph(0), m_front.points);
    fill(m_frontPlot->graph(1), m_front.megatronPoints);
    // Under an engine both spaces are drawn: the scenario's own front and the other one.
    QCPGraph* other = m_frontPlot->graph(2);
    fill(other, m_front.otherPoints);
    const QString engine = QString::fromStdString(m_front.engineName);
    // The legend says "proved" only when every point drawn was (a search stopped by its
    // budget or by Stop leaves its best plan found, not proved); the status line says
    // whether the bound past the fastest point was proved too.
    const bool proved = std::all_of(m_front.points.begin(), m_front.points.end(),
                                    [](const ParetoPoint& p) { return p.provedOptimal; });
    // Short names: two entries a row keep the legend to two lines at 1024 px, which the
    // front's height needs; the docs and the tooltips say "under the same limits".
    m_frontPlot->graph(0)->setName(
        engine.isEmpty() ? (proved ? tr("exact (proved optimal)") : tr("exact (NOT every point proved)"))
        : m_front.otherRunnable ? (proved ? tr("exact per-operator (proved)")
                                          : tr("exact per-operator (NOT every point proved)"))
                                : (proved ? tr("exact, plans %1 runs (proved)").arg(engine)
                                          : tr("exact, plans %1 runs (NOT every point proved)").arg(engine)));
    other->setName(m_front.otherRunnable ? tr("exact, plans %1 runs").arg(engine) : tr("exact per-operator"));
    if (m_front.otherPoints.empty())
        other->removeFromLegend();
    else
        other->addToLegend();
    fitLegend(m_frontPlot, m_frontPlot->width());
    if (!m_front.points.empty()) {
        m_frontPlot->xAxis->setRange(perUserRange(visibleData(m_frontPlot, true), 0.06, 0.06));
        m_frontPlot->yAxis->setRange(0, std::max(visibleData(m_frontPlot, false).upper, 1e-9) * 1.08);
    }
    m_frontPlot->replot();
}

// The front under load on the front's axes: every concurrency where a plan holds the limits,
// joined in concurrency order and labelled with it, the non-dominated ones filled.
void ParetoView::showLoadFront()
{
    for (QCPItemText* t : m_loadLabels)
        m_frontPlot->removeItem(t);
    m_loadLabels.clear();
    QCPGraph* g = m_frontPlot->graph(3);
    QVector<double> x, y;
    for (const LoadFrontPoint& p : m_loadFront.points) {
        if (!p.found)
            continue;
        x.push_back(p.tokensPerSPerUser);
        y.push_back(p.tokensPerSPerGpu);
        auto* label = new QCPItemText(m_frontPlot);
        label->position->setCoords(p.tokensPerSPerUser, p.tokensPerSPerGpu);
        label->setText(tr("C %1%2").arg(p.concurrency).arg(p.onFront ? QString() : tr(" (dominated)")));
        label->setColor(g->pen().color());
        m_loadLabels.push_back(label); // placed clear of each other once the plot is laid out
    }
    g->setData(x, y, false); // in concurrency order: a slower-per-user point may come later
    if (x.isEmpty()) {
        g->removeFromLegend();
    } else {
        g->setName(tr("under load (%1, not proved)").arg(QString::fromStdString(m_loadSearch.algorithm)));
        g->addToLegend();
    }
    fitLegend(m_frontPlot, m_frontPlot->width());
    if (!x.isEmpty()) {
        // Every visible graph: the exact front, when shown, keeps its room.
        m_frontPlot->xAxis->setRange(perUserRange(visibleData(m_frontPlot, true), 0.06, 0.15)); // the last label
        m_frontPlot->yAxis->setRange(0, std::max(visibleData(m_frontPlot, false).upper, 1e-9) * 1.12);
    }
    m_frontPlot->replot();
}

// Each "C n" label at the first place beside its point (right above, right below, left
// above, left below, then the same a label's height further out) where it overlaps no label
// placed before it, no other point's marker and stays inside the axis rectangle; when none
// is free, the place with the fewest overlaps (points crowded at the plot's foot, C 1 and
// C 4, would otherwise print over each other). Run after every layout, so a resized plot
// places them again.
void ParetoView::placeLoadLabels()
{
    if (m_loadLabels.empty())
        return;
    const QRectF area = m_frontPlot->axisRect()->rect();
    std::vector<QPointF> markers;
    for (const QCPItemText* t : m_loadLabels)
        markers.push_back(t->position->pixelPosition());
    std::vector<QRectF> placed;
    const QFontMetricsF fm(m_loadLabels.front()->font());
    for (size_t i = 0; i < m_loadLabels.size(); ++i) {
        QCPItemText* t = m_loadLabels[i];
        const QPointF at = markers[i];
        const QSizeF size(fm.horizontalAdvance(t->text()) + 6, fm.height() + 2);
        const double h = size.height();
        struct Place {
            bool left, below;
            double lift; // pixels further from the point, up or down
        };
        const Place places[] = {{false, false, 0}, {false, true, 0}, {true, false, 0}, {true, true, 0},
                                {false, false, h}, {true, false, h}, {false, true, h}, {true, true, h}};
        auto rectOf = [&](const Place& p) {
            const double x = p.left ? at.x() - 4 - size.width() : at.x() + 4;
            const double y = p.below ? at.y() + 2 + p.lift : at.y() - 2 - size.height() - p.lift;
            return QRectF(QPointF(x, y), size);
        };
        size_t chosen = 0;
        int fewest = std::numeric_limits<int>::max();
        for (size_t k = 0; k < std::size(places); ++k) {
            const QRectF r = rectOf(places[k]);
            int overlaps = area.contains(r) ? 0 : 2; // outside the axes is worse than one overlap
            for (const QRectF& other : placed)
                overlaps += r.intersects(other) ? 1 : 0;
            for (size_t m = 0; m < markers.size(); ++m)
                overlaps += m != i && r.adjusted(-4, -4, 4, 4).contains(markers[m]) ? 1 : 0;
            if (overlaps < fewest) {
                fewest = overlaps;
                chosen = k;
            }
            if (overlaps == 0)
                break;
        }
        const Place& p = places[chosen];
        const QRectF r = rectOf(p);
        // Anchored at the rectangle's corner nearest the point, padded to the rectangle.
        t->setPositionAlignment((p.left ? Qt::AlignRight : Qt::AlignLeft) | (p.below ? Qt::AlignTop : Qt::AlignBottom));
        const int lift = static_cast<int>(p.lift);
        t->setPadding(QMargins(p.left ? 0 : 4, p.below ? 2 + lift : 0, p.left ? 4 : 0, p.below ? 0 : 2 + lift));
        placed.push_back(r);
    }
}

QString ParetoView::loadFrontSummary(bool brief) const
{
    int found = 0, onFront = 0;
    for (const LoadFrontPoint& p : m_loadFront.points) {
        found += p.found ? 1 : 0;
        onFront += p.onFront ? 1 : 0;
    }
    const int missing = static_cast<int>(m_loadFront.points.size()) - found;
    // Brief (after the front's own summary): the counts without the calls and seconds.
    const QString cost = brief ? QString()
                               : tr(" (%1 simulator calls, %2 s)").arg(m_loadFront.calls).arg(m_loadFront.wallSeconds, 0, 'f', 1);
    return tr("Under load: %1 of %2 concurrencies hold the limits, %3 on the front%4%5%6.")
        .arg(found)
        .arg(m_loadFront.points.size())
        .arg(onFront)
        .arg(missing > 0 ? tr("; at the others no plan does") : QString())
        .arg(cost)
        .arg(m_loadFront.stopped ? tr(" (stopped: the points so far)") : QString());
}

// Said once after the summaries: every point on the front plot answers the mouse the same way.
QString ParetoView::pointHint() const
{
    return tr("Hover a point for its plan and figures; click it to open the plan.");
}

bool ParetoView::loadPointAt(const QPointF& pos, LoadFrontPoint& out) const
{
    return nearestFound(m_frontPlot, m_loadFront.points, pos,
                        [](const LoadFrontPoint& p) { return std::pair(p.tokensPerSPerUser, p.tokensPerSPerGpu); }, out);
}

QString ParetoView::loadPointText(const LoadFrontPoint& p) const
{
    return tr("<b>Concurrency %1</b> (closed loop)<br>%2<br>%3 output tokens/s per GPU, %4 tokens/s per user<br>p90 "
              "TTFT %5 ms, mean TPOT %6 ms, p90 TPOT %7 ms<br>%8; searched, not proved<br><i>Click to open it in the "
              "Plan tab.</i>")
        .arg(p.concurrency)
        .arg(planDegrees(m_scenario, p.plan))
        .arg(p.tokensPerSPerGpu, 0, 'f', 1)
        .arg(p.tokensPerSPerUser, 0, 'f', 1)
        .arg(p.load.ttftP90Ms, 0, 'f', 0)
        .arg(p.load.tpotMeanMs, 0, 'f', 2)
        .arg(p.load.tpotP90Ms, 0, 'f', 2)
        .arg(p.onFront ? tr("on the front") : tr("dominated: a faster point serves as much per GPU"));
}

void ParetoView::showScaling(const std::vector<ClusterSizePoint>& points, const QString& title)
{
    m_scaleShown = points;
    for (QCPItemText* t : m_noPlanLabels)
        m_scalePlot->removeItem(t);
    m_noPlanLabels.clear();
    QVector<double> x, y, noneX, noneY;
    long long most = 1;
    for (const ClusterSizePoint& p : points)
        most = std::max(most, p.gpus);
    for (const ClusterSizePoint& p : points) {
        if (p.found) {
            x.push_back(double(p.gpus));
            y.push_back(p.tokensPerSPerGpu);
            continue;
        }
        // A count with no valid plan is a result: a cross on the axis, and what it means.
        noneX.push_back(double(p.gpus));
        noneY.push_back(0);
        auto* label = new QCPItemText(m_scalePlot);
        label->position->setCoords(double(p.gpus), 0);
        // Written away from the nearer end of the axis, so it is not cut at the plot's edge.
        const bool leftHalf = 2 * p.gpus <= most;
        label->setPositionAlignment((leftHalf ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignBottom);
        label->setPadding(QMargins(leftHalf ? 2 : 0, 0, leftHalf ? 0 : 2, 6));
        label->setText(p.provedInfeasible ? tr("no plan (proved)") : tr("none found"));
        label->setColor(QColor(0xc6, 0x28, 0x28));
        m_noPlanLabels.push_back(label);
    }
    m_scalePlot->graph(0)->setData(x, y, true);
    m_scalePlot->graph(0)->setName(title);
    m_scalePlot->graph(1)->setData(noneX, noneY, true);
    if (!x.isEmpty() || !noneX.isEmpty()) {
        double top = 1;
        for (const ClusterSizePoint& p : points)
            top = std::max(top, p.found ? p.tokensPerSPerGpu : 0.0);
        m_scalePlot->xAxis->setRange(0, double(most) * 1.08);
        m_scalePlot->yAxis->setRange(0, top * 1.1);
    }
    m_scalePlot->replot();
}

// The cluster sizes the scaling plot has no point for, and why: a size where no plan meets
// the limits is a result, not a gap to leave unexplained.
QString ParetoView::unplottedSizesText() const
{
    QStringList proved, notFound;
    for (const ClusterSizePoint& p : m_scaleShown)
        if (!p.found)
            (p.provedInfeasible ? proved : notFound) << QString::number(p.gpus);
    QString text;
    if (!proved.isEmpty())
        text += tr(" No plan meets the limits on %1 GPUs (proved by exact).").arg(proved.join(QStringLiteral(", ")));
    if (!notFound.isEmpty())
        text += tr(" None found on %1 GPUs (not proved).").arg(notFound.join(QStringLiteral(", ")));
    return text;
}

bool ParetoView::pointAt(const QPointF& pos, ParetoPoint& out, FrontKind& kind) const
{
    double best = kHoverRadius2;
    bool found = false;
    auto scan = [&](const std::vector<ParetoPoint>& v, FrontKind k) {
        for (const ParetoPoint& p : v) {
            const double d = pixelDistance2(m_frontPlot, p.tokensPerSPerUser, p.outputTokensPerSPerGpu, pos);
            if (d < best) {
                best = d;
                out = p;
                kind = k;
                found = true;
            }
        }
    };
    scan(m_front.points, FrontKind::Own);
    scan(m_front.megatronPoints, FrontKind::Recipe);
    scan(m_front.otherPoints, FrontKind::Other);
    return found;
}

void ParetoView::onFrontMouseMove(QMouseEvent* e)
{
    LoadFrontPoint lp;
    if (loadPointAt(e->position(), lp)) {
        QToolTip::showText(e->globalPosition().toPoint(), loadPointText(lp), m_frontPlot);
        return;
    }
    ParetoPoint p;
    FrontKind kind = FrontKind::Own;
    if (!pointAt(e->position(), p, kind)) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(
        e->globalPosition().toPoint(),
        tr("<b>%1</b><br>%2<br>%3 output tokens/s per GPU, %4 tokens/s per user<br>TPOT %5 ms (limit %6), TTFT %7 "
           "ms<br>%8<br><i>Click to open it in the Plan tab.</i>")
            .arg(frontName(kind))
            .arg(deploymentDegrees(m_scenario.model, p.deployment))
            .arg(p.outputTokensPerSPerGpu, 0, 'f', 1)
            .arg(p.tokensPerSPerUser, 0, 'f', 1)
            .arg(p.tpotMs, 0, 'f', 2)
            .arg(p.tpotLimitMs, 0, 'g', 4)
            .arg(p.ttftMs, 0, 'f', 0)
            .arg(p.provedOptimal ? tr("proved optimal under its TPOT limit")
                                 : kind == FrontKind::Recipe ? tr("not proved (the recipe)") : tr("NOT proved")),
        m_frontPlot);
}

bool ParetoView::scalePointAt(const QPointF& pos, ClusterSizePoint& out) const
{
    return nearestFound(m_scalePlot, m_scaleShown, pos,
                        [](const ClusterSizePoint& p) { return std::pair(double(p.gpus), p.tokensPerSPerGpu); }, out);
}

QString ParetoView::scalePointText(const ClusterSizePoint& p) const
{
    return tr("<b>%1 GPUs</b><br>%2<br>%3 output tokens/s per GPU, %4 in all (%5 requests/s)<br>TPOT %6 ms, TTFT %7 "
              "ms<br>%8")
        .arg(p.gpus)
        .arg(deploymentDegrees(m_scenario.model, p.deployment))
        .arg(p.tokensPerSPerGpu, 0, 'f', 1)
        .arg(p.outputTokensPerS, 0, 'f', 0)
        .arg(p.requestsPerS, 0, 'f', 2)
        .arg(p.tpotMs, 0, 'f', 2)
        .arg(p.ttftMs, 0, 'f', 0)
        .arg(p.provedOptimal ? tr("proved optimal on this many GPUs") : tr("NOT proved"));
}

void ParetoView::onScaleMouseMove(QMouseEvent* e)
{
    ClusterSizePoint p;
    if (!scalePointAt(e->position(), p)) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(e->globalPosition().toPoint(), scalePointText(p), m_scalePlot);
}

void ParetoView::onFrontClick(QMouseEvent* e)
{
    LoadFrontPoint lp;
    if (loadPointAt(e->position(), lp)) {
        Q_EMIT planActivated(Deployment::onePool(lp.plan), tr("Best plan under load at concurrency %1").arg(lp.concurrency));
        return;
    }
    ParetoPoint p;
    FrontKind kind = FrontKind::Own;
    if (!pointAt(e->position(), p, kind))
        return;
    Q_EMIT planActivated(p.deployment, tr("%1 at TPOT <= %2 ms").arg(frontName(kind)).arg(p.tpotLimitMs, 0, 'g', 4));
}

QString ParetoView::frontName(FrontKind kind) const
{
    const QString engine = QString::fromStdString(m_front.engineName);
    const bool runnable = kind == FrontKind::Other ? m_front.otherRunnable : (!engine.isEmpty() && !m_front.otherRunnable);
    switch (kind) {
    case FrontKind::Recipe: return tr("Megatron recipe");
    case FrontKind::Own:
    case FrontKind::Other:
        if (engine.isEmpty())
            return tr("Exact optimum");
        return runnable ? tr("Best plan %1 runs").arg(engine) : tr("Per-operator optimum");
    }
    return QString();
}

QString ParetoView::underLoadCsvPath(const QString& path)
{
    const QFileInfo info(path);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral("-under-load.csv"));
}

bool ParetoView::exportFront(const QString& path, QString* error, QStringList* written)
{
    const QFileInfo info(path);
    if (info.suffix().compare(QStringLiteral("csv"), Qt::CaseInsensitive) == 0) {
        // Two fronts have two row shapes (load-front --csv's and pareto --csv's): the front
        // under load goes to its own file beside the other, or to `path` when it is alone.
        const bool load = m_loadFront.ok, exact = m_front.ok || !load;
        const QString loadPath = exact ? underLoadCsvPath(path) : path;
        if (exact && !writeFileBytes(path, QByteArray::fromStdString(paretoCsv(m_front)), error))
            return false;
        if (load && !writeFileBytes(loadPath, QByteArray::fromStdString(loadFrontCsv(m_loadFront)), error))
            return false;
        if (written) {
            if (exact)
                *written << path;
            if (load)
                *written << loadPath;
        }
        return true;
    }
    if (written)
        *written << path;
    return savePlot(m_frontPlot, path, 1200, 800, 2, error,
                    tr("Pareto front: %1 (%2 serving)")
                        .arg(scenarioTitle(m_scenario), QString::fromLatin1(servingModeName(m_scenario.workload.serving))));
}

bool ParetoView::exportScaling(const QString& path, QString* error)
{
    if (QFileInfo(path).suffix().compare(QStringLiteral("csv"), Qt::CaseInsensitive) == 0)
        return writeFileBytes(path, QByteArray::fromStdString(clusterSizesCsv(m_scaleShown)), error);
    return savePlot(m_scalePlot, path, 1000, 600, 2, error,
                    tr("Best tokens/s per GPU per cluster size: %1").arg(scenarioTitle(m_scenario)));
}

void ParetoView::exportDialog(bool front)
{
    const QString path = askSaveFileName(this, front ? tr("Export the front") : tr("Export the scaling plot"),
                                         front ? QStringLiteral("pareto.png") : QStringLiteral("scaling.png"),
                                         tr("PNG (*.png);;PDF (*.pdf);;CSV (*.csv)"));
    if (path.isEmpty())
        return;
    // Both fronts as CSV: the one under load goes beside `path`, which the dialog did not ask about.
    const bool csv = QFileInfo(path).suffix().compare(QStringLiteral("csv"), Qt::CaseInsensitive) == 0;
    if (front && csv && m_loadFront.ok && m_front.ok && !confirmReplacing(this, {underLoadCsvPath(path)}))
        return;
    QString error;
    QStringList written{path};
    if (front)
        written.clear();
    if (!(front ? exportFront(path, &error, &written) : exportScaling(path, &error)))
        setStatus(error, true);
    else
        setStatus(tr("Wrote %1").arg(written.join(tr(" and "))));
}

} // namespace shardlab::ui
