#include "pareto_view.h"

#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

#include "file_export.h"
#include "io/count_list.h"
#include "io/scenario_json.h"
#include "plot_style.h"
#include "qcp.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {

const QColor kExactColour{0x2f, 0x5f, 0x9e};
const QColor kRecipeColour{0xe0, 0x7b, 0x1f};
const QColor kOtherColour{0x3a, 0x8f, 0x4c}; // the other space's front under an engine
const QColor kLoadColour{0x7b, 0x3f, 0x9e};  // the front under load

// A list field's problem for the status line: core names the list by the CLI's flag; the
// field is named by its label here.
QString listProblem(const FieldError& e, const char* flag, const QString& label)
{
    return e.where == flag ? label + QStringLiteral(": ") + QString::fromStdString(e.reason)
                           : QString::fromStdString(e.toString());
}

// The concurrencies as the field shows them: "1,2,4,...".
QString concurrencyText(const std::vector<int>& v)
{
    QStringList items;
    for (int c : v)
        items << QString::number(c);
    return items.join(QLatin1Char(','));
}


// A front's graph. The certified front (`certified`) is drawn with filled markers on a
// layer above the others; the other fronts use larger hollow markers and thinner lines, so
// where a point of theirs equals the certified one (the recipe often does, within a
// fraction of a token/s) both stay visible: a filled dot inside a hollow square or diamond.
QCPGraph* addFront(QCustomPlot* plot, const QString& name, const QColor& colour, QCPScatterStyle::ScatterShape shape,
                   bool certified = false)
{
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setPen(QPen(colour, certified ? 2.5 : 1.5));
    // The certified staircase: left of a point its throughput is guaranteed (the plan
    // meets every slower per-user speed), so between two points the line holds the right
    // one's value (QCustomPlot's lsStepRight); the left one's would claim its throughput at
    // per-user speeds its plan does not reach.
    g->setLineStyle(QCPGraph::lsStepRight);
    g->setScatterStyle(certified ? QCPScatterStyle(shape, colour, colour, 7)
                                 : QCPScatterStyle(shape, QPen(colour, 1.5), Qt::NoBrush, 11));
    if (certified) {
        if (!plot->layer(QStringLiteral("certified")))
            plot->addLayer(QStringLiteral("certified"), plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
        g->setLayer(QStringLiteral("certified"));
    }
    return g;
}

} // namespace

