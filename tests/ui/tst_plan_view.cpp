// The plan view against the real simulator: the Megatron reference, what-if edits through
// the widgets, invalid plans showing reasons instead of numbers, and the per-token
// comparison that the explanation ranks by.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <cmath>

#include "breakdown_plot.h"
#include "qcp.h"
#include "io/presets.h"
#include "model/plan_checks.h"
#include "plan_explain.h"
#include "plan_tables.h"
#include "plan_view.h"
#include "report/step_timeline.h"
#include "timeline_view.h"

using namespace shardlab;
using shardlab::ui::PlanView;

namespace {
Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("preset %s: %s", name, s.firstError().c_str());
    return s.value;
}

// Every text the view shows: labels and table cells.
QStringList visibleTexts(const PlanView& v)
{
    QStringList out;
    for (const QLabel* l : v.findChildren<QLabel*>())
        out << l->text();
    for (const QTableWidget* t : v.findChildren<QTableWidget*>())
        for (int r = 0; r < t->rowCount(); ++r)
            for (int c = 0; c < t->columnCount(); ++c)
                if (const QTableWidgetItem* item = t->item(r, c))
                    out << item->text();
    out << v.headlineText() << v.explanation();
    return out;
}

// NaN, Inf (the simulator's unbounded figures) and absurdly large values must never be
// shown or plotted.
void verifyNoNonFinite(const PlanView& v)
{
    // (a huge number printed digit by digit is as bad as "inf")
    static const QRegularExpression bad(QStringLiteral("\\b(nan|inf|infinity)\\b|e\\+\\d{2,}|\\d{16,}"),
                                        QRegularExpression::CaseInsensitiveOption);
    for (const QString& t : visibleTexts(v))
        QVERIFY2(!bad.match(t).hasMatch(), qPrintable(t));
    const auto* plot = v.findChild<shardlab::ui::BreakdownPlot*>();
    QVERIFY(plot);
    for (double x : plot->plottedValues())
        QVERIFY2(std::isfinite(x) && std::fabs(x) < 1e15, qPrintable(QString::number(x)));
}

QTableWidget* collectives(const PlanView& v) { return v.findChild<QTableWidget*>(QStringLiteral("collectivesTable")); }
} // namespace

class TestPlanView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void megatronForLlamaIsValidWithTwoAllReducesPerLayer();
    void loadRunBreakingALimitIsBadged();
    void whatIfTp3ShowsReasonsAndNoNaN();
    void operatorOptionChangeReEvaluates();
    void resetReturnsToMegatron();
    void perTokenRowsSumToInverseThroughput_data();
    void perTokenRowsSumToInverseThroughput();
    void mlaTokenAttentionIsExplained();
    void noNonFiniteNumbers_data();
    void noNonFiniteNumbers();
    void scenarioWithProblemsShowsThemAndNoPlan();
    void exportsPngAndPdf();
    void breakdownComparesPerTokenNotPerStep();
    void exportedPlotsCarryTitleScenarioPlanAndDate();
    void stepTimelineFollowsThePlan();
    void expertTensorGroupSaysWhatItSplits();
};

