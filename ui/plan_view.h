// The teaching view of one plan: validity with every reason, throughput, TPOT/TTFT against
// the SLOs, the per-operator decode time breakdown, memory against capacity, the
// collectives, and where the time went compared with the Megatron recipe. A what-if
// editor beside it changes degrees and per-operator sharding; every change is evaluated
// at once (Simulator::evaluate takes microseconds) on the GUI thread.
#pragma once

#include <QWidget>

#include <memory>
#include <optional>

#include "plan_explain.h"
#include "plan_topology.h"
#include "sim/deployment.h"
#include "sim/disaggregated.h"
#include "sim/megatron.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QUndoStack;

namespace shardlab::ui {

class TimelineView;

class BreakdownPlot;
class CollectivesTable;
class CompareTable;
class MemoryPlot;
class PlanEditor;

class PlanView : public QWidget {
    Q_OBJECT
public:
    explicit PlanView(QWidget* parent = nullptr);
    ~PlanView() override;

    // Builds the simulator, computes the Megatron recipe for reference and shows it. A
    // scenario that does not validate shows its problems and no plan. A disaggregated
    // scenario shows the recipe's pools (sim/disaggregated.h) and a pool selector.
    void setScenario(const Scenario& s);
    // The scenario renamed (no figure changed): the headline's and exports' names follow.
    void setScenarioNames(const Scenario& s);
    // Evaluates and shows `plan` under `title` ("Best plan (ppo)", "Elite #2", …). With a
    // disaggregated scenario, `plan` replaces the pool on show. A what-if on show is
    // announced first (whatIfAboutToBeReplaced): its edits are not on an undo path from here.
    void showPlan(const QString& title, const Plan& plan);
    // Both answers of the last search under the scenario's engine (report/engine_gap.h),
    // shown in the explanation until the scenario changes; nullptr clears them.
    void setEngineGap(const EngineGap* gap);
    // A disaggregated scenario's plan: the deployment line above, and one pool at a time
    // below (selected with the pool selector or selectPool), each on its pool scenario.
    void showPools(const QString& title, const DisaggregatedPlan& pools);
    // A deployment: its two pools on a disaggregated scenario, else its one plan.
    void showDeployment(const QString& title, const Deployment& d);
    void selectPool(PoolRole role);

    bool isDisaggregated() const { return m_dsim != nullptr; }
    PoolRole currentPool() const { return m_role; }
    // The pool on show within its deployment, for the Topology tab (inactive for one pool).
    PoolContext poolContext() const;
    DisaggregatedPlan currentPools() const { return m_pools; }
    // What is on show as a deployment: both pools, or the one plan.
    Deployment currentDeployment() const
    {
        return isDisaggregated() ? Deployment::twoPools(m_pools) : Deployment::onePool(m_plan);
    }
    DisaggregatedResult deploymentResult() const { return m_deployment; }
    // The recipe's pools at its best split (found = false without a valid pair).
    const DisaggregatedRecipe& poolsReference() const { return m_poolsReference; }
    // The deployment line as plain text (tests, status).
    QString deploymentText() const;
    // The scenario the shown plan is evaluated on: the editor's, or the shown pool's.
    const Scenario& currentScenario() const { return m_scenario; }

    Plan currentPlan() const { return m_plan; }
    SimResult currentResult() const { return m_result; }
    QString currentTitle() const { return m_title; }
    // A disaggregated deployment's title (the pool on show has its own, currentTitle).
    QString currentPoolsTitle() const { return m_poolsTitle; }
    // A what-if plan (or, with two pools, a what-if of either pool) is on show.
    bool showsWhatIf() const;
    // The Megatron recipe's plan for the current scenario (default Plan without one).
    Plan referencePlan() const { return m_reference.plan; }
    // The Megatron recipe of the current scenario (found = false for a scenario with problems).
    const RecipePlan& reference() const { return m_reference; }

    // The headline and the explanation as plain text (status bars, tests).
    QString headlineText() const;
    // The explanation panel as plain text (the recipe, the comparison, the load run).
    QString explanationText() const;
    TimelineView* timelineView() const { return m_timeline; }
    QStringList explanation() const { return m_sentences; }
    // The comparison with the recipe behind the headline, the table and the sentences.
    const PlanComparison& comparison() const { return m_comparison; }

