// The window's policy view: it says whether the policy was pretrained, shows the
// shipped policy's pretraining curves, and which elite each proposal of the last rollout came
// from beside the context's attention, from the metric names a real ppo search publishes;
// in the window, beside a whole heatmap at 1024x700 and 1440x900.
#include <QtTest>

#include <cmath>

#include "heatmap_widget.h"
#include "io/presets.h"
#include "main_window.h"
#include "plugin/rl_plugin.h"
#include "policy_view.h"
#include "search_panel.h"
#include "window_fixtures.h"
#include "qcp.h"
#include "rl/pretrained_policy.h"
#include "runner/run_search.h"

using namespace shardlab;

namespace {

class LastProgress : public SearchObserver {
public:
    void progress(const SearchProgress& p) override { last = p; }
    SearchProgress last;
};

SearchProgress ppoProgress(bool pretrained)
{
    auto s = scenarioPreset("llama3-70b-8gpu");
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    SearchOptions o;
    o.algorithm = "ppo";
    o.budget = 1200;
    o.seed = 2;
    o.extra["ppo.pretrained"] = pretrained ? 1 : 0;
    LastProgress obs;
    const SearchOutcome r = runSearch(s.value, o, &obs);
    if (!r.found)
        qFatal("%s", r.message.c_str());
    return obs.last;
}

} // namespace

class TestPolicyView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { startFreshSession(); }

    // The first slot, before any ppo search of this process: a window on another algorithm
    // does not load LibTorch's plugin; choosing ppo loads it on a thread of its own, so
    // the first ppo search does not dlopen it on its worker while the event loop waits.
    void choosingPpoLoadsThePlugin()
    {
        QVERIFY(!rlPluginLoaded());
        ui::MainWindow w;
        w.setAlgorithm(QStringLiteral("anneal"));
        QTest::qWait(200);
        QVERIFY(!rlPluginLoaded());
        w.setAlgorithm(QStringLiteral("ppo"));
        QTRY_VERIFY_WITH_TIMEOUT(rlPluginLoaded(), 30000);
    }

    // After a ppo search the Search tab's right column holds the heatmap, the confidence
    // plot and the policy view. Where the window is too short for all three, the column
    // scrolls: every heatmap row and its legend stay whole, nothing is drawn over anything,
    // and the confidence plot keeps its legible height.
    void policyColumnKeepsTheHeatmapWhole_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1024x700") << QSize(1024, 700);
        QTest::newRow("1440x900") << QSize(1440, 900);
    }
    void policyColumnKeepsTheHeatmapWhole()
    {
        QFETCH(QSize, size);
        ui::MainWindow w;
        w.setScenario(preset("deepseek-v3-256gpu"));
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(runSearch(w, QStringLiteral("ppo"), 1500));
        ui::SearchPanel* panel = w.searchPanel();
        QTRY_VERIFY(!panel->isReplotPending());
        QCOMPARE(w.size(), size);
        ui::HeatmapWidget* h = panel->heatmap();
        auto* plot = panel->findChild<QCustomPlot*>(QStringLiteral("policyPlot"));
        auto* view = panel->findChild<ui::PolicyView*>();
        QVERIFY(plot && view);
        QTRY_VERIFY(plot->isVisible() && view->isVisible());
        QVERIFY2(h->rowsFit(), qPrintable(QStringLiteral("heatmap %1 px high").arg(h->height())));
        QVERIFY(h->legendFits());
        QVERIFY2(plot->height() >= plot->minimumHeight(), qPrintable(QString::number(plot->height())));
        const auto rectIn = [&](QWidget* x) { return QRect(x->mapTo(panel, QPoint(0, 0)), x->size()); };
        QVERIFY(!rectIn(h).intersects(rectIn(plot)));
        QVERIFY(!rectIn(plot).intersects(rectIn(view)));
        QVERIFY(!rectIn(h).intersects(rectIn(view)));
    }

    void showsAPretrainedRun()
    {
        ui::PolicyView v;
        QVERIFY(!v.hasPolicy());
        QVERIFY(v.setMetrics(ppoProgress(true).metrics));
        QVERIFY(v.hasPolicy());
        QVERIFY2(v.statusText().contains(QStringLiteral("Pretrained")), qPrintable(v.statusText()));
        QVERIFY2(!v.statusText().contains(QStringLiteral("No policy update yet")), qPrintable(v.statusText()));
        // One bar per memory place (scratch + the elite history of 3), each a distribution.
        QCOMPARE(v.anchorShares().size(), 4);
        QCOMPARE(v.attention().size(), 4);
        double a = 0, t = 0;
        for (double x : v.anchorShares())
            a += x;
        for (double x : v.attention())
            t += x;
        QVERIFY2(std::abs(a - 1) < 1e-6, qPrintable(QString::number(a)));
        QVERIFY2(std::abs(t - 1) < 1e-4, qPrintable(QString::number(t)));
        v.clear();
        QVERIFY(!v.hasPolicy());
    }

    // A run before its first update (a budget under ppo.samples) has nothing to draw: the
    // status says why the plot is empty.
    void saysWhyNothingIsDrawnBeforeTheFirstUpdate()
    {
        ui::PolicyView v;
        QVERIFY(v.setMetrics({{"pretrained", 1}, {"temperature", 1}, {"elite_age", 0}}));
        QVERIFY(v.attention().isEmpty());
        QVERIFY2(v.statusText().contains(QStringLiteral("No policy update yet: PPO updates after every ppo.samples")),
                 qPrintable(v.statusText()));
    }

    void showsAFromScratchRun()
    {
        ui::PolicyView v;
        QVERIFY(v.setMetrics(ppoProgress(false).metrics));
        QVERIFY2(v.statusText().contains(QStringLiteral("From scratch")), qPrintable(v.statusText()));
    }

    void pretrainingCurvesAreTheShippedOnes()
    {
        const rl::PretrainedPolicyInfo info = rl::pretrainedPolicyInfo();
        QVERIFY2(info.available, info.error.c_str());
        QWidget parent;
        QCustomPlot* plot = ui::PolicyView::makePretrainingPlot(&parent);
        QVERIFY(plot);
        QCOMPARE(plot->graphCount(), 3);
        for (int g = 0; g < 3; ++g)
            QCOMPARE(plot->graph(g)->dataCount(), static_cast<int>(info.curve.size()));
        QCOMPARE(plot->graph(1)->data()->at(0)->value, info.curve.front().validationLoss);
        QVERIFY(ui::PolicyView::pretrainingSummary().contains(QString::number(info.trainingScenarios)));
    }
};

QTEST_MAIN(TestPolicyView)
#include "tst_policy_view.moc"
