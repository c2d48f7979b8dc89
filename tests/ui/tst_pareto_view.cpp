// The Pareto tab: the front computed on a worker thread matches the core's,
// hovering finds a point's plan, clicking opens it in the Plan tab, the plots export as
// PNG, PDF and CSV, sizing and the sweep fill the lower panels, Stop ends a long front and
// a scenario change clears what no longer applies.
#include <QtTest>
#include <QLineEdit>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QProgressBar>

#include "runner/load_front.h"
#include "runner/sizing.h"
#include "window_fixtures.h"

#include <QFile>
#include <QTemporaryDir>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "main_window.h"
#include "pareto_view.h"
#include "plan_view.h"
#include "qcp.h"
#include "scenario_editor.h"

#include <QLineEdit>
#include <QSplitter>
#include <QToolTip>

using namespace shardlab;
using namespace shardlab::ui;


class TestParetoView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void frontHoverClickAndExport();
    void sizingAndSweepFillThePanels();
    void bothFrontsUnderAnEngine();
    void stopEndsALongFrontAndEditsClearResults();
    void constraintsAreEditedAndHonoured();
    void scalingPlotHasRoomAndHover();
    void frontUnderLoadIsTheCliFront();
    void frontUnderLoadRefusesInline();
    void frontPlotHasRoomAt1024();
    void loadFrontUnderAnEngineKeepsEveryFrontReadable();
};

void TestParetoView::init()
{
    startFreshSession();
}

void TestParetoView::frontHoverClickAndExport()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    const Scenario s = preset("llama3-70b-8gpu");
    w.setScenario(s);
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    QCOMPARE(w.currentTabName(), QStringLiteral("pareto"));
    ParetoView* v = w.paretoView();
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    // The same front the core computes (deterministic).
    const ParetoFront core = computeParetoFront(s, {});
    QCOMPARE(v->front().points.size(), core.points.size());
    QVERIFY(v->front().allProved);
    for (size_t i = 0; i < core.points.size(); ++i)
        QCOMPARE(v->front().points[i].outputTokensPerSPerGpu, core.points[i].outputTokensPerSPerGpu);
    QCOMPARE(v->frontPlot()->graph(0)->dataCount(), int(core.points.size()));
    QCOMPARE(v->frontPlot()->graph(1)->dataCount(), int(core.megatronPoints.size()));
    // The certified staircase: between two points it holds the faster (right) point's
    // throughput, the one guaranteed there, never the slower point's.
    QCOMPARE(v->frontPlot()->graph(0)->lineStyle(), QCPGraph::lsStepRight);
    QCOMPARE(v->frontPlot()->graph(1)->lineStyle(), QCPGraph::lsStepRight);
    QVERIFY(v->frontPlot()->graph(0)->name().contains(QStringLiteral("proved optimal")));

    // Hover: the point under the mouse; click: its plan in the Plan tab.
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    v->frontPlot()->replot();
    const ParetoPoint& target = v->front().points.back();
    const QPoint pos(int(v->frontPlot()->xAxis->coordToPixel(target.tokensPerSPerUser)),
                     int(v->frontPlot()->yAxis->coordToPixel(target.outputTokensPerSPerGpu)));
    ParetoPoint found;
    ParetoView::FrontKind kind = ParetoView::FrontKind::Recipe;
    QVERIFY(v->pointAt(QPointF(pos), found, kind));
    QVERIFY(kind == ParetoView::FrontKind::Own);
    QCOMPARE(v->frontPlot()->graph(2)->dataCount(), 0); // no engine named: one exact front
    QVERIFY(v->engineGapText().isEmpty());
    QVERIFY(found.deployment == target.deployment);
    QSignalSpy activated(v, &ParetoView::planActivated);
    QTest::mouseClick(v->frontPlot(), Qt::LeftButton, {}, pos);
    QCOMPARE(activated.count(), 1);
    QCOMPARE(w.currentTabName(), QStringLiteral("plan"));
    QVERIFY(w.planView()->currentPlan() == target.deployment.plan);

    QTemporaryDir dir;
    for (const char* ext : {"png", "pdf", "csv"}) {
        const QString path = dir.filePath(QStringLiteral("front.") + QLatin1String(ext));
        QString error;
        QVERIFY2(v->exportFront(path, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray head = f.read(64);
        if (QLatin1String(ext) == QLatin1String("csv"))
            QVERIFY(head.startsWith("front,tokens_per_s_per_user,output_tokens_per_s_per_gpu"));
        else
            QVERIFY(head.size() > 8);
    }
}

// An engine named: the other space's front is drawn beside the scenario's own, named in the
// legend and the tooltip, and the status says what per-operator sharding is worth at the SLO.
void TestParetoView::bothFrontsUnderAnEngine()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    Scenario s = preset("mixtral-8x22b-64gpu");
    s.workload.engine = CollectiveEngine::Vllm;
    w.setScenario(s);
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    ParetoView* v = w.paretoView();
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    const ParetoFront core = computeParetoFront(s, {});
    QVERIFY(core.otherRunnable);
    QVERIFY(!core.otherPoints.empty());
    QCOMPARE(v->frontPlot()->graph(2)->dataCount(), int(core.otherPoints.size()));
    QVERIFY(v->frontPlot()->graph(2)->name().contains(QStringLiteral("plans vLLM 0.11 runs")));
    QVERIFY(v->frontPlot()->graph(0)->name().contains(QStringLiteral("per-operator")));
    // The gain the core computes from the same two fronts (never below 1: both proved).
    const double gain = paretoGainAtSlo(core);
    QVERIFY(gain >= 1 - 1e-9);
    const QString said = QStringLiteral("the per-operator optimum is %1x").arg(gain, 0, 'f', 3);
    QVERIFY2(v->statusText().contains(said), qPrintable(v->statusText()));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    v->frontPlot()->replot();
    // The other front's fastest point is where the two part: hover names it.
    const ParetoPoint& target = v->front().otherPoints.back();
    const QPoint pos(int(v->frontPlot()->xAxis->coordToPixel(target.tokensPerSPerUser)),
                     int(v->frontPlot()->yAxis->coordToPixel(target.outputTokensPerSPerGpu)));
    ParetoPoint found;
    ParetoView::FrontKind kind = ParetoView::FrontKind::Own;
    QVERIFY(v->pointAt(QPointF(pos), found, kind));
    QVERIFY(kind == ParetoView::FrontKind::Other);
    QVERIFY(found.deployment == target.deployment);
    QCOMPARE(v->frontName(kind), QStringLiteral("Best plan vLLM 0.11 runs"));
}

