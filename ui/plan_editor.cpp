#include "plan_editor.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include "model/plan_checks.h"
#include "scenario_fields.h"

namespace shardlab::ui {

namespace {
QString latin(const char* s) { return QString::fromLatin1(s); }

QFormLayout* compactForm(QWidget* parent)
{
    auto* f = new QFormLayout(parent);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    f->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    f->setHorizontalSpacing(8);
    f->setVerticalSpacing(3);
    f->setContentsMargins(8, 6, 8, 6);
    return f;
}
} // namespace

PlanEditor::PlanEditor(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(6);

    auto* degrees = new QGroupBox(tr("What-if: degrees"));
    auto* form = compactForm(degrees);
    int k = 0;
    auto degree = [&](const char* name, const QString& label, const QString& tip, int maximum, int Plan::*field) {
        m_degreeFields[k] = field;
        m_degrees[k++] = addDegree(form, latin(name), label, tip, maximum, field);
    };
    degree("tensor_parallel", tr("Tensor parallel"), tr("TP: GPUs that split each layer's attention and FFN weights."),
           1 << 20, &Plan::tensorParallel);
    degree("expert_parallel", tr("Expert parallel"),
           tr("EP: ranks the experts are spread over; must divide TP × DP / instances (the rest is expert-tensor-parallel)."),
           1 << 20, &Plan::expertParallel);
    degree("pipeline_parallel", tr("Pipeline parallel"), tr("PP: stages of contiguous layers."), 1 << 20,
           &Plan::pipelineParallel);
    degree("data_parallel", tr("Data parallel"), tr("DP: model replicas (attention data parallelism included)."),
           1 << 20, &Plan::dataParallel);
    degree("batch", tr("Batch"), tr("Sequences in flight per data-parallel replica."), 1 << 20, &Plan::batch);
    degree("micro_batches", tr("Micro-batches"), tr("Pipeline micro-batches; must divide the batch."), 1 << 20,
           &Plan::microBatches);
    degree("instances", tr("Engine instances"),
           tr("MoE: independent engines behind a router; the DP replicas are split among them and each instance's "
              "TP × DP / instances ranks per stage hold the experts as EP × expert-TP. Must divide DP."),
           1 << 20, &Plan::instances);
    m_redundant = new FieldSpinBox;
    m_redundant->setObjectName(QStringLiteral("whatIf.redundant_experts"));
    m_redundant->setFocusPolicy(Qt::StrongFocus);
    m_redundant->setRange(0, kMaxRedundantExperts);
    m_redundant->setToolTip(tr("Expert slots beyond the model's experts, holding replicas of the busiest ones (the "
                               "engine's load balancer, EPLB). Each EP rank holds (experts + redundant) / EP experts; "
                               "EP must divide that sum; at most one per expert."));
    connect(m_redundant, &QSpinBox::valueChanged, this, [this](int v) {
        m_plan.redundantExperts = v;
        edited(QStringLiteral("redundant_experts"));
    });
    form->addRow(tr("Redundant experts"), m_redundant);
    m_overlap = new QCheckBox(tr("Two-batch overlap"));
    m_overlap->setObjectName(QStringLiteral("whatIf.two_batch_overlap"));
    m_overlap->setToolTip(tr("Run each step as two half-batches: one half's MoE dispatch and combine hide behind the "
                             "other's compute, at the cost of reading the weights and launching every kernel twice "
                             "(SGLang --enable-two-batch-overlap, vLLM --enable-dbo)."));
    connect(m_overlap, &QCheckBox::toggled, this, [this](bool on) {
        m_plan.twoBatchOverlap = on;
        edited(QStringLiteral("two_batch_overlap"));
    });
    form->addRow(QString(), m_overlap);
    m_tiling = new QLabel;
    m_tiling->setObjectName(QStringLiteral("whatIf.tiling"));
    m_tiling->setWordWrap(true);
    form->addRow(m_tiling);
    m_slots = new QLabel;
    m_slots->setObjectName(QStringLiteral("whatIf.expertSlots"));
    m_slots->setWordWrap(true);
    form->addRow(m_slots);
    layout->addWidget(degrees);
    // The actions right under the degrees they fit: in view without scrolling at 1024x700.
    layout->addWidget(buildActions());

    auto* ops = new QGroupBox(tr("What-if: operator sharding"));
    m_opForm = compactForm(ops);
    auto* legend = new QLabel(tr("★ Megatron's choice; bold: changed from it."));
    legend->setStyleSheet(QStringLiteral("color: #546e7a;"));
    legend->setWordWrap(true);
    m_opForm->addRow(legend);
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpInfo& info = opInfo(id);
        auto* box = new FieldComboBox;
        box->setFocusPolicy(Qt::StrongFocus);
        box->setObjectName(QStringLiteral("whatIf.op.") + latin(info.name));
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(12);
        for (int o = 0; o < info.optionCount; ++o) {
            box->addItem(latin(info.options[o].name), o);
            box->setItemData(o,
                             QStringLiteral("%1: %2 → %3. %4")
                                 .arg(latin(info.options[o].name), latin(layoutName(info.options[o].in)),
                                      latin(layoutName(info.options[o].out)), latin(info.options[o].summary)),
                             Qt::ToolTipRole);
        }
        connect(box, &QComboBox::activated, this, [this, id, box](int index) {
            m_plan.setOption(id, box->itemData(index).toInt());
            edited(box->objectName());
        });
        m_ops[i] = box;
        m_opForm->addRow(latin(info.name), box);
        if (auto* l = qobject_cast<QLabel*>(m_opForm->labelForField(box)))
            l->setToolTip(latin(info.label));
    }
    layout->addWidget(ops);

