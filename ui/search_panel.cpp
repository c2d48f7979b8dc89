#include "search_panel.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "file_export.h"
#include "heatmap_values.h"
#include "heatmap_widget.h"
#include "io/scenario_json.h"
#include "model/names.h"
#include "plot_style.h"
#include "policy_view.h"
#include "qcp.h"
#include "search_plots.h"
#include "search_tables.h"
#include "sim/simulator.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
bool finite(double v) { return std::isfinite(v); }
} // namespace

SearchPanel::SearchPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* vsplit = new QSplitter(Qt::Vertical, this);
    m_curve = makeThroughputCurve(vsplit);
    // The curve and, beside it, the runs table: every run with its scenario variant.
    auto* top = new QSplitter(Qt::Horizontal, vsplit);
    top->addWidget(m_curve);
    top->addWidget(buildRunsBox(top));
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 1);
    top->setSizes({3000, 1100});
    vsplit->addWidget(top);

    auto* hsplit = new QSplitter(Qt::Horizontal, vsplit);
    m_table = new EliteTable(hsplit);
    m_table->setEmptyText(emptyElitesText());
    hsplit->addWidget(m_table);
    hsplit->addWidget(buildPolicyBox(hsplit));
    hsplit->setStretchFactor(0, 3);
    hsplit->setStretchFactor(1, 2);
    vsplit->addWidget(hsplit);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 3);
    // Proportions, not size hints: the curve grows with the window (it stayed ~150 px
    // tall at 2560x1440 while the heatmap took the rest).
    vsplit->setSizes({3000, 3000});
    hsplit->setSizes({3000, 2000});
    layout->addWidget(vsplit);

    m_replotTimer.setSingleShot(true);
    m_replotTimer.setInterval(40);
    connect(&m_replotTimer, &QTimer::timeout, this, &SearchPanel::replot);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = m_table->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        // A row stands for a group of equivalent plans: its best one opens.
        const int e = m_table->eliteAt(rows.front().row());
        if (e >= 0 && e < static_cast<int>(m_elites.size()))
            Q_EMIT eliteSelected(m_elites[e].plan, tr("Elite #%1").arg(e + 1));
    });
}

namespace {

// The heatmap above the policy's confidence and entropy and the policy view, in a column
// that scrolls when the window is too short for all three at their least legible heights
// (a ppo search at 1440x900): a layout squeezed below its widgets' minimum heights draws
// them over each other, and the heatmap's legend vanished under the confidence plot. The
// column asks for at least the heatmap's own least height, so the heatmap alone never
// scrolls; what is below it does.
class PolicyColumn : public QScrollArea {
public:
    PolicyColumn(QWidget* parent, const QWidget* heatmap) : QScrollArea(parent), m_heatmap(heatmap) {}
    QSize minimumSizeHint() const override
    {
        const QSize own = QScrollArea::minimumSizeHint();
        return {own.width(), std::max(own.height(), m_heatmap->minimumSizeHint().height() + 2 * frameWidth())};
    }

private:
    const QWidget* m_heatmap;
};

} // namespace

