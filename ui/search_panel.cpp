#include "search_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include "qcp.h"

#include <algorithm>
#include <cmath>

#include "file_export.h"
#include "heatmap_widget.h"
#include "plot_style.h"

#include <QDateTime>

namespace shardlab::ui {

namespace {
// Plots are bounded: beyond this many sample points a run's scatter is downsampled to the
// lowest and highest sample per bucket of calls, buckets doubling in width, so the whole
// run keeps an even density (early samples are not thinned more than late ones).
constexpr int kMaxSamplePoints = 2000;

const QColor kRunColors[] = {QColor(31, 119, 180), QColor(214, 39, 40), QColor(44, 160, 44),
                             QColor(148, 103, 189), QColor(255, 127, 14), QColor(23, 190, 207)};

bool finite(double v) { return std::isfinite(v); }

QTableWidgetItem* item(const QString& text, bool number = true)
{
    auto* i = new QTableWidgetItem(text);
    i->setTextAlignment(number ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
    return i;
}
} // namespace

SearchPanel::SearchPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* vsplit = new QSplitter(Qt::Vertical, this);

    m_curve = new QCustomPlot(vsplit);
    m_curve->setObjectName(QStringLiteral("throughputCurve"));
    m_curve->setMinimumHeight(180);
    m_curve->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_curve->xAxis->setLabel(tr("simulator calls"));
    m_curve->yAxis->setLabel(tr("tokens/s per GPU"));
    // The legend in its own row below the plot: inside the axis rect it hid the curve's end.
    placeLegendBelow(m_curve, 4);
    m_curve->legend->setFont(QFont(font().family(), 8));
    m_curve->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    // Replots happen on the GUI thread while a search runs: keep each one cheap (software
    // rendering under Xvfb made antialiased scatter points the longest event-loop stall).
    m_curve->setNotAntialiasedElements(QCP::aeAll);
    m_curve->setPlottingHint(QCP::phFastPolylines, true);
    vsplit->addWidget(m_curve);

    auto* hsplit = new QSplitter(Qt::Horizontal, vsplit);
    m_table = new QTableWidget(hsplit);
    m_table->setColumnCount(11);
    m_table->setHorizontalHeaderLabels({tr("tok/s/GPU"), tr("TP"), tr("EP"), tr("PP"), tr("DP"), tr("batch"),
                                        tr("µbatch"), tr("TPOT ms"), tr("TTFT ms"), tr("mem GB"), tr("found at")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(false);
    // Column widths are measured once per run, not on every refresh: ResizeToContents
    // re-lays out every cell's text and was the largest event-loop stall during searches.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setToolTip(tr("Elite strategies: the best valid plans found so far. Select one to open it in the plan view."));
    hsplit->addWidget(m_table);

    auto* right = new QWidget(hsplit);
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    m_heatmap = new HeatmapWidget(right);
    rl->addWidget(m_heatmap, 3);
    m_policy = new QCustomPlot(right);
    m_policy->setMinimumHeight(120);
    m_policy->xAxis->setLabel(tr("simulator calls"));
    m_policy->yAxis->setLabel(tr("confidence"));
    m_policy->yAxis2->setVisible(true);
    m_policy->yAxis2->setLabel(tr("entropy (nats)"));
    m_policy->yAxis->setRange(0, 1.05);
    m_policy->addGraph(m_policy->xAxis, m_policy->yAxis)->setName(tr("confidence"));
    m_policy->graph(0)->setPen(QPen(QColor(31, 119, 180), 2));
    m_policy->addGraph(m_policy->xAxis, m_policy->yAxis2)->setName(tr("entropy"));
    m_policy->graph(1)->setPen(QPen(QColor(214, 39, 40), 1.5));
    m_policy->legend->setVisible(true);
    m_policy->legend->setFont(QFont(font().family(), 8));
    m_policy->setNotAntialiasedElements(QCP::aeAll);
    m_policy->setPlottingHint(QCP::phFastPolylines, true);
    rl->addWidget(m_policy, 2);
    m_policyNote = new QLabel(tr("Policy confidence and entropy appear here for ppo searches."), right);
    m_policyNote->setWordWrap(true);
    rl->addWidget(m_policyNote);
    hsplit->addWidget(right);
    hsplit->setStretchFactor(0, 3);
    hsplit->setStretchFactor(1, 2);
    vsplit->addWidget(hsplit);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 2);
    // Proportions, not size hints: the curve grows with the window (it stayed ~150 px
    // tall at 2560x1440 while the heatmap took the rest).
    vsplit->setSizes({3000, 2000});
    hsplit->setSizes({3000, 2000});
    layout->addWidget(vsplit);

    m_replotTimer.setSingleShot(true);
    m_replotTimer.setInterval(40);
    connect(&m_replotTimer, &QTimer::timeout, this, &SearchPanel::replot);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = m_table->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        const int r = rows.front().row();
        if (r >= 0 && r < static_cast<int>(m_elites.size()))
            Q_EMIT eliteSelected(m_elites[r].plan, tr("Elite #%1").arg(r + 1));
    });
}

