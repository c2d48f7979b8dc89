// Live views of a search: best-so-far throughput curve (runs overlaid, Megatron and
// optimum reference lines), the elite strategies table, the per-operator sharding
// heatmap, and the PPO policy's confidence and entropy. Updates are merged into at most
// one repaint per 40 ms.
#pragma once

#include <QJsonObject>

#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

#include "search_tables.h"
#include "ui_format.h"
#include "search_worker.h"

class QCustomPlot;
class QCPGraph;
class QLabel;
class QUndoStack;

namespace shardlab::ui {

class EliteTable;
class HeatmapWidget;

class PolicyView;

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(QWidget* parent = nullptr);

    // The scenario new runs run on. Earlier runs stay (each keeps the scenario variant it
    // ran on); the reference lines are the new scenario's.
    void setScenario(const Scenario& s);
    // The scenario renamed (no figure changed): the exported curve's caption follows.
    void setScenarioNames(const Scenario& s) { copyNames(s, m_scenario); }
    void setMegatronReference(double tokensPerSPerGpu);
    void setOptimumReference(double tokensPerSPerGpu);
    // A new run on the current scenario, named `label`, of scenario variant `variant`
    // ("V2: cluster.nvlink_gb_per_s 450 → 900"). Earlier runs stay on the curve.
    void beginRun(const QString& label, const QString& variant = {}, const QString& variantNote = {});
    void addProgress(const LiveProgress& p);
    void finishRun(const JobResult& r);
    // The running run ended without a result (cancelled): it stays, marked so.
    void abandonRun(const QString& why);
    void clearRuns();
    // Deletes every run but one still searching, as one undo step when the panel has an
    // undo stack (clearRuns otherwise): the number deleted.
    int deleteAllRuns();

    // The runs table: every run with its variant, shown or hidden on the curve, renamed,
    // deleted; the elites table and heatmap follow the selected run.
    struct RunInfo {
        QString name;
        QString variant;
        QString variantNote; // what changed against the variant before it
        QString status;      // "running", "finished", "stopped", "cancelled"
        Scenario scenario;
        bool found = false;
        Plan best;                  // a disaggregated run's decode pool
        std::optional<Plan> prefill; // a disaggregated run's prefill pool
        double bestValue = 0;
        int calls = 0;
        bool visible = true;
    };
    int runCount() const { return int(m_runs.size()); }
    RunInfo runInfo(int i) const;
    bool setRunVisible(int i, bool visible);
    bool renameRun(int i, const QString& name);
    // Not the running run. With an undo stack (setUndoStack) the deletion is a step of it:
    // undo puts the run back where it was, with its curves, elites and colour.
    bool deleteRun(int i);
    void setUndoStack(QUndoStack* stack) { m_undo = stack; }
    // A run's colour on the curve and in the table: kept with the run (saved in the runs
    // file), so it never changes after a restart or another run's deletion.
    QColor runColor(int i) const;
    bool selectRun(int i);
    int selectedRun() const { return m_selected; }
    // The runs (finished or stopped, with their best curves and elites) as JSON, and back:
    // the window keeps them across restarts. restoreRuns appends; false on bad JSON.
    QByteArray runsToJson() const;
    bool restoreRuns(const QByteArray& json);
    // Runs restored at most (the newest are kept), and what the last restoreRuns dropped
    // ("" when nothing): too many runs, absurd names, scenarios this version cannot read.
    static constexpr int kMaxRestoredRuns = 500;
    QString restoreNote() const { return m_restoreNote; }

    int eliteRowCount() const;
    int curvePointCount() const; // points of the current run's best-so-far curve
    // True while a merged repaint of the curve and the elite table is still to come.
    bool isReplotPending() const;
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
    PolicyView* policyView() const { return m_policyView; }
    QCustomPlot* curvePlot() const { return m_curve; }