QWidget* SearchPanel::buildPolicyBox(QWidget* parent)
{
    auto* right = new QWidget;
    m_heatmap = new HeatmapWidget(right);
    auto* scroll = new PolicyColumn(parent, m_heatmap);
    scroll->setObjectName(QStringLiteral("policyColumn"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(m_heatmap, 3);
    m_policy = makePolicyPlot(right);
    m_policy->setVisible(false); // until a ppo search reports its confidence (replotPolicy)
    rl->addWidget(m_policy, 2);
    m_policyView = new PolicyView(right);
    rl->addWidget(m_policyView, 1);
    m_policyView->setVisible(false);
    scroll->setWidget(right);
    return scroll;
}

void SearchPanel::setScenario(const Scenario& s)
{
    m_scenario = s;
    // Short enough to fit beside a 220 px plot; the serving mode is in the tooltip and title.
    m_curve->yAxis->setLabel(objectiveAxisLabel(s.workload.serving));
    m_curve->setToolTip(tr("Best %1 so far (%2)").arg(objectiveAxisLabel(s.workload.serving),
                                                      servingDescription(s.workload.serving)));
    m_sim.reset();
    if (validateScenario(s).empty())
        m_sim = std::make_unique<Simulator>(s);
    m_haveEquivalents = false;
    // The heatmap shows the selected run's elites, on that run's model's operators; with
    // no run selected, the new scenario's operators (and no values yet).
    if (m_selected < 0 || m_selected >= runCount())
        m_heatmap->setOperators(presentOperators(s.model));
    // Earlier runs stay: each keeps the variant it ran on. The reference lines belonged to
    // the previous scenario.
    m_megatron.reset();
    m_optimum.reset();
    if (m_megatronLine) {
        m_curve->removeGraph(m_megatronLine);
        m_megatronLine = nullptr;
    }
    if (m_optimumLine) {
        m_curve->removeGraph(m_optimumLine);
        m_optimumLine = nullptr;
    }
    // The axis fits the runs that remain, not the old scenario's reference lines.
    m_maxValue = 1;
    for (const Run& r : m_runs)
        m_maxValue = std::max({m_maxValue, highestValue(r.best), highestValue(r.samples)});
    updateReferenceTag();
    scheduleReplot();
}

void SearchPanel::clearRuns()
{
    m_curve->clearGraphs();
    m_runs.clear();
    m_referenceTag.clear();
    m_selected = -1;
    m_running = false;
    m_megatronLine = m_optimumLine = m_olderRuns = nullptr;
    m_elites.clear();
    m_table->setRowCount(0);
    fillRunsTable();
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    clearPolicyPlot(m_policy);
    m_policyView->clear();
    m_maxCalls = 1;
    m_maxValue = 1;
    m_megatron.reset();
    m_optimum.reset();
    scheduleReplot();
    Q_EMIT runsChanged();
}

void SearchPanel::addReferenceLine(std::optional<double> value, QCPGraph*& graph, const QString& name,
                                   const QColor& c, Qt::PenStyle style)
{
    if (!value || !finite(*value))
        return;
    setReferenceLine(m_curve, graph, *value, name, c, style, curveRight(m_maxCalls));
    m_maxValue = std::max(m_maxValue, *value);
}

void SearchPanel::setMegatronReference(double v)
{
    m_megatron = v;
    addReferenceLine(m_megatron, m_megatronLine, referenceName(tr("Megatron recipe %1").arg(v, 0, 'f', 1)),
                     QColor(90, 90, 90), Qt::DashLine);
    scheduleReplot();
}

void SearchPanel::setOptimumReference(double v)
{
    m_optimum = v;
    addReferenceLine(m_optimum, m_optimumLine, tr("exact optimum %1").arg(v, 0, 'f', 1), QColor(0, 0, 0),
                     Qt::DotLine);
    scheduleReplot();
}

void SearchPanel::beginRun(const QString& label, const QString& variant, const QString& variantNote)
{
    // Earlier runs keep their best curves (each in its colour, named with its variant); only
    // the new run's samples are drawn.
    for (Run& r : m_runs)
        if (r.samples)
            r.samples->setVisible(false);
    Run& run = newRun(label, variant, variantNote, m_scenario);
    run.status = tr("running");
    m_running = true;
    m_selected = int(m_runs.size()) - 1;
    m_elites.clear();
    // The previous run's shares stay off the new run's operators until it reports.
    m_heatmap->setOperators(presentOperators(m_scenario.model));
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    m_tableDirty = true;
    clearPolicyPlot(m_policy);
    m_policyView->clear();
    fillRunsTable();
    scheduleReplot();
    Q_EMIT runsChanged();
}

void SearchPanel::showRunElites(int i)
{
    m_elites = i >= 0 && i < runCount() ? m_runs[i].elites : std::vector<EliteEntry>{};
    m_tableDirty = true;
    m_resizeColumns = true;
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    if (i >= 0 && i < runCount()) {
        m_heatmap->setOperators(presentOperators(m_runs[i].scenario.model));
        // The heatmap's equivalents are judged on the run's own scenario variant.
        std::unique_ptr<Simulator> own;
        if (scenarioDifferences(m_runs[i].scenario, m_scenario).empty() || !validateScenario(m_runs[i].scenario).empty())
            updateHeatmap(nullptr);
        else {
            std::swap(own, m_sim);
            m_sim = std::make_unique<Simulator>(m_runs[i].scenario);
            const Scenario keep = m_scenario;
            m_scenario = m_runs[i].scenario;
            updateHeatmap(nullptr);
            m_scenario = keep;
            std::swap(own, m_sim);
            m_haveEquivalents = false; // computed on another variant: redo for the next plan
        }
        if (m_runs[i].found && !m_elites.empty())
            m_heatmap->setHighlight(m_runs[i].best_);
    }
    scheduleReplot();
}

void SearchPanel::addProgress(const LiveProgress& p)
{
    if (m_runs.empty() || !m_running)
        beginRun(tr("run"));
    Run& run = m_runs.back();
    const SearchProgress& c = p.core;
    run.calls = std::max(run.calls, c.calls);
    for (const auto& [call, value] : c.recentSamples) {
        if (!finite(value))
            continue;
        addSample(run, call, value);
        m_maxValue = std::max(m_maxValue, value);
    }
    if (c.haveBest && finite(c.bestTokensPerSPerGpu)) {
        run.best->addData(c.calls, c.bestTokensPerSPerGpu);
        m_maxValue = std::max(m_maxValue, c.bestTokensPerSPerGpu);
        run.bestValue = std::max(run.bestValue, c.bestTokensPerSPerGpu);
    }
    m_maxCalls = std::max({m_maxCalls, c.calls, c.budget});
    addPolicyPoints(m_policy, c.calls, c.metrics);
    if (m_selected == runCount() - 1)
        m_policyView->setMetrics(c.metrics);
    const bool changed = p.elites.size() != run.elites.size()
        || !std::equal(p.elites.begin(), p.elites.end(), run.elites.begin(), [](const EliteEntry& a, const EliteEntry& b) {
               return a.plan == b.plan && a.tokensPerSPerGpu == b.tokensPerSPerGpu;
           });
    if (changed) {
        run.elites = p.elites;
        for (const EliteEntry& e : p.elites)
            if (e.valid) { // best first: the best valid plan so far
                run.bestSoFar = e.plan;
                break;
            }
        if (m_selected == runCount() - 1) {
            m_elites = p.elites;
            m_tableDirty = true;
        }
    }
    if (m_selected == runCount() - 1)
        updateHeatmap(&c);
    scheduleReplot();
}

void SearchPanel::addSample(Run& run, double call, double value)
{
    run.samples->addData(call, value);
    ++run.samplePoints;
    if (run.samplePoints > kMaxSamplePoints)
        downsampleSamples(run.samples, run.bucket, run.samplePoints);
}

int SearchPanel::samplePointCount() const { return m_runs.empty() ? 0 : m_runs.back().samplePoints; }

std::vector<std::pair<double, double>> SearchPanel::samplePoints() const
{
    std::vector<std::pair<double, double>> out;
    if (m_runs.empty())
        return out;
    auto data = m_runs.back().samples->data();
    for (auto it = data->constBegin(); it != data->constEnd(); ++it)
        out.emplace_back(it->key, it->value);
    return out;
}

void SearchPanel::updateEquivalents(const Plan& best)
{
    if (m_haveEquivalents && best == m_equivalentsOf)
        return;
    m_heatmap->setHighlight(best);
    HeatmapWidget::Flags none{};
    m_heatmap->setEquivalent(m_sim ? equivalentOptions(*m_sim, m_scenario.model, best) : none);
    m_equivalentsOf = best;
    m_haveEquivalents = true;
}

void SearchPanel::finishRun(const JobResult& r)
{
    if (m_runs.empty() || !m_running)
        beginRun(QString::fromStdString(r.outcome.algorithm));
    m_running = false;
    Run& run = m_runs.back();
    const SearchOutcome& o = r.outcome;
    run.status = o.stopped ? tr("stopped") : tr("finished");
    run.calls = o.calls;
    run.found = o.found;
    if (o.found) {
        // Two pools: the run keeps the decode pool's plan and the prefill pool beside it.
        run.best_ = o.twoPools() ? o.deployment.pools[1].plan : o.best;
        run.bestValue = o.bestTokensPerSPerGpu();
        if (o.twoPools())
            run.prefill = o.deployment.pools[0].plan;
    }
    for (const auto& [call, value] : o.bestCurve)
        if (finite(value))
            run.best->addData(call, value);
    // The batch refinement as its own step: from the search's best to the refined one.
    if (o.found && o.refinement.improved() && finite(o.refinement.fromValue) && finite(o.refinement.toValue)) {
        run.refine->addData(o.refinement.firstCall, o.refinement.fromValue);
        run.refine->addData(o.refinement.firstCall + o.refinement.calls, o.refinement.toValue);
        run.refine->setVisible(run.visible);
        refreshLegend();
    }
    if (o.found && finite(o.bestTokensPerSPerGpu())) {
        run.best->addData(std::max(o.calls, 1), o.bestTokensPerSPerGpu());
        run.best->setName(legendName(run));
        m_maxValue = std::max(m_maxValue, o.bestTokensPerSPerGpu());
    }
    m_maxCalls = std::max(m_maxCalls, o.calls);
    if (!r.elites.empty())
        run.elites = r.elites;
    if (m_selected == runCount() - 1)
        m_elites = run.elites;
    m_tableDirty = true;
    m_resizeColumns = true;
    if (m_selected == runCount() - 1) {
        updateHeatmap(nullptr);
        if (o.found && !o.twoPools())
            updateEquivalents(o.best);
    }
    if (o.provedOptimal && o.found)
        setOptimumReference(o.bestTokensPerSPerGpu());
    fillRunsTable();
    replot();
    Q_EMIT runsChanged();
}

void SearchPanel::updateHeatmap(const SearchProgress* core)
{
    if (core)
        if (const auto policy = policyOptionProbabilities(core->slotDistributions)) {
            m_heatmap->setValues(*policy, tr("Policy probability of each sharding option (ppo)"));
            return;
        }
    if (m_elites.empty()) {
        // A disaggregated search's best is two pools, each searched at every split it tried:
        // no one list of plans of one pool to show.
        const bool twoPools = m_selected >= 0 && m_selected < runCount() && m_runs[m_selected].found
            && m_runs[m_selected].scenario.workload.serving == ServingMode::Disaggregated;
        if (twoPools)
            m_heatmap->clearValues(tr("Two pools: see the Plan and Topology tabs"));
        return;
    }
    const QString run = m_selected >= 0 && m_selected < runCount() ? m_runs[m_selected].label : QString();
    m_heatmap->setValues(eliteOptionShares(m_elites), tr("Options of %n elite plan(s)", nullptr, int(m_elites.size())),
                         tr("Share of the %n elite plan(s)%1 using each sharding option", nullptr, int(m_elites.size()))
                             .arg(run.isEmpty() ? QString() : tr(" of run %1").arg(run)));
    updateEquivalents(m_elites.front().plan);
}

void SearchPanel::scheduleReplot()
{
    m_dirty = true;
    if (!m_replotTimer.isActive())
        m_replotTimer.start();
}

void SearchPanel::replot()
{
    // The runs table follows the running search (its calls and best so far) on the curve's
    // beat: updated at each progress, it showed a best the curve and the elites had not yet.
    if (m_running && !m_runs.empty())
        m_runsTable->updateFigures(runCount() - 1, tableRow(m_runs.back()));
    if (m_tableDirty) {
        m_table->setElites(m_elites, m_resizeColumns);
        m_resizeColumns = false;
        m_tableDirty = false;
    }
    m_table->setEmptyText(emptyElitesText());
    addReferenceLine(m_megatron, m_megatronLine,
                     referenceName(tr("Megatron recipe %1").arg(m_megatron.value_or(0), 0, 'f', 1)), QColor(90, 90, 90),
                     Qt::DashLine);
    addReferenceLine(m_optimum, m_optimumLine,
                     referenceName(tr("exact optimum %1").arg(m_optimum.value_or(0), 0, 'f', 1)), QColor(0, 0, 0),
                     Qt::DotLine);
    fitLegend(m_curve, m_curve->width());
    m_curve->xAxis->setRange(0, curveRight(m_maxCalls));
    m_curve->yAxis->setRange(0, m_maxValue * 1.12);
    m_curve->replot(QCustomPlot::rpQueuedReplot);
    m_policyView->setVisible(m_policyView->hasPolicy());
    replotPolicy(m_policy, m_maxCalls);
    m_dirty = false;
}

QString SearchPanel::emptyElitesText() const
{
    if (m_selected < 0 || m_selected >= runCount())
        return runCount() == 0 ? tr("No runs yet: a search's best plans appear here as it finds them.") : QString();
    const Run& run = m_runs[m_selected];
    if (run.scenario.workload.serving == ServingMode::Disaggregated && run.found)
        return tr("A two-pool run keeps no list of plans of one pool: its prefill and decode plans are on the "
                  "Plan and Topology tabs.");
    if (m_running && m_selected == runCount() - 1)
        return tr("No valid plan found yet.");
    return run.found ? QString() : tr("This run found no valid plan: the message line says why.");
}

int SearchPanel::eliteRowCount() const { return m_table->rowCount(); }
bool SearchPanel::isReplotPending() const { return m_replotTimer.isActive(); }

int SearchPanel::curvePointCount() const
{
    return m_runs.empty() ? 0 : m_runs.back().best->data()->size();
}

bool SearchPanel::exportCurve(const QString& path, QString* error)
{
    replot();
    return savePlot(m_curve, path, 1000, 600, 1.0, error, exportCaption());
}

QString SearchPanel::exportCaption() const
{
    QStringList runs;
    for (const Run& r : m_runs)
        runs << r.best->name();
    const QString caption =
        tr("Best throughput during the search, %4\n%1, %2\n%3")
            .arg(scenarioCaption(m_scenario), servingDescription(m_scenario.workload.serving))
            .arg(runs.isEmpty() ? tr("no run yet") : tr("runs: %1").arg(runs.join(QStringLiteral(", "))))
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    return caption;
}

} // namespace shardlab::ui