void TestParetoView::sizingAndSweepFillThePanels()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    ParetoView* v = w.paretoView();
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeSizing()); // 10 requests/s by default
    QVERIFY(done.wait(60000));
    QVERIFY(v->sizing().ok);
    // The window shows the core's answer (sizeCluster, docs/choices.md): the same count and
    // the same proof that fewer GPUs do not suffice.
    SizingOptions so;
    so.requestsPerS = 10;
    const SizingResult core = sizeCluster(preset("llama3-70b-8gpu"), so);
    QVERIFY(core.ok);
    QCOMPARE(v->sizing().gpus, core.gpus);
    QCOMPARE(v->sizing().smallerProved, core.smallerProved);
    QVERIFY(v->scalePlot()->graph(0)->dataCount() > 0);
    QVERIFY(v->computeSweep()); // an eighth, a quarter, half and all of the 8 GPUs by default
    QVERIFY(done.wait(60000));
    QVERIFY(v->sweep().ok);
    QCOMPARE(v->sweep().points.size(), size_t(4));
    QCOMPARE(v->sweep().points.front().gpus, 1LL);
    QVERIFY(!v->sweep().points.front().found); // 141 GB of weights on one GPU
    QCOMPARE(v->scalePlot()->graph(0)->dataCount(), 3); // counts with a plan
    // The count without a point is named, with exact's proof.
    QVERIFY(v->sweep().points.front().provedInfeasible);
    QVERIFY2(v->statusText().contains(QStringLiteral("No plan meets the limits on 1 GPUs (proved by exact)")),
             qPrintable(v->statusText()));
    QTemporaryDir dir;
    QString error;
    QVERIFY2(v->exportScaling(dir.filePath(QStringLiteral("scaling.csv")), &error), qPrintable(error));
    QVERIFY2(v->exportScaling(dir.filePath(QStringLiteral("scaling.pdf")), &error), qPrintable(error));
}

