// What the search panel's heatmap shows, read from what a search delivers: ppo's
// per-option probabilities decoded from its "p:operators.<op>:<option>" metrics (names it
// cannot read are skipped), else the elite plans' share of each option.
#include <QtTest>

#include <cmath>

#include "heatmap_values.h"

using namespace shardlab;
using namespace shardlab::ui;

class TestHeatmapValues : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void policyProbabilitiesAreDecoded();
    void otherMetricsGiveNoProbabilities();
    void eliteSharesCountEachOption();
};

void TestHeatmapValues::policyProbabilitiesAreDecoded()
{
    const OpId op = OpId::LmHead;
    const std::string prefix = std::string("p:operators.") + opName(op) + ":";
    const std::vector<std::pair<std::string, double>> metrics = {
        {"confidence", 0.9},
        {prefix + "0", 0.75},
        {prefix + "1", 0.25},
        {prefix + "9", 1.0},                  // no such option
        {"p:operators.no_such_op:0", 1.0},    // no such operator
        {std::string("p:operators.") + opName(OpId::Combine) + ":0", std::nan("")},
    };
    const auto grid = policyOptionProbabilities(metrics);
    QVERIFY(grid.has_value());
    QCOMPARE((*grid)[int(op)][0], 0.75);
    QCOMPARE((*grid)[int(op)][1], 0.25);
    QVERIFY(std::isnan((*grid)[int(op)][2]));
    QVERIFY(std::isnan((*grid)[int(OpId::Combine)][0]));
    int known = 0;
    for (const auto& row : *grid)
        for (double v : row)
            known += std::isfinite(v) ? 1 : 0;
    QCOMPARE(known, 2);
}

void TestHeatmapValues::otherMetricsGiveNoProbabilities()
{
    QVERIFY(!policyOptionProbabilities({{"temperature", 0.5}, {"confidence", 0.9}}).has_value());
    QVERIFY(!policyOptionProbabilities({}).has_value());
}

void TestHeatmapValues::eliteSharesCountEachOption()
{
    const OpId op = OpId::LmHead;
    QVERIFY(opInfo(op).optionCount >= 2);
    EliteEntry a, b;
    a.plan.sharding[int(op)] = 0;
    b.plan.sharding[int(op)] = 1;
    const HeatmapWidget::Grid shares = eliteOptionShares({a, b, b, b});
    QCOMPARE(shares[int(op)][0], 0.25);
    QCOMPARE(shares[int(op)][1], 0.75);
    for (int o = opInfo(op).optionCount; o < kMaxOptions; ++o)
        QVERIFY(std::isnan(shares[int(op)][o]));
}

QTEST_MAIN(TestHeatmapValues)
#include "tst_heatmap_values.moc"
