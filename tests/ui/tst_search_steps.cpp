// The search's last step is shown as a step: the final batch refinement's plan heads the
// elite table (marked), its dashed segment joins the curve from the search's best to the
// refined one, and its calls are counted in the run's.
#include <QtTest>

#include <QTableWidget>

#include "io/presets.h"
#include "qcp.h"
#include "search_panel.h"
#include "search_worker.h"

using namespace shardlab;
using namespace shardlab::ui;

namespace {
// An anneal run of a shipped scenario as the window's job runs it, on this thread.
JobResult annealJob(const char* preset, int budget, std::uint64_t seed)
{
    SearchRequest request;
    request.jobId = 1;
    request.scenario = scenarioPreset(preset).value;
    request.options.algorithm = "anneal";
    request.options.budget = budget;
    request.options.seed = seed;
    return runSearchJob(request, nullptr, {});
}
} // namespace

class TestSearchSteps : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void refinementIsItsOwnStep();
    void refinementProbesAreNotElites();
};

void TestSearchSteps::refinementIsItsOwnStep()
{
    const auto s = scenarioPreset("deepseek-v3-256gpu");
    QVERIFY(s.ok());
    const JobResult result = annealJob("deepseek-v3-256gpu", 1000, 1);
    const SearchOutcome& o = result.outcome;
    QVERIFY(o.found);
    const BatchRefinement& f = o.refinement;
    QVERIFY(f.ran);
    QVERIFY2(f.improved(), "this seed's refinement raises the batch (48 to 57 when written)");
    QCOMPARE(f.toBatch, o.best.batch);
    QCOMPARE(f.toValue, o.bestResult.tokensPerSPerGpu);
    QCOMPARE(f.firstCall + f.calls, o.calls); // the last step, its calls counted
    QVERIFY(f.calls <= refinementReserve(1000));

    // The table: the reported best is its first row, marked as the refinement.
    QVERIFY(!result.elites.empty());
    const EliteEntry& top = result.elites.front();
    QVERIFY(top.refinement);
    QVERIFY(top.plan == o.best);
    QCOMPARE(top.tokensPerSPerGpu, o.bestResult.tokensPerSPerGpu);
    for (const EliteEntry& e : result.elites)
        QVERIFY(e.tokensPerSPerGpu <= top.tokensPerSPerGpu);

    SearchPanel panel;
    panel.setScenario(s.value);
    panel.beginRun(QStringLiteral("anneal"));
    panel.finishRun(result);
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("eliteTable"));
    QVERIFY(table);
    QTRY_VERIFY(table->rowCount() > 0);
    QVERIFY2(table->item(0, 10)->text().contains(QStringLiteral("batch refinement")), qPrintable(table->item(0, 10)->text()));
    // (" ×n" follows when n elites share the value.)
    QVERIFY2(table->item(0, 0)->text().startsWith(QString::number(o.bestResult.tokensPerSPerGpu, 'f', 1)),
             qPrintable(table->item(0, 0)->text()));
    // The curve: a segment of its own from the search's best to the refined best.
    QCPGraph* step = nullptr;
    for (int i = 0; i < panel.curvePlot()->graphCount(); ++i)
        if (panel.curvePlot()->graph(i)->name() == QStringLiteral("batch refinement (last step)"))
            step = panel.curvePlot()->graph(i);
    QVERIFY(step);
    QCOMPARE(step->data()->size(), 2);
    QCOMPARE(step->data()->at(0)->value, f.fromValue);
    QCOMPARE(step->data()->at(1)->value, f.toValue);
    QCOMPARE(int(step->data()->at(1)->key), o.calls);
}

// The refinement's probes are one plan at several batches: they are not the search's elites.
// Of the elites, only the refinement's own row comes from a call after the refinement began
// (llama3-70b-8gpu, anneal 800, seed 0: 8 of its 11 rows were such probes when they were kept),
// and every other row is a plan the search itself found.
void TestSearchSteps::refinementProbesAreNotElites()
{
    QVERIFY(scenarioPreset("llama3-70b-8gpu").ok());
    const JobResult result = annealJob("llama3-70b-8gpu", 800, 0);
    const BatchRefinement& f = result.outcome.refinement;
    QVERIFY(f.ran && f.calls > 1);
    int afterRefinementBegan = 0, marked = 0;
    for (const EliteEntry& e : result.elites) {
        afterRefinementBegan += e.call > f.firstCall ? 1 : 0;
        marked += e.refinement ? 1 : 0;
    }
    QCOMPARE(marked, f.improved() ? 1 : 0);
    QCOMPARE(afterRefinementBegan, marked);
    QCOMPARE(int(result.elites.size()), LiveProgress::kEliteRows); // the search found more than a table's worth
}

QTEST_MAIN(TestSearchSteps)
#include "tst_search_steps.moc"
