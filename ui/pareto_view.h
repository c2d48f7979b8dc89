// The Pareto tab: the front of output tokens/s per GPU against tokens/s per user
// with the Megatron recipe's front beside it, the front under load (the best plan a search
// finds at each closed-loop concurrency) on the same axes, a sizing panel (the fewest GPUs
// for a request rate) and a scaling plot (best tokens/s per GPU per cluster size). Every
// figure comes from core/runner/pareto.h, load_front.h and sizing.h, the same calls the CLI
// makes, run on a worker thread with progress and Stop. Hovering a point shows its plan; clicking opens it in the Plan
// tab. Each plot exports as PNG, PDF or CSV. GUI thread API.
#pragma once

#include <QWidget>

#include "background_job.h"
#include "runner/load_front.h"
#include "runner/pareto.h"
#include "runner/sizing.h"

class QCPItemText;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMouseEvent;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace shardlab::ui {

class ParetoView : public QWidget {
    Q_OBJECT
public:
    explicit ParetoView(QWidget* parent = nullptr);
    ~ParetoView() override;

    // The scenario the next computation uses; a different one clears the results shown.
    void setScenario(const Scenario& s);
    // Start the front / sizing / sweep on a worker thread (one job at a time). False with
    // the reason in the status line when the input is refused.
    bool computeFront();
    bool computeSizing();
    bool computeSweep();
    // The front under load at the concurrencies typed beside its button (defaultLoadFrontSearch
    // at each, as `load-front` runs it); refused inline like the others.
    bool computeLoadFront();
    void setLoadConcurrencies(const QString& text);
    // The front, then sizing at half the rate the scenario's own GPUs serve at the SLO, then
    // the sweep, then (underLoad) the front under load (scripted screenshots); allFinished
    // at the end.
    bool computeAll(bool underLoad = false);
    void stop();
    bool isRunning() const { return m_jobs.isRunning(); }
    const ParetoFront& front() const { return m_front; }
    const SizingResult& sizing() const { return m_sizing; }
    const SweepResult& sweep() const { return m_sweep; }
    const LoadFront& loadFront() const { return m_loadFront; }
    QString statusText() const;
    QCustomPlot* frontPlot() const { return m_frontPlot; }
    QCustomPlot* scalePlot() const { return m_scalePlot; }
    // PNG or PDF of the plot, or CSV of its data, by the extension. The front under load's CSV
    // goes to NAME-under-load.csv beside the front's (to `path` when it is the only one);
    // `written` gets the files written.
    bool exportFront(const QString& path, QString* error = nullptr, QStringList* written = nullptr);
    // Where exportFront writes the front under load when both fronts go to CSV.
    static QString underLoadCsvPath(const QString& path);
    bool exportScaling(const QString& path, QString* error = nullptr);
    // Which front a point is on: the scenario's own, the recipe's, or (under an engine) the
    // other space's (ParetoFront::otherPoints).
    enum class FrontKind { Own, Recipe, Other };
    // The plan of the point nearest to (x, y) pixels of the front plot within 12 px.
    bool pointAt(const QPointF& pos, ParetoPoint& out, FrontKind& kind) const;
    QString frontName(FrontKind kind) const; // "Best plan vLLM 0.11 runs", "Megatron recipe", ...
    // The scaling plot's point nearest to (x, y) pixels within 12 px, and what its hover says.
    bool scalePointAt(const QPointF& pos, ClusterSizePoint& out) const;
    QString scalePointText(const ClusterSizePoint& p) const;
    // The front-under-load point nearest to (x, y) pixels within 12 px, and its hover text.
    bool loadPointAt(const QPointF& pos, LoadFrontPoint& out) const;
    QString loadPointText(const LoadFrontPoint& p) const;
    // " At the TPOT SLO the per-operator optimum is 1.005x ..." under an engine, else empty.
    QString engineGapText() const;

Q_SIGNALS:
    // A front point was clicked: show its plan (or its two pools) in the Plan tab.
    void planActivated(const Deployment& deployment, const QString& title);
    void jobFinished(bool ok);
    // Every job of computeAll ended (ok: the last one succeeded), or a single job did.
    void allFinished(bool ok);

private:
    enum class Job { None, Front, Sizing, Sweep, LoadFront };
    // Stops the job under way and runs `work` on the background job; it posts its
    // progress and result with the context, and onDone follows when it ends.
    bool startJob(Job job, BackgroundJob::Work work);
    void onProgress(const QString& text, double fraction);
    void onJobFailed(const QString& reason);
    void onDone();
    bool finishFront();  // onDone's part for each job: show its result, true when it is one
    bool finishSizing();
    void proposeSizingRate(); // after a front: the rate the sizing field proposes
    void setIdle(bool idle); // the compute buttons on, Stop off (or the reverse)
    void showFront();
    void showLoadFront();
    QString loadFrontSummary(bool brief = false) const;
    void placeLoadLabels();
    QString unplottedSizesText() const;
    QString pointHint() const;
    void showScaling(const std::vector<ClusterSizePoint>& points, const QString& title);
    void onFrontMouseMove(QMouseEvent* e);
    void onFrontClick(QMouseEvent* e);
    void onScaleMouseMove(QMouseEvent* e);
    void exportDialog(bool front);
    void setStatus(const QString& text, bool error = false);

    Scenario m_scenario;
    bool m_haveScenario = false;
    ParetoFront m_front;
    SizingResult m_sizing;
    SweepResult m_sweep;
    LoadFront m_loadFront;
    SearchOptions m_loadSearch;          // the search each load-front point ran
    std::vector<QCPItemText*> m_loadLabels; // "C 64" beside each point
    std::vector<QCPItemText*> m_noPlanLabels; // "no plan (proved)" over each count without one
    std::vector<ClusterSizePoint> m_scaleShown;

    QSpinBox* m_points = nullptr;
    QDoubleSpinBox* m_rate = nullptr;
    QLineEdit* m_gpus = nullptr;
    QPushButton* m_frontButton = nullptr;
    QLineEdit* m_concurrencies = nullptr;
    QPushButton* m_loadButton = nullptr;
    QPushButton* m_sizeButton = nullptr;
    QPushButton* m_sweepButton = nullptr;
    QPushButton* m_stopButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_sizingLabel = nullptr;
    QCustomPlot* m_frontPlot = nullptr;
    QCustomPlot* m_scalePlot = nullptr;

    Job m_job = Job::None;
    std::vector<Job> m_queue; // computeAll's jobs still to run
    bool m_rateTouched = false;
    // Where the proposed sizing rate came from, as the status line names it: the
    // scenario's own request rate, or half of what its best plan serves on its GPUs.
    QString m_rateSource;
    double m_sizingRate = 0; // the rate the sizing on show was asked for
    bool m_chained = false;      // computeAll under way
    QString m_frontSummary;
    // Declared last: destroyed first, so its thread has ended before the members above go.
    BackgroundJob m_jobs;
};

} // namespace shardlab::ui
