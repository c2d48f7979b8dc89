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
            presentPools(tr("Megatron recipe"), m_poolsReference.plan);
            return;
        }
        // No valid pair at any split: the recipe's pools at the smallest prefill pool, shown
        // with the reasons they fail.
        const int gp = splits.front();
        const int gd = static_cast<int>(s.cluster.totalGpus() - gp);
        presentPools(tr("Megatron recipe (no valid pair of pools at any split)"),
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
    presentPlan(tr("Megatron recipe"), m_reference.plan);
}

bool PlanView::showsWhatIf() const
{
    // A pool on show after another pool's edit: "X — what-if — decode pool", and the
    // deployment's title carries the mark (selectPool).
    const QString mark = tr(" — what-if");
    return m_title.endsWith(mark) || (isDisaggregated() && (m_poolsTitle.endsWith(mark) || m_title.contains(mark)));
}

void PlanView::announceWhatIfReplaced(const QString& title)
{
    if (showsWhatIf())
        Q_EMIT whatIfAboutToBeReplaced(title);
}

void PlanView::showPlan(const QString& title, const Plan& plan)
{
    announceWhatIfReplaced(title);
    presentPlan(title, plan);
}

void PlanView::showPools(const QString& title, const DisaggregatedPlan& pools)
{
    if (!m_dsim)
        return;
    announceWhatIfReplaced(title);
    presentPools(title, pools);
}

void PlanView::presentPlan(const QString& title, const Plan& plan)
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

void PlanView::presentPools(const QString& title, const DisaggregatedPlan& pools)
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
    m_editor->setContext(m_scenario, m_reference.plan, QString::fromUtf8(poolRoleName(m_role)), total);
    m_plan = plan;
    m_title = m_baseTitle = tr("%1 — %2 pool").arg(m_poolsTitle, QString::fromUtf8(poolRoleName(m_role)));
    m_editor->setPlan(plan);
    evaluateAndShow();
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
    // A shape error on micro_batches already said it more precisely than the micro-batch
    // check does.
    SimResult checked = r;
    if (std::any_of(shape.begin(), shape.end(), [](const FieldError& e) { return e.where == "micro_batches"; }))
        checked.structureChecks &= ~(1u << static_cast<int>(PlanCheck::MicroBatches));
    for (const std::string& line : violationReasons(m_scenario, p, checked))
        out << str(line);
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
    m_memory->setMemory(m_result, refUsable ? &ref : nullptr, kReferenceName);
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
                                     scenarioCaption(m_scenario), planDegrees(m_scenario, p));
    return caption;
}

} // namespace shardlab::ui
