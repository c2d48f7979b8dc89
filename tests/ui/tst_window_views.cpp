// The main window's views after a search: the heatmap's marks and explanations, the
// Topology tab, the scripted tabs, the Compare tab, the kept what-if, and the
// screenshots of docs/window.md.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QProcess>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QUndoStack>

#include <csignal>
#include <sys/resource.h>
#include <tuple>
#include <vector>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "window_fixtures.h"
#include "io/presets.h"
#include "io/profile_json.h"
#include "io/scenario_json.h"
#include "file_export.h"
#include "main_window.h"
#include "pareto_view.h"
#include "ui_format.h"
#include "scenario_editor.h"
#include "plan_view.h"
#include "search_panel.h"
#include "heatmap_widget.h"
#include "plan_topology.h"
#include "breakdown_plot.h"
#include "compare_view.h"
#include "runner/latency_floor.h"
#include "sim/megatron.h"
#include "topology_view.h"
#include <QTableWidget>
#include <QLineEdit>
#include <QUndoStack>
#include <QProgressBar>
#include "sim/simulator.h"
#include "report/cost_account.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

class TestWindowViews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void heatmapMarksEquivalentOptionsAndExplainsCells();
    void topologyTabFollowsThePlan();
    void scriptedTopologyAndParetoTabs();
    void screenshotDuringAShortSearch();
    void compareTwoPlans();
    void compareOpensOnTheBestRun();
    void whatIfIsKeptWhenTheScenarioChanges();
    void docScreenshots();
    void heatmapShowsEquivalentsOfATp1Plan();
};

void TestWindowViews::init()
{
    startFreshSession();
}

void TestWindowViews::heatmapMarksEquivalentOptionsAndExplainsCells()
{
    MainWindow w;
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 1500));
    QTRY_VERIFY(!w.searchPanel()->isReplotPending());
    const Plan best = w.lastResult()->outcome.best;
    const Scenario s = w.scenario();
    const Simulator sim(s);
    const double base = sim.evaluate(best).tokensPerSPerGpu;
    ui::HeatmapWidget* h = w.searchPanel()->heatmap();
    int equivalents = 0, row = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o) {
            if (o == best.option(id)) {
                QVERIFY(!h->isEquivalent(id, o));
                continue;
            }
            Plan p = best;
            p.sharding[i] = std::uint8_t(o);
            const SimResult r = sim.evaluate(p);
            const bool same = r.valid && r.structureChecks == 0 && std::fabs(r.tokensPerSPerGpu - base) <= 1e-9 * base;
            QCOMPARE(h->isEquivalent(id, o), same);
            equivalents += same;
        }
        // Every cell explains itself.
        const QString tip = h->toolTipAt(h->cellRect(row, best.option(id)).center());
        QVERIFY2(tip.contains(QString::fromLatin1(opOption(id, best.option(id)).name)), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("best plan uses")), qPrintable(tip));
        ++row;
    }
    qInfo("%d equivalent options for the best plan", equivalents);
    const QString caption = w.searchPanel()->exportCaption();
    QVERIFY(caption.contains(QString::fromStdString(s.name)));
    QVERIFY(caption.contains(QStringLiteral("anneal seed 0")));
}

