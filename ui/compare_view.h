// Any two plans side by side: the runs' bests, elites, what-ifs, the
// Megatron recipe and plan files opened with File > Open plan. Both plans are evaluated on
// the current scenario and compared per generated token (GPU·µs per token, what tokens/s
// per GPU inverts), never per step: per operator, memory, collectives with NVLink and
// inter-node bytes apart, and the explanation of where the time goes.
#pragma once

#include <QWidget>

#include <memory>
#include <vector>

#include "plan_explain.h"
#include "sim/simulator.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace shardlab::ui {

class BreakdownPlot;
class CompareTable;
class MemoryPlot;

struct NamedPlan {
    QString name; // "Best plan (anneal seed 0)", "Elite #3", "plan.json"
    Plan plan;
    QString note; // where it comes from (a file, the scenario it was made for)
    // A search's best: its tok/s/GPU where it was found (0 for other plans). The tab opens
    // on the best of these against the recipe.
    double searchedValue = 0;
};

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    void setScenario(const Scenario& s);
    // The plans one can pick for A and B; keeps the current picks when their names remain.
    void setCandidates(const std::vector<NamedPlan>& plans);
    const std::vector<NamedPlan>& candidates() const { return m_candidates; }
    // Picks by name; false when a name is not a candidate.
    bool compare(const QString& a, const QString& b);

    // What the view shows, for tests and the status bar.
    QString headlineText() const;
    QString pickedA() const;
    QString pickedB() const;
    const PlanComparison& comparison() const { return m_cmp; }
    QTableWidget* linkTable() const { return m_links; }
    BreakdownPlot* breakdown() const { return m_breakdown; }
    SimResult resultA() const { return m_resA; }
    SimResult resultB() const { return m_resB; }

private:
    void refresh();
    void fillCombos();
    int defaultFirst() const; // the first combo's default: the best search result

    Scenario m_scenario;
    std::unique_ptr<Simulator> m_sim;
    std::vector<NamedPlan> m_candidates;
    PlanComparison m_cmp;
    SimResult m_resA, m_resB;

    bool m_pickedA = false, m_pickedB = false; // chosen by the user: kept across candidate updates
    QComboBox* m_a = nullptr;
    QComboBox* m_b = nullptr;
    QLabel* m_headline = nullptr;
    BreakdownPlot* m_breakdown = nullptr;
    MemoryPlot* m_memory = nullptr;
    CompareTable* m_table = nullptr;
    QTableWidget* m_links = nullptr;
    QLabel* m_explanation = nullptr;
};

} // namespace shardlab::ui
