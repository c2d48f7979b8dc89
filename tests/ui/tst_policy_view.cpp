// The window's policy view: it says whether the policy was pretrained, shows the
// shipped policy's pretraining curves, and which elite each proposal of the last rollout came
// from beside the context's attention, from the metric names a real ppo search publishes.
#include <QtTest>

#include <cmath>

#include "io/presets.h"
#include "policy_view.h"
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
    void showsAPretrainedRun()
    {
        ui::PolicyView v;
        QVERIFY(!v.hasPolicy());
        QVERIFY(v.setMetrics(ppoProgress(true).metrics));
        QVERIFY(v.hasPolicy());
        QVERIFY2(v.statusText().contains(QStringLiteral("Pretrained")), qPrintable(v.statusText()));
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
