// The search panel's runs: each run's curves in its colour, its row in the runs table,
// and what the user does with it (select, show or hide, rename, delete).
#include "search_panel.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

#include "heatmap_values.h"
#include "heatmap_widget.h"
#include "io/scenario_json.h"
#include "model/names.h"
#include "qcp.h"
#include "search_plots.h"
#include "search_tables.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
const QColor kRunColors[] = {QColor(31, 119, 180), QColor(214, 39, 40), QColor(44, 160, 44),
                             QColor(148, 103, 189), QColor(255, 127, 14), QColor(23, 190, 207)};
} // namespace

SearchPanel::Run& SearchPanel::newRun(const QString& label, const QString& variant, const QString& note,
                                      const Scenario& scenario, const QColor& color)
{
    Run run;
    run.label = label;
    run.variant = variant;
    run.variantNote = note;
    run.scenario = scenario;
    run.color = color.isValid() ? color : nextRunColor();
    run.id = m_nextRunId++;
    const RunGraphs g = addRunGraphs(m_curve, run.color);
    run.samples = g.samples;
    run.best = g.best;
    run.refine = g.refine;
    run.best->setName(legendName(run));
    m_runs.push_back(run);
    updateReferenceTag();
    refreshLegend();
    return m_runs.back();
}

QColor SearchPanel::nextRunColor() const
{
    const int n = int(std::size(kRunColors));
    int start = 0;
    for (int k = 0; k < n && !m_runs.empty(); ++k)
        if (kRunColors[k] == m_runs.back().color)
            start = k + 1;
    QColor best;
    qsizetype fewest = -1;
    for (int k = 0; k < n; ++k) {
        const QColor c = kRunColors[(start + k) % n];
        const qsizetype uses = std::count_if(m_runs.begin(), m_runs.end(), [&](const Run& r) { return r.color == c; });
        if (fewest < 0 || uses < fewest) {
            fewest = uses;
            best = c;
        }
    }
    return best;
}

QColor SearchPanel::runColor(int i) const { return i >= 0 && i < runCount() ? m_runs[i].color : QColor(); }
quint64 SearchPanel::runId(int i) const { return i >= 0 && i < runCount() ? m_runs[i].id : 0; }

void SearchPanel::abandonRun(const QString& why)
{
    if (!m_running || m_runs.empty())
        return;
    m_running = false;
    Run& run = m_runs.back();
    run.status = why;
    // What it found before it was cancelled stays its best (on the variant it ran on).
    if (run.bestSoFar && run.bestValue > 0) {
        run.found = true;
        run.best_ = *run.bestSoFar;
        run.best->setName(legendName(run));
    }
    fillRunsTable();
    Q_EMIT runsChanged();
}

SearchPanel::RunInfo SearchPanel::runInfo(int i) const
{
    if (i < 0 || i >= runCount())
        return {};
    const Run& r = m_runs[i];
    return {r.label, r.variant, r.variantNote, r.status, r.scenario, r.found, r.best_, r.prefill, r.bestValue, r.calls,
            r.visible};
}

