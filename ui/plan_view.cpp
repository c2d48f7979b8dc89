#include "plan_view.h"
#include "timeline_view.h"

#include "report/text_format.h"

#include <QComboBox>
#include <QDateTime>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

#include "breakdown_plot.h"
#include "file_export.h"
#include "memory_plot.h"
#include "plan_editor.h"
#include "plan_explain.h"
#include "plan_tables.h"
#include "report/load_text.h"
#include "report/result_json.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QString str(const std::string& s) { return QString::fromStdString(s); }

// Beside a steady state's VALID: the scenario's load run breaks a limit (evaluate's
// headline says the same).
QString underLoadBadge()
{
    return PlanView::tr("&nbsp;<span style='background:#ef6c00; color:white'>&nbsp;BREAKS A LIMIT UNDER LOAD&nbsp;</span>");
}

QLabel* richLabel(const QString& objectName)
{
    auto* l = new QLabel;
    l->setObjectName(objectName);
    l->setTextFormat(Qt::RichText);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    return l;
}

// `w` in a frameless scroll area that resizes it; `horizontal` false: no sideways scroll.
QScrollArea* scrolled(QWidget* w, bool horizontal)
{
    auto* area = new QScrollArea;
    area->setWidget(w);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    if (!horizontal)
        area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return area;
}

// "49.98 ms ≤ 50 ms" in the SLO's colour: green when met, red when violated.
QString versus(double value, double limit)
{
    if (!isPlottable(value))
        return QStringLiteral("<span style='color:#c62828'>unbounded &gt; %1 ms</span>")
            .arg(formatNumber(limit, limit < 10 ? 2 : 0));
    const bool ok = value <= limit;
    return QStringLiteral("<span style='color:%1'>%2 ms %3 %4 ms</span>")
        .arg(ok ? QStringLiteral("#2e7d32") : QStringLiteral("#c62828"), formatMs(value),
             ok ? QStringLiteral("≤") : QStringLiteral(">"), formatNumber(limit, limit < 10 ? 2 : 0));
}

const QString kReferenceName = QString::fromLatin1(kRecipeName);
} // namespace

