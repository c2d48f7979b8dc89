// The main window's searches: starting and stopping them, the exact certificate, and what
// the worker reports (progress, the result, the engine gap, a failure) shown in the views.
#include "main_window.h"

#include <QAction>
#include <QLabel>

#include "elided_label.h"
#include "model/engine_caps.h"
#include "plan_view.h"
#include "runner/run_search.h"
#include "scenario_editor.h"
#include "search_panel.h"
#include "search_toolbar.h"
#include "ui_format.h"

namespace shardlab::ui {

bool MainWindow::startSearch()
{
    if (!m_editor->isRunnable() || m_infeasible) {
        refreshStartState();
        if (m_infeasible) {
            showMessage(tr("No plan can meet this scenario's limits: %1.").arg(plainNumbers(m_infeasibleWhy)), true);
            m_cannotRunShown = true;
        }
        return false;
    }
    const SearchOptions o = m_toolbar->options();
    const FieldErrors bad = validateSearchOptions(o);
    if (!bad.empty()) {
        showMessage(QString::fromStdString(bad.front().toString()), true);
        return false;
    }
    if (o.underLoad)
        if (const std::string why = underLoadError(m_editor->scenario(), o); !why.empty()) {
            showMessage(tr("Under load: %1.").arg(QString::fromStdString(why)), true);
            return false;
        }
    m_certifying = false;
    m_haveResult = false;
    QString note;
    const QString variant = m_document->variantFor(m_editor->scenario(), &note);
    // An algorithm that draws nothing (exact, the recipe) has no seed to name.
    SearchAlgorithmInfo info;
    const bool seeded = findSearchAlgorithm(m_toolbar->algorithm().toStdString(), info) && info.stochastic;
    QString label = seeded ? tr("%1 seed %2").arg(m_toolbar->algorithm()).arg(m_toolbar->seed())
                           : m_toolbar->algorithm();
    // A run ranked by the load run's figures says so: its values are not the steady state's.
    if (o.underLoad)
        label += tr(" · under load (concurrency %1)").arg(m_editor->scenario().workload.load.concurrency);
    m_panel->beginRun(label, variant,
                      note.isEmpty() ? m_document->variantNote(variant) : note);
    m_toolbar->showStarted();
    m_controller.start(m_editor->scenario(), o);
    showMessage(tr("Searching with %1…").arg(m_toolbar->algorithm()), false);
    return true;
}

void MainWindow::certifyOptimum()
{
    if (!m_editor->isRunnable())
        return;
    SearchOptions o;
    o.algorithm = "exact";
    m_certifying = true;
    QString note;
    const QString variant = m_document->variantFor(m_editor->scenario(), &note);
    m_panel->beginRun(tr("exact"), variant, note.isEmpty() ? m_document->variantNote(variant) : note);
    m_toolbar->showStarted();
    m_controller.start(m_editor->scenario(), o);
    showMessage(tr("Certifying the optimum with the exact search…"), false);
}

void MainWindow::stopSearch()
{
    m_controller.stop();
}

bool MainWindow::isSearching() const { return m_controller.isRunning(); }
double MainWindow::longestStallMs() const { return m_controller.longestStallMs(); }

void MainWindow::onProgress(const LiveProgress& p)
{
    m_panel->addProgress(p);
    m_session->changed(); // the running run's curve so far
    m_toolbar->showProgress(p.core.fraction);
    m_statusLabel->setText(tr("%1 simulator calls · %2 s · best %3 tok/s/GPU")
                               .arg(p.core.calls)
                               .arg(p.core.elapsedS, 0, 'f', 1)
                               .arg(p.core.haveBest ? QString::number(p.core.bestTokensPerSPerGpu, 'f', 1)
                                                    : QStringLiteral("—")));
}

void MainWindow::onFinished(const JobResult& r)
{
    m_lastResult = r;
    m_haveResult = true;
    m_lastGap = EngineGap{}; // the new result's both answers follow (onEngineGap)
    m_panel->finishRun(r);
    m_toolbar->showFinished(r.outcome);
    const SearchOutcome& o = r.outcome;
    if (o.found) {
        const QString title = tr("Best plan (%1)").arg(QString::fromStdString(o.algorithm));
        const Deployment best = o.deployment.deployment();
        m_planView->showDeployment(title, best);
        QString text = tr("%1 found %2 tok/s/GPU in %3 simulator calls and %4 s")
                           .arg(QString::fromStdString(o.algorithm))
                           .arg(o.bestTokensPerSPerGpu(), 0, 'f', 1)
                           .arg(o.calls)
                           .arg(o.wallSeconds, 0, 'f', 2);
        if (best.pools) {
            text += tr(" with a prefill pool of %1 GPUs and a decode pool of %2")
                        .arg(best.pools->prefill.gpus())
                        .arg(best.pools->decode.gpus());
            if (!o.provedOptimal) // what was searched; a proof says it below
                text += QStringLiteral(" (%1)").arg(QString::fromStdString(o.message));
        }
        if (m_megatronValue > 0 && o.algorithm != "megatron") // the recipe against itself says nothing
            text += tr(" (%1x the Megatron recipe)").arg(o.bestTokensPerSPerGpu() / m_megatronValue, 0, 'f', 3);
        if (o.provedOptimal)
            text += (best.pools ? tr("; proved optimal under the simulator over every split")
                                : tr("; proved optimal under the simulator"))
                + QString::fromStdString(runnableSpaceWords(o.deployment.pools.front().scenario));
        if (o.stopped)
            text += tr("; stopped early");
        showMessage(text + QLatin1Char('.'), false);
    } else {
        showMessage(tr("No valid plan: %1").arg(QString::fromStdString(o.message)), true);
    }
    refreshCompareCandidates();
    m_statusLabel->setText(tr("%1 simulator calls%2 · %3 s · longest UI stall %4 ms")
                               .arg(o.calls)
                               .arg(o.work.empty() ? QString() : QStringLiteral(", ") + QString::fromStdString(o.work))
                               .arg(o.wallSeconds, 0, 'f', 2)
                               .arg(m_controller.longestStallMs(), 0, 'f', 1));
    Q_EMIT searchDone(o.found);
}

// Both answers under the scenario's engine: the headline beside the search's, the causes
// in the Plan tab's explanation.
void MainWindow::onEngineGap(const EngineGap& g)
{
    m_lastGap = g;
    m_planView->setEngineGap(&g);
    if (m_message->fullText().isEmpty() || !g.applies)
        return;
    const QString engine = QString::fromStdString(g.engineName);
    const QString proof = g.bound == GapBound::Exact ? tr("both proved") : tr("not both proved");
    QString text;
    if (g.differs())
        text = tr("Per-operator optimum %1x the best plan %2 runs (%3 tok/s/GPU; %4; the Plan tab says why).")
                   .arg(g.gain, 0, 'f', 3)
                   .arg(engine)
                   .arg(g.runnable.tokensPerSPerGpu(), 0, 'f', 1)
                   .arg(proof);
    else if (g.gain > 0)
        text = tr("%1 runs a plan as good as the per-operator optimum (%2).").arg(engine, proof);
    else
        text = QString::fromStdString(g.headline) + QLatin1Char('.');
    m_message->setFullText(m_message->fullText() + QLatin1Char(' ') + text);
}

void MainWindow::onFailed(const QString& reason)
{
    showMessage(tr("The search failed: %1").arg(reason), true);
    Q_EMIT searchDone(false);
}

void MainWindow::onRunningChanged(bool)
{
    refreshStartState();
    m_toolbar->setAlgorithmEnabled(!m_controller.isRunning());
}

} // namespace shardlab::ui
