// The search panel's two tables: the runs (each with its scenario variant, shown or
// hidden on the curve, renamed in place) and the elite strategies of the selected run.
// Each sets up its columns and fills its rows; what a selection or an edit means is the
// panel's.
#pragma once

#include <QColor>
#include <QTableWidget>

#include <vector>

#include "search_worker.h"

namespace shardlab::ui {

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

private:
    std::vector<std::vector<int>> m_groups; // per row: the elites it stands for, best first
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
};

} // namespace shardlab::ui
