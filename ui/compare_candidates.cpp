#include "compare_candidates.h"

#include <QFileInfo>

#include <algorithm>

#include "file_export.h"
#include "io/input_file.h"
#include "io/scenario_json.h"
#include "plan_view.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "ui_format.h"

namespace shardlab::ui {

CompareCandidates::CompareCandidates(CompareView* compare, PlanView* planView, SearchPanel* panel,
                                     ScenarioEditor* editor, QObject* parent)
    : QObject(parent), m_compare(compare), m_planView(planView), m_panel(panel), m_editor(editor)
{
}

void CompareCandidates::refresh(const JobResult* last)
{
    std::vector<NamedPlan> c;
    // Disaggregated: plans of the pool on show, compared on that pool's GPUs.
    const bool pools = m_planView->isDisaggregated();
    const bool prefillShown = pools && m_planView->currentPool() == PoolRole::Prefill;
    if (pools) // the pool on show may have changed; one-pool scenarios are set with the references
        m_compare->setScenario(m_planView->currentScenario());
    const RecipePlan& rp = m_planView->reference();
    if (rp.found || rp.result.structureChecks == 0)
        c.push_back({pools ? tr("Megatron recipe (this pool)") : tr("Megatron recipe"), rp.plan, {}});
    if (last && last->outcome.found && !pools)
        c.push_back({tr("Best plan (%1)").arg(QString::fromStdString(last->outcome.algorithm)), last->outcome.best, {},
                     last->outcome.bestTokensPerSPerGpu()});
    for (int i = 0; i < m_panel->runCount(); ++i) {
        const SearchPanel::RunInfo run = m_panel->runInfo(i);
        if (run.found && pools != run.prefill.has_value())
            continue; // one-pool plans beside pool plans would be compared on the wrong GPUs
        if (run.found)
            // A pool's plan is compared on that pool's GPUs: its figures are the pool's, not
            // the deployment's the run found (75 tok/s/GPU over both pools; 150 on the decode
            // pool's), so its name says which.
            c.push_back({pools ? tr("Best of %1 [%2] (this pool)").arg(run.name, run.variant)
                               : tr("Best of %1 [%2]").arg(run.name, run.variant),
                         prefillShown ? *run.prefill : run.best,
                         scenarioDifferences(run.scenario, m_editor->scenario()).empty()
                             ? QString()
                             : tr("found on variant %1 (%2)").arg(run.variant, run.variantNote),
                         run.bestValue});
    }
    const auto& elites = m_panel->elites();
    for (size_t i = 0; i < elites.size() && i < 20; ++i)
        c.push_back({tr("Elite #%1 (%2 tok/s/GPU)").arg(i + 1).arg(elites[i].tokensPerSPerGpu, 0, 'f', 1), elites[i].plan, {}});
    const QString shown = m_planView->currentTitle();
    if (!shown.isEmpty()) {
        bool known = false;
        for (const NamedPlan& p : c)
            known = known || p.plan == m_planView->currentPlan();
        if (!known)
            c.push_back({tr("Plan view: %1").arg(shown), m_planView->currentPlan(), {}});
    }
    for (const NamedPlan& p : m_kept)
        c.push_back(p);
    m_compare->setCandidates(c);
}

QString CompareCandidates::freeName(const QString& wanted, const std::function<QString(int)>& numbered) const
{
    QString name = wanted;
    for (int n = 2; std::any_of(m_kept.begin(), m_kept.end(), [&](const NamedPlan& p) { return p.name == name; }); ++n)
        name = numbered(n);
    return name;
}

QString CompareCandidates::addPlanFile(const QString& path, QString* error)
{
    auto doc = loadPlanDocument(localPath(path));
    if (!doc.ok()) {
        QStringList lines;
        for (const FieldError& e : doc.errors)
            lines << plainNumbers(QString::fromStdString(e.toString()));
        *error = lines.join(QLatin1Char('\n'));
        return {};
    }
    const Scenario s = m_editor->scenario();
    const FieldErrors fit = checkPlanAgainstScenario(doc.value.plan, s, inputLabel(localPath(path)));
    if (!fit.empty()) {
        QStringList lines;
        for (const FieldError& e : fit)
            lines << plainNumbers(QString::fromStdString(e.toString()));
        *error = tr("The plan does not fit the current scenario: %1").arg(lines.join(QStringLiteral("; ")));
        return {};
    }
    QString note = tr("from %1").arg(path);
    if (doc.value.scenario) {
        const auto diff = scenarioDifferences(*doc.value.scenario, s);
        if (!diff.empty())
            note += tr("; made for scenario %1, which differs from the current one (%2): evaluated on the current one")
                        .arg(QString::fromStdString(doc.value.scenario->name))
                        .arg(QString::fromStdString(diff.front()) + (diff.size() > 1 ? tr(" and %n more", nullptr, int(diff.size() - 1)) : QString()));
    }
    const QString file = QFileInfo(path).fileName();
    const QString name = freeName(file, [&](int n) { return QStringLiteral("%1 (%2)").arg(file).arg(n); });
    m_kept.push_back({name, doc.value.plan, note});
    return name;
}

QString CompareCandidates::keepWhatIf(const QString& note)
{
    // A what-if is work: kept as a plan to compare instead of dropped with the view. Two
    // pools' what-if (the deployment's title says so, whichever pool is on show) keeps both.
    if (!m_planView->showsWhatIf())
        return {};
    const QString mark = tr(" — what-if");
    const bool pools = m_planView->isDisaggregated();
    QString title = pools ? m_planView->currentPoolsTitle() : m_planView->currentTitle();
    if (title.endsWith(mark))
        title.chop(mark.size());
    const QString name = freeName(tr("What-if kept (%1)").arg(title), [](int n) { return tr("What-if kept %1").arg(n); });
    if (!pools) {
        m_kept.push_back({name, m_planView->currentPlan(), note});
        return name;
    }
    const DisaggregatedPlan both = m_planView->currentPools();
    m_kept.push_back({name + tr(": prefill pool"), both.prefill, note});
    m_kept.push_back({name + tr(": decode pool"), both.decode, note});
    return name;
}

} // namespace shardlab::ui