    // A deleted run, kept by the undo step that can put it back.
    struct RemovedRun;
    std::shared_ptr<RemovedRun> takeRun(quint64 id);
    void insertRun(int index, const RemovedRun& removed);
    quint64 runId(int i) const;

Q_SIGNALS:
    void eliteSelected(const shardlab::Plan& plan, const QString& title);
    // A run was selected in the runs table (its best plan is `runInfo(i).best`).
    void runSelected(int index);
    // The runs changed (added, finished, renamed, deleted): compare candidates follow.
    void runsChanged();
    // "Load variant": put the selected run's scenario into the editor.
    void loadVariantRequested(int index);

private:
    struct Run {
        QString label;
        QCPGraph* best = nullptr;
        QCPGraph* samples = nullptr;
        QCPGraph* refine = nullptr; // the final batch refinement: a dashed step of its own
        int samplePoints = 0;
        int bucket = 1; // samples are kept as the lowest and highest per `bucket` calls
        QString variant, variantNote, status;
        Scenario scenario;
        std::vector<EliteEntry> elites;
        bool found = false;
        Plan best_;
        std::optional<Plan> bestSoFar; // while running: the best valid elite reported
        std::optional<Plan> prefill; // disaggregated: best_ is the decode pool
        double bestValue = 0;
        int calls = 0;
        bool visible = true;
        QColor color;
        quint64 id = 0; // unique in this window: undo finds a deleted run's place by it
    };
    Run& newRun(const QString& label, const QString& variant, const QString& note, const Scenario& s,
                const QColor& color = {});
    // The palette colour fewest runs have, the one after the newest run's first on a tie.
    QColor nextRunColor() const;
    // "name [variant]: best" in the curve's legend, names shortened (ui_format.h shownName).
    static QString legendName(const Run& r);
    static constexpr int kLegendRuns = 4; // runs the curve's legend names; older ones in one line
    void refreshLegend();
    void updateReferenceTag();
    QString referenceName(const QString& line) const;
    // Why the elite table has no rows, for the selected run (or none).
    QString emptyElitesText() const;
    void applyVisibility(int i, bool visible); // the curve and legend only: no table refill
    void restoreRun(const QJsonObject& o, const Scenario& s);
    QWidget* buildRunsBox(QWidget* parent);
    QWidget* buildPolicyBox(QWidget* parent);
    void fillRunsTable();
    static RunsTable::Row tableRow(const Run& run);
    void showRunElites(int i);
    void addSample(Run& run, double call, double value);
    void updateEquivalents(const Plan& best);
    void scheduleReplot();
    void replot();
    void updateHeatmap(const SearchProgress* core);
    void addReferenceLine(std::optional<double> value, QCPGraph*& graph, const QString& name, const QColor& c,
                          Qt::PenStyle style);

    Scenario m_scenario;
    QString m_restoreNote;
    QString m_referenceTag; // the reference lines' variant label when runs of another variant share the axes
    std::unique_ptr<Simulator> m_sim; // for the heatmap's equivalent options; null if invalid
    Plan m_equivalentsOf;
    bool m_haveEquivalents = false;
    QCustomPlot* m_curve = nullptr;
    QCustomPlot* m_policy = nullptr;
    EliteTable* m_table = nullptr;
    RunsTable* m_runsTable = nullptr;
    int m_selected = -1;
    bool m_running = false; // m_runs.back() is being searched
    quint64 m_nextRunId = 1;
    QUndoStack* m_undo = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    PolicyView* m_policyView = nullptr;
    std::vector<Run> m_runs;
    std::vector<EliteEntry> m_elites;
    QCPGraph* m_megatronLine = nullptr;
    QCPGraph* m_optimumLine = nullptr;
    QCPGraph* m_olderRuns = nullptr; // the legend's line for the visible runs it does not name
    std::optional<double> m_megatron, m_optimum;
    int m_maxCalls = 1;
    double m_maxValue = 1;
    QTimer m_replotTimer;
    bool m_dirty = false;
    bool m_tableDirty = false;
    bool m_resizeColumns = false;
};

} // namespace shardlab::ui