ParetoView::ParetoView(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("paretoView"));
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Points"), this));
    m_points = new QSpinBox(this);
    m_points->setRange(2, 200);
    m_points->setValue(ParetoOptions{}.points);
    m_points->setToolTip(tr("Distinct points of the front: each one is an exact search's certified optimum under a "
                            "TPOT limit, the limits chosen where the front bends."));
    controls->addWidget(m_points);
    m_frontButton = new QPushButton(tr("Compute front"), this);
    m_stopButton = new QPushButton(tr("Stop"), this);
    m_stopButton->setEnabled(false);
    controls->addWidget(m_frontButton);
    // "Front under load at [1,2,4,...]": the button names what the field holds, so the row
    // needs no label of its own and fits beside the others at 1024 px.
    m_loadButton = new QPushButton(tr("Front under load at"), this);
    m_loadButton->setObjectName(QStringLiteral("pareto.load_front"));
    const SearchOptions search = defaultLoadFrontSearch();
    m_loadButton->setToolTip(tr("At each concurrency, %1 (%2 simulator calls, seed %3) ranks plans by their run under "
                                "that closed loop, p90 TTFT and p90 TPOT within the scenario's limits: the plan to "
                                "deploy for that benchmark. Searched, not proved. The CLI's load-front draws the same.")
                                 .arg(QString::fromStdString(search.algorithm))
                                 .arg(search.budget)
                                 .arg(search.seed));
    controls->addWidget(m_loadButton);
    m_concurrencies = new QLineEdit(this);
    setLoadConcurrencies(concurrencyText(defaultFrontConcurrencies()));
    m_concurrencies->setObjectName(QStringLiteral("pareto.concurrencies"));
    m_concurrencies->setMinimumWidth(60); // the row fits 1024 px; the field grows with the window
    m_concurrencies->setMaximumWidth(420); // the default list whole at 1440 px and above
    m_concurrencies->setToolTip(tr("Closed-loop concurrencies, comma-separated: the requests in flight at once, as a "
                                   "benchmark sweep (InferenceX, vllm bench serve --max-concurrency) runs them."));
    controls->addWidget(m_concurrencies, 3); // most of the row's spare width, up to its maximum
    controls->addWidget(m_stopButton);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMinimumWidth(40);
    m_progress->setMaximumWidth(220);
    m_progress->hide(); // shown while a job runs (setIdle): a full bar afterwards said nothing
    controls->addWidget(m_progress);
    controls->addStretch(1);
    auto* exportFront = new QPushButton(tr("Export…"), this);
    exportFront->setToolTip(tr("The front as PNG, PDF or CSV (both fronts, every point's figures and degrees)."));
    controls->addWidget(exportFront);
    layout->addLayout(controls);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    m_frontPlot = new QCustomPlot(this);
    m_frontPlot->setObjectName(QStringLiteral("paretoPlot"));
    stylePlot(m_frontPlot);
    m_frontPlot->xAxis->setLabel(tr("tokens/s per user (1000 / TPOT ms)"));
    m_frontPlot->yAxis->setLabel(tr("output tok/s per GPU")); // short: the plot is ~150 px high at 1024x700
    addFront(m_frontPlot, tr("exact (proved optimal)"), kExactColour, QCPScatterStyle::ssCircle, true);
    addFront(m_frontPlot, tr("Megatron recipe"), kRecipeColour, QCPScatterStyle::ssSquare);
    addFront(m_frontPlot, QString(), kOtherColour, QCPScatterStyle::ssDiamond)->removeFromLegend();
    QCPGraph* load = addFront(m_frontPlot, QString(), kLoadColour, QCPScatterStyle::ssTriangle);
    load->setLineStyle(QCPGraph::lsLine); // points by concurrency, not a staircase of guarantees
    load->setPen(QPen(kLoadColour, 2, Qt::DashLine));
    load->removeFromLegend();
    placeLegendBelow(m_frontPlot, 2);
    refitLegendOnResize(m_frontPlot); // its long entries wrap to the plot's width
    // The under-load labels are placed in pixels, clear of each other: after every layout.
    connect(m_frontPlot, &QCustomPlot::afterLayout, this, &ParetoView::placeLoadLabels);
    m_frontPlot->setMinimumHeight(200);
    m_frontPlot->setMouseTracking(true);
    // Said where it applies, not in the status line, whose lines the front's height pays for:
    // resting the mouse on the plot away from a point shows it.
    m_frontPlot->setToolTip(pointHint());
    // The front above, sizing and scaling below, with a handle between them: at 1024x700
    // neither gets all it could use, so the user chooses (the front takes the larger share).
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("pareto.splitter"));
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_frontPlot);
    auto* lowerPanels = new QWidget(splitter);
    auto* lower = new QHBoxLayout(lowerPanels);
    lower->setContentsMargins(0, 0, 0, 0);
    auto* sizeBox = new QGroupBox(tr("Sizing: the fewest GPUs for a load"), this);
    auto* sizeLayout = new QVBoxLayout(sizeBox);
    sizeLayout->setContentsMargins(6, 4, 6, 4);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(new QLabel(tr("requests/s"), sizeBox));
    m_rate = new QDoubleSpinBox(sizeBox);
    m_rate->setRange(0.01, 1e9);
    m_rate->setDecimals(2);
    m_rate->setValue(10);
    m_rate->setToolTip(tr("Requests per second at the scenario's prompt and output lengths, within its SLOs. "
                          "After a front, it proposes the scenario's own request rate when its load names one, "
                          "else half of what the best plan serves on the scenario's own GPUs at the SLO."));
    connect(m_rate, &QDoubleSpinBox::editingFinished, this, [this] { m_rateTouched = true; });
    sizeRow->addWidget(m_rate);
    m_sizeButton = new QPushButton(tr("Find GPUs"), sizeBox);
    sizeRow->addWidget(m_sizeButton);
    sizeLayout->addLayout(sizeRow);
    m_sizingLabel = new QLabel(tr("Whole nodes; exact proves one node fewer cannot serve the rate."), sizeBox);
    m_sizingLabel->setObjectName(QStringLiteral("pareto.sizing"));
    m_sizingLabel->setWordWrap(true);
    m_sizingLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // In a frameless scroll area: a long answer scrolls instead of setting the panels' least
    // height, which the splitter would otherwise take from the front.
    auto* sizingScroll = new QScrollArea(sizeBox);
    sizingScroll->setFrameShape(QFrame::NoFrame);
    sizingScroll->setWidgetResizable(true);
    sizingScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    sizingScroll->setWidget(m_sizingLabel);
    // The group box's own background (setWidget turned the label's fill on).
    sizingScroll->viewport()->setAutoFillBackground(false);
    m_sizingLabel->setAutoFillBackground(false);
    m_sizingLabel->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    sizeLayout->addWidget(sizingScroll, 1);
    lower->addWidget(sizeBox, 2);

    auto* scaleBox = new QGroupBox(tr("Scaling: best tokens/s per GPU per cluster size"), this);
    auto* scaleLayout = new QVBoxLayout(scaleBox);
    scaleLayout->setContentsMargins(6, 4, 6, 4);
    auto* scaleRow = new QHBoxLayout;
    scaleRow->addWidget(new QLabel(tr("GPUs"), scaleBox));
    m_gpus = new QLineEdit(QStringLiteral("8,16,32,64"), scaleBox);
    m_gpus->setObjectName(QStringLiteral("pareto.gpus"));
    m_gpus->setToolTip(tr("Comma-separated GPU counts: whole nodes, or part of one node."));
    scaleRow->addWidget(m_gpus, 1);
    m_sweepButton = new QPushButton(tr("Sweep"), scaleBox);
    scaleRow->addWidget(m_sweepButton);
    auto* exportScale = new QPushButton(tr("Export…"), scaleBox);
    exportScale->setToolTip(tr("The scaling plot (or, after a sizing, its curve) as PNG, PDF or CSV."));
    scaleRow->addWidget(exportScale);
    scaleLayout->addLayout(scaleRow);
    m_scalePlot = new QCustomPlot(scaleBox);
    m_scalePlot->setObjectName(QStringLiteral("scalingPlot"));
    stylePlot(m_scalePlot);
    m_scalePlot->xAxis->setLabel(tr("GPUs"));
    m_scalePlot->yAxis->setLabel(tr("tokens/s per GPU"));
    QCPGraph* g = m_scalePlot->addGraph();
    g->setPen(QPen(kExactColour, 2));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kExactColour, Qt::white, 7));
    // The counts with no valid plan: a cross on the axis, labelled, not a silent gap.
    QCPGraph* none = m_scalePlot->addGraph();
    none->setLineStyle(QCPGraph::lsNone);
    none->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(0xc6, 0x28, 0x28), 9));
    none->setName(tr("no valid plan"));
    // Tall enough to read the curve at 1024x700 (it was squeezed to ~100 px); hovering a
    // point shows its figures, as on the front.
    m_scalePlot->setMinimumHeight(140);
    m_scalePlot->setMouseTracking(true);
    scaleLayout->addWidget(m_scalePlot, 1);
    lower->addWidget(scaleBox, 3);
    splitter->addWidget(lowerPanels);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({300, 200}); // the proportions until the user moves the handle
    layout->addWidget(splitter, 1);

    connect(m_frontButton, &QPushButton::clicked, this, [this] { computeFront(); });
    connect(m_loadButton, &QPushButton::clicked, this, [this] { computeLoadFront(); });
    connect(m_sizeButton, &QPushButton::clicked, this, [this] { computeSizing(); });
    connect(m_sweepButton, &QPushButton::clicked, this, [this] { computeSweep(); });
    connect(m_stopButton, &QPushButton::clicked, this, &ParetoView::stop);
    connect(exportFront, &QPushButton::clicked, this, [this] { exportDialog(true); });
    connect(exportScale, &QPushButton::clicked, this, [this] { exportDialog(false); });
    connect(m_frontPlot, &QCustomPlot::mouseMove, this, &ParetoView::onFrontMouseMove);
    connect(m_frontPlot, &QCustomPlot::mousePress, this, &ParetoView::onFrontClick);
    connect(&m_jobs, &BackgroundJob::failed, this, &ParetoView::onJobFailed);
    connect(&m_jobs, &BackgroundJob::ended, this, [this](int generation) {
        if (m_jobs.isCurrent(generation))
            onDone();
    });
    connect(m_scalePlot, &QCustomPlot::mouseMove, this, &ParetoView::onScaleMouseMove);
    setStatus(tr("Compute the front of the scenario in the editor (aggregated, decode or disaggregated serving), "
                 "or its front under load (aggregated)."));
}

