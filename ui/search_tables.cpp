#include "search_tables.h"

#include <QHeaderView>
#include <QPainter>
#include <QSignalBlocker>

#include <algorithm>
#include <cmath>

#include "model/plan_checks.h"
#include "table_columns.h"

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
    const QString tips[] = {tr("Output tokens per second per GPU (the objective)."),
                            tr("Tensor parallel degree; \"aDP\": attention splits whole sequences over the TP "
                               "ranks (attention data parallelism), so no head is split."),
                            tr("Expert parallel degree."),
                            tr("Pipeline parallel degree (stages)."),
                            tr("Data parallel degree (replicas)."),
                            tr("Sequences in flight per data-parallel replica."),
                            tr("Pipeline micro-batches."),
                            tr("Time per output token, ms."),
                            tr("Time to first token, ms."),
                            tr("Peak memory per GPU, GB."),
                            tr("The simulator call that found the plan.")};
    for (int c = 0; c < columnCount(); ++c)
        horizontalHeaderItem(c)->setToolTip(tips[c]);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    verticalHeader()->setVisible(false);
    // Column widths are measured once per run, not on every refresh: ResizeToContents
    // re-lays out every cell's text and was the largest event-loop stall during searches.
    // In a narrow table the throughput and the degrees stay; the latencies, micro-batches,
    // memory and call number go to the row's tooltip, in that order.
    m_columns = new FittedColumns(this, {0, 1, 2, 3, 4, 5, 7, 8, 6, 9, 10});
    setToolTip(tr("Elite strategies: the best valid plans found so far. Select one to open it in the plan view."));
}

void EliteTable::setEmptyText(const QString& text)
{
    if (text == m_emptyText)
        return;
    m_emptyText = text;
    viewport()->update();
}

void EliteTable::paintEvent(QPaintEvent* event)
{
    QTableWidget::paintEvent(event);
    if (rowCount() > 0 || m_emptyText.isEmpty())
        return;
    QPainter painter(viewport());
    painter.setPen(palette().color(QPalette::Disabled, QPalette::Text));
    painter.drawText(viewport()->rect().adjusted(8, 8, -8, -8), Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
                     m_emptyText);
}

namespace {

// The figures a row shows, as it shows them: plans that read the same are one strategy.
// The batch refinement's row stands alone but for its own plan found again.
bool sameFigures(const EliteEntry& a, const EliteEntry& b)
{
    if (a.plan == b.plan)
        return true;
    return a.valid == b.valid && !a.refinement && !b.refinement
        && std::abs(a.tokensPerSPerGpu - b.tokensPerSPerGpu) <= 0.005 * std::max(a.tokensPerSPerGpu, b.tokensPerSPerGpu)
        && QString::number(a.tpotMs, 'f', 2) == QString::number(b.tpotMs, 'f', 2)
        && QString::number(a.ttftMs, 'f', 1) == QString::number(b.ttftMs, 'f', 1)
        && QString::number(a.memoryGb, 'f', 1) == QString::number(b.memoryGb, 'f', 1);
}

// How `p` differs from `base`, field by field: "TP 4 → 8, attention: col → row".
QString planDifference(const Plan& base, const Plan& p)
{
    QStringList out;
    auto degree = [&](const QString& name, int a, int b) {
        if (a != b)
            out << QStringLiteral("%1 %2 → %3").arg(name).arg(a).arg(b);
    };
    degree(QObject::tr("TP"), base.tensorParallel, p.tensorParallel);
    degree(QObject::tr("EP"), base.expertParallel, p.expertParallel);
    degree(QObject::tr("PP"), base.pipelineParallel, p.pipelineParallel);
    degree(QObject::tr("DP"), base.dataParallel, p.dataParallel);
    degree(QObject::tr("batch"), base.batch, p.batch);
    degree(QObject::tr("micro-batches"), base.microBatches, p.microBatches);
    degree(QObject::tr("redundant experts"), base.redundantExperts, p.redundantExperts);
    degree(QObject::tr("instances"), base.instances, p.instances);
    if (base.twoBatchOverlap != p.twoBatchOverlap)
        out << (p.twoBatchOverlap ? QObject::tr("two-batch overlap on") : QObject::tr("two-batch overlap off"));
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (base.option(id) != p.option(id))
            out << QStringLiteral("%1: %2 → %3")
                       .arg(QString::fromLatin1(opInfo(id).name), QString::fromLatin1(opOption(id, base.option(id)).name),
                            QString::fromLatin1(opOption(id, p.option(id)).name));
    }
    return out.isEmpty() ? QObject::tr("the same plan") : out.join(QStringLiteral(", "));
}

// What the plans of a group after its first have in common with it, and how they differ.
QString groupTip(const std::vector<EliteEntry>& elites, const std::vector<int>& group)
{
    QStringList lines{QObject::tr("%n more plan(s) with the same figures (tokens/s per GPU within 0.5 %, TPOT, TTFT "
                                  "and memory as shown), which differ from this one in:",
                                  nullptr, int(group.size() - 1))};
    for (size_t k = 1; k < group.size(); ++k)
        lines << QObject::tr("• %1 tok/s/GPU: %2")
                     .arg(elites[group[k]].tokensPerSPerGpu, 0, 'f', 1)
                     .arg(planDifference(elites[group.front()].plan, elites[group[k]].plan));
    return lines.join(QLatin1Char('\n'));
}

} // namespace

int EliteTable::eliteAt(int row) const
{
    return row >= 0 && row < int(m_groups.size()) ? m_groups[row].front() : -1;
}