void TestParetoView::stopEndsALongFrontAndEditsClearResults()
{
    MainWindow w;
    w.setScenario(preset("moe-1.6t-1024gpu"));
    ParetoView* v = w.paretoView();
    auto* progress = v->findChild<QProgressBar*>();
    QVERIFY(progress && progress->isHidden()); // nothing has run
    auto* concurrencies = v->findChild<QLineEdit*>(QStringLiteral("pareto.concurrencies"));
    QVERIFY(concurrencies && concurrencies->cursorPosition() == 0); // "1,2,4,..." from its start
    QVERIFY(v->computeFront());
    QVERIFY(v->isRunning());
    QVERIFY(!progress->isHidden());
    const QString started = v->statusText();
    QTRY_VERIFY_WITH_TIMEOUT(v->statusText() != started || !v->isRunning(), 30000); // part-way
    QElapsedTimer t;
    t.start();
    v->stop();
    QVERIFY(!v->isRunning());
    QVERIFY2(t.elapsed() < 5000, "stop waits for one exact search at most");
    // A decode-mode scenario computes.
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Decode;
    w.setScenario(s);
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    QVERIFY(!v->front().points.empty());
    QVERIFY(progress->isHidden()); // done: the status line says what was computed
    // A disaggregated one computes a front of deployments, and a click opens both pools.
    s.workload.serving = ServingMode::Disaggregated;
    w.setScenario(s);
    QVERIFY(v->front().points.empty()); // cleared: it was another scenario's
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    QVERIFY(!v->front().points.empty());
    const ParetoPoint target = v->front().points.back();
    QVERIFY(target.deployment.pools.has_value());
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    v->frontPlot()->replot();
    const QPoint pos(int(v->frontPlot()->xAxis->coordToPixel(target.tokensPerSPerUser)),
                     int(v->frontPlot()->yAxis->coordToPixel(target.outputTokensPerSPerGpu)));
    ParetoPoint clicked; // the recipe's point may lie on the same spot
    ParetoView::FrontKind kind = ParetoView::FrontKind::Own;
    QVERIFY(v->pointAt(QPointF(pos), clicked, kind));
    QVERIFY(clicked.deployment.pools.has_value());
    QTest::mouseClick(v->frontPlot(), Qt::LeftButton, {}, pos);
    QCOMPARE(w.currentTabName(), QStringLiteral("plan"));
    QVERIFY(w.planView()->isDisaggregated());
    QVERIFY(w.planView()->currentDeployment() == clicked.deployment);
    // A prefill pool alone has no TPOT to trade: refused with the field named.
    s.workload.serving = ServingMode::Prefill;
    w.setScenario(s);
    QVERIFY(!v->computeFront());
    QVERIFY2(v->statusText().contains(QStringLiteral("workload.serving")), qPrintable(v->statusText()));
}

