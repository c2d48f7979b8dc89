#include "search_panel.h"

#include "model/names.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include "qcp.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "file_export.h"
#include "heatmap_values.h"
#include "heatmap_widget.h"
#include "policy_view.h"
#include "io/scenario_json.h"
#include "sim/simulator.h"
#include "plot_style.h"
#include "ui_format.h"

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
    // An explicit minimum: QCustomPlot's own hint includes the legend laid out on one row,
    // which pinned the window wider than 1024 px.
    m_curve->setMinimumWidth(280);
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
    // The curve and, beside it, the runs table: every run with its scenario variant.
    auto* top = new QSplitter(Qt::Horizontal, vsplit);
    top->addWidget(m_curve);
    auto* runsBox = new QWidget(top);
    auto* runsLayout = new QVBoxLayout(runsBox);
    runsLayout->setContentsMargins(0, 0, 0, 0);
    runsLayout->setSpacing(2);
    m_runsTable = new QTableWidget(runsBox);
    m_runsTable->setObjectName(QStringLiteral("runsTable"));
    m_runsTable->setColumnCount(4);
    m_runsTable->setHorizontalHeaderLabels({tr("Run"), tr("Variant"), tr("best"), tr("calls")});
    m_runsTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_runsTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_runsTable->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    m_runsTable->verticalHeader()->setVisible(false);
    m_runsTable->horizontalHeader()->setStretchLastSection(true);
    m_runsTable->setToolTip(tr("Runs, each on the scenario variant it ran on. Tick to show on the curve, double-click "
                               "the name to rename, Delete to remove; the elites and heatmap follow the selection."));
    m_runsTable->setMinimumWidth(150);
    runsLayout->addWidget(m_runsTable, 1);
    auto* buttons = new QHBoxLayout;
    auto* del = new QPushButton(tr("Delete"), runsBox);
    del->setToolTip(tr("Delete the selected run (Delete key)."));
    del->setObjectName(QStringLiteral("deleteRun"));
    auto* load = new QPushButton(tr("Load variant"), runsBox);
    load->setObjectName(QStringLiteral("loadVariant"));
    load->setToolTip(tr("Put the scenario the selected run ran on into the editor (undoable)."));
    buttons->addWidget(del);
    buttons->addWidget(load);
    runsLayout->addLayout(buttons);
    top->addWidget(runsBox);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 1);
    top->setSizes({3000, 1100});
    vsplit->addWidget(top);
    connect(del, &QPushButton::clicked, this, [this] { deleteRun(m_selected); });
    connect(load, &QPushButton::clicked, this, [this] {
        if (m_selected >= 0 && m_selected < runCount())
            Q_EMIT loadVariantRequested(m_selected);
    });
    auto* delShortcut = new QShortcut(QKeySequence::Delete, m_runsTable, nullptr, nullptr, Qt::WidgetShortcut);
    connect(delShortcut, &QShortcut::activated, this, [this] { deleteRun(m_selected); });
    connect(m_runsTable, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* it) {
        const int r = it->row();
        if (r < 0 || r >= runCount() || it->column() != 0)
            return;
        // Read everything first: setRunVisible and renameRun refill the table, which
        // deletes `it`.
        const bool visible = it->checkState() == Qt::Checked;
        const QString name = it->text().trimmed();
        if (visible != m_runs[r].visible)
            setRunVisible(r, visible);
        if (name != m_runs[r].label && !name.isEmpty())
            renameRun(r, name);
    });
    connect(m_runsTable, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = m_runsTable->selectionModel()->selectedRows();
        if (!rows.isEmpty() && rows.front().row() != m_selected)
            selectRun(rows.front().row());
    });

    auto* hsplit = new QSplitter(Qt::Horizontal, vsplit);
    m_table = new QTableWidget(hsplit);
    m_table->setObjectName(QStringLiteral("eliteTable"));
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
    m_policy->setMinimumWidth(200);
    m_policy->xAxis->setLabel(tr("simulator calls"));
    m_policy->yAxis->setLabel(tr("confidence"));
    m_policy->yAxis2->setVisible(true);
    m_policy->yAxis2->setLabel(tr("entropy (nats)"));
    m_policy->yAxis->setRange(0, 1.05);
    m_policy->addGraph(m_policy->xAxis, m_policy->yAxis)->setName(tr("confidence"));
    m_policy->graph(0)->setPen(QPen(QColor(31, 119, 180), 2));
    m_policy->addGraph(m_policy->xAxis, m_policy->yAxis2)->setName(tr("entropy"));
    m_policy->graph(1)->setPen(QPen(QColor(214, 39, 40), 1.5));
    placeLegendBelow(m_policy, 2); // outside the data, like the curve's
    m_policy->legend->setFont(QFont(font().family(), 8));
    m_policy->setNotAntialiasedElements(QCP::aeAll);
    m_policy->setPlottingHint(QCP::phFastPolylines, true);
    rl->addWidget(m_policy, 2);
    m_policyNote = new QLabel(tr("Policy confidence and entropy appear here for ppo searches."), right);
    m_policyNote->setWordWrap(true);
    rl->addWidget(m_policyNote);
    m_policyView = new PolicyView(right);
    rl->addWidget(m_policyView, 1);
    m_policyView->setVisible(false);
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
    m_curve->yAxis->setLabel(objectiveAxisLabel(s.workload.serving));
    m_curve->setToolTip(tr("Best %1 so far (%2)").arg(objectiveAxisLabel(s.workload.serving),
                                                      servingDescription(s.workload.serving)));
    m_sim.reset();
    if (validateScenario(s).empty())
        m_sim = std::make_unique<Simulator>(s);
    m_haveEquivalents = false;
    std::vector<OpId> ops;
    for (int i = 0; i < kOpCount; ++i)
        if (opPresent(s.model, static_cast<OpId>(i)))
            ops.push_back(static_cast<OpId>(i));
    m_heatmap->setOperators(ops);
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
        for (const QCPGraph* g : {r.best, r.samples})
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
                if (finite(it->value))
                    m_maxValue = std::max(m_maxValue, it->value);
    scheduleReplot();
}

