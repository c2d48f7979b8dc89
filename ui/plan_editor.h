// The what-if editor: a plan's coarse degrees and one sharding option per operator of
// the model, edited by hand. It only edits; the plan view evaluates and explains.
#pragma once

#include <QWidget>

#include <array>

#include "model/plan.h"

class QAction;
class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;

namespace shardlab::ui {

class PlanEditor : public QWidget {
    Q_OBJECT
public:
    explicit PlanEditor(QWidget* parent = nullptr);

    // Which operators exist (their combos are shown), the GPU count a plan must tile, the
    // model's expert count (EP is only editable for a mixture of experts), and the
    // reference plan whose options the combos mark. `s` is the scenario the plan runs on:
    // a pool's scenario for one pool of a disaggregated deployment, whose GPUs are then
    // named as the pool's, with the whole cluster's count `clusterGpus` beside them.
    void setContext(const Scenario& s, const Plan& reference, const QString& poolName = QString(),
                    long long clusterGpus = 0);
    // Shows `p`; emits nothing.
    void setPlan(const Plan& p);
    Plan plan() const { return m_plan; }
    // The field the last edit changed ("batch", "op.attention"), to merge its undo steps.
    QString lastEditedField() const { return m_lastField; }

    // The actions under the form: the undo button shows `undo` (the window's Undo, named
    // after the step it undoes); "Back to searched plan" is enabled with a searched plan
    // (its tooltip names it); "Rebalance DP" only where DP is free (not a pool's plan).
    void setUndoAction(QAction* undo);
    void setSearchedPlan(bool available, const QString& name);
    void setRebalanceEnabled(bool enabled, const QString& why);
    // One line under the actions: what the last action did, or why it did nothing.
    void setNote(const QString& text, bool error);
    QString note() const;

Q_SIGNALS:
    void planEdited(const shardlab::Plan& plan);
    void resetRequested();
    void rebalanceRequested();
    void fitBatchRequested();
    void searchedPlanRequested();

private:
    QSpinBox* addDegree(QFormLayout* form, const QString& name, const QString& label, const QString& tip, int maximum,
                        int Plan::*field);
    void edited(const QString& field);
    void refreshHints();
    QWidget* buildActions();

    Plan m_plan;
    Plan m_reference;
    long long m_targetGpus = 0;  // the GPUs the plan must tile: the cluster's or the pool's
    QString m_poolName;          // "" for a whole-cluster plan, else "decode" / "prefill"
    long long m_clusterGpus = 0; // the whole cluster's GPUs, shown beside a pool's
    std::array<QSpinBox*, 7> m_degrees{};
    std::array<int Plan::*, 7> m_degreeFields{};
    std::array<QComboBox*, kOpCount> m_ops{};
    QFormLayout* m_opForm = nullptr;
    QLabel* m_tiling = nullptr;
    // MoE only: redundant expert slots and two-batch overlap, and where the slots fall.
    QSpinBox* m_redundant = nullptr;
    QCheckBox* m_overlap = nullptr;
    QLabel* m_slots = nullptr;
    int m_experts = 0;
    QString m_lastField;
    QPushButton* m_undo = nullptr;
    QPushButton* m_rebalance = nullptr;
    QPushButton* m_searched = nullptr;
    QLabel* m_note = nullptr;
};

} // namespace shardlab::ui
