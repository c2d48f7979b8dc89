#include "table_columns.h"

#include <QEvent>
#include <QHeaderView>
#include <QHelpEvent>
#include <QTableWidget>
#include <QToolTip>

#include <algorithm>

namespace shardlab::ui {

FittedColumns::FittedColumns(QTableWidget* table, std::vector<int> priority, int stretch)
    : QObject(table), m_table(table), m_viewport(table->viewport()), m_priority(std::move(priority)), m_stretch(stretch)
{
    const int n = table->columnCount();
    m_natural.assign(size_t(n), 0);
    m_maximum.assign(size_t(n), 0);
    for (int c = 0; c < n; ++c) {
        const QTableWidgetItem* h = table->horizontalHeaderItem(c);
        m_headerTips.push_back(h ? h->toolTip() : QString());
    }
    // The columns are sized here, not by the header: a stretched last section would be
    // resized behind the fit's back.
    table->horizontalHeader()->setStretchLastSection(false);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_viewport->installEventFilter(this);
}

void FittedColumns::setMaximumWidth(int column, int width)
{
    if (column >= 0 && column < int(m_maximum.size()))
        m_maximum[size_t(column)] = width;
}

int FittedColumns::headerWidth(int column) const
{
    return m_table->horizontalHeader()->sectionSizeHint(column);
}

void FittedColumns::measure()
{
    // A hidden section's size hint is 0: every column is shown while it is measured.
    for (int c = 0; c < int(m_natural.size()); ++c)
        m_table->setColumnHidden(c, false);
    for (int c = 0; c < int(m_natural.size()); ++c) {
        // (public as QAbstractItemView's; QTableView's override measures the rows)
        int w = std::max(headerWidth(c), static_cast<const QAbstractItemView*>(m_table)->sizeHintForColumn(c));
        if (m_maximum[size_t(c)] > 0)
            w = std::min(w, m_maximum[size_t(c)]);
        m_natural[size_t(c)] = w;
    }
    fit();
}

void FittedColumns::cellChanged(int row, int column)
{
    if (column < 0 || column >= int(m_natural.size()))
        return;
    // As sizeHintForColumn measures a cell: the delegate's width and the grid line.
    int w = m_table->sizeHintForIndex(m_table->model()->index(row, column)).width() + (m_table->showGrid() ? 1 : 0);
    if (m_maximum[size_t(column)] > 0)
        w = std::min(w, m_maximum[size_t(column)]);
    if (w <= m_natural[size_t(column)])
        return;
    m_natural[size_t(column)] = w;
    fit();
}

void FittedColumns::fit()
{
    const int available = m_table->viewport()->width();
    std::vector<bool> shown(m_natural.size(), false);
    int used = 0;
    // In priority order, each column while they all fit: a less important column never
    // shows while a more important one is hidden.
    for (size_t k = 0; k < m_priority.size(); ++k) {
        const int c = m_priority[k];
        const int w = k == 0 ? std::min(m_natural[size_t(c)], available) : m_natural[size_t(c)];
        if (used + w > available && k > 0)
            break;
        shown[size_t(c)] = true;
        used += w;
    }
    for (int c = 0; c < int(m_natural.size()); ++c) {
        m_table->setColumnHidden(c, !shown[size_t(c)]);
        if (!shown[size_t(c)])
            continue;
        int w = c == m_priority.front() ? std::min(m_natural[size_t(c)], available) : m_natural[size_t(c)];
        if (c == m_stretch)
            w += std::max(0, available - used);
        m_table->setColumnWidth(c, w);
    }
    updateHeaderTips();
}

std::vector<int> FittedColumns::hiddenColumns() const
{
    std::vector<int> out;
    for (int c = 0; c < m_table->columnCount(); ++c)
        if (m_table->isColumnHidden(c))
            out.push_back(c);
    return out;
}

// The visible headers' tooltips name the hidden columns (only when that set changes: a
// header's data changing makes the header lay itself out again).
void FittedColumns::updateHeaderTips()
{
    const std::vector<int> hidden = hiddenColumns();
    if (hidden == m_tippedHidden)
        return;
    m_tippedHidden = hidden;
    QStringList names;
    for (int c : hidden)
        if (const QTableWidgetItem* h = m_table->horizontalHeaderItem(c))
            names << h->text();
    const QString note = names.isEmpty() ? QString()
                                         : tr("Not shown at this width: %1 (each row's tooltip has them; widen the "
                                              "table to show them).")
                                               .arg(names.join(QStringLiteral(", ")));
    for (int c = 0; c < m_table->columnCount(); ++c) {
        QTableWidgetItem* h = m_table->horizontalHeaderItem(c);
        if (!h)
            continue;
        const QString& own = m_headerTips[size_t(c)];
        h->setToolTip(own.isEmpty() || note.isEmpty() ? QString(own + note) : QString(own + QStringLiteral("\n\n") + note));
    }
}

QString FittedColumns::toolTip(int row, int column) const
{
    QStringList hidden;
    for (int c : hiddenColumns()) {
        const QTableWidgetItem* h = m_table->horizontalHeaderItem(c);
        const QTableWidgetItem* it = m_table->item(row, c);
        if (h && it && !it->text().isEmpty())
            hidden << QStringLiteral("%1: %2").arg(h->text(), it->text());
    }
    const QTableWidgetItem* it = m_table->item(row, column);
    const QString own = it ? it->toolTip() : QString();
    if (hidden.isEmpty())
        return own;
    const QString shown = hidden.join(QLatin1Char('\n'));
    return own.isEmpty() ? shown : shown + QStringLiteral("\n\n") + own;
}

bool FittedColumns::eventFilter(QObject* watched, QEvent* event)
{
    // The viewport kept from the start, not m_table->viewport(): while the table is being
    // destroyed its viewport still gets events, and the table is no scroll area any more.
    if (watched != m_viewport)
        return QObject::eventFilter(watched, event);
    if (event->type() == QEvent::Resize)
        fit();
    else if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QModelIndex index = m_table->indexAt(help->pos());
        const QString tip = index.isValid() ? toolTip(index.row(), index.column()) : QString();
        if (tip.isEmpty())
            return false; // the table's own tooltip
        QToolTip::showText(help->globalPos(), tip, m_table->viewport(), m_table->visualRect(index));
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace shardlab::ui