void SearchPanel::applyVisibility(int i, bool visible)
{
    Run& r = m_runs[i];
    r.visible = visible;
    r.best->setVisible(visible);
    r.refine->setVisible(visible);
    if (!visible)
        r.samples->setVisible(false);
    else if (i == runCount() - 1)
        r.samples->setVisible(true);
    refreshLegend();
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

// What a deleted run was: the run and its curves' data (the graphs go with the plot).
struct SearchPanel::RemovedRun {
    Run run;
    QSharedPointer<QCPGraphDataContainer> best, samples, refine;
    bool samplesVisible = false;
};

namespace {
// Deleting a run as an undo step: redo takes it out, undo puts it back where it was.
class DeleteRunCommand : public QUndoCommand {
public:
    DeleteRunCommand(SearchPanel* panel, quint64 id, int index, const QString& name)
        : QUndoCommand(QObject::tr("Delete run %1").arg(name)), m_panel(panel), m_id(id), m_index(index)
    {
    }
    void redo() override { m_removed = m_panel->takeRun(m_id); }
    void undo() override
    {
        if (m_removed)
            m_panel->insertRun(m_index, *m_removed);
    }

private:
    SearchPanel* m_panel;
    quint64 m_id;
    int m_index;
    std::shared_ptr<SearchPanel::RemovedRun> m_removed;
};
} // namespace

bool SearchPanel::deleteRun(int i)
{
    if (i < 0 || i >= runCount() || (m_running && i == runCount() - 1))
        return false;
    if (m_undo)
        m_undo->push(new DeleteRunCommand(this, m_runs[i].id, i, m_runs[i].label));
    else
        takeRun(m_runs[i].id);
    return true;
}

int SearchPanel::deleteAllRuns()
{
    if (runCount() - (m_running ? 1 : 0) <= 0) // nothing to delete: no empty undo step
        return 0;
    if (!m_undo) {
        const int n = runCount();
        clearRuns();
        return n;
    }
    // One undo step puts every run back; a run still searching stays (deleteRun refuses it).
    int deleted = 0;
    m_undo->beginMacro(tr("Clear runs"));
    for (int i = runCount() - 1; i >= 0; --i)
        deleted += deleteRun(i) ? 1 : 0;
    m_undo->endMacro();
    return deleted;
}

std::shared_ptr<SearchPanel::RemovedRun> SearchPanel::takeRun(quint64 id)
{
    const auto it = std::find_if(m_runs.begin(), m_runs.end(), [&](const Run& r) { return r.id == id; });
    const int i = int(it - m_runs.begin());
    if (it == m_runs.end() || (m_running && i == runCount() - 1))
        return nullptr;
    auto removed = std::make_shared<RemovedRun>();
    removed->run = *it;
    removed->best = it->best->data();
    removed->samples = it->samples->data();
    removed->refine = it->refine->data();
    removed->samplesVisible = it->samples->visible();
    m_curve->removeGraph(it->best);
    m_curve->removeGraph(it->samples);
    m_curve->removeGraph(it->refine);
    m_runs.erase(it);
    updateReferenceTag();
    refreshLegend();
    if (m_selected == i)
        m_selected = runCount() - 1;
    else if (m_selected > i)
        --m_selected;
    fillRunsTable();
    showRunElites(m_selected);
    scheduleReplot();
    Q_EMIT runsChanged();
    return removed;
}

void SearchPanel::insertRun(int index, const RemovedRun& removed)
{
    // Before the running run, which stays the last one.
    index = std::clamp(index, 0, runCount() - (m_running ? 1 : 0));
    Run run = removed.run;
    const RunGraphs g = addRunGraphs(m_curve, run.color);
    run.samples = g.samples;
    run.best = g.best;
    run.refine = g.refine;
    run.samples->setData(removed.samples);
    run.best->setData(removed.best);
    run.refine->setData(removed.refine);
    run.best->setName(legendName(run));
    m_runs.insert(m_runs.begin() + index, run);
    updateReferenceTag();
    applyVisibility(index, run.visible); // and the refinement's legend entry
    run.samples->setVisible(run.visible && removed.samplesVisible);
    for (const Run& r : m_runs)
        m_maxValue = std::max({m_maxValue, highestValue(r.best), highestValue(r.samples)});
    if (m_selected >= index)
        ++m_selected;
    fillRunsTable();
    selectRun(index); // the run back in view: its elites, heatmap and best plan
    scheduleReplot();
    Q_EMIT runsChanged();
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

RunsTable::Row SearchPanel::tableRow(const Run& run)
{
    return {run.label, run.status, run.variant,
            run.variantNote.isEmpty() ? shownName(run.scenario.name) : run.variantNote, run.color,
            run.visible, run.found, run.bestValue, run.calls};
}

void SearchPanel::fillRunsTable()
{
    std::vector<RunsTable::Row> rows;
    rows.reserve(m_runs.size());
    for (const Run& run : m_runs)
        rows.push_back(tableRow(run));
    m_runsTable->setRuns(rows, m_selected);
}

// The curve's legend: the newest kLegendRuns visible runs in the order they ran, one short
// line for the older visible runs (drawn, their colours in the Run table; thirty restored runs
// listed in full left the curve a few pixels tall), and one entry for every run's batch
// refinement (a dashed step with diamonds, in its run's colour): the first shown run's.
void SearchPanel::refreshLegend()
{
    for (Run& r : m_runs) {
        r.best->removeFromLegend();
        r.refine->removeFromLegend();
    }
    int visible = 0;
    for (const Run& r : m_runs)
        visible += r.visible;
    const int older = std::max(0, visible - kLegendRuns);
    int seen = 0;
    for (Run& r : m_runs)
        if (r.visible && seen++ >= older)
            r.best->addToLegend();
    if (!m_olderRuns) {
        m_olderRuns = m_curve->addGraph(); // no data: a legend line only
        m_olderRuns->setPen(Qt::NoPen);
    }
    m_olderRuns->removeFromLegend();
    if (older > 0) {
        m_olderRuns->setName(older == 1 ? tr("+1 older run (Run table)") : tr("+%1 older runs (Run table)").arg(older));
        m_olderRuns->addToLegend();
    }
    for (Run& r : m_runs)
        if (r.visible && !r.refine->data()->isEmpty()) {
            r.refine->setName(m_runs.size() > 1 ? tr("batch refinements (last steps)")
                                                : tr("batch refinement (last step)"));
            r.refine->addToLegend();
            break;
        }
}

// A reference line (the recipe, exact's optimum) is the current scenario's. When a run of
// another scenario variant shares the axes, the line carries the current variant's label
// ("[V2]", as its runs do), or "(this scenario)" when no run has it yet. Worked out when the
// runs or the scenario change (comparing scenarios serializes them), not at every replot.
void SearchPanel::updateReferenceTag()
{
    QString current;
    bool mixed = false;
    for (const Run& r : m_runs) {
        if (scenarioDifferences(r.scenario, m_scenario).empty())
            current = r.variant;
        else
            mixed = true;
    }
    m_referenceTag = !mixed          ? QString()
        : current.isEmpty()          ? tr("(this scenario)")
                                     : QStringLiteral("[%1]").arg(shownName(current));
}

QString SearchPanel::referenceName(const QString& line) const
{
    return m_referenceTag.isEmpty() ? line : QStringLiteral("%1 %2").arg(line, m_referenceTag);
}

QString SearchPanel::legendName(const Run& r)
{
    const QString base =
        r.variant.isEmpty() ? shownName(r.label) : QStringLiteral("%1 [%2]").arg(shownName(r.label), shownName(r.variant));
    return r.found ? QStringLiteral("%1: %2").arg(base).arg(r.bestValue, 0, 'f', 1) : base;
}

// The runs table with its Delete and Load variant buttons: ticking, renaming, deleting
// and selecting a run go through the panel's own calls.
QWidget* SearchPanel::buildRunsBox(QWidget* parent)
{
    auto* runsBox = new QWidget(parent);
    auto* runsLayout = new QVBoxLayout(runsBox);
    runsLayout->setContentsMargins(0, 0, 0, 0);
    runsLayout->setSpacing(2);
    m_runsTable = new RunsTable(runsBox);
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
    return runsBox;
}

} // namespace shardlab::ui