void SearchPanel::setScenario(const Scenario& s)
{
    m_scenario = s;
    // Short enough to fit beside a 220 px plot; the serving mode is in the tooltip and title.
    m_curve->yAxis->setLabel(s.workload.serving == ServingMode::Aggregated ? tr("output tok/s per GPU")
                                                                           : tr("decode tok/s per GPU"));
    m_curve->setToolTip(s.workload.serving == ServingMode::Aggregated
                            ? tr("Best output tokens/s per GPU so far (aggregated serving, prefill included)")
                            : tr("Best decode tokens/s per GPU so far (decode only, prefill left out)"));
    m_sim.reset();
    if (validateScenario(s).empty())
        m_sim = std::make_unique<Simulator>(s);
    m_haveEquivalents = false;
    std::vector<OpId> ops;
    for (int i = 0; i < kOpCount; ++i)
        if (opPresent(s.model, static_cast<OpId>(i)))
            ops.push_back(static_cast<OpId>(i));
    m_heatmap->setOperators(ops);
    clearRuns();
}

void SearchPanel::clearRuns()
{
    m_curve->clearGraphs();
    m_runs.clear();
    m_megatronLine = m_optimumLine = nullptr;
    m_elites.clear();
    m_table->setRowCount(0);
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    m_policy->graph(0)->data()->clear();
    m_policy->graph(1)->data()->clear();
    m_maxCalls = 1;
    m_maxValue = 1;
    m_megatron.reset();
    m_optimum.reset();
    scheduleReplot();
}

void SearchPanel::addReferenceLine(std::optional<double> value, QCPGraph*& graph, const QString& name,
                                   const QColor& c, Qt::PenStyle style)
{
    if (!value || !finite(*value))
        return;
    if (!graph) {
        graph = m_curve->addGraph();
        QPen pen(c, 1.5, style);
        graph->setPen(pen);
    }
    graph->setName(name);
    graph->data()->clear();
    graph->addData(0, *value);
    graph->addData(std::max(1, m_maxCalls), *value);
    m_maxValue = std::max(m_maxValue, *value);
}

void SearchPanel::setMegatronReference(double v)
{
    m_megatron = v;
    addReferenceLine(m_megatron, m_megatronLine, tr("Megatron recipe %1").arg(v, 0, 'f', 1), QColor(90, 90, 90),
                     Qt::DashLine);
    scheduleReplot();
}

void SearchPanel::setOptimumReference(double v)
{
    m_optimum = v;
    addReferenceLine(m_optimum, m_optimumLine, tr("exact optimum %1").arg(v, 0, 'f', 1), QColor(0, 0, 0),
                     Qt::DotLine);
    scheduleReplot();
}

void SearchPanel::beginRun(const QString& label)
{
    // Dim earlier runs' samples; keep their best curves for comparison (at most 6 runs).
    for (Run& r : m_runs)
        if (r.samples)
            r.samples->setVisible(false);
    if (m_runs.size() >= std::size(kRunColors)) {
        m_curve->removeGraph(m_runs.front().best);
        m_curve->removeGraph(m_runs.front().samples);
        m_runs.erase(m_runs.begin());
    }
    Run run;
    run.label = label;
    const QColor color = kRunColors[(m_curve->graphCount() / 2) % std::size(kRunColors)];
    run.samples = m_curve->addGraph();
    run.samples->setLineStyle(QCPGraph::lsNone);
    QColor light = color;
    light.setAlpha(70);
    run.samples->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, light, light, 3));
    run.samples->removeFromLegend();
    run.best = m_curve->addGraph();
    run.best->setName(label);
    run.best->setLineStyle(QCPGraph::lsStepLeft);
    run.best->setPen(QPen(color, 2));
    m_runs.push_back(run);
    m_elites.clear();
    m_tableDirty = true;
    m_policy->graph(0)->data()->clear();
    m_policy->graph(1)->data()->clear();
    scheduleReplot();
}

