// Per-operator decode time of a plan's busiest pipeline stage as horizontal stacked bars
// (roofline time coloured by what bounds it, launch overhead, communication), with the
// reference plan's per-operator total as a marker. Alone, values are ms per decode step of
// one micro-batch. Beside a reference plan they are GPU time per output token (each plan's
// step time x the GPUs of one replica / the sequences in its step, the quantity tokens/s
// per GPU inverts): two steps that carry different numbers of sequences on different
// numbers of GPUs are not comparable per step (a 4x "win" per step can be even per token).
// Every value goes through plotSafe: NaN/Inf never reach the plot. Each bar's value is
// written where it fits without touching the reference marker or leaving the plot (after
// the bar, after the marker, else inside the bar's end), or not at all: hovering the bar
// always gives it. The title and axis label wrap to the plot's width.
#pragma once

#include <QRectF>
#include <QWidget>

#include <vector>

#include "sim/simulator.h"

class QCustomPlot;
class QCPBars;
class QCPGraph;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;

namespace shardlab::ui {

class BreakdownPlot : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownPlot(QWidget* parent = nullptr);

    // `reference` may be null (no marker). Operators absent from the model are skipped.
    // With a reference and its plan, both are drawn per output token (see above); without
    // `referencePlan` the reference is assumed to carry as many sequences per step.
    void setPlan(const Scenario& s, const Plan& plan, const SimResult& r, const SimResult* reference,
                 const QString& referenceName, const Plan* referencePlan = nullptr);
    bool isPerToken() const { return m_perToken; }
    QString titleText() const;
    // Per operator drawn, for tests: the reference markers and the stacked bar totals.
    std::vector<double> referenceValues() const;
    std::vector<double> barTotals() const;
    // No bars; `text` in the middle of the plot (why there is nothing to show).
    void showMessage(const QString& text);

    // PNG or PDF by the file's extension (ui/file_export.h); false for other extensions or
    // a failed write, with "FILE: reason" in *error.
    bool save(const QString& path, QString* error = nullptr, const QString& caption = {});
    QCustomPlot* plot() const { return m_plot; }
    // Every number the plot currently holds (bars and markers), for tests.
    std::vector<double> plottedValues() const;
    // As last drawn, in the plot's pixels, for tests: the value labels shown, the reference
    // markers, and how many bars have no room for their value.
    std::vector<QRectF> valueLabelRects() const;
    std::vector<QRectF> markerRects() const;
    int hiddenValueLabels() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // A bar's value label: the operator's key, where its bar and its marker end (plot units;
    // no marker: markerEnd < 0).
    struct ValueLabel {
        QCPItemText* item;
        double key, barEnd, markerEnd;
        QRectF placed; // in pixels, as last placed (empty: hidden)
    };
    void clearData();
    void addValueLabel(double key, double barEnd, double markerEnd, const QString& text);
    // After each layout (on screen or for a file): the axis label's lines and the value
    // axis's ticks to its width, and every value label to its place or hidden.
    void fitAxisLabel();
    void fitValueTicks();
    void placeValueLabels();
    QRectF markerRect(const ValueLabel& l) const;
    // The title broken into lines that fit `width` pixels.
    void wrapTexts(int width);
    void setTexts(const QString& title, const QString& axisLabel);
    void setDecorationsVisible(bool on);
    void showTip(QMouseEvent* event);

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPBars* m_computeBound = nullptr;
    QCPBars* m_memoryBound = nullptr;
    QCPBars* m_overhead = nullptr;
    QCPBars* m_comm = nullptr;
    QCPGraph* m_reference = nullptr;
    std::vector<QString> m_tips; // one per bar, rich text
    std::vector<ValueLabel> m_values;
    QString m_titleText, m_axisLabel; // unwrapped
    bool m_perToken = false;
    int m_keys = 0; // operators drawn
    void updateMinimumHeight();
};

} // namespace shardlab::ui