PlanView::PlanView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);

    // Disaggregated scenarios: the deployment of both pools, and which pool is shown below.
    m_poolBar = new QWidget;
    auto* poolLayout = new QVBoxLayout(m_poolBar);
    poolLayout->setContentsMargins(0, 0, 0, 0);
    poolLayout->setSpacing(2);
    m_deploymentLabel = richLabel(QStringLiteral("deployment"));
    m_deploymentLabel->setStyleSheet(QStringLiteral("QLabel#deployment { background: #eef3f8; border: 1px solid #c5d3e0;"
                                                    " border-radius: 3px; padding: 6px; }"));
    poolLayout->addWidget(m_deploymentLabel);
    auto* selectRow = new QHBoxLayout;
    auto* selectLabel = new QLabel(tr("Pool shown below:"));
    m_poolSelect = new QComboBox;
    m_poolSelect->setObjectName(QStringLiteral("poolSelect"));
    m_poolSelect->addItem(tr("Prefill pool"), int(PoolRole::Prefill));
    m_poolSelect->addItem(tr("Decode pool"), int(PoolRole::Decode));
    m_poolSelect->setToolTip(tr("Each pool runs its own plan on its own GPUs; the breakdown, memory, collectives and "
                                "the what-if editor below are the selected pool's, on its pool of GPUs."));
    selectLabel->setBuddy(m_poolSelect);
    selectRow->addWidget(selectLabel);
    selectRow->addWidget(m_poolSelect);
    selectRow->addStretch(1);
    poolLayout->addLayout(selectRow);
    m_poolBar->hide();
    layout->addWidget(m_poolBar);
    connect(m_poolSelect, &QComboBox::activated, this,
            [this](int i) { selectPool(static_cast<PoolRole>(m_poolSelect->itemData(i).toInt())); });

    m_headline = richLabel(QStringLiteral("headline"));
    m_headline->setStyleSheet(QStringLiteral("QLabel#headline { background: #f5f7f9; border: 1px solid #d5dbe0;"
                                             " border-radius: 3px; padding: 6px; }"));
    layout->addWidget(m_headline);

    auto* split = new QSplitter(Qt::Horizontal);
    m_editor = new PlanEditor;
    QScrollArea* editorScroll = scrolled(m_editor, false);
    editorScroll->setMinimumWidth(m_editor->minimumSizeHint().width() + 24);
    split->addWidget(editorScroll);

    m_tabs = new QTabWidget;
    auto* timeTab = new QWidget;
    auto* timeLayout = new QVBoxLayout(timeTab);
    timeLayout->setContentsMargins(2, 2, 2, 2);
    m_breakdown = new BreakdownPlot;
    m_memory = new MemoryPlot;
    timeLayout->addWidget(m_breakdown, 1);
    timeLayout->addWidget(m_memory);
    // In a small window the plots keep a legible height and the tab scrolls.
    m_tabs->addTab(scrolled(timeTab, false), tr("Time and memory"));

    auto* compareSplit = new QSplitter(Qt::Vertical);
    m_explanation = richLabel(QStringLiteral("explanation"));
    m_explanation->setContentsMargins(6, 6, 6, 6);
    compareSplit->addWidget(scrolled(m_explanation, true));
    m_compare = new CompareTable;
    compareSplit->addWidget(m_compare);
    compareSplit->setStretchFactor(0, 1);
    compareSplit->setStretchFactor(1, 1);
    compareSplit->setSizes({300, 360}); // the explanation is the point of this tab: give it room
    m_tabs->addTab(compareSplit, tr("Compare with Megatron"));

    m_collectives = new CollectivesTable;
    m_tabs->addTab(m_collectives, tr("Collectives"));
    m_timeline = new TimelineView;
    // Scrolled, so its two lanes' height does not set the window's least height.
    QScrollArea* timelineScroll = scrolled(m_timeline, true);
    timelineScroll->setMinimumWidth(m_timeline->minimumSizeHint().width()); // its width as before
    m_tabs->addTab(timelineScroll, tr("Step timeline"));
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(m_editor, &PlanEditor::planEdited, this, &PlanView::onEditorEdited);
    connect(m_editor, &PlanEditor::resetRequested, this, &PlanView::resetToRecipe);
    connect(m_editor, &PlanEditor::rebalanceRequested, this, &PlanView::rebalanceDataParallel);
    connect(m_editor, &PlanEditor::fitBatchRequested, this, &PlanView::fitBatchToLimits);
    connect(m_editor, &PlanEditor::searchedPlanRequested, this, &PlanView::backToSearchedPlan);
    showNoScenario(tr("No scenario yet."));
}

PlanView::~PlanView() = default;

void PlanView::setEngineGap(const EngineGap* gap)
{
    m_engineGap.reset();
    if (gap && gap->applies)
        m_engineGap = *gap;
    if (m_sim)
        evaluateAndShow();
}

void PlanView::setScenario(const Scenario& s)
{
    m_engineGap.reset();
    m_scenario = m_full = s;
    m_dsim.reset();
    m_poolsReference = DisaggregatedRecipe{};
    m_poolBar->hide();
    const FieldErrors problems = validateScenario(s);
    if (problems.empty() && s.workload.serving == ServingMode::Disaggregated) {
        const std::vector<int> splits = disaggregatedSplits(s);
        if (splits.empty()) {
            showNoScenario(tr("Disaggregated serving needs a prefill and a decode pool: the cluster has one GPU."));
            return;
        }
        m_dsim = std::make_unique<DisaggregatedSimulator>(s);
        m_poolsReference = megatronDisaggregated(*m_dsim);
        m_poolBar->show();
        if (m_poolsReference.found) {
            showPools(tr("Megatron recipe"), m_poolsReference.plan);
            return;
        }
        // No valid pair at any split: the recipe's pools at the smallest prefill pool, shown
        // with the reasons they fail.
        const int gp = splits.front();
        const int gd = static_cast<int>(s.cluster.totalGpus() - gp);
        showPools(tr("Megatron recipe (no valid pair of pools at any split)"),
                  {megatronPlan(m_dsim->pool(PoolRole::Prefill, gp)).plan,
                   megatronPlan(m_dsim->pool(PoolRole::Decode, gd)).plan});
        return;
    }
    if (!problems.empty()) {
        // The simulator divides by heads, GPUs and bandwidths: never build it on bad input.
        m_sim.reset();
        m_reference = RecipePlan{};
        QStringList lines;
        for (const FieldError& e : problems)
            lines << plainNumbers(str(e.toString())).toHtmlEscaped();
        showNoScenario(tr("The scenario has problems; fix them in the scenario editor:<br>%1")
                           .arg(lines.join(QStringLiteral("<br>"))));
        return;
    }
    m_sim = std::make_unique<Simulator>(s);
    m_reference = megatronPlan(*m_sim);
    m_reference.result = m_sim->evaluate(m_reference.plan); // with the breakdown, whatever the recipe kept
    m_editor->setEnabled(true);
    m_editor->setContext(s, m_reference.plan);
    showPlan(tr("Megatron recipe"), m_reference.plan);
}