// A scenario file's constraints show in the editor, an edit that no GPU count allows is
// flagged at its field by the core's check, and the front stays within an allowed one.
void TestParetoView::constraintsAreEditedAndHonoured()
{
    MainWindow w;
    QVERIFY(w.openScenarioFile(QStringLiteral(SHARDLAB_TEST_DATA "/choices/llama3-70b-8gpu-tp4.json")));
    QCOMPARE(w.scenario().constraints.tensorParallel, std::vector<int>{4});
    QCOMPARE(w.scenario().constraints.batchMax, 64);
    auto* tp = w.scenarioEditor()->findChild<QLineEdit*>(QStringLiteral("constraints.tensor_parallel"));
    QVERIFY(tp);
    QCOMPARE(tp->text(), QStringLiteral("4"));
    tp->setText(QStringLiteral("3"));
    Q_EMIT tp->editingFinished();
    QCOMPARE(w.scenario().constraints.tensorParallel, std::vector<int>{3});
    QVERIFY(!w.scenarioEditor()->isRunnable());
    QVERIFY2(w.scenarioEditor()->problemText().contains(QStringLiteral("no allowed value (3) divides the 8 GPUs")),
             qPrintable(w.scenarioEditor()->problemText()));
    tp->setText(QStringLiteral("2, 8"));
    Q_EMIT tp->editingFinished();
    QCOMPARE(w.scenario().constraints.tensorParallel, (std::vector<int>{2, 8}));
    QVERIFY(w.scenarioEditor()->isRunnable());
    ParetoView* v = w.paretoView();
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    QVERIFY(v->front().ok && v->front().allProved);
    for (const ParetoPoint& p : v->front().points) {
        QVERIFY(p.deployment.plan.tensorParallel == 2 || p.deployment.plan.tensorParallel == 8);
        QVERIFY(p.deployment.plan.pipelineParallel == 1 && p.deployment.plan.batch <= 64);
    }
    for (const ParetoPoint& p : v->front().megatronPoints)
        QVERIFY(p.deployment.plan.tensorParallel == 2 || p.deployment.plan.tensorParallel == 8);
}

// The scaling plot at 1024x700 is tall enough to read, and hovering a point of the sweep
// shows that point's figures (its GPUs, plan and throughput), as the front's hover does.
void TestParetoView::scalingPlotHasRoomAndHover()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    ParetoView* v = w.paretoView();
    QCustomPlot* plot = v->scalePlot();
    QTRY_VERIFY(plot->isVisible());
    QCOMPARE(w.size(), QSize(1024, 700));
    QVERIFY2(plot->height() >= 140, qPrintable(QStringLiteral("scaling plot %1 px high").arg(plot->height())));
    QVERIFY(plot->mapTo(&w, QPoint(0, plot->height())).y() <= w.height());

    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeSweep());
    QVERIFY(done.wait(60000));
    QVERIFY(v->sweep().ok);
    plot->replot();
    int hovered = 0;
    for (const ClusterSizePoint& p : v->sweep().points) {
        if (!p.found)
            continue;
        const QPoint pos(int(plot->xAxis->coordToPixel(double(p.gpus))),
                         int(plot->yAxis->coordToPixel(p.tokensPerSPerGpu)));
        ClusterSizePoint found;
        QVERIFY(v->scalePointAt(QPointF(pos), found));
        QCOMPARE(found.gpus, p.gpus);
        const QString text = v->scalePointText(found);
        QVERIFY2(text.contains(QStringLiteral("%1 GPUs").arg(p.gpus)), qPrintable(text));
        QVERIFY2(text.contains(QString::number(p.tokensPerSPerGpu, 'f', 1)), qPrintable(text));
        QTest::mouseMove(plot, pos);
        QTRY_VERIFY(QToolTip::isVisible());
        QCOMPARE(QToolTip::text(), text);
        ++hovered;
    }
    QCOMPARE(hovered, 3); // 2, 4 and 8 GPUs serve the model
    ClusterSizePoint none;
    QVERIFY(!v->scalePointAt(QPointF(2, 2), none));
}

