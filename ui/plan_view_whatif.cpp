// The plan view's what-if steps: edits in the what-if editor, the fits of the plan to the
// scenario (DP rebalanced to the cluster, the batch fitted to the limits: the core's rules,
// sim/batch.h), the Megatron recipe and the searched plan. Each is a step of the window's
// undo stack, so Edit > Undo (or the editor's Undo) walks back through them.
#include <QUndoStack>

#include "live_edit_command.h"
#include "plan_editor.h"
#include "plan_view.h"
#include "search/search_space.h"
#include "sim/batch.h"
#include "ui_format.h"

namespace shardlab::ui {

// One what-if step: the view's plan before and after; edits of the same editor field merge
// (LiveEditCommand), the fits and the recipe (no field) are steps of their own.
class WhatIfCommand : public LiveEditCommand<PlanView::WhatIf, QString> {
public:
    WhatIfCommand(PlanView* view, PlanView::WhatIf before, PlanView::WhatIf after, const QString& text,
                  const QString& field)
        : LiveEditCommand(std::move(before), std::move(after), field, !field.isEmpty(), text), m_view(view)
    {
    }
    int id() const override { return 17; }

private:
    void apply(const PlanView::WhatIf& s) override { m_view->restoreWhatIf(s); }
    PlanView* m_view;
};

void PlanView::setScenarioNames(const Scenario& s)
{
    copyNames(s, m_full);
    copyNames(s, m_scenario);
}

void PlanView::setUndoStack(QUndoStack* stack)
{
    m_undo = stack;
    m_editor->setUndoAction(stack->createUndoAction(m_editor, tr("Undo")));
}

void PlanView::setSearchedPlan(const QString& title, const std::optional<Deployment>& plan)
{
    m_searched = plan;
    m_searchedTitle = title;
    refreshWhatIfActions();
}

void PlanView::refreshWhatIfActions()
{
    const bool fits = m_searched && m_searched->pools.has_value() == isDisaggregated();
    m_editor->setSearchedPlan(fits, m_searchedTitle);
    m_editor->setRebalanceEnabled(!m_dsim, tr("A pool's GPUs are its plan's: there is no DP to rebalance against."));
}

PlanView::WhatIf PlanView::whatIfState() const { return {m_title, m_baseTitle, m_poolsTitle, m_plan, m_pools, m_role}; }

void PlanView::restoreWhatIf(const WhatIf& w)
{
    if (m_dsim) {
        m_pools = w.pools;
        m_poolsTitle = w.poolsTitle;
        m_role = w.role;
        applyPool(); // the pool's scenario, simulator and recipe; then the step's titles
    } else {
        m_plan = w.plan;
        m_editor->setPlan(m_plan);
    }
    m_title = w.title;
    m_baseTitle = w.baseTitle;
    if (m_sim)
        evaluateAndShow();
    Q_EMIT planEdited(m_plan);
}

void PlanView::pushWhatIf(const WhatIf& before, const QString& text, const QString& field)
{
    m_editor->setNote(QString(), false);
    if (m_undo)
        m_undo->push(new WhatIfCommand(this, before, whatIfState(), text, field));
}

void PlanView::onEditorEdited(const Plan& p)
{
    const WhatIf before = whatIfState();
    m_plan = p;
    m_title = m_baseTitle + tr(" — what-if");
    if (m_dsim) {
        (m_role == PoolRole::Prefill ? m_pools.prefill : m_pools.decode) = p;
        updateDeployment();
    }
    evaluateAndShow();
    const QString field = m_editor->lastEditedField();
    const QString words = field.startsWith(QLatin1String("whatIf.op.")) ? field.mid(10) : field;
    pushWhatIf(before, tr("Edit plan: %1").arg(QString(words).replace(QLatin1Char('_'), QLatin1Char(' '))), field);
    Q_EMIT planEdited(m_plan);
}

void PlanView::resetToRecipe()
{
    if (!m_sim)
        return;
    const WhatIf before = whatIfState();
    if (m_dsim && m_poolsReference.found) {
        presentPools(tr("Megatron recipe"), m_poolsReference.plan);
    } else {
        m_plan = m_reference.plan;
        m_title = m_baseTitle = tr("Megatron recipe");
        m_editor->setPlan(m_plan);
        evaluateAndShow();
    }
    pushWhatIf(before, tr("Reset the plan to Megatron"));
    Q_EMIT planEdited(m_plan);
}

bool PlanView::rebalanceDataParallel()
{
    if (!m_sim || m_dsim)
        return false;
    Plan p = m_plan;
    p.dataParallel = tilingDataParallel(p, m_scenario);
    if (p.dataParallel == 0) {
        m_editor->setNote(tr("TP × PP = %1 does not divide the cluster's %2 GPUs: no DP uses them all.")
                              .arg(static_cast<long long>(m_plan.tensorParallel) * m_plan.pipelineParallel)
                              .arg(m_scenario.cluster.totalGpus()),
                          true);
        return false;
    }
    if (p == m_plan) {
        m_editor->setNote(tr("DP %1 already uses the cluster's %2 GPUs.").arg(p.dataParallel).arg(p.gpus()), false);
        return false;
    }
    // The core's structural checks: EP must still divide TP × DP / instances, and so on.
    if (const FieldErrors bad = validatePlan(p, m_scenario); !bad.empty()) {
        m_editor->setNote(tr("DP %1 would use the cluster's GPUs, but the plan would not fit: %2")
                              .arg(p.dataParallel)
                              .arg(plainNumbers(QString::fromStdString(bad.front().toString()))),
                          true);
        return false;
    }
    const WhatIf before = whatIfState();
    const int from = m_plan.dataParallel;
    m_plan = p;
    m_title = m_baseTitle + tr(" — what-if");
    m_editor->setPlan(m_plan);
    evaluateAndShow();
    pushWhatIf(before, tr("Rebalance DP %1 → %2").arg(from).arg(p.dataParallel));
    m_editor->setNote(tr("DP %1 → %2: %3 GPUs.").arg(from).arg(p.dataParallel).arg(p.gpus()), false);
    Q_EMIT planEdited(m_plan);
    return true;
}

bool PlanView::fitBatchToLimits()
{
    if (!m_sim)
        return false;
    if (m_sim->evaluate(m_plan).structureChecks != 0) {
        m_editor->setNote(tr("Fix the degrees first: the simulator does not cost this plan."), true);
        return false;
    }
    // The batch range of the scenario's constraints, as the search's refinement uses it.
    const SearchSpace space(m_scenario);
    SimResult r;
    int evaluations = 0;
    const int batch = largestValidBatch(*m_sim, m_plan, space.batchMin(), space.batchMax(), r, evaluations);
    if (batch == 0) {
        m_editor->setNote(tr("No batch of this plan meets the scenario's limits (memory, TPOT, TTFT) within batches "
                             "%1–%2: change the degrees.")
                              .arg(space.batchMin())
                              .arg(space.batchMax()),
                          true);
        return false;
    }
    if (batch == m_plan.batch) {
        m_editor->setNote(tr("Batch %1 is already the largest this plan serves within the limits.").arg(batch), false);
        return false;
    }
    const WhatIf before = whatIfState();
    const int from = m_plan.batch;
    m_plan.batch = batch;
    m_title = m_baseTitle + tr(" — what-if");
    if (m_dsim) {
        (m_role == PoolRole::Prefill ? m_pools.prefill : m_pools.decode) = m_plan;
        updateDeployment();
    }
    m_editor->setPlan(m_plan);
    evaluateAndShow();
    pushWhatIf(before, tr("Fit batch %1 → %2").arg(from).arg(batch));
    m_editor->setNote(tr("Batch %1 → %2: the largest within the limits (%3 simulator calls).")
                          .arg(from)
                          .arg(batch)
                          .arg(evaluations),
                      false);
    Q_EMIT planEdited(m_plan);
    return true;
}

bool PlanView::backToSearchedPlan()
{
    if (!m_searched || m_searched->pools.has_value() != isDisaggregated())
        return false;
    const WhatIf before = whatIfState();
    if (m_searched->pools)
        presentPools(m_searchedTitle, *m_searched->pools);
    else
        presentPlan(m_searchedTitle, m_searched->plan);
    pushWhatIf(before, tr("Back to %1").arg(m_searchedTitle));
    Q_EMIT planEdited(m_plan);
    return true;
}

PoolContext PlanView::poolContext() const
{
    PoolContext c;
    if (!m_dsim)
        return c;
    c.active = true;
    const PoolRole other = m_role == PoolRole::Prefill ? PoolRole::Decode : PoolRole::Prefill;
    c.shown = QString::fromUtf8(poolRoleName(m_role));
    c.other = QString::fromUtf8(poolRoleName(other));
    c.otherGpus = (other == PoolRole::Prefill ? m_pools.prefill : m_pools.decode).gpus();
    c.clusterGpus = m_full.cluster.totalGpus();
    c.kvBytesPerRequest = m_deployment.kvBytesPerRequest;
    c.kvLinkLoad = m_deployment.kvLinkLoad;
    c.kvOverNvlink = m_full.workload.kvTransfer == KvLink::NvLink;
    return c;
}

} // namespace shardlab::ui
