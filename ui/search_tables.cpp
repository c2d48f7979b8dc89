#include "search_tables.h"

#include <QHeaderView>
#include <QSignalBlocker>

namespace shardlab::ui {

namespace {

QTableWidgetItem* cell(const QString& text, bool number = true)
{
    auto* i = new QTableWidgetItem(text);
    i->setTextAlignment(number ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
    return i;
}

} // namespace

EliteTable::EliteTable(QWidget* parent) : QTableWidget(parent)
{
    setObjectName(QStringLiteral("eliteTable"));
    setColumnCount(11);
    setHorizontalHeaderLabels({tr("tok/s/GPU"), tr("TP"), tr("EP"), tr("PP"), tr("DP"), tr("batch"), tr("µbatch"),
                               tr("TPOT ms"), tr("TTFT ms"), tr("mem GB"), tr("found at")});
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    verticalHeader()->setVisible(false);
    // Column widths are measured once per run, not on every refresh: ResizeToContents
    // re-lays out every cell's text and was the largest event-loop stall during searches.
    horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    setToolTip(tr("Elite strategies: the best valid plans found so far. Select one to open it in the plan view."));
}

void EliteTable::setElites(const std::vector<EliteEntry>& elites, bool fitColumns)
{
    // Keep the user's selection stable while rows refresh.
    const QSignalBlocker block(this);
    const bool firstRows = rowCount() == 0 && !elites.empty();
    setRowCount(static_cast<int>(elites.size()));
    for (int r = 0; r < static_cast<int>(elites.size()); ++r) {
        const EliteEntry& e = elites[r];
        const Plan& p = e.plan;
        setItem(r, 0, cell(QString::number(e.tokensPerSPerGpu, 'f', 1)));
        setItem(r, 1, cell(QString::number(p.tensorParallel)));
        setItem(r, 2, cell(QString::number(p.expertParallel)));
        setItem(r, 3, cell(QString::number(p.pipelineParallel)));
        setItem(r, 4, cell(QString::number(p.dataParallel)));
        setItem(r, 5, cell(QString::number(p.batch)));
        setItem(r, 6, cell(QString::number(p.microBatches)));
        setItem(r, 7, cell(QString::number(e.tpotMs, 'f', 2)));
        setItem(r, 8, cell(QString::number(e.ttftMs, 'f', 1)));
        setItem(r, 9, cell(QString::number(e.memoryGb, 'f', 1)));
        setItem(r, 10, cell(e.refinement ? tr("%1 (batch refinement)").arg(e.call) : QString::number(e.call)));
        if (e.refinement)
            for (int c = 0; c < columnCount(); ++c)
                if (QTableWidgetItem* it = item(r, c)) {
                    it->setToolTip(tr("The search's last step: the best plan's batch raised as far as it stays valid "
                                      "(its calls are charged to the budget)."));
                    QFont f = it->font();
                    f.setItalic(true);
                    it->setFont(f);
                }
    }
    if (firstRows || fitColumns)
        resizeColumnsToContents();
}

RunsTable::RunsTable(QWidget* parent) : QTableWidget(parent)
{
    setObjectName(QStringLiteral("runsTable"));
    setColumnCount(4);
    setHorizontalHeaderLabels({tr("Run"), tr("Variant"), tr("best"), tr("calls")});
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    verticalHeader()->setVisible(false);
    horizontalHeader()->setStretchLastSection(true);
    setToolTip(tr("Runs, each on the scenario variant it ran on. Tick to show on the curve, double-click the name to "
                  "rename, Delete to remove; the elites and heatmap follow the selection."));
    setMinimumWidth(150);
}

void RunsTable::setRuns(const std::vector<Row>& rows, int selected)
{
    const QSignalBlocker block(this);
    const int count = static_cast<int>(rows.size());
    setRowCount(count);
    for (int r = 0; r < count; ++r) {
        const Row& run = rows[r];
        auto* name = new QTableWidgetItem(run.label);
        name->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable | Qt::ItemIsUserCheckable);
        name->setCheckState(run.visible ? Qt::Checked : Qt::Unchecked);
        name->setForeground(run.color);
        name->setToolTip(tr("%1 (%2). Tick to show on the curve; double-click to rename.").arg(run.label, run.status));
        setItem(r, 0, name);
        auto* variant = new QTableWidgetItem(run.variant);
        variant->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
        variant->setToolTip(run.variantTip);
        setItem(r, 1, variant);
        updateFigures(r, run);
    }
    if (selected >= 0 && selected < count)
        selectRow(selected);
    resizeColumnsToContents();
    // A long run name is elided in its cell (the tooltip and the editor hold all of it).
    constexpr int kMaxNameColumn = 320;
    if (columnWidth(0) > kMaxNameColumn)
        setColumnWidth(0, kMaxNameColumn);
}

void RunsTable::updateFigures(int row, const Row& run)
{
    if (row < 0 || row >= rowCount())
        return;
    const QSignalBlocker block(this);
    // The best so far while running, cancelled or stopped; the status while there is none.
    QTableWidgetItem* best = cell(run.found || run.bestValue > 0 ? QString::number(run.bestValue, 'f', 1) : run.status);
    best->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    best->setToolTip(run.status);
    setItem(row, 2, best);
    QTableWidgetItem* calls = cell(QString::number(run.calls));
    calls->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    setItem(row, 3, calls);
}

} // namespace shardlab::ui