// The front under load in the window is load-front's: the same points from the same search at
// each concurrency, drawn in concurrency order and labelled; hovering a point names its
// concurrency and run, clicking opens its plan, and the CSV export writes both fronts' files.
void TestParetoView::frontUnderLoadIsTheCliFront()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    const Scenario s = preset("llama3-70b-8gpu");
    w.setScenario(s);
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    ParetoView* v = w.paretoView();
    v->setLoadConcurrencies(QStringLiteral(" 16, 4 ,256")); // blanks around items are trimmed
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeLoadFront());
    QVERIFY(done.wait(120000));
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    const LoadFront core = computeLoadFront(s, {4, 16, 256}, defaultLoadFrontSearch());
    const LoadFront& shown = v->loadFront();
    QCOMPARE(shown.points.size(), size_t(3));
    int found = 0;
    for (size_t i = 0; i < core.points.size(); ++i) {
        QCOMPARE(shown.points[i].concurrency, core.points[i].concurrency);
        QCOMPARE(shown.points[i].found, core.points[i].found);
        QCOMPARE(shown.points[i].tokensPerSPerGpu, core.points[i].tokensPerSPerGpu);
        QVERIFY(shown.points[i].plan == core.points[i].plan);
        found += core.points[i].found ? 1 : 0;
    }
    QVERIFY(!core.points[2].found); // 256 in flight on 8 GPUs breaks the p90 TPOT limit (docs/choices.md)
    QCOMPARE(found, 2);
    QCOMPARE(v->frontPlot()->graph(3)->dataCount(), found);
    QVERIFY(v->frontPlot()->graph(3)->name().contains(QStringLiteral("not proved")));
    QVERIFY2(v->statusText().contains(QStringLiteral("2 of 3 concurrencies hold the limits")),
             qPrintable(v->statusText()));

    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTest::qWait(100); // the status line's new text is laid out: the plot's height is final
    v->frontPlot()->replot();
    const LoadFrontPoint& target = shown.points[1];
    const QPoint pos(int(v->frontPlot()->xAxis->coordToPixel(target.tokensPerSPerUser)),
                     int(v->frontPlot()->yAxis->coordToPixel(target.tokensPerSPerGpu)));
    LoadFrontPoint hovered;
    QVERIFY(v->loadPointAt(QPointF(pos), hovered));
    QCOMPARE(hovered.concurrency, 16);
    const QString text = v->loadPointText(hovered);
    QVERIFY2(text.contains(QStringLiteral("Concurrency 16")) && text.contains(QString::number(target.tokensPerSPerGpu, 'f', 1)),
             qPrintable(text));
    QTest::mouseMove(v->frontPlot(), pos);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), text);
    QSignalSpy activated(v, &ParetoView::planActivated);
    QTest::mouseClick(v->frontPlot(), Qt::LeftButton, {}, pos);
    QCOMPARE(activated.count(), 1);
    QVERIFY(w.planView()->currentPlan() == target.plan);

    // Alone, the front under load is the CSV; beside the exact front it gets its own file.
    QTemporaryDir dir;
    QStringList written;
    QString error;
    QVERIFY2(v->exportFront(dir.filePath(QStringLiteral("alone.csv")), &error, &written), qPrintable(error));
    QCOMPARE(written, QStringList{dir.filePath(QStringLiteral("alone.csv"))});
    QFile alone(written.front());
    QVERIFY(alone.open(QIODevice::ReadOnly));
    QCOMPARE(alone.readAll(), QByteArray::fromStdString(loadFrontCsv(core)));
    w.showTab(QStringLiteral("pareto"));
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(60000));
    QVERIFY(v->front().ok && v->loadFront().ok); // the exact front keeps the load front shown
    written.clear();
    QVERIFY2(v->exportFront(dir.filePath(QStringLiteral("both.csv")), &error, &written), qPrintable(error));
    QCOMPARE(written, (QStringList{dir.filePath(QStringLiteral("both.csv")), dir.filePath(QStringLiteral("both-under-load.csv"))}));
    QFile both(written.front());
    QVERIFY(both.open(QIODevice::ReadOnly));
    QVERIFY(both.readAll().startsWith("front,tokens_per_s_per_user"));

    // A changed scenario clears it.
    Scenario other = s;
    other.workload.outputTokens = s.workload.outputTokens + 1;
    v->setScenario(other);
    QVERIFY(!v->loadFront().ok);
    QCOMPARE(v->frontPlot()->graph(3)->dataCount(), 0);
}