// The Topology tab draws the plan shown in the Plan tab: its groups on the GPUs (the
// simulator's rank order) and the traffic of each group per decode step.
void TestWindowViews::topologyTabFollowsThePlan()
{
    MainWindow w;
    QVERIFY(w.showTab(QStringLiteral("topology")));
    QCOMPARE(w.currentTabName(), QStringLiteral("topology"));
    QVERIFY(w.showTab(QStringLiteral("pareto"))); // the Pareto tab itself: tst_pareto_view
    QCOMPARE(w.currentTabName(), QStringLiteral("pareto"));
    QVERIFY(!w.showTab(QStringLiteral("nope")));
    QVERIFY(w.showTab(QStringLiteral("topology")));
    ui::PlanTopologyView* t = w.topologyView();
    // At start the plan view shows the Megatron recipe: TP 8 on one node of 8.
    QVERIFY2(t->summaryText().contains(QStringLiteral("Megatron")), qPrintable(t->summaryText()));
    QVERIFY(t->drawing()->hasPlanOverlay());

    Plan p = w.planView()->currentPlan();
    p.tensorParallel = 2;
    p.pipelineParallel = 2;
    p.dataParallel = 2;
    w.planView()->showPlan(QStringLiteral("by hand"), p);
    QVERIFY2(t->summaryText().contains(QStringLiteral("by hand")), qPrintable(t->summaryText()));
    // The recipe's column/row operators split weights over TP; the same degrees with every
    // operator on its tokens (or replicated) split none, and the summary says which.
    QVERIFY2(t->summaryText().contains(QStringLiteral("combining partial results")), qPrintable(t->summaryText()));
    Plan tokens = p;
    for (int i = 0; i < kOpCount; ++i) {
        const auto id = static_cast<OpId>(i);
        if (!opPresent(w.scenario().model, id))
            continue;
        int pick = -1;
        for (int k = 0; k < opInfo(id).optionCount; ++k)
            if (opOption(id, k).split == Split::Tokens || (pick < 0 && opOption(id, k).split == Split::None))
                pick = k;
        if (pick >= 0)
            tokens.sharding[size_t(i)] = std::uint8_t(pick);
    }
    w.planView()->showPlan(QStringLiteral("tokens"), tokens);
    QVERIFY2(t->summaryText().contains(QStringLiteral("no weight is split"))
                 && !t->summaryText().contains(QStringLiteral("partial results")),
             qPrintable(t->summaryText()));
    w.planView()->showPlan(QStringLiteral("by hand"), p);
    using K = ui::TopologyView::GroupKind;
    const ui::TopologyView* d = t->drawing();
    // rank = (stage * DP + replica) * TP + tp
    QCOMPARE(d->groupOf(5, K::Tensor), 2);
    QCOMPARE(d->groupOf(5, K::Data), 0);
    QCOMPARE(d->groupOf(5, K::Pipeline), 1);
    QCOMPARE(d->groupOf(3, K::Data), 1);
    QCOMPARE(d->groupOf(3, K::Pipeline), 0);
    // The NVLink traffic is one figure per GPU: said once in the legend, where it has room,
    // not cut short in every node's narrow title.
    QCOMPARE(d->nodeCaption(0), QStringLiteral("node 0"));
    QVERIFY2(d->nvlinkLegendText().contains(QStringLiteral("/GPU/step")), qPrintable(d->nvlinkLegendText()));

    // The traffic rows add up to the simulator's bytes, and stay on NVLink inside one node.
    const Scenario s = w.scenario();
    const SimResult r = w.planView()->currentResult();
    const ui::PlanTraffic traffic = ui::planTraffic(s, p, r);
    double comm = 0;
    for (const OpBreakdown& o : r.decode)
        if (o.present)
            comm += o.commBytes;
    double rows = 0;
    bool pipeline = false;
    for (const ui::GroupTraffic& g : traffic.rows) {
        rows += g.bytes;
        pipeline = pipeline || g.collective == QStringLiteral("send/recv");
    }
    QVERIFY(pipeline);
    const double p2p = r.stepTokens * s.model.hiddenSize * 2.0 / p.tensorParallel;
    QVERIFY(std::fabs(rows - (comm + p2p)) <= 1e-6 * rows);
    QCOMPARE(traffic.interBytes, 0.0);
    QCOMPARE(t->trafficTable()->rowCount(), int(traffic.rows.size()));

    // Two nodes and TP 16: the TP group spans nodes; each all-reduce runs inside each node
    // over NVLink, then across over the fabric, and the rows split the bytes that way.
    Scenario two = s;
    two.cluster.nodes = 2;
    Plan wide = p;
    wide.tensorParallel = 16;
    wide.pipelineParallel = 1;
    wide.dataParallel = 1;
    const SimResult rw = Simulator(two).evaluate(wide);
    QCOMPARE(rw.structureChecks, 0u);
    const ui::PlanTraffic tw = ui::planTraffic(two, wide, rw);
    QVERIFY(tw.interBytes > 0);
    QVERIFY(tw.nvlinkBytes > 0);
    double inter = 0, all = 0;
    for (const OpBreakdown& o : rw.decode)
        if (o.present) {
            inter += o.commInterBytes;
            all += o.commBytes;
        }
    QVERIFY(std::fabs(tw.interBytes - inter) <= 1e-6 * inter);
    QVERIFY(std::fabs(tw.interBytes + tw.nvlinkBytes - all) <= 1e-6 * all);
}