// The Step timeline tab draws the core's timeline of the plan on show, follows what-if
// edits, names each bar on hover, and says why when the plan is not costed.
void TestPlanView::stepTimelineFollowsThePlan()
{
    PlanView v;
    v.resize(1200, 800);
    v.show();
    const Scenario s = preset("mixtral-8x22b-64gpu");
    v.setScenario(s);
    shardlab::ui::TimelineView* tv = v.timelineView();
    QVERIFY(tv);
    const StepTimeline core = stepTimeline(poolOutcome(s, v.currentPlan(), v.currentResult()));
    QVERIFY(tv->timeline().ok);
    QCOMPARE(tv->timeline().step.size(), core.step.size());
    QCOMPARE(tv->timeline().cycleUs, core.cycleUs);
    auto* tabs = v.findChild<QTabWidget*>();
    QVERIFY(tabs);
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->widget(i)->isAncestorOf(tv))
            tabs->setCurrentIndex(i); // the tab holds it in a scroll area
    QTRY_VERIFY(tv->isVisible() && tv->width() > 104); // laid out in its tab
    // Hover: the first bar is the first operator's roofline time.
    const TimelineBar& first = tv->timeline().step.front();
    const double x = 92 + (first.durationUs / 2) / (tv->timeline().step.back().startUs
                                                     + tv->timeline().step.back().durationUs) * (tv->width() - 104);
    int lane = -1, index = -1;
    QVERIFY(tv->barAt(QPointF(x, 28 + 10), lane, index));
    QCOMPARE(lane, 0);
    QCOMPARE(index, 0);
    QVERIFY(tv->barText(0, 0).contains(QString::fromStdString(first.label)));
    // A what-if: twice the batch, a longer step.
    Plan p = v.currentPlan();
    p.batch *= 2;
    v.showPlan(QStringLiteral("twice the batch"), p);
    QVERIFY(tv->timeline().stepUs > core.stepUs);
    // Degrees that do not fit: no timeline, the reason instead.
    p.tensorParallel = 3;
    v.showPlan(QStringLiteral("TP 3"), p);
    QVERIFY(!tv->timeline().ok);
}

// A plan valid in the steady state whose scenario's open loop saturates it: the headline
// keeps VALID and says the load run breaks a limit, as evaluate's does; at a light load not.
void TestPlanView::loadRunBreakingALimitIsBadged()
{
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.load.protocol = LoadProtocol::RequestRate;
    s.workload.load.requests = 100;
    for (const double rate : {50.0, 0.2}) {
        s.workload.load.requestRate = rate;
        PlanView v;
        v.setScenario(s);
        QVERIFY(v.currentResult().valid);
        const QString head = v.headlineText();
        QVERIFY2(head.contains(QStringLiteral("VALID")) && !head.contains(QStringLiteral("INVALID")), qPrintable(head));
        QCOMPARE(head.contains(QStringLiteral("BREAKS A LIMIT UNDER LOAD")), rate > 1);
    }
}

void TestPlanView::megatronForLlamaIsValidWithTwoAllReducesPerLayer()
{
    PlanView v;
    const Scenario s = preset("llama3-70b-8gpu");
    v.setScenario(s);
    const RecipePlan recipe = megatronPlan(Simulator(s));
    QCOMPARE(v.currentPlan(), recipe.plan);
    QCOMPARE(v.referencePlan(), recipe.plan);
    QVERIFY(v.currentResult().valid);
    QCOMPARE(v.currentResult().tokensPerSPerGpu, recipe.result.tokensPerSPerGpu);
    QVERIFY(v.headlineText().contains(QStringLiteral("VALID")));
    QVERIFY(!v.headlineText().contains(QStringLiteral("INVALID")));
    QVERIFY(v.headlineText().contains(QStringLiteral("TP 8")));

    // Megatron's pattern: one all-reduce after attention (charged to ffn_norm, which needs
    // the replicated input) and one after the FFN (charged to the next layer's attn_norm).
    QTableWidget* t = collectives(v);
    using C = shardlab::ui::CollectivesTable;
    QStringList perLayerAllReduces;
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, C::Kind)->text() == QStringLiteral("all-reduce")
            && t->item(r, C::PerLayer)->text() == QStringLiteral("1"))
            perLayerAllReduces << t->item(r, C::Operator)->text();
    perLayerAllReduces.sort();
    QCOMPARE(perLayerAllReduces, (QStringList{QStringLiteral("attn_norm"), QStringLiteral("ffn_norm")}));
    for (int r = 0; r < t->rowCount(); ++r)
        if (perLayerAllReduces.contains(t->item(r, C::Operator)->text()))
            QCOMPARE(t->item(r, C::LayoutChange)->text(), QStringLiteral("P → R"));
    verifyNoNonFinite(v);
}

