// Per-operator decode time of a plan's busiest pipeline stage as horizontal stacked bars
// (roofline time coloured by what bounds it, launch overhead, communication), with the
// reference plan's per-operator total as a marker. Values in ms per decode step of one
// micro-batch. Every value goes through plotSafe: NaN/Inf never reach the plot.
#pragma once

#include <QWidget>

#include <vector>

#include "sim/simulator.h"

class QCustomPlot;
class QCPBars;
class QCPGraph;
class QCPTextElement;
class QMouseEvent;

namespace shardlab::ui {

class BreakdownPlot : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownPlot(QWidget* parent = nullptr);

    // `reference` may be null (no marker). Operators absent from the model are skipped.
    void setPlan(const Scenario& s, const Plan& plan, const SimResult& r, const SimResult* reference,
                 const QString& referenceName);
    // No bars; `text` in the middle of the plot (why there is nothing to show).
    void showMessage(const QString& text);

    // PNG or PDF by the file's extension (ui/file_export.h); false for other extensions or
    // a failed write, with "FILE: reason" in *error.
    bool save(const QString& path, QString* error = nullptr);
    QCustomPlot* plot() const { return m_plot; }
    // Every number the plot currently holds (bars and markers), for tests.
    std::vector<double> plottedValues() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void clearData();
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
};

} // namespace shardlab::ui