void PlanView::showPlan(const QString& title, const Plan& plan)
{
    if (m_dsim) {
        m_poolsTitle = title;
        (m_role == PoolRole::Prefill ? m_pools.prefill : m_pools.decode) = plan;
        applyPool();
        return;
    }
    m_plan = plan;
    m_title = m_baseTitle = title;
    if (!m_sim) {
        m_result = SimResult{};
        return;
    }
    m_editor->setPlan(plan);
    evaluateAndShow();
}

void PlanView::showPools(const QString& title, const DisaggregatedPlan& pools)
{
    if (!m_dsim)
        return;
    m_poolsTitle = title;
    m_pools = pools;
    applyPool();
}

void PlanView::showDeployment(const QString& title, const Deployment& d)
{
    if (d.pools && m_dsim)
        showPools(title, *d.pools);
    else
        showPlan(title, d.plan);
}

void PlanView::selectPool(PoolRole role)
{
    if (!m_dsim)
        return;
    // A what-if of the pool on show stays in m_pools: the title says so for both pools.
    if (m_title.endsWith(tr(" — what-if")) && !m_poolsTitle.endsWith(tr(" — what-if")))
        m_poolsTitle += tr(" — what-if");
    m_role = role;
    applyPool();
}

void PlanView::applyPool()
{
    m_poolSelect->setCurrentIndex(m_poolSelect->findData(int(m_role)));
    updateDeployment();
    const Plan& plan = m_role == PoolRole::Prefill ? m_pools.prefill : m_pools.decode;
    const long long gpus = plan.gpus();
    const long long total = m_full.cluster.totalGpus();
    m_scenario = poolScenario(m_full, m_role, static_cast<int>(std::clamp<long long>(gpus, 1, total)));
    if (gpus < 1 || gpus >= total || !validateScenario(m_scenario).empty()) {
        m_sim.reset();
        m_plan = plan;
        m_title = m_baseTitle = m_poolsTitle;
        showNoScenario(tr("The %1 pool's plan uses %2 GPUs: a pool needs at least one GPU and must leave one for the "
                          "other pool on this %3-GPU cluster.")
                           .arg(QString::fromUtf8(poolRoleName(m_role)))
                           .arg(gpus)
                           .arg(total));
        return;
    }
    m_sim = std::make_unique<Simulator>(m_scenario);
    m_reference = megatronPlan(*m_sim);
    m_reference.result = m_sim->evaluate(m_reference.plan);
    m_editor->setEnabled(true);
    m_editor->setContext(m_scenario, m_reference.plan);
    m_plan = plan;
    m_title = m_baseTitle = tr("%1 — %2 pool").arg(m_poolsTitle, QString::fromUtf8(poolRoleName(m_role)));
    m_editor->setPlan(plan);
    evaluateAndShow();
}