void TestPlanView::whatIfTp3ShowsReasonsAndNoNaN()
{
    PlanView v;
    v.setScenario(preset("llama3-70b-8gpu"));
    QSignalSpy spy(&v, &PlanView::planEdited);
    auto* tp = v.findChild<QSpinBox*>(QStringLiteral("whatIf.tensor_parallel"));
    QVERIFY(tp);
    tp->setValue(3);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<Plan>().tensorParallel, 3);
    QCOMPARE(v.currentPlan().tensorParallel, 3);
    QVERIFY(!v.currentResult().valid);
    const QString head = v.headlineText();
    QVERIFY(head.contains(QStringLiteral("INVALID")));
    QVERIFY2(head.contains(QStringLiteral("tiling")), qPrintable(head));
    QVERIFY2(head.contains(QStringLiteral("not divisible by tensor_parallel 3")), qPrintable(head));
    QVERIFY(!head.contains(QStringLiteral("tokens/s per GPU"))); // reasons instead of numbers
    verifyNoNonFinite(v);
}

void TestPlanView::operatorOptionChangeReEvaluates()
{
    PlanView v;
    v.setScenario(preset("llama3-70b-8gpu"));
    const double before = v.currentResult().tokensPerSPerGpu;
    QSignalSpy spy(&v, &PlanView::planEdited);
    auto* norm = v.findChild<QComboBox*>(QStringLiteral("whatIf.op.attn_norm"));
    QVERIFY(norm);
    const int sequence = norm->findData(optionFromName(OpId::AttnNorm, "sequence"));
    norm->setCurrentIndex(sequence);
    Q_EMIT norm->activated(sequence);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(v.currentPlan().option(OpId::AttnNorm), optionFromName(OpId::AttnNorm, "sequence"));
    // Re-evaluated as the simulator evaluates it (the recipe's batch sits at the TPOT limit, so
    // the sequence-parallel norms may cross it: whatever the simulator says, the view says).
    QCOMPARE(v.currentResult().structureChecks, 0u);
    const SimResult direct = Simulator(preset("llama3-70b-8gpu")).evaluate(v.currentPlan());
    QCOMPARE(v.currentResult().valid, direct.valid);
    QCOMPARE(v.currentResult().tokensPerSPerGpu, direct.tokensPerSPerGpu);
    QVERIFY(v.currentResult().tokensPerSPerGpu != before);
    QVERIFY(v.currentTitle().contains(QStringLiteral("what-if")));
    // The explanation names the operator that changed.
    QVERIFY(v.explanation().join(QLatin1Char(' ')).contains(QStringLiteral("attn_norm")));
    verifyNoNonFinite(v);
}

void TestPlanView::resetReturnsToMegatron()
{
    PlanView v;
    v.setScenario(preset("llama3-70b-8gpu"));
    v.findChild<QSpinBox*>(QStringLiteral("whatIf.batch"))->setValue(7);
    QVERIFY(v.currentPlan() != v.referencePlan());
    QSignalSpy spy(&v, &PlanView::planEdited);
    v.findChild<QPushButton*>(QStringLiteral("whatIf.reset"))->click();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(v.currentPlan(), v.referencePlan());
    QCOMPARE(v.findChild<QSpinBox*>(QStringLiteral("whatIf.batch"))->value(), v.referencePlan().batch);
}

void TestPlanView::perTokenRowsSumToInverseThroughput_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<int>("pipeline");
    QTest::newRow("llama, PP 1") << "llama3-70b-8gpu" << 1;
    QTest::newRow("llama, PP 2") << "llama3-70b-8gpu" << 2;
    QTest::newRow("mixtral") << "mixtral-8x22b-64gpu" << 1;
}

