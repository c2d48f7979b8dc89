// Live views of a search: best-so-far throughput curve (runs overlaid, Megatron and
// optimum reference lines), the elite strategies table, the per-operator sharding
// heatmap, and the PPO policy's confidence and entropy. Updates are merged into at most
// one repaint per 40 ms.
#pragma once

#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "search_worker.h"

class QCustomPlot;
class QCPGraph;
class QTableWidget;
class QLabel;

namespace shardlab::ui {

class HeatmapWidget;

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(QWidget* parent = nullptr);

    void setScenario(const Scenario& s);
    void setMegatronReference(double tokensPerSPerGpu);
    void setOptimumReference(double tokensPerSPerGpu);
    // A new run: the previous run's best curve stays, dimmed, for comparison.
    void beginRun(const QString& label);
    void addProgress(const LiveProgress& p);
    void finishRun(const JobResult& r);
    void clearRuns();

    int eliteRowCount() const;
    int curvePointCount() const; // points of the current run's best-so-far curve
    const std::vector<EliteEntry>& elites() const { return m_elites; }
    // The throughput curve as PNG or PDF (by the extension), with a title naming the
    // scenario and the runs, and the date; false with "FILE: reason" in *error if it could
    // not be written.
    bool exportCurve(const QString& path, QString* error = nullptr);
    QString exportCaption() const;
    // Sample points the current run's scatter holds (bounded by downsampling, never by
    // dropping the early ones).
    int samplePointCount() const;
    // The sample points of the current run, (call, tokens/s per GPU), for tests.
    std::vector<std::pair<double, double>> samplePoints() const;
    HeatmapWidget* heatmap() const { return m_heatmap; }
    QCustomPlot* curvePlot() const { return m_curve; }

Q_SIGNALS:
    void eliteSelected(const shardlab::Plan& plan, const QString& title);

private:
    struct Run {
        QString label;
        QCPGraph* best = nullptr;
        QCPGraph* samples = nullptr;
        int samplePoints = 0;
        int bucket = 1; // samples are kept as the lowest and highest per `bucket` calls
    };
    void addSample(Run& run, double call, double value);
    void downsample(Run& run);
    void updateEquivalents(const Plan& best);
    void scheduleReplot();
    void replot();
    void fillEliteTable();
    void updateHeatmap(const SearchProgress* core);
    void addReferenceLine(std::optional<double> value, QCPGraph*& graph, const QString& name, const QColor& c,
                          Qt::PenStyle style);

    Scenario m_scenario;
    std::unique_ptr<Simulator> m_sim; // for the heatmap's equivalent options; null if invalid
    Plan m_equivalentsOf;
    bool m_haveEquivalents = false;
    QCustomPlot* m_curve = nullptr;
    QCustomPlot* m_policy = nullptr;
    QTableWidget* m_table = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    QLabel* m_policyNote = nullptr;
    std::vector<Run> m_runs;
    std::vector<EliteEntry> m_elites;
    QCPGraph* m_megatronLine = nullptr;
    QCPGraph* m_optimumLine = nullptr;
    std::optional<double> m_megatron, m_optimum;
    int m_maxCalls = 1;
    double m_maxValue = 1;
    QTimer m_replotTimer;
    bool m_dirty = false;
    bool m_tableDirty = false;
    bool m_resizeColumns = false;
};

} // namespace shardlab::ui
