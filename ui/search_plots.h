// The search panel's plots: the best-so-far throughput curve (runs overlaid, each run's
// samples as a light scatter) and ppo's confidence and entropy. Both are set up to replot
// cheaply on the GUI thread while a search runs, and a run's scatter stays bounded.
#pragma once

#include <Qt>

#include <string>
#include <utility>
#include <vector>

class QColor;
class QString;
class QCPGraph;
class QCustomPlot;
class QWidget;

namespace shardlab::ui {

// Plots are bounded: beyond this many sample points a run's scatter is downsampled to the
// lowest and highest sample per bucket of calls, buckets doubling in width, so the whole
// run keeps an even density (early samples are not thinned more than late ones).
constexpr int kMaxSamplePoints = 2000;

QCustomPlot* makeThroughputCurve(QWidget* parent);
// A run's graphs on the curve, in `color`: its samples (a light scatter, not in the
// legend), its best so far (a step line) and its batch refinement (a dashed segment, in
// the legend once there is one).
struct RunGraphs {
    QCPGraph* samples = nullptr;
    QCPGraph* best = nullptr;
    QCPGraph* refine = nullptr;
};
RunGraphs addRunGraphs(QCustomPlot* curve, const QColor& color);
// A horizontal line at `value` from 0 to `right` (the x axis's end), named `name` in the
// legend; `graph` is created on the first call.
void setReferenceLine(QCustomPlot* curve, QCPGraph*& graph, double value, const QString& name, const QColor& c,
                      Qt::PenStyle style, double right);
// The x axis's end for `maxCalls` simulator calls: a little past them, and at least 10.
double curveRight(int maxCalls);
// The highest finite value `graph` holds; 0 when none.
double highestValue(const QCPGraph* graph);

// Confidence (graph 0, left axis) and entropy (graph 1, right axis) against calls.
QCustomPlot* makePolicyPlot(QWidget* parent);
void clearPolicyPlot(QCustomPlot* policy);
// The "confidence" and "entropy" among a progress report's metrics, at `calls`.
void addPolicyPoints(QCustomPlot* policy, int calls, const std::vector<std::pair<std::string, double>>& metrics);
// Shown only once it holds points (a ppo search), its axes fitted to them.
void replotPolicy(QCustomPlot* policy, int maxCalls);

// Re-buckets the whole of `samples` (the points added since the last pass are raw),
// doubling `bucket` until at most kMaxSamplePoints / 2 remain; `points` is their count.
void downsampleSamples(QCPGraph* samples, int& bucket, int& points);

} // namespace shardlab::ui