ParetoView::~ParetoView()
{
    stop();
}

void ParetoView::setStatus(const QString& text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QString());
}

QString ParetoView::statusText() const { return m_status->text(); }

void ParetoView::setScenario(const Scenario& s)
{
    if (m_haveScenario && scenarioDifferences(s, m_scenario).empty()) {
        m_scenario = s; // a new name or description changes no figure
        return;
    }
    const bool hadResults = !m_front.points.empty() || !m_sweep.points.empty() || m_sizing.ok || m_loadFront.ok;
    m_scenario = s;
    m_haveScenario = true;
    m_queue.clear();
    if (isRunning())
        stop();
    // The sweep's default: an eighth, a quarter, half and all of the scenario's GPUs.
    QStringList counts;
    const long long n = s.cluster.totalGpus(), gpn = std::max(1, s.cluster.gpusPerNode);
    for (long long d : {8, 4, 2, 1})
        if (n / d >= 1 && n % d == 0 && ((n / d) % gpn == 0 || n / d < gpn))
            counts << QString::number(n / d);
    m_gpus->setText(counts.join(QLatin1Char(',')));
    m_rateTouched = false;
    m_rateSource.clear();
    m_front = ParetoFront{};
    m_sizing = SizingResult{};
    m_sweep = SweepResult{};
    m_loadFront = LoadFront{};
    showFront();
    showLoadFront();
    showScaling({}, {});
    m_sizingLabel->setText(tr("Whole nodes; exact proves one node fewer cannot serve the rate."));
    if (hadResults)
        setStatus(tr("The scenario changed: compute again."));
}