    // What-if editing as steps of the window's undo stack (plan_view_whatif.cpp). Each
    // returns false with the reason in the editor's note when it changes nothing.
    void setUndoStack(QUndoStack* stack);
    // The selected run's best plan (one pool or two), for "Back to searched plan"; none
    // clears it.
    void setSearchedPlan(const QString& title, const std::optional<Deployment>& plan);
    // DP so that the plan tiles the cluster with its TP and PP (sim/batch.h), if the plan is
    // then structurally valid.
    bool rebalanceDataParallel();
    // The largest batch within the scenario's limits and batch range (sim/batch.h, the
    // search's final refinement).
    bool fitBatchToLimits();
    bool backToSearchedPlan();
    PlanEditor* whatIfEditor() const { return m_editor; }

    // Saves the breakdown plot: PNG or PDF by the extension. False on another extension
    // or a failed write, with "FILE: reason" in *error.
    bool exportPlots(const QString& path, QString* error = nullptr);
    // The memory chart, and the table of the comparison with the recipe (every row), with
    // the same header: PNG or PDF by the extension.
    bool exportMemoryPlot(const QString& path, QString* error = nullptr);
    bool exportComparisonTable(const QString& path, QString* error = nullptr);
    // The header of exported plots: the plan's title, the date, the scenario and the plan.
    QString exportCaption() const;

Q_SIGNALS:
    // The user changed the plan in the what-if editor (or reset it to Megatron).
    void planEdited(const shardlab::Plan& plan);
    // The shown plan, its result or the scenario changed (any reason): views that follow
    // the plan view (the Topology tab) read currentPlan()/currentResult() again.
    void currentPlanChanged();
    // showPlan/showPools is about to replace a what-if plan with `title`'s: keep it now
    // (currentPlan() and currentTitle() are still the what-if's).
    void whatIfAboutToBeReplaced(const QString& title);

private:
    void evaluateAndShow();
    // showPlan/showPools without the what-if announcement: the view's own moves (the recipe
    // on a new scenario, reset, back to the searched plan), which the what-if undo covers.
    void presentPlan(const QString& title, const Plan& plan);
    void presentPools(const QString& title, const DisaggregatedPlan& pools);
    void announceWhatIfReplaced(const QString& title);
    void showNoScenario(const QString& why);
    void updateHeadline(const QStringList& reasons, const QString& comparison);
    QString degreesLine() const;
    QStringList reasonsFor(const Plan& p, const SimResult& r) const;
    void applyPool();
    void updateDeployment();
    // What a what-if step changes, and puts back on undo.
    struct WhatIf {
        QString title, baseTitle, poolsTitle;
        Plan plan;
        DisaggregatedPlan pools;
        PoolRole role = PoolRole::Decode;
    };
    friend class WhatIfCommand;
    WhatIf whatIfState() const;
    void restoreWhatIf(const WhatIf& w);
    // `before` became the view's state through a what-if step named `text`; `field`: edits
    // of the same field in a row merge into one step.
    void pushWhatIf(const WhatIf& before, const QString& text, const QString& field = {});
    void onEditorEdited(const Plan& p);
    void resetToRecipe();
    void refreshWhatIfActions();

    // Disaggregated: the editor's scenario, both pools and the pool on show; m_scenario and
    // m_sim are then the shown pool's.
    Scenario m_full;
    std::unique_ptr<DisaggregatedSimulator> m_dsim;
    DisaggregatedRecipe m_poolsReference;
    DisaggregatedPlan m_pools;
    DisaggregatedResult m_deployment;
    PoolRole m_role = PoolRole::Decode;
    QString m_poolsTitle;
    QWidget* m_poolBar = nullptr;
    QComboBox* m_poolSelect = nullptr;
    QLabel* m_deploymentLabel = nullptr;

    Scenario m_scenario;
    std::unique_ptr<Simulator> m_sim; // null while the scenario has problems
    RecipePlan m_reference;
    Plan m_plan;
    SimResult m_result;
    QString m_title;
    QString m_baseTitle; // title before what-if edits
    QStringList m_sentences;
    PlanComparison m_comparison;
    std::optional<EngineGap> m_engineGap;
    QUndoStack* m_undo = nullptr;
    std::optional<Deployment> m_searched;
    QString m_searchedTitle;

    QLabel* m_headline = nullptr;
    PlanEditor* m_editor = nullptr;
    QTabWidget* m_tabs = nullptr;
    BreakdownPlot* m_breakdown = nullptr;
    MemoryPlot* m_memory = nullptr;
    QLabel* m_explanation = nullptr;
    QStringList m_loadLines; // the request-level run under the scenario's load protocol
    QString m_loadSummary;   // its one-line summary for the headline
    bool m_loadBreaks = false; // the run breaks a limit (the badge beside the steady state's)
    CompareTable* m_compare = nullptr;
    CollectivesTable* m_collectives = nullptr;
    TimelineView* m_timeline = nullptr;
};

} // namespace shardlab::ui