void SearchPanel::clearRuns()
{
    m_curve->clearGraphs();
    m_runs.clear();
    m_colorIndex = 0;
    m_selected = -1;
    m_running = false;
    m_megatronLine = m_optimumLine = nullptr;
    m_elites.clear();
    m_table->setRowCount(0);
    fillRunsTable();
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    m_policy->graph(0)->data()->clear();
    m_policy->graph(1)->data()->clear();
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

SearchPanel::Run& SearchPanel::newRun(const QString& label, const QString& variant, const QString& note,
                                      const Scenario& scenario)
{
    Run run;
    run.label = label;
    run.variant = variant;
    run.variantNote = note;
    run.scenario = scenario;
    run.color = kRunColors[m_colorIndex++ % std::size(kRunColors)];
    run.samples = m_curve->addGraph();
    run.samples->setLineStyle(QCPGraph::lsNone);
    QColor light = run.color;
    light.setAlpha(70);
    run.samples->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, light, light, 3));
    run.samples->removeFromLegend();
    run.best = m_curve->addGraph();
    run.best->setName(legendName(run));
    run.best->setLineStyle(QCPGraph::lsStepLeft);
    run.best->setPen(QPen(run.color, 2));
    run.refine = m_curve->addGraph();
    run.refine->setLineStyle(QCPGraph::lsLine);
    run.refine->setPen(QPen(run.color, 2, Qt::DashLine));
    run.refine->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, run.color, Qt::white, 8));
    run.refine->setName(tr("batch refinement (last step)"));
    run.refine->removeFromLegend();
    m_runs.push_back(run);
    return m_runs.back();
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
    m_tableDirty = true;
    m_policy->graph(0)->data()->clear();
    m_policy->graph(1)->data()->clear();
    m_policyView->clear();
    fillRunsTable();
    scheduleReplot();
    Q_EMIT runsChanged();
}

void SearchPanel::abandonRun(const QString& why)
{
    if (!m_running || m_runs.empty())
        return;
    m_running = false;
    m_runs.back().status = why;
    fillRunsTable();
    Q_EMIT runsChanged();
}

SearchPanel::RunInfo SearchPanel::runInfo(int i) const
{
    RunInfo info;
    if (i < 0 || i >= runCount())
        return info;
    const Run& r = m_runs[i];
    info.name = r.label;
    info.variant = r.variant;
    info.variantNote = r.variantNote;
    info.status = r.status;
    info.scenario = r.scenario;
    info.found = r.found;
    info.best = r.best_;
    info.prefill = r.prefill;
    info.bestValue = r.bestValue;
    info.calls = r.calls;
    info.visible = r.visible;
    return info;
}

void SearchPanel::applyVisibility(int i, bool visible)
{
    Run& r = m_runs[i];
    r.visible = visible;
    r.best->setVisible(visible);
    r.refine->setVisible(visible);
    if (visible)
        r.best->addToLegend();
    else
        r.best->removeFromLegend();
    if (!visible)
        r.samples->setVisible(false);
    else if (i == runCount() - 1)
        r.samples->setVisible(true);
}

bool SearchPanel::setRunVisible(int i, bool visible)
{
    if (i < 0 || i >= runCount())
        return false;
    applyVisibility(i, visible);
    fillRunsTable();
    scheduleReplot();
    return true;
}

bool SearchPanel::renameRun(int i, const QString& name)
{
    if (i < 0 || i >= runCount() || name.trimmed().isEmpty())
        return false;
    if (nameProblem(name.trimmed().toStdString())) { // the one rule for names
        fillRunsTable(); // the table shows the name kept
        return false;
    }
    Run& r = m_runs[i];
    r.label = name.trimmed();
    r.best->setName(legendName(r));
    fillRunsTable();
    scheduleReplot();
    Q_EMIT runsChanged();
    return true;
}

