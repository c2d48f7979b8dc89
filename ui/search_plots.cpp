#include "search_plots.h"

#include <algorithm>
#include <cmath>

#include "plot_style.h"
#include "qcp.h"

namespace shardlab::ui {

QCustomPlot* makeThroughputCurve(QWidget* parent)
{
    auto* curve = new QCustomPlot(parent);
    curve->setObjectName(QStringLiteral("throughputCurve"));
    curve->setMinimumHeight(180);
    // An explicit minimum: QCustomPlot's own hint includes the legend laid out on one row,
    // which pinned the window wider than 1024 px.
    curve->setMinimumWidth(280);
    curve->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    curve->xAxis->setLabel(QObject::tr("simulator calls"));
    curve->yAxis->setLabel(QObject::tr("tokens/s per GPU"));
    // The legend in its own row below the plot: inside the axis rect it hid the curve's end.
    placeLegendBelow(curve, 4);
    curve->legend->setFont(QFont(parent->font().family(), 8));
    refitLegendOnResize(curve);
    curve->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    // Replots happen on the GUI thread while a search runs: keep each one cheap (software
    // rendering under Xvfb made antialiased scatter points the longest event-loop stall).
    curve->setNotAntialiasedElements(QCP::aeAll);
    curve->setPlottingHint(QCP::phFastPolylines, true);
    return curve;
}

RunGraphs addRunGraphs(QCustomPlot* curve, const QColor& color)
{
    RunGraphs g;
    g.samples = curve->addGraph();
    g.samples->setLineStyle(QCPGraph::lsNone);
    QColor light = color;
    light.setAlpha(70);
    g.samples->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, light, light, 3));
    g.samples->removeFromLegend();
    g.best = curve->addGraph();
    g.best->setLineStyle(QCPGraph::lsStepLeft);
    g.best->setPen(QPen(color, 2));
    g.refine = curve->addGraph();
    g.refine->setLineStyle(QCPGraph::lsLine);
    g.refine->setPen(QPen(color, 2, Qt::DashLine));
    g.refine->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, color, Qt::white, 8));
    g.refine->setName(QObject::tr("batch refinement (last step)"));
    g.refine->removeFromLegend();
    return g;
}

void setReferenceLine(QCustomPlot* curve, QCPGraph*& graph, double value, const QString& name, const QColor& c,
                      Qt::PenStyle style, double right)
{
    if (!graph) {
        graph = curve->addGraph();
        QPen pen(c, 1.5, style);
        graph->setPen(pen);
    }
    graph->setName(name);
    graph->data()->clear();
    graph->addData(0, value);
    graph->addData(right, value);
}

double curveRight(int maxCalls) { return std::max(10, maxCalls) * 1.02; }

double highestValue(const QCPGraph* graph)
{
    double highest = 0;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        if (std::isfinite(it->value))
            highest = std::max(highest, it->value);
    return highest;
}

QCustomPlot* makePolicyPlot(QWidget* parent)
{
    auto* policy = new QCustomPlot(parent);
    policy->setObjectName(QStringLiteral("policyPlot"));
    policy->setMinimumHeight(140);
    policy->setMinimumWidth(200);
    policy->xAxis->setLabel(QObject::tr("simulator calls"));
    policy->yAxis->setLabel(QObject::tr("confidence"));
    policy->yAxis2->setVisible(true);
    policy->yAxis2->setLabel(QObject::tr("entropy, nats"));
    policy->yAxis->setRange(0, 1.05);
    // Small plot: few ticks in a small font, so the labels of both axes stay apart and whole.
    const QFont small(parent->font().family(), 8);
    for (QCPAxis* axis : {policy->xAxis, policy->yAxis, policy->yAxis2}) {
        axis->setTickLabelFont(small);
        axis->setLabelFont(small);
        axis->ticker()->setTickCount(3);
    }
    policy->addGraph(policy->xAxis, policy->yAxis)->setName(QObject::tr("confidence"));
    policy->graph(0)->setPen(QPen(QColor(31, 119, 180), 2));
    policy->addGraph(policy->xAxis, policy->yAxis2)->setName(QObject::tr("entropy"));
    policy->graph(1)->setPen(QPen(QColor(214, 39, 40), 1.5));
    placeLegendBelow(policy, 2); // outside the data, like the curve's
    policy->legend->setFont(QFont(parent->font().family(), 8));
    policy->setNotAntialiasedElements(QCP::aeAll);
    policy->setPlottingHint(QCP::phFastPolylines, true);
    return policy;
}

void clearPolicyPlot(QCustomPlot* policy)
{
    policy->graph(0)->data()->clear();
    policy->graph(1)->data()->clear();
}

void addPolicyPoints(QCustomPlot* policy, int calls, const std::vector<std::pair<std::string, double>>& metrics)
{
    for (const auto& [name, value] : metrics) {
        if (!std::isfinite(value))
            continue;
        if (name == "confidence")
            policy->graph(0)->addData(calls, value);
        else if (name == "entropy")
            policy->graph(1)->addData(calls, value);
    }
}

void replotPolicy(QCustomPlot* policy, int maxCalls)
{
    const bool shown = !policy->graph(0)->data()->isEmpty();
    policy->setVisible(shown);
    if (!shown)
        return;
    policy->xAxis->setRange(0, std::max(10, maxCalls));
    bool ok = false;
    const QCPRange er = policy->graph(1)->data()->valueRange(ok);
    policy->yAxis2->setRange(0, ok ? std::max(0.1, er.upper * 1.1) : 1.0);
    policy->replot(QCustomPlot::rpQueuedReplot);
}

void downsampleSamples(QCPGraph* samples, int& bucket, int& points)
{
    // Every bucket keeps its lowest and highest sample, so the spread of values over the
    // whole run stays visible at one density.
    auto data = samples->data();
    for (bool first = true; first || points > kMaxSamplePoints / 2; first = false) {
        if (!first || bucket == 1)
            bucket *= 2;
        QVector<QCPGraphData> kept;
        long current = -1;
        QCPGraphData lo, hi;
        auto flush = [&] {
            if (current < 0)
                return;
            if (lo.key <= hi.key) {
                kept.push_back(lo);
                if (hi.key != lo.key || hi.value != lo.value)
                    kept.push_back(hi);
            } else {
                kept.push_back(hi);
                kept.push_back(lo);
            }
        };
        for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
            const long b = long(it->key) / bucket;
            if (b != current) {
                flush();
                current = b;
                lo = hi = *it;
            } else {
                if (it->value < lo.value)
                    lo = *it;
                if (it->value >= hi.value)
                    hi = *it;
            }
        }
        flush();
        data->set(kept, true);
        points = kept.size();
    }
}

} // namespace shardlab::ui