// --screenshot-during a search that ends first: the screenshot is taken at its end, and
// stderr says so (it used to write nothing and still exit 0).
void TestWindowViews::screenshotDuringAShortSearch()
{
    QTemporaryDir dir;
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());
    gui.setProcessEnvironment(env);
    const QString shot = dir.filePath(QStringLiteral("mid.png"));
    gui.start(QStringLiteral(SHARDLAB_GUI),
              {QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"), QStringLiteral("--algo"),
               QStringLiteral("megatron"), QStringLiteral("--autostart"), QStringLiteral("--size"),
               QStringLiteral("1024x700"), QStringLiteral("--screenshot"), shot, QStringLiteral("--screenshot-during"),
               QStringLiteral("600000"), QStringLiteral("--quit-when-done")});
    QVERIFY(gui.waitForFinished(60000));
    const QString err = QString::fromUtf8(gui.readAllStandardError());
    QVERIFY2(gui.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("the search ended before 600000 ms; the screenshot shows it finished")),
             qPrintable(err));
    QCOMPARE(QImage(shot).size(), QSize(1024, 700));
}

void TestWindowViews::scriptedTopologyAndParetoTabs()
{
    QTemporaryDir dir;
    for (const QString& tab : {QStringLiteral("topology"), QStringLiteral("pareto"), QStringLiteral("nope")}) {
        QProcess gui;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());
        gui.setProcessEnvironment(env);
        const QString shot = dir.filePath(tab + QStringLiteral(".png"));
        // The topology run names the shipped scenario as the CLI takes it, the others its file.
        const QString scenario = tab == QLatin1String("topology")
            ? QStringLiteral("llama3-70b-8gpu")
            : QStringLiteral(SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json");
        gui.start(QStringLiteral(SHARDLAB_GUI),
                  {QStringLiteral("--scenario"), scenario,
                   QStringLiteral("--tab"), tab, QStringLiteral("--size"), QStringLiteral("1024x700"),
                   QStringLiteral("--screenshot"), shot, QStringLiteral("--quit-when-done")});
        QVERIFY(gui.waitForFinished(60000));
        const QString err = QString::fromUtf8(gui.readAllStandardError());
        if (tab == QLatin1String("nope")) {
            QCOMPARE(gui.exitCode(), 2);
            QVERIFY2(err.contains(QStringLiteral("topology")), qPrintable(err));
            continue;
        }
        QVERIFY2(gui.exitCode() == 0, qPrintable(err));
        const QImage image(shot);
        QCOMPARE(image.size(), QSize(1024, 700));
        // The Pareto tab computes the scenario's front before the screenshot (tst_pareto_view).
        QVERIFY2(!err.contains(QStringLiteral("not available yet")), qPrintable(err));
        if (tab == QLatin1String("pareto"))
            QVERIFY(gui.readAllStandardOutput().contains("Pareto front: "));
    }
    // --autostart on the Pareto tab starts what that tab shows: the front, not a search.
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());
    gui.setProcessEnvironment(env);
    gui.start(QStringLiteral(SHARDLAB_GUI), {QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"),
                                             QStringLiteral("--tab"), QStringLiteral("pareto"),
                                             QStringLiteral("--autostart"), QStringLiteral("--quit-when-done")});
    QVERIFY(gui.waitForFinished(60000));
    const QByteArray out = gui.readAllStandardOutput();
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    QVERIFY2(out.contains("Pareto front: ") && !out.contains("during the search"), out.constData());
    // --load-front is read before anything runs: a bad list, an empty one (the load front's
    // own count rule), or another tab exits 2 naming the flag and the reason.
    const QString pareto = QStringLiteral("pareto");
    const std::vector<std::tuple<QString, QString, QByteArray>> refusals{
        {pareto, QStringLiteral("4,x"), "--load-front: 'x' is not a concurrency"},
        {pareto, QStringLiteral(" , "), "--load-front: give 1 to 64 concurrencies"},
        {pareto, QStringLiteral("4,,16"), "--load-front: an item is empty in '4,,16'"},
        {QStringLiteral("plan"), QStringLiteral("4"), "--load-front: only with --tab pareto"}};
    for (const auto& [tab, list, expected] : refusals) {
        QProcess refused;
        refused.setProcessEnvironment(env);
        refused.start(QStringLiteral(SHARDLAB_GUI), QStringList{QStringLiteral("--scenario"), QStringLiteral("llama3-70b-8gpu"),
                                                               QStringLiteral("--quit-when-done"), QStringLiteral("--tab"), tab,
                                                               QStringLiteral("--load-front"), list});
        QVERIFY(refused.waitForFinished(60000));
        const QByteArray why = refused.readAllStandardError();
        QCOMPARE(refused.exitCode(), 2);
        QVERIFY2(why.contains(expected), why.constData());
    }
}