void SearchPanel::addProgress(const LiveProgress& p)
{
    if (m_runs.empty())
        beginRun(tr("run"));
    Run& run = m_runs.back();
    const SearchProgress& c = p.core;
    for (const auto& [call, value] : c.recentSamples) {
        if (!finite(value))
            continue;
        addSample(run, call, value);
        m_maxValue = std::max(m_maxValue, value);
    }
    if (c.haveBest && finite(c.bestTokensPerSPerGpu)) {
        run.best->addData(c.calls, c.bestTokensPerSPerGpu);
        m_maxValue = std::max(m_maxValue, c.bestTokensPerSPerGpu);
    }
    m_maxCalls = std::max({m_maxCalls, c.calls, c.budget});
    for (const auto& [name, value] : c.metrics) {
        if (!finite(value))
            continue;
        if (name == "confidence")
            m_policy->graph(0)->addData(c.calls, value);
        else if (name == "entropy")
            m_policy->graph(1)->addData(c.calls, value);
    }
    const bool changed = p.elites.size() != m_elites.size()
        || !std::equal(p.elites.begin(), p.elites.end(), m_elites.begin(), [](const EliteEntry& a, const EliteEntry& b) {
               return a.plan == b.plan && a.tokensPerSPerGpu == b.tokensPerSPerGpu;
           });
    if (changed) {
        m_elites = p.elites;
        m_tableDirty = true;
    }
    updateHeatmap(&c);
    scheduleReplot();
}

void SearchPanel::addSample(Run& run, double call, double value)
{
    run.samples->addData(call, value);
    ++run.samplePoints;
    if (run.samplePoints > kMaxSamplePoints)
        downsample(run);
}

void SearchPanel::downsample(Run& run)
{
    // Re-bucket the whole run (the samples added since the last pass are raw) and double the
    // bucket until it fits: every bucket keeps its lowest and highest sample, so the spread
    // of values over the whole run stays visible at one density.
    auto data = run.samples->data();
    for (bool first = true; first || run.samplePoints > kMaxSamplePoints / 2; first = false) {
        if (!first || run.bucket == 1)
            run.bucket *= 2;
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
            const long b = long(it->key) / run.bucket;
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
        run.samplePoints = kept.size();
    }
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
    HeatmapWidget::Flags eq{};
    for (auto& row : eq)
        row.fill(false);
    if (m_sim) {
        // Swap one operator's option at a time: the same throughput means the choice does not
        // matter for this plan (e.g. every sharding of a norm at TP 1).
        const SimResult base = m_sim->evaluate(best);
        if (base.valid && base.structureChecks == 0)
            for (int i = 0; i < kOpCount; ++i) {
                const OpId id = static_cast<OpId>(i);
                if (!opPresent(m_scenario.model, id))
                    continue;
                for (int o = 0; o < opInfo(id).optionCount; ++o) {
                    if (o == best.option(id))
                        continue;
                    Plan p = best;
                    p.sharding[i] = static_cast<std::uint8_t>(o);
                    const SimResult r = m_sim->evaluate(p);
                    eq[i][o] = r.valid && r.structureChecks == 0
                        && std::fabs(r.tokensPerSPerGpu - base.tokensPerSPerGpu) <= 1e-9 * std::fabs(base.tokensPerSPerGpu);
                }
            }
    }
    m_heatmap->setEquivalent(eq);
    m_equivalentsOf = best;
    m_haveEquivalents = true;
}

void SearchPanel::finishRun(const JobResult& r)
{
    if (m_runs.empty())
        beginRun(QString::fromStdString(r.outcome.algorithm));
    Run& run = m_runs.back();
    const SearchOutcome& o = r.outcome;
    for (const auto& [call, value] : o.bestCurve)
        if (finite(value))
            run.best->addData(call, value);
    if (o.found && finite(o.bestResult.tokensPerSPerGpu)) {
        run.best->addData(std::max(o.calls, 1), o.bestResult.tokensPerSPerGpu);
        run.best->setName(QStringLiteral("%1: %2").arg(run.label).arg(o.bestResult.tokensPerSPerGpu, 0, 'f', 1));
        m_maxValue = std::max(m_maxValue, o.bestResult.tokensPerSPerGpu);
    }
    m_maxCalls = std::max(m_maxCalls, o.calls);
    if (!r.elites.empty())
        m_elites = r.elites;
    m_tableDirty = true;
    m_resizeColumns = true;
    updateHeatmap(nullptr);
    if (o.found)
        updateEquivalents(o.best);
    if (o.provedOptimal && o.found)
        setOptimumReference(o.bestResult.tokensPerSPerGpu);
    replot();
}

