// The Plan tab's headlines: the deployment's (two pools) and the current plan's or pool's,
// with the validity badge, the figures against the limits, and the plan's degrees.
#include "plan_view.h"

#include <QComboBox>
#include <QLabel>

#include <algorithm>
#include <cmath>

#include "report/cost_account.h"
#include "report/load_text.h"
#include "report/text_format.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
// Beside a steady state's VALID: the scenario's load run breaks a limit (evaluate's
// headline says the same).
QString underLoadBadge()
{
    return PlanView::tr("&nbsp;<span style='background:#ef6c00; color:white'>&nbsp;BREAKS A LIMIT UNDER LOAD&nbsp;</span>");
}

// Beside an INVALID badge when the plan is still costed: its figures say how far it is from
// running (what-if), not what it serves.
QString whatIfNote() { return PlanView::tr("&nbsp;<i>the figures are what it would give if it ran</i>"); }

// A limit as the user gave it: the fewest decimals (up to 3) that show it exactly, so that
// "12.60 ms > 12.5 ms" never reads "12.60 ms > 13 ms".
QString limitText(double limit)
{
    int decimals = 0;
    for (double scaled = limit; decimals < 3 && std::fabs(scaled - std::round(scaled)) > 1e-9 * std::max(1.0, scaled);
         scaled *= 10)
        ++decimals;
    return formatNumber(limit, decimals);
}

// "49.98 ms ≤ 50 ms" in the SLO's colour: green when met, red when the simulator's verdict
// says the limit is broken.
QString versus(double value, double limit, bool broken)
{
    if (!isPlottable(value))
        return QStringLiteral("<span style='color:#c62828'>unbounded &gt; %1 ms</span>").arg(limitText(limit));
    const bool ok = !broken;
    return QStringLiteral("<span style='color:%1'>%2 ms %3 %4 ms</span>")
        .arg(ok ? QStringLiteral("#2e7d32") : QStringLiteral("#c62828"), formatMs(value),
             ok ? QStringLiteral("≤") : QStringLiteral(">"), limitText(limit));
}

} // namespace

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
        if (!o.valid)
            html += whatIfNote();
        html += tr("<br><b>%1</b> output tokens/s per GPU of both pools (%2 total) · TTFT %3 · TPOT %4 · limited by %5 "
                   "· KV links at %6 of capacity (%7 per request over %8)")
                    .arg(formatNumber(o.tokensPerSPerGpu, 1), formatNumber(o.outputTokensPerS, 0),
                         // (the pools' own figures: an overflowed one is +infinity, the
                         // outcome's headline 0)
                         versus(o.pools.front().result.ttftMs, w.ttftSloMs, o.breaks(Violation::TtftSlo)),
                         versus(o.pools.back().result.tpotMs, w.tpotSloMs, o.breaks(Violation::TpotSlo)),
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
            html += QStringLiteral("<li>%1</li>").arg(plainNumbers(QString::fromStdString(r)).toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    m_deploymentLabel->setText(html);
}

// The plan's degrees in the CLI's words; for MoE also the expert slots per EP rank and (when costed) the busiest EP rank's load and what the
// overlap hides.
QString PlanView::degreesLine() const
{
    const SimResult& r = m_result;
    const Plan& p = m_plan;
    QString degrees = planDegrees(m_scenario, p);
    if (!m_scenario.model.isMoe())
        return degrees;
    degrees += tr(" · %1 expert slots per EP rank")
                   .arg(formatNumber(double(m_scenario.model.moe.experts + p.redundantExperts)
                                         / std::max(1, p.expertParallel),
                                     2));
    if (r.structureChecks == 0 && p.expertParallel > 1)
        degrees += tr(" · busiest EP rank %1× the mean load").arg(formatNumber(r.expertLoadImbalance, 3));
    if (r.structureChecks == 0 && p.twoBatchOverlap)
        degrees += tr(" · overlap hides %1 ms of a step").arg(formatMs(r.overlapHiddenUs / 1000));
    return degrees;
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
        html += whatIfNote();

    QString degrees = degreesLine();
    if (r.structureChecks == 0 && m_dsim && m_role == PoolRole::Prefill) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += tr("<br><b>%1</b> prompts/s of this pool (%2 output tokens/s once decoded) · TTFT %3 (a pass %4 ms + KV "
                   "transfer %5 ms + the wait for a pass) · memory %6 / %7 GB")
                    .arg(formatNumber(requestsPerS(m_full.workload, r.outputTokensPerS), 2),
                         formatNumber(r.outputTokensPerS, 0),
                         versus(r.ttftMs, m_full.workload.ttftSloMs, r.violates(Violation::TtftSlo)),
                         formatMs(r.passMs), formatMs(r.kvTransferMs), formatNumber(r.memory.totalGb, 1),
                         formatCapacityGb(r.memory.capacityGb));
    } else if (r.structureChecks == 0 && m_dsim) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += tr("<br><b>%1</b> output tokens/s per GPU of this pool (%2 total, decode steps only: prompts arrive "
                   "prefilled) · TPOT %3 · memory %4 / %5 GB")
                    .arg(formatNumber(r.tokensPerSPerGpu, 1), formatNumber(r.outputTokensPerS, 0),
                         versus(r.tpotMs, m_full.workload.tpotSloMs, r.violates(Violation::TpotSlo)),
                         formatNumber(r.memory.totalGb, 1),
                         formatCapacityGb(r.memory.capacityGb));
    } else if (r.structureChecks == 0) {
        degrees += tr(" · bubble %1").arg(formatPercent(r.pipelineBubble));
        html += QStringLiteral("<br><b>%1</b> output tokens/s per GPU (%2 total, %7) · TPOT %3 · TTFT %4 · memory %5 / %6 GB")
                    .arg(formatNumber(r.tokensPerSPerGpu, 1), formatNumber(r.outputTokensPerS, 0),
                         versus(r.tpotMs, w.tpotSloMs, r.violates(Violation::TpotSlo)),
                         versus(r.ttftMs, w.ttftSloMs, r.violates(Violation::TtftSlo)),
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

} // namespace shardlab::ui
