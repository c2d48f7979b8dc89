// The search panel's two tables: the runs (each with its scenario variant, shown or
// hidden on the curve, renamed in place) and the elite strategies of the selected run.
// Each sets up its columns and fills its rows; what a selection or an edit means is the
// panel's. Neither scrolls sideways: the columns that do not fit the table's width are
// hidden, least important first, and read in each row's tooltip (table_columns.h).
#pragma once

#include <QColor>
#include <QTableWidget>

#include <vector>

#include "search_worker.h"

namespace shardlab::ui {

class FittedColumns;

class EliteTable : public QTableWidget {
    Q_OBJECT
public:
    explicit EliteTable(QWidget* parent = nullptr);
    // One row per distinct strategy, best first; the batch refinement's plan in italics.
    // Plans whose tokens/s per GPU are within 0.5 % of a row's and whose TPOT, TTFT and
    // memory read the same are that row's ("×N", the tooltip lists how they differ). The
    // columns are fitted to the rows when the first rows arrive or `fitColumns`. Emits no
    // signal.
    void setElites(const std::vector<EliteEntry>& elites, bool fitColumns);
    // The elite a row shows (the best of its group), -1 for none; how many it stands for.
    int eliteAt(int row) const;
    int groupSize(int row) const;
    // The columns hidden at the table's width, and what hovering a cell shows (the row's
    // hidden cells, then the cell's own tooltip).
    std::vector<int> hiddenColumns() const;
    QString toolTipAt(int row, int column) const;
    // What the table says in its empty body (why there are no rows); "" says nothing.
    void setEmptyText(const QString& text);
    QString emptyText() const { return m_emptyText; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<std::vector<int>> m_groups; // per row: the elites it stands for, best first
    std::vector<int> m_longest;              // per column: the longest text it has held since measured
    FittedColumns* m_columns = nullptr;
    QString m_emptyText;
};

class RunsTable : public QTableWidget {
    Q_OBJECT
public:
    // One run as its row shows it.
    struct Row {
        QString label;
        QString status; // "running", "finished", "stopped", "cancelled"
        QString variant;
        QString variantTip; // what changed against the variant before, else the scenario's name
        QColor color;       // the run's colour on the curve
        bool visible = true;
        bool found = false;
        double bestValue = 0;
        int calls = 0;
    };
    explicit RunsTable(QWidget* parent = nullptr);
    // Refills every row without emitting itemChanged, `selected` selected.
    void setRuns(const std::vector<Row>& rows, int selected);
    // The best and calls cells of one row, as a running search reports (the rest of the
    // row, a name being edited included, is left alone).
    void updateFigures(int row, const Row& run);
    // As EliteTable's: the columns hidden at this width, and a cell's tooltip.
    std::vector<int> hiddenColumns() const;
    QString toolTipAt(int row, int column) const;

private:
    void setFigures(int row, const Row& run); // the best and calls cells, nothing measured
    FittedColumns* m_columns = nullptr;
};

} // namespace shardlab::ui
