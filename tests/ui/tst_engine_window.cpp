// The window under a scenario that names an engine: after a search, both answers (the
// best plan the engine runs and the per-operator optimum, report/engine_gap.h) arrive
// beside the result, with the core's figures; the Plan tab says whether the engine runs the
// plan on show, and where the difference comes from.
#include <QtTest>

#include <QTemporaryDir>

#include "window_fixtures.h"
#include "io/presets.h"
#include "main_window.h"
#include "plan_editor.h"
#include "plan_view.h"
#include "report/engine_gap.h"
#include "runner/runnable_plan.h"
#include "sim/megatron.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

namespace {

Scenario mixtralUnder(CollectiveEngine e, bool runnable)
{
    auto s = scenarioPreset("mixtral-8x22b-64gpu");
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    s.value.workload.engine = e;
    s.value.workload.runnable = runnable;
    return s.value;
}

} // namespace

class TestEngineWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }

    void bothAnswersFollowASearch()
    {
        MainWindow w;
        const Scenario s = mixtralUnder(CollectiveEngine::Vllm, false);
        w.setScenario(s);
        QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
        QTRY_VERIFY_WITH_TIMEOUT(w.lastEngineGap().applies, 60000);
        const EngineGap core = measureEngineGap(s);
        const EngineGap& shown = w.lastEngineGap();
        QCOMPARE(shown.gain, core.gain);
        QCOMPARE(shown.bound, GapBound::Exact);
        QVERIFY(shown.perOperator.fromResult); // exact's proved result is its own side
        const QString said = QStringLiteral("Per-operator optimum %1x the best plan vLLM 0.11 runs (%2 tok/s/GPU; both proved")
                                 .arg(core.gain, 0, 'f', 3)
                                 .arg(core.runnable.tokensPerSPerGpu(), 0, 'f', 1);
        QVERIFY2(w.statusText().contains(said), qPrintable(w.statusText()));
        // The exact optimum on show splits attention by sequences, which vLLM does not run.
        const QString why = w.planView()->explanationText();
        QVERIFY2(why.contains(QStringLiteral("vLLM 0.11 does not run this plan as planned")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("Both answers")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("The difference comes from:")), qPrintable(why));
        // The best plan vLLM runs, on show, runs as planned.
        w.planView()->showPlan(QStringLiteral("vLLM's best"), core.runnable.deployment.pools.front().plan);
        QVERIFY2(w.planView()->explanationText().contains(QStringLiteral("vLLM 0.11: runs this plan as planned")),
                 qPrintable(w.planView()->explanationText()));
        // A new scenario clears them.
        w.setScenario(mixtralUnder(CollectiveEngine::Nccl, false));
        QVERIFY(!w.planView()->explanationText().contains(QStringLiteral("Both answers")));
    }

    // Export from the window follows the CLI's rule: a plan the engine does not run is
    // refused with its rules and nothing written; asked for, the nearest plan the engine
    // runs is shown in the Plan tab and exported instead.
    void exportRefusesAndOffersTheNearestPlan()
    {
        MainWindow w;
        const Scenario s = mixtralUnder(CollectiveEngine::Nccl, false);
        w.setScenario(s);
        QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
        const Plan best = w.planView()->currentPlan();
        QVERIFY(!engineViolations(Engine::Vllm, best, s).empty());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("launch.sh"));
        QString error;
        QVERIFY(!w.exportLaunchConfig(path, Engine::Vllm, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("does not run this plan as planned")), qPrintable(error));
        QVERIFY(!QFile::exists(path));
        QVERIFY(w.planView()->currentPlan() == best); // refused: nothing changed
        QVERIFY2(w.exportLaunchConfig(path, Engine::Vllm, {}, &error, nullptr, true), qPrintable(error));
        QVERIFY(QFile::exists(path));
        const NearestRunnable n = nearestRunnablePlan(s, best, Engine::Vllm);
        QVERIFY(n.found);
        QVERIFY(w.planView()->currentPlan() == n.plan);
        QVERIFY(engineViolations(Engine::Vllm, n.plan, s).empty());
        QVERIFY(w.planView()->currentTitle().startsWith(QStringLiteral("Nearest plan vLLM runs")));
        QCOMPARE(w.scenario().workload.engine, CollectiveEngine::Nccl); // the user's scenario is kept
    }

    // A runnable scenario's space is the engine's plans: the Plan tab says whether the plan on
    // show is in it and, when not, which rule it breaks (what validate prints).
    void planTabSaysWhetherTheSearchesConsiderThePlan()
    {
        MainWindow w;
        const Scenario s = mixtralUnder(CollectiveEngine::Vllm, true);
        w.setScenario(s);
        Plan p = megatronPlan(Simulator(s)).plan;
        applyEngineLayout(Engine::Vllm, s.model, p);
        QVERIFY(engineViolations(Engine::Vllm, p, s).empty());
        w.planView()->showPlan(QStringLiteral("runs"), p);
        QString why = w.planView()->explanationText();
        QVERIFY2(why.contains(QStringLiteral("in the space the searches consider, among the plans vLLM 0.11 runs")),
                 qPrintable(why));
        for (int o = 0; o < opInfo(OpId::Embedding).optionCount; ++o)
            if (std::string(opOption(OpId::Embedding, o).name) == "replicated")
                p.setOption(OpId::Embedding, o);
        w.planView()->showPlan(QStringLiteral("does not run"), p);
        why = w.planView()->explanationText();
        QVERIFY2(why.contains(QStringLiteral("outside the scenario's, so no search proposes this plan")), qPrintable(why));
        QVERIFY2(why.contains(QStringLiteral("vLLM 0.11 does not run it (operators.embedding")), qPrintable(why));
    }

    // No engine: nothing is measured and nothing said.
    void noEngineNoAnswers()
    {
        MainWindow w;
        w.setScenario(mixtralUnder(CollectiveEngine::Nccl, false));
        QSignalSpy settled(&w, &MainWindow::searchSettled);
        QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
        QVERIFY(!settled.isEmpty() || settled.wait(30000)); // nothing more comes for the search
        QVERIFY(!w.lastEngineGap().applies);
        QVERIFY(!w.planView()->explanationText().contains(QStringLiteral("runs this plan")));
    }
};

QTEST_MAIN(TestEngineWindow)
#include "tst_engine_window.moc"
