// The proved shortest TPOT: a plan reaches the stated figure, exact proves no plan reaches
// the stated bound below it, and the two are within the tolerance.
#include <QtTest>

#include <cmath>

#include "runner/latency_floor.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

class TestLatencyFloor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void statedMinimumIsReachedAndProved_data();
    void statedMinimumIsReachedAndProved();
    void memoryBoundScenarioHasNoFloor();
};

void TestLatencyFloor::statedMinimumIsReachedAndProved_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<bool>("disaggregated");
    QTest::newRow("dense") << QStringLiteral("llama3-70b-8gpu") << false;
    QTest::newRow("moe") << QStringLiteral("mixtral-8x22b-64gpu") << false;
    QTest::newRow("two pools") << QStringLiteral("llama3-70b-8gpu") << true;
}

void TestLatencyFloor::statedMinimumIsReachedAndProved()
{
    QFETCH(QString, scenario);
    QFETCH(bool, disaggregated);
    Scenario s = presetScenario(scenario.toLatin1().constData());
    if (disaggregated)
        s.workload.serving = ServingMode::Disaggregated;
    s.workload.tpotSloMs = 0.5;
    SearchOptions exact;
    exact.algorithm = "exact";
    const SearchOutcome none = runSearch(s, exact);
    QVERIFY2(none.provedInfeasible, none.message.c_str());

    const TpotFloor f = shortestTpot(s, s.workload.tpotSloMs);
    QVERIFY(f.reached);
    QVERIFY(f.proved);
    QVERIFY(f.reachedMs > f.unreachableMs);
    QVERIFY(f.reachedMs <= f.unreachableMs * 1.01);
    // The stated figure is a valid plan's TPOT.
    Scenario at = s;
    at.workload.tpotSloMs = f.reachedMs;
    const DeploymentOutcome o = evaluateDeployment(at, f.deployment);
    QVERIFY2(o.valid, o.reasons.empty() ? "" : o.reasons.front().c_str());
    QCOMPARE(o.tpotMs, f.reachedMs);
    // And no plan reaches the bound below it.
    Scenario below = s;
    below.workload.tpotSloMs = f.unreachableMs;
    const SearchOutcome proof = runSearch(below, exact);
    QVERIFY(!proof.found);
    QVERIFY(proof.provedInfeasible);
    const std::string text = describeTpotFloor(f, s.workload.tpotSloMs);
    QVERIFY2(text.find("proved by exact") != std::string::npos, text.c_str());
}

void TestLatencyFloor::memoryBoundScenarioHasNoFloor()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.cluster.gpu.hbmGb = 4; // 70 B parameters do not fit 32 GB at any TPOT
    const TpotFloor f = shortestTpot(s, 0);
    QVERIFY(!f.reached);
    QVERIFY(!f.proved);
    QVERIFY(describeTpotFloor(f, 50).find("without a TPOT limit") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestLatencyFloor)
#include "tst_latency_floor.moc"