    layout->addStretch(1);
}

QSpinBox* PlanEditor::addDegree(QFormLayout* form, const QString& name, const QString& label, const QString& tip,
                                int maximum, int Plan::*field)
{
    auto* box = new FieldSpinBox;
    box->setObjectName(QStringLiteral("whatIf.") + name);
    box->setFocusPolicy(Qt::StrongFocus);
    box->setRange(1, maximum);
    box->setToolTip(tip);
    box->setAccelerated(true);
    connect(box, &QSpinBox::valueChanged, this, [this, field, name](int v) {
        m_plan.*field = v;
        edited(name);
    });
    form->addRow(label, box);
    return box;
}

void PlanEditor::setContext(const Scenario& s, const Plan& reference, const QString& poolName, long long clusterGpus)
{
    m_targetGpus = s.cluster.totalGpus();
    m_poolName = poolName;
    m_clusterGpus = poolName.isEmpty() ? m_targetGpus : clusterGpus;
    m_reference = reference;
    for (int i = 0; i < kOpCount; ++i)
        m_opForm->setRowVisible(m_ops[i], opPresent(s.model, static_cast<OpId>(i)));
    m_degrees[1]->setEnabled(s.model.isMoe());
    m_degrees[6]->setEnabled(s.model.isMoe()); // engine instances
    m_experts = s.model.isMoe() ? s.model.moe.experts : 0;
    m_redundant->setEnabled(s.model.isMoe());
    // The plan rule's limit (model/plan_checks.h): at most one redundant slot per expert.
    m_redundant->setMaximum(static_cast<int>(maxRedundantExperts(m_experts)));
    m_overlap->setEnabled(s.model.isMoe());
    m_slots->setVisible(s.model.isMoe());
    // The reference's option is named in each item's text, so the recipe stays visible
    // while exploring.
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        for (int o = 0; o < opInfo(id).optionCount; ++o)
            m_ops[i]->setItemText(o, latin(opOption(id, o).name)
                                         + (o == reference.option(id) ? QStringLiteral(" ★") : QString()));
    }
    refreshHints();
}

void PlanEditor::setPlan(const Plan& p)
{
    m_plan = p;
    for (size_t k = 0; k < m_degrees.size(); ++k) {
        const QSignalBlocker block(m_degrees[k]);
        m_degrees[k]->setValue(p.*m_degreeFields[k]);
    }
    for (int i = 0; i < kOpCount; ++i) {
        const QSignalBlocker block(m_ops[i]);
        m_ops[i]->setCurrentIndex(std::min(p.option(static_cast<OpId>(i)), m_ops[i]->count() - 1));
    }
    {
        const QSignalBlocker b1(m_redundant), b2(m_overlap);
        m_redundant->setValue(p.redundantExperts);
        m_overlap->setChecked(p.twoBatchOverlap);
    }
    refreshHints();
}

// Undo, the fits of the plan to the scenario (core's rules, applied by the plan view), the
// searched plan and the recipe, under the form.
QWidget* PlanEditor::buildActions()
{
    auto* box = new QGroupBox(tr("What-if: actions"));
    auto* grid = new QGridLayout(box);
    grid->setContentsMargins(8, 6, 8, 6);
    grid->setSpacing(4);
    auto button = [&](const char* name, const QString& text, const QString& tip, void (PlanEditor::*signal)()) {
        auto* b = new QPushButton(text);
        b->setObjectName(QStringLiteral("whatIf.") + latin(name));
        b->setToolTip(tip);
        connect(b, &QPushButton::clicked, this, signal);
        return b;
    };
    m_rebalance = button("rebalanceDp", tr("Rebalance DP"),
                         tr("Set data parallel so that TP × PP × DP uses the cluster's GPUs, the other degrees kept."),
                         &PlanEditor::rebalanceRequested);
    auto* fit = button("fitBatch", tr("Fit batch"),
                       tr("The largest batch this plan serves within the scenario's latency limits and memory (the "
                          "search's final batch refinement)."),
                       &PlanEditor::fitBatchRequested);
    m_searched = button("searched", tr("Searched plan"), tr("Back to the selected run's best plan."),
                        &PlanEditor::searchedPlanRequested);
    m_searched->setEnabled(false);
    auto* reset = button("reset", tr("Megatron"), tr("Back to the Megatron recipe's plan for this scenario."),
                         &PlanEditor::resetRequested);
    m_undo = new QPushButton(tr("Undo"));
    m_undo->setObjectName(QStringLiteral("whatIf.undo"));
    m_undo->setEnabled(false);
    grid->addWidget(m_rebalance, 0, 0);
    grid->addWidget(fit, 0, 1);
    grid->addWidget(m_searched, 1, 0);
    grid->addWidget(reset, 1, 1);
    grid->addWidget(m_undo, 2, 0, 1, 2);
    m_note = new QLabel;
    m_note->setObjectName(QStringLiteral("whatIf.note"));
    m_note->setWordWrap(true);
    grid->addWidget(m_note, 3, 0, 1, 2);
    return box;
}