// Bad concurrencies and a scenario the searches cannot rank under load are refused inline,
// naming the field, and start nothing.
void TestParetoView::frontUnderLoadRefusesInline()
{
    MainWindow w;
    w.setScenario(preset("llama3-70b-8gpu"));
    ParetoView* v = w.paretoView();
    v->setLoadConcurrencies(QStringLiteral("4,x"));
    QVERIFY(!v->computeLoadFront());
    QVERIFY(!v->isRunning());
    QVERIFY2(v->statusText().contains(QStringLiteral("Front under load at: 'x' is not a concurrency")), qPrintable(v->statusText()));
    v->setLoadConcurrencies(QStringLiteral(" , "));
    QVERIFY(!v->computeLoadFront());
    QVERIFY2(v->statusText().contains(QStringLiteral("Front under load at: give 1 to 64 concurrencies")),
             qPrintable(v->statusText()));
    // An empty item (a doubled or stray comma) is refused as the CLI refuses it, not skipped.
    v->setLoadConcurrencies(QStringLiteral("4,,16"));
    QVERIFY(!v->computeLoadFront());
    QVERIFY2(v->statusText().contains(QStringLiteral("Front under load at: an item is empty in '4,,16'")),
             qPrintable(v->statusText()));
    auto* gpus = v->findChild<QLineEdit*>(QStringLiteral("pareto.gpus"));
    QVERIFY(gpus);
    gpus->setText(QStringLiteral("8,,16"));
    QVERIFY(!v->computeSweep());
    QVERIFY(!v->isRunning());
    QVERIFY2(v->statusText().contains(QStringLiteral("GPUs: an item is empty in '8,,16'")), qPrintable(v->statusText()));
    v->setLoadConcurrencies(QStringLiteral("4,16,4"));
    QVERIFY(!v->computeLoadFront());
    QVERIFY2(v->statusText().contains(QStringLiteral("Front under load at: 4 is listed twice")), qPrintable(v->statusText()));
    Scenario two = preset("llama3-70b-8gpu");
    two.workload.serving = ServingMode::Disaggregated;
    v->setScenario(two);
    v->setLoadConcurrencies(QStringLiteral("4"));
    QVERIFY(!v->computeLoadFront());
    QVERIFY(!v->isRunning());
    QVERIFY2(v->statusText().contains(QStringLiteral("workload.serving")), qPrintable(v->statusText()));
}

// At 1024x700 with the front under load beside the exact front, the front's axis rect stays
// tall enough to read and the scaling plot keeps its room; the splitter between them gives
// either more. A front whose points all sit far from zero per user (a disaggregated
// deployment's decode pool) spreads over most of its axis instead of a quarter of it.
void TestParetoView::frontPlotHasRoomAt1024()
{
    MainWindow w;
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    ParetoView* v = w.paretoView();
    v->setLoadConcurrencies(QStringLiteral("4,16"));
    QSignalSpy all(v, &ParetoView::allFinished);
    QVERIFY(v->computeAll(true));
    QVERIFY(all.wait(300000));
    QVERIFY(v->front().ok && v->loadFront().ok);
    // No rate named by the scenario: the sizing's rate is half the best plan's capacity on
    // its GPUs, and the status says exactly that. The sweep's 1 GPU has no plan: a labelled
    // cross on the scaling plot, not a silent gap.
    QVERIFY2(v->statusText().contains(QStringLiteral("Sizing at half the best plan's ")), qPrintable(v->statusText()));
    QVERIFY2(v->statusText().contains(QStringLiteral("requests/s on the scenario's 8 GPUs")), qPrintable(v->statusText()));
    QCOMPARE(v->scalePlot()->graph(1)->dataCount(), 1);
    QCOMPARE(v->scalePlot()->graph(1)->data()->begin()->key, 1.0);
    QTest::qWait(100); // the status line's new text is laid out
    QCoreApplication::processEvents();
    QCOMPARE(w.size(), QSize(1024, 700));
    const int axisHeight = v->frontPlot()->axisRect()->rect().height();
    QVERIFY2(axisHeight >= 140, qPrintable(QStringLiteral("front axis rect %1 px high").arg(axisHeight)));
    QVERIFY2(v->scalePlot()->height() >= 140, qPrintable(QStringLiteral("scaling plot %1 px high").arg(v->scalePlot()->height())));
    auto* splitter = v->findChild<QSplitter*>(QStringLiteral("pareto.splitter"));
    QVERIFY(splitter);
    const int before = v->scalePlot()->height();
    QList<int> sizes = splitter->sizes();
    sizes[0] -= 40;
    sizes[1] += 40;
    splitter->setSizes(sizes);
    QCoreApplication::processEvents();
    QVERIFY2(v->scalePlot()->height() > before, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(v->scalePlot()->height())));

    const auto d = loadScenarioFile(SHARDLAB_RESOURCES "/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json");
    QVERIFY2(d.ok(), d.firstError().c_str());
    w.setScenario(d.value);
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeFront());
    QVERIFY(done.wait(120000));
    QVERIFY(v->front().ok);
    double lo = 1e300, hi = 0;
    for (const auto& p : v->front().points) {
        lo = std::min(lo, p.tokensPerSPerUser);
        hi = std::max(hi, p.tokensPerSPerUser);
    }
    const QCPRange x = v->frontPlot()->xAxis->range();
    QVERIFY2(lo > 0.5 * hi, "the example's decode points sit far from zero per user");
    QVERIFY2(x.lower <= lo && x.upper >= hi, qPrintable(QStringLiteral("%1..%2 for %3..%4").arg(x.lower).arg(x.upper).arg(lo).arg(hi)));
    QVERIFY2((hi - lo) >= 0.6 * x.size(), qPrintable(QStringLiteral("points span %1 of an axis of %2").arg(hi - lo).arg(x.size())));
}