void ParetoView::stop()
{
    m_queue.clear();
    m_chained = false;
    // Nothing the job still posts is shown. Its thread ends when the core call notices
    // the stop flag (within one exact search) and is joined then, by the next job, or
    // on destruction.
    if (isRunning())
        setStatus(tr("Stopped."));
    m_jobs.cancel();
    setIdle(true);
}

void ParetoView::setIdle(bool idle)
{
    for (QPushButton* b : {m_frontButton, m_loadButton, m_sizeButton, m_sweepButton})
        b->setEnabled(idle);
    m_stopButton->setEnabled(!idle);
    m_progress->setVisible(!idle);
}

bool ParetoView::startJob(Job job, BackgroundJob::Work work)
{
    stop();
    m_job = job;
    m_progress->setValue(0);
    setIdle(false);
    m_jobs.start(std::move(work));
    return true;
}

// A core call that throws ends its job like one that fails: the reason is its result's
// message, which onDone (next) shows.
void ParetoView::onJobFailed(const QString& reason)
{
    const std::string message = reason.isEmpty() ? std::string("the computation failed") : reason.toStdString();
    if (m_job == Job::Front) {
        m_front = ParetoFront{};
        m_front.message = message;
    } else if (m_job == Job::Sizing) {
        m_sizing = SizingResult{};
        m_sizing.message = message;
    } else if (m_job == Job::Sweep) {
        m_sweep = SweepResult{};
        m_sweep.message = message;
    } else if (m_job == Job::LoadFront) {
        m_loadFront = LoadFront{};
        m_loadFront.message = message;
    }
}

void ParetoView::onProgress(const QString& text, double fraction)
{
    setStatus(text);
    m_progress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
}