bool SearchPanel::deleteRun(int i)
{
    if (i < 0 || i >= runCount() || (m_running && i == runCount() - 1))
        return false;
    m_curve->removeGraph(m_runs[i].best);
    m_curve->removeGraph(m_runs[i].samples);
    m_curve->removeGraph(m_runs[i].refine);
    m_runs.erase(m_runs.begin() + i);
    if (m_selected == i)
        m_selected = runCount() - 1;
    else if (m_selected > i)
        --m_selected;
    fillRunsTable();
    showRunElites(m_selected);
    scheduleReplot();
    Q_EMIT runsChanged();
    return true;
}

bool SearchPanel::selectRun(int i)
{
    if (i < 0 || i >= runCount())
        return false;
    m_selected = i;
    {
        const QSignalBlocker block(m_runsTable);
        m_runsTable->selectRow(i);
    }
    showRunElites(i);
    Q_EMIT runSelected(i);
    return true;
}

void SearchPanel::showRunElites(int i)
{
    m_elites = i >= 0 && i < runCount() ? m_runs[i].elites : std::vector<EliteEntry>{};
    m_tableDirty = true;
    m_resizeColumns = true;
    m_heatmap->clearValues();
    m_haveEquivalents = false;
    if (i >= 0 && i < runCount()) {
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

void SearchPanel::fillRunsTable()
{
    const QSignalBlocker block(m_runsTable);
    m_runsTable->setRowCount(runCount());
    for (int r = 0; r < runCount(); ++r) {
        const Run& run = m_runs[r];
        auto* name = new QTableWidgetItem(run.label);
        name->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable | Qt::ItemIsUserCheckable);
        name->setCheckState(run.visible ? Qt::Checked : Qt::Unchecked);
        name->setForeground(run.color);
        name->setToolTip(tr("%1 (%2). Tick to show on the curve; double-click to rename.").arg(run.label, run.status));
        m_runsTable->setItem(r, 0, name);
        auto* variant = new QTableWidgetItem(run.variant);
        variant->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
        variant->setToolTip(run.variantNote.isEmpty() ? shownName(run.scenario.name)
                                                      : run.variantNote);
        m_runsTable->setItem(r, 1, variant);
        QTableWidgetItem* best = item(run.found ? QString::number(run.bestValue, 'f', 1) : run.status);
        best->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
        m_runsTable->setItem(r, 2, best);
        QTableWidgetItem* calls = item(QString::number(run.calls));
        calls->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
        m_runsTable->setItem(r, 3, calls);
    }
    if (m_selected >= 0 && m_selected < runCount())
        m_runsTable->selectRow(m_selected);
    m_runsTable->resizeColumnsToContents();
    // A long run name is elided in its cell (the tooltip and the editor hold all of it).
    constexpr int kMaxNameColumn = 320;
    if (m_runsTable->columnWidth(0) > kMaxNameColumn)
        m_runsTable->setColumnWidth(0, kMaxNameColumn);
}

QString SearchPanel::legendName(const Run& r)
{
    const QString base =
        r.variant.isEmpty() ? shownName(r.label) : QStringLiteral("%1 [%2]").arg(shownName(r.label), shownName(r.variant));
    return r.found ? QStringLiteral("%1: %2").arg(base).arg(r.bestValue, 0, 'f', 1) : base;
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
    if (m_selected == runCount() - 1)
        m_policyView->setMetrics(c.metrics);
    const bool changed = p.elites.size() != run.elites.size()
        || !std::equal(p.elites.begin(), p.elites.end(), run.elites.begin(), [](const EliteEntry& a, const EliteEntry& b) {
               return a.plan == b.plan && a.tokensPerSPerGpu == b.tokensPerSPerGpu;
           });
    if (changed) {
        run.elites = p.elites;
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
        run.refine->addToLegend();
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
        if (const auto policy = policyOptionProbabilities(core->metrics)) {
            m_heatmap->setValues(*policy, tr("Policy probability of each sharding option (ppo)"));
            return;
        }
    if (m_elites.empty())
        return;
    m_heatmap->setValues(eliteOptionShares(m_elites),
                         tr("Share of the %1 elite plans using each sharding option").arg(m_elites.size()));
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
        m_table->setItem(r, 10, item(e.refinement ? tr("%1 (batch refinement)").arg(e.call) : QString::number(e.call)));
        if (e.refinement)
            for (int c = 0; c < m_table->columnCount(); ++c)
                if (QTableWidgetItem* it = m_table->item(r, c)) {
                    it->setToolTip(tr("The search's last step: the best plan's batch raised as far as it stays valid "
                                      "(its calls are charged to the budget)."));
                    QFont f = it->font();
                    f.setItalic(true);
                    it->setFont(f);
                }
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
    m_policyView->setVisible(m_policyView->hasPolicy());
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
            .arg(shownName(m_scenario.name), shownName(m_scenario.model.name))
            .arg(m_scenario.cluster.totalGpus())
            .arg(servingDescription(m_scenario.workload.serving))
            .arg(runs.isEmpty() ? tr("no run yet") : tr("runs: %1").arg(runs.join(QStringLiteral(", "))))
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
    return caption;
}

} // namespace shardlab::ui