// The Compare tab opens on the best run against the recipe, also after a restart (runs
// restored, no search in this session); with the recipe alone it says there is nothing
// to compare it with rather than showing 1.000x.
void TestWindowViews::compareOpensOnTheBestRun()
{
    double best = 0;
    QString bestName;
    {
        MainWindow w;
        ui::CompareView* c = w.compareView();
        QCOMPARE(c->pickedA(), c->pickedB());
        QVERIFY2(c->headlineText().contains(QStringLiteral("same plan on both sides")), qPrintable(c->headlineText()));
        // The better run second: the first candidate after the recipe is not the best.
        QVERIFY(runSearch(w, QStringLiteral("random"), 60));
        QVERIFY(runSearch(w, QStringLiteral("anneal"), 1500));
        for (int i = 0; i < 2; ++i)
            if (w.searchPanel()->runInfo(i).bestValue > best) {
                best = w.searchPanel()->runInfo(i).bestValue;
                bestName = w.searchPanel()->runInfo(i).name;
            }
        QVERIFY(w.searchPanel()->runInfo(0).bestValue != w.searchPanel()->runInfo(1).bestValue);
        QCOMPARE(c->pickedB(), QStringLiteral("Megatron recipe"));
        QVERIFY(w.close());
    }
    MainWindow w;
    QVERIFY(!w.lastResult());
    ui::CompareView* c = w.compareView();
    QVERIFY2(c->pickedA().startsWith(QStringLiteral("Best of %1").arg(bestName)), qPrintable(c->pickedA()));
    QCOMPARE(c->pickedB(), QStringLiteral("Megatron recipe"));
    QVERIFY(c->comparison().comparable);
    QVERIFY(c->comparison().ratio > 1.0);
}