namespace {
// The rectangle a text item's text takes on screen: its anchors' box less its padding
// (the padding only moves the text away from its point).
QRectF itemRect(QCPItemText* t)
{
    const QMargins m = t->padding();
    return QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).adjusted(m.left(), m.top(), -m.right(), -m.bottom());
}
}

// The request-rate example under TensorRT-LLM at 1024x700 with the front under load: four
// fronts, a long status line and a sizing at the scenario's own rate. The front keeps its
// 140 px, its axis label whole and its "C n" labels apart; the certified front is drawn on
// top; the sizing uses the scenario's 8 requests/s and the status says so.
void TestParetoView::loadFrontUnderAnEngineKeepsEveryFrontReadable()
{
    MainWindow w;
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openScenarioFile(QStringLiteral(SHARDLAB_RESOURCES "/examples/load/llama3-70b-8gpu-request-rate-8.json")),
             qPrintable(w.statusText()));
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    ParetoView* v = w.paretoView();
    v->setLoadConcurrencies(QStringLiteral("1,4,16,64,128"));
    QSignalSpy all(v, &ParetoView::allFinished);
    QVERIFY(v->computeAll(true));
    QVERIFY(all.wait(300000));
    QVERIFY(v->front().ok && v->loadFront().ok);
    QVERIFY(!v->front().otherPoints.empty());
    QTest::qWait(100);
    QCoreApplication::processEvents();
    QCustomPlot* plot = v->frontPlot();
    const int axisHeight = plot->axisRect()->rect().height();
    QVERIFY2(axisHeight >= 140, qPrintable(QStringLiteral("front axis rect %1 px high").arg(axisHeight)));
    const int labelWidth = QFontMetrics(plot->yAxis->labelFont()).horizontalAdvance(plot->yAxis->label());
    QVERIFY2(labelWidth <= axisHeight, qPrintable(QStringLiteral("y label %1 px on %2 px").arg(labelWidth).arg(axisHeight)));
    std::vector<QRectF> labels;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->text().startsWith(QStringLiteral("C ")))
            labels.push_back(itemRect(t));
    QCOMPARE(int(labels.size()), 5);
    for (size_t a = 0; a < labels.size(); ++a)
        for (size_t b = a + 1; b < labels.size(); ++b)
            QVERIFY2(!labels[a].intersects(labels[b]), qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(a).arg(b)));
    // The certified front above the recipe's and the engine's.
    for (int g : {1, 2, 3})
        QVERIFY(plot->graph(0)->layer()->index() > plot->graph(g)->layer()->index());
    auto* rate = v->findChild<QDoubleSpinBox*>();
    QVERIFY(rate);
    QCOMPARE(rate->value(), 8.0);
    QVERIFY2(v->statusText().contains(QStringLiteral("Sizing at the scenario's 8 requests/s")), qPrintable(v->statusText()));
    QVERIFY(!v->statusText().contains(QStringLiteral("half the scenario's load")));
}

QTEST_MAIN(TestParetoView)
#include "tst_pareto_view.moc"