void PlanView::updateDeployment()
{
    m_deployment = m_dsim->evaluate(m_pools);
    const DeploymentOutcome o = deploymentOutcome(m_full, m_pools, m_deployment);
    const WorkloadSpec& w = m_full.workload;
    const long long gp = m_pools.prefill.gpus(), gd = m_pools.decode.gpus();
    m_poolSelect->setItemText(0, tr("Prefill pool · %n GPU(s)", nullptr, int(gp)));
    m_poolSelect->setItemText(1, tr("Decode pool · %n GPU(s)", nullptr, int(gd)));
    QString html = tr("<b>Disaggregated deployment</b> (%1): prefill pool %2 GPUs + decode pool %3 GPUs")
                       .arg(m_poolsTitle.toHtmlEscaped())
                       .arg(gp)
                       .arg(gd);
    if (o.costed) {
        html += o.valid ? tr("&nbsp;<span style='background:#2e7d32; color:white'>&nbsp;VALID&nbsp;</span>")
                        : tr("&nbsp;<span style='background:#c62828; color:white'>&nbsp;INVALID&nbsp;</span>");
        if (o.valid && o.breaksLimitsUnderLoad())
            html += underLoadBadge();
        html += tr("<br><b>%1</b> output tokens/s per GPU of both pools (%2 total) · TTFT %3 · TPOT %4 · limited by %5 "
                   "· KV links at %6 of capacity (%7 per request over %8)")
                    .arg(formatNumber(o.tokensPerSPerGpu, 1), formatNumber(o.outputTokensPerS, 0),
                         versus(o.ttftMs, w.ttftSloMs), versus(o.tpotMs, w.tpotSloMs),
                         o.limitedBy == DisaggLimit::Prefill  ? tr("the prefill pool")
                         : o.limitedBy == DisaggLimit::Decode ? tr("the decode pool")
                                                              : tr("the KV links"),
                         formatPercent(o.kvLinkLoad), formatBytes(o.kvBytesPerRequest),
                         w.kvTransfer == KvLink::NvLink ? tr("NVLink") : tr("the inter-node links"));
        // Where an output token's GPU time goes: each pool's GPUs, busy or waiting for the other.
        QStringList split;
        for (const DeploymentAccount::Pool& p : deploymentAccount(o).pools)
            split << tr("%1 %2 (busy %3)").arg(QString::fromStdString(p.name),
                                               QString::fromStdString(perTokenText(p.gpuUsPerToken)),
                                               formatPercent(p.busyShare));
        if (!split.isEmpty())
            html += tr("<br>An output token costs %1 GPU·µs: %2")
                        .arg(QString::fromStdString(perTokenText(o.gpuUsPerToken())), split.join(QStringLiteral(" + ")));
        if (m_poolsReference.found && m_poolsReference.result.tokensPerSPerGpu > 0 && o.valid)
            html += tr("<br><span style='color:#455a64'>%1× the Megatron recipe's pools (%2 tok/s/GPU at %3 + %4 "
                       "GPUs)</span>")
                        .arg(formatNumber(o.tokensPerSPerGpu / m_poolsReference.result.tokensPerSPerGpu, 3),
                             formatNumber(m_poolsReference.result.tokensPerSPerGpu, 1))
                        .arg(m_poolsReference.plan.prefill.gpus())
                        .arg(m_poolsReference.plan.decode.gpus());
    }
    if (o.underLoad) // the scenario's load protocol run on both pools
        html += QStringLiteral("<br>") + QString::fromStdString(summarizeLoad(o)).toHtmlEscaped();
    if (!o.reasons.empty()) {
        html += QStringLiteral("<ul style='margin-top:2px; margin-bottom:0; -qt-list-indent:1; color:#b71c1c'>");
        for (const std::string& r : o.reasons)
            html += QStringLiteral("<li>%1</li>").arg(plainNumbers(str(r)).toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    m_deploymentLabel->setText(html);
}

QString PlanView::deploymentText() const
{
    if (!m_dsim)
        return {};
    QTextDocument doc;
    doc.setHtml(m_deploymentLabel->text());
    return doc.toPlainText();
}

void PlanView::showNoScenario(const QString& why)
{
    m_result = SimResult{};
    m_sentences.clear();
    m_comparison = PlanComparison{};
    m_editor->setEnabled(false);
    m_headline->setText(why);
    m_breakdown->showMessage(tr("No scenario to evaluate."));
    m_memory->showMessage(tr("No scenario to evaluate."));
    m_explanation->setText(QString());
    m_compare->showMessage(tr("No scenario to evaluate."));
    m_collectives->showMessage(tr("No scenario to evaluate."));
    m_timeline->showMessage(tr("No scenario to evaluate."));
    Q_EMIT currentPlanChanged();
}

QStringList PlanView::reasonsFor(const Plan& p, const SimResult& r) const
{
    QStringList out;
    const FieldErrors shape = validatePlanShape(p);
    for (const FieldError& e : shape)
        out << str(e.toString());
    for (const std::string& line : violationReasons(m_scenario, p, r)) {
        QString l = str(line);
        // Shape errors already said it more precisely than the micro-batch check does.
        if (!shape.empty() && l.contains(QLatin1String("micro_batches")))
            continue;
        // Absurd inputs give figures the form cannot show: +infinity where the simulator
        // overflowed (SimResult::unbounded), or finite but astronomical ones it does not
        // flag (a link of 1e-300 GB/s: a TTFT near 1e189 ms, which the core prints digit
        // by digit). isPlottable catches both: say what they mean instead.
        if (l.startsWith(QLatin1String("TTFT SLO")) && !isPlottable(r.ttftMs))
            l = tr("TTFT SLO: unbounded (a bandwidth or peak is effectively zero), the limit is %1 ms")
                    .arg(formatNumber(m_scenario.workload.ttftSloMs, 0));
        if (l.startsWith(QLatin1String("TPOT SLO")) && !isPlottable(r.tpotMs))
            l = tr("TPOT SLO: unbounded (a bandwidth or peak is effectively zero), the limit is %1 ms")
                    .arg(formatNumber(m_scenario.workload.tpotSloMs, 2));
        if (l.startsWith(QLatin1String("memory")) && !isPlottable(r.memory.totalGb))
            l = tr("memory: the need per GPU is unbounded");
        out << l;
    }
    return out;
}

void PlanView::evaluateAndShow()
{
    refreshWhatIfActions();
    m_sim->evaluate(m_plan, m_result, true);
    const bool structural = m_result.structureChecks != 0;
    const QStringList reasons = reasonsFor(m_plan, m_result);
    const SimResult& ref = m_reference.result;
    const bool refUsable = ref.structureChecks == 0;

    PlanComparison cmp;
    if (!structural && refUsable)
        cmp = comparePlans(m_scenario, m_plan, m_result, m_reference.plan, ref, QString::fromLatin1(kThisPlanName), kReferenceName);
    m_comparison = cmp;
    m_sentences = comparisonParagraphs(cmp);
    // Under the scenario's load protocol this plan also runs request by request.
    m_loadLines.clear();
    m_loadSummary.clear();
    m_loadBreaks = false;
    if (!m_dsim && !structural && !m_scenario.workload.load.steady()) {
        const DeploymentOutcome o = deploymentOutcome(m_scenario, m_plan, m_result);
        for (const std::string& line : describeLoad(o))
            m_loadLines << QString::fromStdString(line).toHtmlEscaped();
        m_loadSummary = QString::fromStdString(summarizeLoad(o));
        m_loadBreaks = o.breaksLimitsUnderLoad();
    }
    updateHeadline(reasons, QString::fromStdString(cmp.headline).toHtmlEscaped());

    if (structural) {
        const QString why =
            tr("Not evaluated: the degrees do not fit the cluster or the model (see the reasons above).");
        m_breakdown->showMessage(why);
        m_memory->showMessage(why);
        m_collectives->showMessage(why);
        m_timeline->showMessage(why);
        m_compare->showMessage(why);
        m_explanation->setText(
            tr("<p>The simulator does not cost a plan whose degrees do not tile the cluster or divide "
               "the model: there is nothing to compare. Fix the degrees in the what-if editor or "
               "reset to Megatron.</p>"));
        Q_EMIT currentPlanChanged();
        return;
    }
    m_breakdown->setPlan(m_scenario, m_plan, m_result, refUsable && m_plan != m_reference.plan ? &ref : nullptr,
                         kReferenceName, &m_reference.plan);
    m_memory->setMemory(m_result.memory, refUsable ? &ref.memory : nullptr, kReferenceName);
    m_collectives->setPlan(m_scenario, m_plan, m_result);
    m_timeline->setTimeline(stepTimeline(poolOutcome(m_scenario, m_plan, m_result)));
    if (cmp.comparable)
        m_compare->setComparison(m_plan, m_reference.plan, cmp, kReferenceName);
    else
        m_compare->showMessage(tr("The Megatron recipe has no evaluable plan for this scenario."));

    QString html = QStringLiteral("<p style='color:#455a64'>%1</p>")
                       .arg(tr("Megatron recipe: %1").arg(str(m_reference.explanation).toHtmlEscaped()));
    if (!m_reference.found)
        html += QStringLiteral("<p style='color:#c62828'>%1</p>")
                    .arg(tr("The recipe finds no valid plan here; the comparison uses its smallest configuration."));
    for (const QString& s : m_sentences)
        html += QStringLiteral("<p>%1</p>").arg(s);
    for (const QString& s : engineParagraphs(m_scenario, m_plan, m_engineGap ? &*m_engineGap : nullptr))
        html += QStringLiteral("<p>%1</p>").arg(s);
    for (const QString& s : spaceParagraphs(m_scenario, m_plan))
        html += QStringLiteral("<p>%1</p>").arg(s);
    if (!m_loadLines.isEmpty()) // the scenario's load protocol: the CLI's lines
        html = QStringLiteral("<p>%1</p>").arg(m_loadLines.join(QStringLiteral("<br>"))) + html;
    m_explanation->setText(html);
    Q_EMIT currentPlanChanged();
}

void PlanView::updateHeadline(const QStringList& reasons, const QString& comparison)
{
    const SimResult& r = m_result;
    const Plan& p = m_plan;
    const WorkloadSpec& w = m_scenario.workload;
    const bool valid = r.valid && reasons.isEmpty();
    QString html = QStringLiteral("<b style='font-size:large'>%1</b>&nbsp;&nbsp;").arg(m_title.toHtmlEscaped());
    html += valid ? tr("<span style='background:#2e7d32; color:white'>&nbsp;VALID&nbsp;</span>")
                  : tr("<span style='background:#c62828; color:white'>&nbsp;INVALID&nbsp;</span>");
    if (valid && m_loadBreaks)
        html += underLoadBadge();
    if (!valid && r.structureChecks == 0) // costed: the figures say how far it is from running, not what it serves
        html += tr("&nbsp;<i>the figures are what it would give if it ran</i>");

    const int etp = m_scenario.model.isMoe() ? expertTensorParallel(p) : 0;
    QString degrees = tr("TP %1 · EP %2 · expert-TP %3 · PP %4 · DP %5 · batch %6 · %7 micro-batch(es)")
                          .arg(p.tensorParallel)
                          .arg(p.expertParallel)
                          .arg(etp > 0 ? QString::number(etp) : QStringLiteral("—"))
                          .arg(p.pipelineParallel)
                          .arg(p.dataParallel)
                          .arg(p.batch)
                          .arg(p.microBatches);
    if (m_scenario.model.isMoe()) {
        // Redundant experts and two-batch overlap (docs/simulator.md §2-§3).
        degrees += tr(" · %1 redundant experts (%2 slots per EP rank)")
                       .arg(p.redundantExperts)
                       .arg(formatNumber(double(m_scenario.model.moe.experts + p.redundantExperts)
                                             / std::max(1, p.expertParallel),
                                         2));
        degrees += p.twoBatchOverlap ? tr(" · two-batch overlap") : tr(" · no batch overlap");
        if (p.instances > 1)
            degrees += tr(" · %1 engine instances of %2 GPUs per stage").arg(p.instances).arg(expertGroupRanks(p));
        if (r.structureChecks == 0 && p.expertParallel > 1)
            degrees += tr(" · busiest EP rank %1× the mean load").arg(formatNumber(r.expertLoadImbalance, 3));
        if (r.structureChecks == 0 && p.twoBatchOverlap)
            degrees += tr(" · overlap hides %1 ms of a step").arg(formatMs(r.overlapHiddenUs / 1000));
    }
    if (r.structureChecks == 0 && m_dsim && m_role == PoolRole::Prefill) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += tr("<br><b>%1</b> prompts/s of this pool (%2 output tokens/s once decoded) · TTFT %3 (a pass %4 ms + KV "
                   "transfer %5 ms + the wait for a pass) · memory %6 / %7 GB")
                    .arg(formatNumber(r.outputTokensPerS / std::max(1, m_full.workload.outputTokens), 2),
                         formatNumber(r.outputTokensPerS, 0), versus(r.ttftMs, m_full.workload.ttftSloMs),
                         formatMs(r.passMs), formatMs(r.kvTransferMs), formatNumber(r.memory.totalGb, 1),
                         formatCapacityGb(r.memory.capacityGb));
    } else if (r.structureChecks == 0 && m_dsim) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += tr("<br><b>%1</b> output tokens/s per GPU of this pool (%2 total, decode steps only: prompts arrive "
                   "prefilled) · TPOT %3 · memory %4 / %5 GB")
                    .arg(formatNumber(r.tokensPerSPerGpu, 1), formatNumber(r.outputTokensPerS, 0),
                         versus(r.tpotMs, m_full.workload.tpotSloMs), formatNumber(r.memory.totalGb, 1),
                         formatCapacityGb(r.memory.capacityGb));
    } else if (r.structureChecks == 0) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += QStringLiteral("<br><b>%1</b> output tokens/s per GPU (%2 total, %7) · TPOT %3 · TTFT %4 · memory %5 / %6 GB")
                    .arg(formatNumber(r.tokensPerSPerGpu, 1), formatNumber(r.outputTokensPerS, 0),
                         versus(r.tpotMs, w.tpotSloMs), versus(r.ttftMs, w.ttftSloMs),
                         formatNumber(r.memory.totalGb, 1), formatCapacityGb(r.memory.capacityGb),
                         servingDescription(r.serving));
    }
    if (r.structureChecks == 0) {
        const CostAccount account = costAccount(poolOutcome(m_scenario, p, r));
        if (account.costed)
            html += tr(" · %1 costs %2 GPU·µs")
                        .arg(QString::fromStdString(withArticle(account.unit)),
                             QString::fromStdString(perTokenText(account.gpuUsPerToken)));
    }
    if (!m_loadSummary.isEmpty())
        html += QStringLiteral("<br>") + m_loadSummary.toHtmlEscaped();
    html += QStringLiteral("<br>") + degrees;
    if (!comparison.isEmpty())
        html += QStringLiteral("<br><span style='color:#455a64'>%1</span>")
                    .arg(m_dsim ? tr("vs the Megatron recipe on this pool: %1").arg(comparison)
                                : tr("vs Megatron: %1").arg(comparison));
    if (!reasons.isEmpty()) {
        html += QStringLiteral("<ul style='margin-top:2px; margin-bottom:0; -qt-list-indent:1; color:#b71c1c'>");
        for (const QString& reason : reasons)
            html += QStringLiteral("<li>%1</li>").arg(reason.toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    m_headline->setText(html);
}

QString PlanView::explanationText() const
{
    QTextDocument doc;
    doc.setHtml(m_explanation->text());
    return doc.toPlainText();
}

QString PlanView::headlineText() const
{
    QTextDocument doc;
    doc.setHtml(m_headline->text());
    return doc.toPlainText();
}

bool PlanView::exportPlots(const QString& path, QString* error)
{
    return m_breakdown->save(path, error, exportCaption());
}

bool PlanView::exportMemoryPlot(const QString& path, QString* error)
{
    return savePlot(m_memory->plot(), path, std::max(900, m_memory->width()), 380, 2.0, error,
                    tr("Memory per GPU: ") + exportCaption());
}

bool PlanView::exportComparisonTable(const QString& path, QString* error)
{
    return saveTable(m_compare, path, tr("Per operator against the Megatron recipe: ") + exportCaption(), error);
}

QString PlanView::exportCaption() const
{
    const Plan& p = m_plan;
    const QString caption = tr("%1, %2\n%3 · plan %4")
                                .arg(m_title, QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                                     scenarioCaption(m_scenario), planDegrees(p));
    return caption;
}

} // namespace shardlab::ui