// Any two plans side by side: a run's best against the recipe, per generated token, and a
// plan file opened with File > Open plan against the best.
void TestWindowViews::compareTwoPlans()
{
    MainWindow w;
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 1500));
    QTRY_VERIFY(!w.searchPanel()->isReplotPending());
    ui::CompareView* c = w.compareView();
    QStringList names;
    for (const ui::NamedPlan& p : c->candidates())
        names << p.name;
    QVERIFY2(names.contains(QStringLiteral("Megatron recipe")), qPrintable(names.join(QLatin1Char('|'))));
    QVERIFY2(names.contains(QStringLiteral("Best plan (anneal)")), qPrintable(names.join(QLatin1Char('|'))));
    QVERIFY(names.filter(QStringLiteral("Elite #")).size() >= 2);
    QVERIFY(w.showTab(QStringLiteral("compare")));

    QVERIFY(c->compare(QStringLiteral("Best plan (anneal)"), QStringLiteral("Megatron recipe")));
    const Scenario s = w.scenario();
    const Simulator sim(s);
    const double best = sim.evaluate(w.lastResult()->outcome.best).tokensPerSPerGpu;
    const double recipe = sim.evaluate(megatronPlan(sim).plan).tokensPerSPerGpu;
    QCOMPARE(c->resultA().tokensPerSPerGpu, best);
    QCOMPARE(c->resultB().tokensPerSPerGpu, recipe);
    QVERIFY(c->comparison().comparable);
    // Per token: GPU·µs per generated token is what tokens/s per GPU inverts.
    QVERIFY(std::fabs(c->comparison().thisPerToken - 1e6 / best) <= 1e-6 * c->comparison().thisPerToken);
    QVERIFY(std::fabs(c->comparison().refPerToken - 1e6 / recipe) <= 1e-6 * c->comparison().refPerToken);
    QVERIFY2(c->headlineText().contains(QLocale().toString(best / recipe, 'f', 3) + QStringLiteral("×")),
             qPrintable(c->headlineText()));
    QVERIFY(c->breakdown()->isPerToken());
    // NVLink and inter-node bytes apart, from the same traffic model as the Topology tab.
    const ui::PlanTraffic ta = ui::planTraffic(s, w.lastResult()->outcome.best, c->resultA());
    QTableWidget* links = c->linkTable();
    QVERIFY(links->rowCount() >= 4);
    QCOMPARE(links->item(0, 1)->text(), ui::formatBytes(ta.nvlinkBytes));
    QCOMPARE(links->item(1, 1)->text(), ui::formatBytes(ta.interBytes));
    // Per generated token over all the pool's GPUs: the step's bytes by the cost account's
    // step-to-token factor, the one the per-operator GPU·µs use (drafts accepted included).
    const double perStep = costAccount(poolOutcome(s, w.lastResult()->outcome.best, c->resultA())).perStepUs;
    QCOMPARE(links->item(2, 1)->text(), ui::formatBytes(ta.nvlinkBytes * perStep));
    QCOMPARE(links->item(3, 1)->text(), ui::formatBytes(ta.interBytes * perStep));

    // A plan file: the window's own export comes back as a candidate and compares equal.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("best.json"));
    w.planView()->showPlan(QStringLiteral("best"), w.lastResult()->outcome.best);
    QVERIFY(w.exportPlan(file));
    QVERIFY2(w.openPlanFile(file), qPrintable(w.statusText()));
    QCOMPARE(w.currentTabName(), QStringLiteral("compare"));
    QVERIFY(c->compare(QStringLiteral("best.json"), QStringLiteral("Best plan (anneal)")));
    QCOMPARE(c->resultA().tokensPerSPerGpu, best);
    QVERIFY2(c->headlineText().contains(QLocale().toString(1.0, 'f', 3) + QStringLiteral("×")), qPrintable(c->headlineText()));

    // A plan made for 256 GPUs does not fit 8: refused with the reason, nothing added.
    const Scenario big = scenarioPreset("deepseek-v3-256gpu").value;
    const QString other = dir.filePath(QStringLiteral("other.json"));
    QVERIFY(savePlanFile(other.toStdString(), megatronPlan(Simulator(big)).plan, &big).ok());
    const size_t before = c->candidates().size();
    QVERIFY(!w.openPlanFile(other));
    QVERIFY2(w.statusText().contains(QStringLiteral("does not fit")), qPrintable(w.statusText()));
    QCOMPARE(c->candidates().size(), before);
}

void TestWindowViews::whatIfIsKeptWhenTheScenarioChanges()
{
    MainWindow w;
    auto* batch = w.planView()->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
    QVERIFY(batch);
    batch->setValue(batch->value() / 2);
    QVERIFY(w.planView()->currentTitle().endsWith(QStringLiteral("what-if")));
    const Plan whatIf = w.planView()->currentPlan();
    w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("workload.output_tokens"))->setValue(1000);
    bool kept = false;
    for (const ui::NamedPlan& p : w.compareView()->candidates())
        kept = kept || (p.name.startsWith(QStringLiteral("What-if kept")) && p.plan == whatIf);
    QVERIFY(kept);
    QVERIFY2(w.statusText().contains(QStringLiteral("What-if kept")), qPrintable(w.statusText()));
}

