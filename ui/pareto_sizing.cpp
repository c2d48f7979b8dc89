// The Pareto tab's sizing: the rate it proposes after a front, and its answer in the panel,
// the verdict first.
#include "pareto_view.h"

#include <QDoubleSpinBox>
#include <QLabel>

#include <algorithm>
#include <cmath>

#include "ui_format.h"

namespace shardlab::ui {

namespace {

// The sizing's answer, the verdict first: the count that holds the limits under Poisson
// arrivals at the rate when the steady-state answer does not (the panel may be short
// enough to scroll, and the first lines must carry the answer), then the steady-state
// count and its proof, then the queueing figures as the CLI's "Queueing" lines say them.
QString sizingText(const SizingResult& r, double rate, const ModelSpec& m)
{
    const SizingAtRate& a = r.atRate;
    const bool over = a.ran && !a.withinLimits;
    QString verdict;
    if (over && r.queueingGpus > 0)
        verdict = QObject::tr("<b>%1 GPUs</b> hold the limits at %2 requests/s under Poisson arrivals, with %3 (the "
                              "first count up whose optimum does; not proved minimal).<br>")
                      .arg(r.queueingGpus)
                      .arg(rate, 0, 'f', 2)
                      .arg(deploymentDegrees(m, r.queueingBest.deployment));
    else if (over)
        verdict = QObject::tr("<b>No count</b> up to %1 above %2 GPUs holds the limits at %3 requests/s under Poisson "
                              "arrivals.<br>")
                      .arg(kQueueingCounts)
                      .arg(r.gpus)
                      .arg(rate, 0, 'f', 2);
    QString t = verdict
        + QObject::tr("%1 GPUs serve %2 requests/s (%3 output tokens/s per GPU) in the steady state with %4.<br>")
              .arg(over ? QString::number(r.gpus) : QStringLiteral("<b>%1</b>").arg(r.gpus))
              .arg(r.best.requestsPerS, 0, 'f', 2)
              .arg(r.best.tokensPerSPerGpu, 0, 'f', 1)
              .arg(deploymentDegrees(m, r.best.deployment));
    t += r.smallerGpus > 0 ? QObject::tr("With %1 GPUs the best plan serves %2 requests/s (%3).")
                                 .arg(r.smallerGpus)
                                 .arg(r.smallerRequestsPerS, 0, 'f', 2)
                                 .arg(r.smallerProved ? QObject::tr("proved by exact") : QObject::tr("NOT proved"))
                           : QObject::tr("It is one whole node, the smallest count searched: part of a node is not "
                                         "(<tt>shardlab-cli size --any-count</tt> searches it).");
    if (!a.ran)
        return t + QObject::tr("<br>Queueing not run: %1").arg(QString::fromStdString(a.error).toHtmlEscaped());
    const LoadFigures& f = a.figures;
    return t
        + QObject::tr("<br>Under Poisson arrivals at that rate on %1 GPUs: p90 TTFT %2 ms, p90 TPOT %3 ms%4 — %5.")
              .arg(r.gpus)
              .arg(f.ttftP90Ms, 0, 'f', 1)
              .arg(f.tpotP90Ms, 0, 'f', 2)
              .arg(f.saturated ? QObject::tr(", SATURATED") : QString())
              .arg(a.withinLimits ? QObject::tr("within the limits") : QObject::tr("over the limits"));
}

} // namespace

// After a front: the scenario's own request rate when its load protocol names one (what a
// user sizing for their load expects), else half of what the best plan serves on the
// scenario's GPUs; a rate typed into the field is kept. m_rateSource says which, for the
// status line.
void ParetoView::proposeSizingRate()
{
    if (m_front.ok && !m_rateTouched && !m_front.points.empty()) {
        const LoadSpec& load = m_scenario.workload.load;
        if (load.protocol == LoadProtocol::RequestRate && std::isfinite(load.requestRate) && load.requestRate > 0) {
            // The scenario names its load: sizing says how few GPUs serve exactly that.
            // The field keeps two decimals: the status names the rate sizing runs at, and
            // the scenario's own when the field had to round it.
            m_rate->setValue(load.requestRate); // clamped to the field's range, then rounded
            const double used = m_rate->value();
            m_rateSource = std::fabs(used - load.requestRate) < 1e-9
                ? tr("at the scenario's %1 requests/s").arg(used, 0, 'g', 6)
                : tr("at %1 requests/s, the scenario's %2 %3")
                      .arg(used, 0, 'f', 2)
                      .arg(load.requestRate, 0, 'g', 6)
                      .arg(load.requestRate < m_rate->minimum()   ? tr("raised to the field's smallest rate")
                               : load.requestRate > m_rate->maximum() ? tr("lowered to the field's largest rate")
                                                                      : tr("rounded to the field's two decimals"));
        } else {
            // No rate named: half of what the best plan serves on the scenario's own
            // GPUs at its SLO; sizing then says how few GPUs that load needs.
            const double capacity = requestsPerS(
                m_scenario.workload, m_front.points.front().outputTokensPerSPerGpu * double(m_scenario.cluster.totalGpus()));
            const double half = std::floor(0.5 * capacity * 100) / 100;
            m_rate->setValue(half); // at least the field's smallest rate
            const QString best = tr("the best plan's %1 requests/s on the scenario's %2 GPUs")
                                     .arg(capacity, 0, 'f', 2)
                                     .arg(m_scenario.cluster.totalGpus());
            m_rateSource = half < m_rate->minimum()
                ? tr("at the field's smallest rate, %1 requests/s, above half %2").arg(m_rate->value(), 0, 'f', 2).arg(best)
                : tr("at half %1").arg(best);
        }
    } else if (m_rateTouched || m_rateSource.isEmpty()) {
        m_rateSource = tr("at the %1 requests/s in the field").arg(m_rate->value(), 0, 'f', 2);
    }
}

// The sizing is in: its curve in the scaling plot and its answer in the panel.
bool ParetoView::finishSizing()
{
    const bool ok = m_sizing.ok;
    showScaling(m_sizing.curve, tr("best rate per GPU count searched"));
    if (!ok) {
        setStatus(QString::fromStdString(m_sizing.message), true);
        m_sizingLabel->setText(QString::fromStdString(m_sizing.message));
    } else {
        setStatus(tr("Sizing done in %1 s.").arg(m_sizing.wallSeconds, 0, 'f', 2) + unplottedSizesText());
        m_sizingLabel->setText(sizingText(m_sizing, m_sizingRate, m_scenario.model));
    }
    return ok;
}

} // namespace shardlab::ui