void TestPlanView::perTokenRowsSumToInverseThroughput()
{
    // The comparison's unit: GPU·µs per generated token. Operators + bubble row must add up
    // to 1e6 / (tokens/s per GPU) exactly, for both plans, or the ranking would lie.
    QFETCH(QString, scenario);
    QFETCH(int, pipeline);
    const Scenario s = preset(scenario.toLatin1().constData());
    const Simulator sim(s);
    const RecipePlan ref = megatronPlan(sim);
    Plan p = ref.plan;
    p.tensorParallel = std::max(1, ref.plan.tensorParallel / pipeline); // keep the GPU count
    p.pipelineParallel = pipeline;
    p.dataParallel = int(s.cluster.totalGpus() / (p.tensorParallel * pipeline));
    p.microBatches = pipeline;
    p.batch = std::max(pipeline, ref.plan.batch / 2 / pipeline * pipeline);
    p.setOption(OpId::FfnNorm, optionFromName(OpId::FfnNorm, "sequence"));
    const SimResult r = sim.evaluate(p), rr = sim.evaluate(ref.plan);
    QCOMPARE(r.structureChecks, 0u);
    const auto c = shardlab::ui::comparePlans(s, p, r, ref.plan, rr, QStringLiteral("This plan"), QStringLiteral("Megatron"));
    QVERIFY(c.comparable);
    QVERIFY(std::fabs(c.thisPerToken * r.tokensPerSPerGpu / 1e6 - 1) < 1e-9);
    QVERIFY(std::fabs(c.refPerToken * rr.tokensPerSPerGpu / 1e6 - 1) < 1e-9);
    QVERIFY(!c.lines.empty());
    double sum = 0;
    for (const auto& part : c.parts)
        sum += part.thisPerToken;
    QVERIFY(std::fabs(sum / c.thisPerToken - 1) < 1e-9);
}

void TestPlanView::mlaTokenAttentionIsExplained()
{
    // DeepSeek-V3 under Megatron splits attention by heads over TP 8; MLA's latent cache
    // is shared by all heads, so every rank reads all of it. Token-split attention avoids
    // that: the explanation must say so, with attention as the largest difference. (Decode
    // steps: with prompt chunks beside them, the recipe's 13 sequences per replica leave
    // one or two per rank, and the rank prefilling a chunk would set the step.)
    PlanView v;
    Scenario s = preset("deepseek-v3-256gpu");
    s.workload.serving = ServingMode::Decode;
    v.setScenario(s);
    const double before = v.currentResult().tokensPerSPerGpu;
    Plan p = v.currentPlan();
    p.setOption(OpId::Attention, optionFromName(OpId::Attention, "token"));
    v.showPlan(QStringLiteral("token attention"), p);
    QVERIFY(v.currentResult().valid);
    QVERIFY(v.currentResult().tokensPerSPerGpu > before);
    const QStringList e = v.explanation();
    QVERIFY(e.size() >= 2);
    QVERIFY2(e[1].startsWith(QStringLiteral("<b>attention</b>")), qPrintable(e[1]));
    QVERIFY2(e[1].contains(QStringLiteral("MLA's latent cache")), qPrintable(e[1]));
    QVERIFY(e[1].contains(QStringLiteral("8 tensor-parallel ranks")));
    verifyNoNonFinite(v);
}

void TestPlanView::noNonFiniteNumbers_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("edit");
    const char* scenarios[] = {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"};
    for (const char* s : scenarios)
        for (const char* e : {"megatron", "tp1", "pp2", "huge-batch", "bad-micro", "absurd-link"})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(s), QLatin1String(e))))
                << QString::fromLatin1(s) << QString::fromLatin1(e);
}

void TestPlanView::noNonFiniteNumbers()
{
    QFETCH(QString, scenario);
    QFETCH(QString, edit);
    Scenario s = preset(scenario.toLatin1().constData());
    if (edit == QStringLiteral("absurd-link")) // valid but absurd: times near 1e189 ms, finite and not flagged unbounded
        s.cluster.interNodeGBps = s.cluster.nvlinkGBps = 1e-300;
    PlanView v;
    v.setScenario(s);
    Plan p = v.currentPlan();
    const long long n = s.cluster.totalGpus();
    if (edit == QStringLiteral("tp1")) {
        p.tensorParallel = 1;
        p.dataParallel = int(n / p.pipelineParallel);
    } else if (edit == QStringLiteral("pp2")) {
        p.pipelineParallel *= 2;
        p.dataParallel = std::max<long long>(1, n / (p.tensorParallel * p.pipelineParallel));
        p.microBatches = 2;
        p.batch = 2 * std::max(1, p.batch / 2);
    } else if (edit == QStringLiteral("huge-batch")) {
        p.batch = 1 << 20;
    } else if (edit == QStringLiteral("bad-micro")) {
        p.microBatches = 7;
    }
    v.showPlan(edit, p);
    verifyNoNonFinite(v);
    if (!v.currentResult().valid)
        QVERIFY(v.headlineText().contains(QStringLiteral("INVALID")));
    // Figures of a plan that cannot run are marked as a what-if; a valid plan's are not.
    const bool whatIf = !v.currentResult().valid && v.currentResult().structureChecks == 0;
    QCOMPARE(v.headlineText().contains(QStringLiteral("if it ran")), whatIf);
    if (edit == QStringLiteral("absurd-link")) {
        // These astronomical finite figures the core's reasons word as unbounded (as the CLI
        // prints them) instead of printing their 190 digits.
        QVERIFY2(v.headlineText().contains(
                     QStringLiteral("TPOT SLO: unbounded (a bandwidth or peak of the scenario is effectively zero)")),
                 qPrintable(v.headlineText()));
    }
}