// The screenshots of docs/window.md, regenerated with
//   SHARDLAB_DOC_SHOTS=docs/images build/tests/ui/tst_window_views docScreenshots
// (skipped otherwise). Real window, real searches: two variants (NVLink 450 and 900 GB/s).
void TestWindowViews::docScreenshots()
{
    const QString dir = qEnvironmentVariable("SHARDLAB_DOC_SHOTS");
    if (dir.isEmpty())
        QSKIP("set SHARDLAB_DOC_SHOTS=DIR to write the documentation's screenshots");
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 3000));
    w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("cluster.nvlink_gb_per_s"))->setValue(900);
    QVERIFY(runSearch(w, QStringLiteral("genetic"), 3000));
    w.searchPanel()->renameRun(0, QStringLiteral("anneal, NVLink 450"));
    w.searchPanel()->renameRun(1, QStringLiteral("genetic, NVLink 900"));
    QTRY_VERIFY(!w.searchPanel()->isReplotPending());
    auto shoot = [&](const QString& tab, const QString& file) {
        QVERIFY(w.showTab(tab));
        QTRY_VERIFY(!w.searchPanel()->isReplotPending());
        QCoreApplication::processEvents(); // the shown tab's layout and queued replots
        QString error;
        QVERIFY2(ui::saveScreenshot(&w, dir + QLatin1Char('/') + file, &error), qPrintable(error));
    };
    shoot(QStringLiteral("search"), QStringLiteral("window-runs.png"));
    QVERIFY(w.compareView()->compare(QStringLiteral("Best of genetic, NVLink 900 [V2]"), QStringLiteral("Megatron recipe")));
    shoot(QStringLiteral("compare"), QStringLiteral("window-compare.png"));
    w.planView()->showPlan(QStringLiteral("Best of genetic, NVLink 900"), w.searchPanel()->runInfo(1).best);
    shoot(QStringLiteral("topology"), QStringLiteral("window-topology.png"));
    QString error;
    QVERIFY(ui::saveScreenshot(w.searchPanel()->heatmap(), dir + QStringLiteral("/window-heatmap.png"), &error));
    // The larger cluster: the topology of a 256-GPU mixture of experts.
    w.setScenario(scenarioPreset("deepseek-v3-256gpu").value);
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 3000));
    w.topologyView()->setColourBy(ui::TopologyView::GroupKind::Expert);
    shoot(QStringLiteral("topology"), QStringLiteral("window-topology-moe.png"));
    w.resize(1024, 700);
    shoot(QStringLiteral("search"), QStringLiteral("window-1024x700.png"));
    // The Pareto tab with the front under load beside the certified steady-state front.
    w.resize(1600, 1000);
    w.setScenario(scenarioPreset("llama3-70b-8gpu").value);
    QVERIFY(w.showTab(QStringLiteral("pareto")));
    QSignalSpy all(w.paretoView(), &ui::ParetoView::allFinished);
    w.paretoView()->setLoadConcurrencies(QStringLiteral("1,4,16,64,128,256"));
    QVERIFY(w.paretoView()->computeAll(true));
    QVERIFY(all.wait(300000));
    QVERIFY(all.takeFirst().at(0).toBool());
    QVERIFY(w.paretoView()->loadFront().ok);
    shoot(QStringLiteral("pareto"), QStringLiteral("window-load-front.png"));
}

// With TP 1 every sharding of an operator is the same computation on one GPU: the heatmap
// must mark the options the best plan did not pick as equivalent, not leave a frame that
// reads "chosen" on one of them only.
void TestWindowViews::heatmapShowsEquivalentsOfATp1Plan()
{
    Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    s.workload.tpotSloMs = 10000; // the point is the sharding, not the limits
    s.workload.ttftSloMs = 1e6;
    const Simulator sim(s);
    Plan p = megatronPlan(sim).plan;
    p.tensorParallel = 1;
    p.pipelineParallel = 8;
    p.dataParallel = 1;
    p.microBatches = 8;
    p.batch = 64;
    const SimResult r = sim.evaluate(p);
    QVERIFY2(r.valid, "the TP 1 plan must be valid for this test");
    ui::SearchPanel panel;
    panel.setScenario(s);
    panel.beginRun(QStringLiteral("synthetic"));
    ui::JobResult job;
    job.outcome.found = true;
    job.outcome.best = p;
    job.outcome.bestResult = r;
    job.outcome.calls = 1;
    ui::EliteEntry e;
    e.plan = p;
    e.valid = true;
    e.tokensPerSPerGpu = r.tokensPerSPerGpu;
    job.elites = {e};
    panel.finishRun(job);
    int equivalents = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(s.model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o) {
            if (o == p.option(id))
                continue;
            Plan q = p;
            q.sharding[i] = std::uint8_t(o);
            const SimResult rq = sim.evaluate(q);
            const bool same = rq.valid && rq.structureChecks == 0
                && std::fabs(rq.tokensPerSPerGpu - r.tokensPerSPerGpu) <= 1e-9 * r.tokensPerSPerGpu;
            QCOMPARE(panel.heatmap()->isEquivalent(id, o), same);
            equivalents += same;
        }
    }
    QVERIFY2(equivalents > 0, "a TP 1 plan has options that change nothing");
    QVERIFY(panel.heatmap()->toolTipAt(panel.heatmap()->cellRect(1, p.option(OpId::AttnNorm) == 0 ? 1 : 0).center())
                .contains(QStringLiteral("Equivalent")));
}

QTEST_MAIN(TestWindowViews)
#include "tst_window_views.moc"