void PlanEditor::setUndoAction(QAction* undo)
{
    // The step's name ("Undo Edit Batch") elided to the button: the tooltip holds all of it.
    auto follow = [this, undo] {
        const int room = std::max(180, m_undo->width()) - 16;
        m_undo->setText(m_undo->fontMetrics().elidedText(undo->text(), Qt::ElideRight, room));
        m_undo->setToolTip(undo->text());
        m_undo->setEnabled(undo->isEnabled());
    };
    connect(undo, &QAction::changed, this, follow);
    connect(m_undo, &QPushButton::clicked, undo, &QAction::trigger);
    follow();
}

void PlanEditor::setSearchedPlan(bool available, const QString& name)
{
    m_searched->setEnabled(available);
    m_searched->setToolTip(available ? tr("Back to %1.").arg(name) : tr("No run with a best plan is selected."));
}

void PlanEditor::setRebalanceEnabled(bool enabled, const QString& why)
{
    m_rebalance->setEnabled(enabled);
    m_rebalance->setToolTip(enabled ? tr("Set data parallel so that TP × PP × DP uses the cluster's GPUs, the other "
                                         "degrees kept.")
                                    : why);
}

void PlanEditor::setNote(const QString& text, bool error)
{
    m_note->setText(text);
    m_note->setStyleSheet(error ? QStringLiteral("color: #c62828;") : QStringLiteral("color: #546e7a;"));
}

QString PlanEditor::note() const { return m_note->text(); }

void PlanEditor::edited(const QString& field)
{
    m_lastField = field;
    refreshHints();
    Q_EMIT planEdited(m_plan);
}

void PlanEditor::refreshHints()
{
    const long long used = m_plan.gpus();
    const bool tiles = used == m_targetGpus;
    // A pool's plan tiles the pool, not the cluster: the pool is named, and the cluster's
    // count follows so the two pools' sum is visible.
    const QString target = m_poolName.isEmpty()
                               ? tr("the cluster's %1").arg(m_targetGpus)
                               : tr("the %1 pool's %2 (of the cluster's %3)").arg(m_poolName).arg(m_targetGpus).arg(m_clusterGpus);
    m_tiling->setText(tr("TP × PP × DP = %1 × %2 × %3 = %4 GPUs %5 %6")
                          .arg(m_plan.tensorParallel)
                          .arg(m_plan.pipelineParallel)
                          .arg(m_plan.dataParallel)
                          .arg(used)
                          .arg(tiles ? tr("=") : tr("≠"))
                          .arg(target));
    m_tiling->setStyleSheet(tiles ? QStringLiteral("color: #546e7a;")
                                  : QStringLiteral("color: #c62828; font-weight: 600;"));
    if (m_experts > 0) {
        // The one placement rule (model/plan_checks.h): EP divides experts + redundant.
        const long long slots = static_cast<long long>(m_experts) + m_plan.redundantExperts;
        const bool fits = expertSlotsFit(m_experts, m_plan.redundantExperts, m_plan.expertParallel);
        m_slots->setText(fits ? tr("%1 + %2 redundant = %3 expert slots, %4 per EP rank")
                                    .arg(m_experts)
                                    .arg(m_plan.redundantExperts)
                                    .arg(slots)
                                    .arg(slots / std::max(1, m_plan.expertParallel))
                              : tr("%1 + %2 redundant = %3 expert slots do not divide over EP %4")
                                    .arg(m_experts)
                                    .arg(m_plan.redundantExperts)
                                    .arg(slots)
                                    .arg(m_plan.expertParallel));
        m_slots->setStyleSheet(fits ? QStringLiteral("color: #546e7a;")
                                    : QStringLiteral("color: #c62828; font-weight: 600;"));
    }
    // Operators changed from the recipe in bold: what the what-if is about at a glance.
    for (int i = 0; i < kOpCount; ++i) {
        QFont f = m_ops[i]->font();
        f.setBold(m_plan.sharding[i] != m_reference.sharding[i]);
        m_ops[i]->setFont(f);
    }
}

} // namespace shardlab::ui