void TestPlanView::scenarioWithProblemsShowsThemAndNoPlan()
{
    Scenario s = preset("llama3-70b-8gpu");
    s.model.kvHeads = 0; // the simulator would divide by it
    PlanView v;
    v.setScenario(s);
    QVERIFY(!v.currentResult().valid);
    QVERIFY2(v.headlineText().contains(QStringLiteral("model.kv_heads")), qPrintable(v.headlineText()));
    QVERIFY(!v.findChild<QSpinBox*>(QStringLiteral("whatIf.tensor_parallel"))->isEnabled());
    v.showPlan(QStringLiteral("anything"), Plan{}); // must not crash without a simulator
    verifyNoNonFinite(v);
}

void TestPlanView::exportsPngAndPdf()
{
    PlanView v;
    v.setScenario(preset("llama3-70b-8gpu"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString png = dir.filePath(QStringLiteral("breakdown.png")),
                  pdf = dir.filePath(QStringLiteral("breakdown.pdf"));
    QVERIFY(v.exportPlots(png));
    QVERIFY(v.exportPlots(pdf));
    QVERIFY(QFileInfo(png).size() > 1000);
    QVERIFY(QFileInfo(pdf).size() > 1000);
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 900);
    QVERIFY(!v.exportPlots(dir.filePath(QStringLiteral("breakdown.txt"))));
}

// A plan whose step carries 4x the recipe's sequences must not look 4x slower per step
// against the recipe's diamonds: both are drawn as GPU time per output token.
void TestPlanView::breakdownComparesPerTokenNotPerStep()
{
    PlanView v;
    const Scenario s = preset("llama3-70b-8gpu");
    v.setScenario(s);
    const Plan ref = v.referencePlan();
    Plan p = ref;
    p.batch = std::max(1, ref.batch / 4);
    v.showPlan(QStringLiteral("quarter batch"), p);
    QVERIFY(v.currentResult().structureChecks == 0);
    const auto* plot = v.findChild<shardlab::ui::BreakdownPlot*>();
    QVERIFY(plot->isPerToken());
    QVERIFY2(plot->titleText().contains(QStringLiteral("per output token")), qPrintable(plot->titleText()));

    const Simulator sim(s);
    const SimResult r = sim.evaluate(p), rr = sim.evaluate(ref);
    const double gpus = s.cluster.totalGpus();
    auto perToken = [&](const Plan& plan, const OpBreakdown& o) {
        const double seqs = std::max(1.0, double(plan.batch) / std::max(1, plan.microBatches));
        return (o.timeUs + o.commUs) * (gpus / plan.dataParallel) / seqs; // GPU·µs
    };
    const std::vector<double> bars = plot->barTotals(), markers = plot->referenceValues();
    QVERIFY(!bars.empty());
    QCOMPARE(bars.size(), markers.size());
    size_t k = 0;
    double stepRatio = 0, tokenRatio = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id) || !r.decode[i].present)
            continue;
        QVERIFY(k < bars.size());
        QVERIFY2(std::fabs(bars[k] - perToken(p, r.decode[i])) <= 1e-6 * perToken(p, r.decode[i]) + 1e-9,
                 qPrintable(QStringLiteral("%1: %2 vs %3").arg(QString::fromLatin1(opName(id))).arg(bars[k]).arg(perToken(p, r.decode[i]))));
        QVERIFY(std::fabs(markers[k] - perToken(ref, rr.decode[i])) <= 1e-6 * perToken(ref, rr.decode[i]) + 1e-9);
        stepRatio += (rr.decode[i].timeUs + rr.decode[i].commUs) / std::max(1e-12, r.decode[i].timeUs + r.decode[i].commUs);
        tokenRatio += markers[k] / std::max(1e-12, bars[k]);
        ++k;
    }
    QCOMPARE(k, bars.size());
    // The normalisation changes the picture: per step the recipe looks several times slower.
    QVERIFY2(std::fabs(stepRatio - tokenRatio) > 0.5 * k, qPrintable(QStringLiteral("%1 vs %2").arg(stepRatio).arg(tokenRatio)));

    // Alone (the recipe itself), the chart is per decode step, in ms.
    v.showPlan(QStringLiteral("recipe"), ref);
    QVERIFY(!plot->isPerToken());
}