void SearchPanel::updateHeatmap(const SearchProgress* core)
{
    std::array<std::array<double, kMaxOptions>, kOpCount> values;
    for (auto& row : values)
        row.fill(std::nan(""));
    // PPO reports its per-slot probabilities as metrics "p:operators.<op>:<option>".
    bool fromPolicy = false;
    if (core) {
        for (const auto& [name, value] : core->metrics) {
            if (name.rfind("p:operators.", 0) != 0)
                continue;
            const auto colon = name.rfind(':');
            OpId id;
            if (colon == std::string::npos || !opFromName(name.substr(12, colon - 12), id))
                continue;
            const int o = std::atoi(name.c_str() + colon + 1);
            if (o >= 0 && o < kMaxOptions && finite(value)) {
                values[static_cast<int>(id)][o] = value;
                fromPolicy = true;
            }
        }
    }
    if (fromPolicy) {
        m_heatmap->setValues(values, tr("Policy probability of each sharding option (ppo)"));
        return;
    }
    if (m_elites.empty())
        return;
    for (int i = 0; i < kOpCount; ++i)
        for (int o = 0; o < opInfo(static_cast<OpId>(i)).optionCount; ++o)
            values[i][o] = 0;
    for (const EliteEntry& e : m_elites)
        for (int i = 0; i < kOpCount; ++i)
            values[i][e.plan.option(static_cast<OpId>(i))] += 1.0 / m_elites.size();
    m_heatmap->setValues(values, tr("Share of the %1 elite plans using each sharding option").arg(m_elites.size()));
    updateEquivalents(m_elites.front().plan);
}

void SearchPanel::fillEliteTable()
{
    m_table->setRowCount(static_cast<int>(m_elites.size()));
    for (int r = 0; r < static_cast<int>(m_elites.size()); ++r) {
        const EliteEntry& e = m_elites[r];
        const Plan& p = e.plan;
        m_table->setItem(r, 0, item(QString::number(e.tokensPerSPerGpu, 'f', 1)));
        m_table->setItem(r, 1, item(QString::number(p.tensorParallel)));
        m_table->setItem(r, 2, item(QString::number(p.expertParallel)));
        m_table->setItem(r, 3, item(QString::number(p.pipelineParallel)));
        m_table->setItem(r, 4, item(QString::number(p.dataParallel)));
        m_table->setItem(r, 5, item(QString::number(p.batch)));
        m_table->setItem(r, 6, item(QString::number(p.microBatches)));
        m_table->setItem(r, 7, item(QString::number(e.tpotMs, 'f', 2)));
        m_table->setItem(r, 8, item(QString::number(e.ttftMs, 'f', 1)));
        m_table->setItem(r, 9, item(QString::number(e.memoryGb, 'f', 1)));
        m_table->setItem(r, 10, item(QString::number(e.call)));
    }
}

void SearchPanel::scheduleReplot()
{
    m_dirty = true;
    if (!m_replotTimer.isActive())
        m_replotTimer.start();
}

void SearchPanel::replot()
{
    if (m_tableDirty) {
        // Keep the user's selection stable while rows refresh.
        const QSignalBlocker block(m_table);
        const bool firstRows = m_table->rowCount() == 0 && !m_elites.empty();
        fillEliteTable();
        if (firstRows || m_resizeColumns)
            m_table->resizeColumnsToContents();
        m_resizeColumns = false;
        m_tableDirty = false;
    }
    addReferenceLine(m_megatron, m_megatronLine, tr("Megatron recipe %1").arg(m_megatron.value_or(0), 0, 'f', 1),
                     QColor(90, 90, 90), Qt::DashLine);
    addReferenceLine(m_optimum, m_optimumLine, tr("exact optimum %1").arg(m_optimum.value_or(0), 0, 'f', 1),
                     QColor(0, 0, 0), Qt::DotLine);
    fitLegend(m_curve, m_curve->width());
    m_curve->xAxis->setRange(0, std::max(10, m_maxCalls) * 1.02);
    m_curve->yAxis->setRange(0, m_maxValue * 1.12);
    m_curve->replot(QCustomPlot::rpQueuedReplot);
    const bool policy = !m_policy->graph(0)->data()->isEmpty();
    m_policy->setVisible(policy);
    m_policyNote->setVisible(false); // the space goes to the heatmap; the plot's tooltip explains
    if (policy) {
        m_policy->xAxis->setRange(0, std::max(10, m_maxCalls));
        bool ok = false;
        const QCPRange er = m_policy->graph(1)->data()->valueRange(ok);
        m_policy->yAxis2->setRange(0, ok ? std::max(0.1, er.upper * 1.1) : 1.0);
        m_policy->replot(QCustomPlot::rpQueuedReplot);
    }
    m_dirty = false;
}

int SearchPanel::eliteRowCount() const { return m_table->rowCount(); }

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
        tr("Best throughput during the search, %6\nScenario %1: %2 on %3 GPUs, %4\n%5")
            .arg(QString::fromStdString(m_scenario.name), QString::fromStdString(m_scenario.model.name))
            .arg(m_scenario.cluster.totalGpus())
            .arg(m_scenario.workload.serving == ServingMode::Aggregated ? tr("aggregated serving, prefill included")
                                                                         : tr("decode only"))
            .arg(runs.isEmpty() ? tr("no run yet") : tr("runs: %1").arg(runs.join(QStringLiteral(", "))))
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    return caption;
}

} // namespace shardlab::ui
