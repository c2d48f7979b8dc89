// The Pareto tab's sizing panel: the rate it sizes at is the one it names, and its verdict
// comes first.
#include <QtTest>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSignalSpy>

#include "io/presets.h"
#include "io/scenario_json.h"
#include "main_window.h"
#include "pareto_view.h"
#include "window_fixtures.h"

using namespace shardlab;
using namespace shardlab::ui;

class TestParetoSizing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }
    void rateNamedIsTheRateUsed();
    void halfCapacityBelowTheFieldSaysSo();
    void verdictComesFirst();
};

// A scenario's request rate finer than the field's two decimals, or below its smallest rate:
// sizing runs at the field's value, and the status names that value beside the scenario's
// own and says why they differ.
void TestParetoSizing::rateNamedIsTheRateUsed()
{
    const struct {
        double scenario, field;
        const char* status;
    } cases[] = {{3.333, 3.33, "Sizing at 3.33 requests/s, the scenario's 3.333 rounded to the field's two decimals"},
                 {0.004, 0.01, "Sizing at 0.01 requests/s, the scenario's 0.004 raised to the field's smallest rate"}};
    for (const auto& c : cases) {
        MainWindow w;
        Scenario s = preset("llama3-70b-8gpu");
        s.workload.load.protocol = LoadProtocol::RequestRate;
        s.workload.load.requestRate = c.scenario;
        s.workload.load.requests = 100;
        w.setScenario(s);
        ParetoView* v = w.paretoView();
        QSignalSpy all(v, &ParetoView::allFinished);
        QVERIFY(v->computeAll());
        QVERIFY(all.wait(300000));
        QVERIFY(v->front().ok && v->sizing().ok);
        auto* rate = v->findChild<QDoubleSpinBox*>();
        QVERIFY(rate);
        QCOMPARE(rate->value(), c.field);
        QVERIFY2(v->statusText().contains(QString::fromUtf8(c.status)), qPrintable(v->statusText()));
    }
}

// A scenario without a rate of its own is sized at half what the best plan serves; when that
// is below the field's smallest rate (requests of 120,000 output tokens), the status says the
// field's rate is above half instead of calling it half.
void TestParetoSizing::halfCapacityBelowTheFieldSaysSo()
{
    MainWindow w;
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.outputTokens = 120000;
    w.setScenario(s);
    ParetoView* v = w.paretoView();
    QSignalSpy all(v, &ParetoView::allFinished);
    QVERIFY(v->computeAll());
    QVERIFY(all.wait(300000));
    QVERIFY(v->front().ok);
    auto* rate = v->findChild<QDoubleSpinBox*>();
    QVERIFY(rate);
    QCOMPARE(rate->value(), 0.01);
    QVERIFY2(v->statusText().contains(QStringLiteral("at the field's smallest rate, 0.01 requests/s, above half the best "
                                                     "plan's")),
             qPrintable(v->statusText()));
}

// A disaggregated sizing whose steady-state count breaks p90 TTFT under Poisson arrivals:
// the panel's first line is the count that holds the limits, so a short panel shows the
// answer without scrolling.
void TestParetoSizing::verdictComesFirst()
{
    MainWindow w;
    const auto d = loadScenarioFile(SHARDLAB_RESOURCES "/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json");
    QVERIFY2(d.ok(), d.firstError().c_str());
    w.setScenario(d.value);
    ParetoView* v = w.paretoView();
    auto* rate = v->findChild<QDoubleSpinBox*>();
    QVERIFY(rate);
    rate->setValue(3.93);
    QSignalSpy done(v, &ParetoView::jobFinished);
    QVERIFY(v->computeSizing());
    QVERIFY(done.wait(300000));
    QVERIFY(v->sizing().ok);
    QVERIFY2(v->sizing().queueingGpus > v->sizing().gpus, "the steady-state answer queues over the TTFT limit");
    auto* label = v->findChild<QLabel*>(QStringLiteral("pareto.sizing"));
    QVERIFY(label);
    QVERIFY2(label->text().startsWith(QStringLiteral("<b>%1 GPUs</b> hold the limits").arg(v->sizing().queueingGpus)),
             qPrintable(label->text()));
}

QTEST_MAIN(TestParetoSizing)
#include "tst_pareto_sizing.moc"