void TestPlanView::exportedPlotsCarryTitleScenarioPlanAndDate()
{
    PlanView v;
    Scenario s = preset("llama3-70b-8gpu");
    s.name = "my-variant";
    v.setScenario(s);
    auto* plot = v.findChild<shardlab::ui::BreakdownPlot*>();
    const int rows = plot->plot()->plotLayout()->rowCount();
    QTemporaryDir dir;
    const QString with = dir.filePath(QStringLiteral("with.png"));
    QVERIFY(v.exportPlots(with));
    // The header is drawn into the file only: the plot on screen keeps its layout.
    QCOMPARE(plot->plot()->plotLayout()->rowCount(), rows);
    const QString caption = v.exportCaption();
    QVERIFY(caption.contains(QStringLiteral("my-variant")));
    QVERIFY(caption.contains(QStringLiteral("TP %1").arg(v.currentPlan().tensorParallel)));
    QVERIFY(caption.contains(QDate::currentDate().toString(QStringLiteral("yyyy-MM-dd"))));
    QVERIFY(caption.contains(v.currentTitle()));
    // The file is taller than the same plot without the header rows.
    const QString without = dir.filePath(QStringLiteral("without.png"));
    QVERIFY(plot->save(without));
    QImage a(with), b(without);
    QVERIFY(!a.isNull() && !b.isNull());
    QCOMPARE(a.size(), b.size());
    QVERIFY(a != b);
}

// The degrees line names an expert-TP group by what it does: with the experts' token
// options its ranks run different tokens through whole experts (no weight split, as the
// Topology tab says), with the weight-split options each expert is split; a dense model has
// no expert degree at all.
void TestPlanView::expertTensorGroupSaysWhatItSplits()
{
    PlanView v;
    const Scenario s = preset("mixtral-8x22b-64gpu");
    v.setScenario(s);
    Plan p = v.currentPlan();
    const int etp = expertTensorParallel(p); // the recipe: TP 8 x DP 8 ranks over EP 8, 8 per shard
    QVERIFY(etp > 1);
    p.setOption(OpId::ExpertUp, optionFromName(OpId::ExpertUp, "token"));
    p.setOption(OpId::ExpertDown, optionFromName(OpId::ExpertDown, "token"));
    v.showPlan(QStringLiteral("tokens"), p);
    QVERIFY2(v.headlineText().contains(
                 QStringLiteral("%1 ranks per expert shard: tokens split, whole experts per GPU").arg(etp)),
             qPrintable(v.headlineText()));
    QVERIFY(!v.headlineText().contains(QStringLiteral("expert TP %1").arg(etp)));
    p.setOption(OpId::ExpertUp, optionFromName(OpId::ExpertUp, "column"));
    p.setOption(OpId::ExpertDown, optionFromName(OpId::ExpertDown, "row"));
    v.showPlan(QStringLiteral("weights"), p);
    QVERIFY2(v.headlineText().contains(QStringLiteral("expert TP %1: each expert's weights split %1 ways").arg(etp)),
             qPrintable(v.headlineText()));
    v.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY2(!v.headlineText().contains(QStringLiteral("expert TP")), qPrintable(v.headlineText()));
}

QTEST_MAIN(TestPlanView)
#include "tst_plan_view.moc"