int EliteTable::groupSize(int row) const { return row >= 0 && row < int(m_groups.size()) ? int(m_groups[row].size()) : 0; }

void EliteTable::setElites(const std::vector<EliteEntry>& elites, bool fitColumns)
{
    // Keep the user's selection stable while rows refresh.
    const QSignalBlocker block(this);
    const bool firstRows = rowCount() == 0 && !elites.empty();
    m_groups.clear();
    for (int i = 0; i < int(elites.size()); ++i) {
        auto g = std::find_if(m_groups.begin(), m_groups.end(),
                              [&](const std::vector<int>& group) { return sameFigures(elites[group.front()], elites[i]); });
        if (g == m_groups.end())
            m_groups.push_back({i});
        else
            g->push_back(i);
    }
    setRowCount(static_cast<int>(m_groups.size()));
    for (int r = 0; r < static_cast<int>(m_groups.size()); ++r) {
        const std::vector<int>& group = m_groups[r];
        const EliteEntry& e = elites[group.front()];
        const Plan& p = e.plan;
        setItem(r, 0, cell(group.size() > 1 ? QStringLiteral("%1 ×%2").arg(e.tokensPerSPerGpu, 0, 'f', 1).arg(group.size())
                                             : QString::number(e.tokensPerSPerGpu, 'f', 1)));
        // Under attention data parallelism TP splits no head: the cell says so, since the
        // degree alone reads as a head split.
        setItem(r, 1, cell(attentionDataParallel(p) ? tr("%1 aDP").arg(p.tensorParallel)
                                                     : QString::number(p.tensorParallel)));
        setItem(r, 2, cell(QString::number(p.expertParallel)));
        setItem(r, 3, cell(QString::number(p.pipelineParallel)));
        setItem(r, 4, cell(QString::number(p.dataParallel)));
        setItem(r, 5, cell(QString::number(p.batch)));
        setItem(r, 6, cell(QString::number(p.microBatches)));
        setItem(r, 7, cell(QString::number(e.tpotMs, 'f', 2)));
        setItem(r, 8, cell(QString::number(e.ttftMs, 'f', 1)));
        setItem(r, 9, cell(QString::number(e.memoryGb, 'f', 1)));
        setItem(r, 10, cell(e.refinement ? tr("%1 (batch refinement)").arg(e.call) : QString::number(e.call)));
        // The refinement's row says what it is; a group's row how its plans differ.
        QStringList tip;
        if (e.refinement)
            tip << tr("The search's last step: the best plan's batch raised as far as it stays valid (its calls are "
                      "charged to the budget).");
        if (group.size() > 1)
            tip << groupTip(elites, group);
        for (int c = 0; c < columnCount(); ++c) {
            QTableWidgetItem* it = item(r, c);
            if (!tip.isEmpty())
                it->setToolTip(tip.join(QStringLiteral("\n\n")));
            if (e.refinement) {
                QFont f = it->font();
                f.setItalic(true);
                it->setFont(f);
            }
        }
    }
    // Between measurements a cell may ask for more than its column has (EP 8 became 256):
    // that column widens, where the text used to elide to "…". Only a text longer than any
    // its column held is measured, so a refresh stays a string-length check per cell.
    const bool measure = firstRows || fitColumns;
    m_longest.resize(size_t(columnCount()), 0);
    for (int c = 0; c < columnCount(); ++c) {
        if (measure)
            m_longest[size_t(c)] = 0;
        for (int r = 0; r < rowCount(); ++r)
            if (const int n = int(item(r, c)->text().size()); n > m_longest[size_t(c)]) {
                m_longest[size_t(c)] = n;
                if (!measure)
                    m_columns->cellChanged(r, c);
            }
    }
    if (measure)
        m_columns->measure();
}

std::vector<int> EliteTable::hiddenColumns() const { return m_columns->hiddenColumns(); }
QString EliteTable::toolTipAt(int row, int column) const { return m_columns->toolTip(row, column); }

RunsTable::RunsTable(QWidget* parent) : QTableWidget(parent)
{
    setObjectName(QStringLiteral("runsTable"));
    setColumnCount(4);
    setHorizontalHeaderLabels({tr("Run"), tr("Variant"), tr("best"), tr("calls")});
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    verticalHeader()->setVisible(false);
    setToolTip(tr("Runs, each on the scenario variant it ran on. Tick to show on the curve, double-click the name to "
                  "rename, Delete to remove; the elites and heatmap follow the selection."));
    setMinimumWidth(150);
    // The name first and widest (a long one elided: the tooltip and the editor hold all of
    // it), then the best value; the variant and the calls go to the row's tooltip when
    // the table is narrow.
    m_columns = new FittedColumns(this, {0, 2, 1, 3}, 0);
    constexpr int kMaxNameColumn = 320;
    m_columns->setMaximumWidth(0, kMaxNameColumn);
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
        setFigures(r, run);
    }
    if (selected >= 0 && selected < count)
        selectRow(selected);
    m_columns->measure();
}

void RunsTable::updateFigures(int row, const Row& run)
{
    if (row < 0 || row >= rowCount())
        return;
    setFigures(row, run);
    // "running" becomes a number, the calls gain digits: the columns widen to them.
    m_columns->cellChanged(row, 2);
    m_columns->cellChanged(row, 3);
}

std::vector<int> RunsTable::hiddenColumns() const { return m_columns->hiddenColumns(); }
QString RunsTable::toolTipAt(int row, int column) const { return m_columns->toolTip(row, column); }

void RunsTable::setFigures(int row, const Row& run)
{
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