bool ParetoView::computeFront()
{
    ParetoOptions o;
    o.points = m_points->value();
    const FieldErrors bad = validateParetoRequest(m_scenario, o);
    if (!m_haveScenario || !bad.empty()) {
        setStatus(m_haveScenario ? QString::fromStdString(bad.front().toString()) : tr("No scenario."), true);
        return false;
    }
    setStatus(tr("Computing the front…"));
    const Scenario s = m_scenario;
    startJob(Job::Front, [=, this](const BackgroundJob::Context& job) {
        ParetoFront f = computeParetoFront(
            s, o,
            [&](const ParetoProgress& p) {
                const QString text = tr("Exact search %1 (at most %2): %3 points, %4 s [%5]")
                                         .arg(p.searches)
                                         .arg(p.maxSearches)
                                         .arg(p.points)
                                         .arg(p.elapsedS, 0, 'f', 1)
                                         .arg(QString::fromStdString(p.stage));
                const double fraction = std::max(double(p.points) / o.points, double(p.searches) / p.maxSearches);
                job.post([this, text, fraction] { onProgress(text, fraction); });
            },
            job.stopFlag());
        job.post([this, f = std::move(f)] { m_front = f; });
    });
    return true;
}

bool ParetoView::computeSizing()
{
    SizingOptions o;
    o.requestsPerS = m_rate->value();
    m_sizingRate = o.requestsPerS;
    const FieldErrors bad = validateSizingRequest(m_scenario, o);
    if (!m_haveScenario || !bad.empty()) {
        setStatus(m_haveScenario ? QString::fromStdString(bad.front().toString()) : tr("No scenario."), true);
        return false;
    }
    setStatus(tr("Sizing…"));
    const Scenario s = m_scenario;
    startJob(Job::Sizing, [=, this](const BackgroundJob::Context& job) {
        SizingResult r = sizeCluster(
            s, o,
            [&](const ScaleProgress& p) {
                const QString text =
                    tr("%1 cluster sizes searched (%2 GPUs), %3 s").arg(p.searches).arg(p.gpus).arg(p.elapsedS, 0, 'f', 1);
                job.post([this, text] { onProgress(text, 0.5); });
            },
            job.stopFlag());
        job.post([this, r = std::move(r)] { m_sizing = r; });
    });
    return true;
}

bool ParetoView::computeSweep()
{
    std::vector<long long> gpus;
    std::string why;
    if (!parseGpuCounts(m_gpus->text().toStdString(), gpus, why)) {
        setStatus(tr("GPUs: %1").arg(QString::fromStdString(why)), true);
        return false;
    }
    const FieldErrors bad = validateGpuCounts(m_scenario, gpus);
    if (!m_haveScenario || !bad.empty()) {
        setStatus(m_haveScenario ? listProblem(bad.front(), "--gpus", tr("GPUs")) : tr("No scenario."), true);
        return false;
    }
    setStatus(tr("Sweeping cluster sizes…"));
    const Scenario s = m_scenario;
    startJob(Job::Sweep, [=, this](const BackgroundJob::Context& job) {
        SweepResult r = sweepClusterSizes(
            s, gpus,
            [&](const ScaleProgress& p) {
                const QString text = tr("%1 of %2 cluster sizes, %3 s").arg(p.searches).arg(p.plannedSearches).arg(
                    p.elapsedS, 0, 'f', 1);
                const double fraction = double(p.searches) / std::max(1, p.plannedSearches);
                job.post([this, text, fraction] { onProgress(text, fraction); });
            },
            job.stopFlag());
        job.post([this, r = std::move(r)] { m_sweep = r; });
    });
    return true;
}

void ParetoView::setLoadConcurrencies(const QString& text)
{
    m_concurrencies->setText(text);
    m_concurrencies->setCursorPosition(0); // the list's start in view, not its tail
}

