// A table's columns fitted to its width instead of scrolled sideways. Each column keeps the
// width its header and cells ask for; in the order of priority given, the columns that fit
// beside those before them are shown and the rest hidden, so a narrow window shows the
// first columns whole and never a horizontal scroll bar. A hidden column's cell is read
// in its row's tooltip, and the visible headers' tooltips name the hidden columns; every
// column shows again when the table is wide enough.
#pragma once

#include <QObject>
#include <QString>

#include <vector>

class QTableWidget;
class QWidget;

namespace shardlab::ui {

class FittedColumns : public QObject {
    Q_OBJECT
public:
    // `priority`: every column, most important first (the first is always shown, cut to the
    // table's width when it alone is wider). `stretch`: the column that takes the width left
    // over, -1 for none. The table's header tooltips are read now as each column's own.
    FittedColumns(QTableWidget* table, std::vector<int> priority, int stretch = -1);

    // A column never wider than `width` (its text then elides; the tooltip holds it all).
    void setMaximumWidth(int column, int width);
    // Measures every column from its header and rows (as resizeColumnsToContents), then fits.
    void measure();
    // The cell changed: its column widens if the cell asks for more, then fits.
    void cellChanged(int row, int column);
    // Shows and sizes the columns for the table's current width.
    void fit();

    std::vector<int> hiddenColumns() const;
    // What hovering the cell shows: the row's hidden cells ("TTFT ms: 812.3", one a line),
    // then the cell's own tooltip; empty when there is neither.
    QString toolTip(int row, int column) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    int headerWidth(int column) const;
    void updateHeaderTips();

    QTableWidget* m_table;
    QWidget* m_viewport; // the table's viewport, whose resizes and tooltips are filtered
    std::vector<int> m_priority;
    int m_stretch;
    std::vector<int> m_natural;      // per column: the width its header and cells ask for
    std::vector<int> m_maximum;      // per column: 0 for no limit
    std::vector<QString> m_headerTips; // per column: the header's own tooltip
    std::vector<int> m_tippedHidden;   // the hidden columns the header tooltips name
};

} // namespace shardlab::ui
