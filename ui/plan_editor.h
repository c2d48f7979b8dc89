// The what-if editor: a plan's coarse degrees and one sharding option per operator of
// the model, edited by hand. It only edits; the plan view evaluates and explains.
#pragma once

#include <QWidget>

#include <array>

#include "model/plan.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;

namespace shardlab::ui {

class PlanEditor : public QWidget {
    Q_OBJECT
public:
    explicit PlanEditor(QWidget* parent = nullptr);

    // Which operators exist (their combos are shown), the cluster's GPU count, the
    // model's expert count (EP is only editable for a mixture of experts), and the
    // reference plan whose options the combos mark.
    void setContext(const Scenario& s, const Plan& reference);
    // Shows `p`; emits nothing.
    void setPlan(const Plan& p);
    Plan plan() const { return m_plan; }

Q_SIGNALS:
    void planEdited(const shardlab::Plan& plan);
    void resetRequested();

private:
    QSpinBox* addDegree(QFormLayout* form, const QString& name, const QString& label, const QString& tip, int maximum,
                        int Plan::*field);
    void edited();
    void refreshHints();

    Plan m_plan;
    Plan m_reference;
    long long m_clusterGpus = 0;
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
};

} // namespace shardlab::ui