bool ParetoView::computeLoadFront()
{
    std::vector<int> concurrencies;
    std::string why;
    if (!parseConcurrencies(m_concurrencies->text().toStdString(), concurrencies, why)) {
        setStatus(tr("Front under load at: %1").arg(QString::fromStdString(why)), true);
        return false;
    }
    const SearchOptions o = defaultLoadFrontSearch();
    const FieldErrors bad = validateLoadFront(m_scenario, concurrencies, o);
    if (!m_haveScenario || !bad.empty()) {
        setStatus(m_haveScenario ? listProblem(bad.front(), "--concurrencies", tr("Front under load at"))
                                 : tr("No scenario."),
                  true);
        return false;
    }
    setStatus(tr("Searching under load at %1 concurrencies…").arg(concurrencies.size()));
    const Scenario s = m_scenario;
    m_loadSearch = o;
    startJob(Job::LoadFront, [=, this](const BackgroundJob::Context& job) {
        int done = 0;
        const int total = static_cast<int>(concurrencies.size());
        LoadFront f = shardlab::computeLoadFront(
            s, concurrencies, o,
            [&](const LoadFrontPoint& p) {
                ++done;
                const QString text = tr("Concurrency %1 (%2 of %3): %4")
                                         .arg(p.concurrency)
                                         .arg(done)
                                         .arg(total)
                                         .arg(p.found ? tr("%1 tokens/s per GPU").arg(p.tokensPerSPerGpu, 0, 'f', 1)
                                                      : tr("no plan holds the limits"));
                const double fraction = double(done) / std::max(1, total);
                job.post([this, text, fraction] { onProgress(text, fraction); });
            },
            job.stopFlag());
        job.post([this, f = std::move(f)] { m_loadFront = f; });
    });
    return true;
}

// The front is in: draw it, propose a sizing rate from it, and say what was proved.
bool ParetoView::finishFront()
{
    const bool ok = m_front.ok;
    showFront();
    proposeSizingRate();
    if (!ok)
        setStatus(QString::fromStdString(m_front.message), true);
    else
        setStatus(m_frontSummary = tr("%1 points from %2 exact searches (%3 s), %4.")
                                       .arg(m_front.points.size())
                                       .arg(m_front.searches)
                                       .arg(m_front.wallSeconds, 0, 'f', 2)
                                       .arg(m_front.allProved ? tr("every one proved optimal")
                                                              : tr("NOT every point proved optimal"))
                                   + engineGapText());
    return ok;
}

// The current job's thread has ended, and everything it posted has arrived.
void ParetoView::onDone()
{
    setIdle(true);
    m_progress->setValue(1000);
    bool ok = false;
    if (m_job == Job::Front) {
        ok = finishFront();
    } else if (m_job == Job::Sizing) {
        ok = finishSizing();
    } else if (m_job == Job::LoadFront) {
        ok = m_loadFront.ok;
        showLoadFront();
        setStatus(ok ? loadFrontSummary() : QString::fromStdString(m_loadFront.message), !ok);
    } else if (m_job == Job::Sweep) {
        ok = m_sweep.ok;
        showScaling(m_sweep.points, tr("best plan per cluster size"));
        setStatus(ok ? tr("Sweep done in %1 s.").arg(m_sweep.wallSeconds, 0, 'f', 2) + unplottedSizesText()
                     : QString::fromStdString(m_sweep.message),
                  !ok);
    }
    Q_EMIT jobFinished(ok);
    if (!m_queue.empty() && ok) {
        const Job next = m_queue.front();
        const std::vector<Job> rest(m_queue.begin() + 1, m_queue.end());
        const bool chained = m_chained;
        m_queue.clear();
        const bool started = next == Job::Front ? computeFront()
            : next == Job::Sizing                ? computeSizing()
            : next == Job::LoadFront             ? computeLoadFront()
                                                 : computeSweep();
        if (started) {
            m_queue = rest; // startJob's stop() cleared them
            m_chained = chained;
            return;
        }
        ok = false;
    }
    if (m_chained && ok && m_front.ok)
        setStatus(m_frontSummary + tr(" Sizing %1.").arg(m_rateSource)
                  + (m_job == Job::LoadFront ? QLatin1Char(' ') + loadFrontSummary(true) : QString()));
    m_chained = false;
    m_queue.clear();
    Q_EMIT allFinished(ok);
}

bool ParetoView::computeAll(bool underLoad)
{
    if (!computeFront())
        return false;
    m_queue = {Job::Sizing, Job::Sweep}; // after startJob's stop(), which clears the queue
    if (underLoad)
        m_queue.push_back(Job::LoadFront);
    m_chained = true;
    return true;
}

// Under an engine: what per-operator sharding is worth at the SLO, from both fronts.
} // namespace shardlab::ui
