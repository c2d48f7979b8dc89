// What the search panel's heatmap shows, read from what a search delivers: ppo's
// per-option probabilities from the operator slots of its slot distributions (slots that
// are not an operator's, options past the operator's and non-finite values are skipped),
// else the elite plans' share of each option.
#include <QtTest>

#include <cmath>

#include "heatmap_values.h"
#include "heatmap_widget.h"
#include "io/presets.h"

#include <QSet>

using namespace shardlab;
using namespace shardlab::ui;

class TestHeatmapValues : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void policyProbabilitiesAreRead();
    void noOperatorSlotGivesNoProbabilities();
    void eliteSharesCountEachOption();
    void narrowCellsNameTheirOptions();
};

namespace {

SearchProgress::SlotDistribution operatorSlot(OpId op, std::vector<int> options, std::vector<double> probabilities)
{
    SearchProgress::SlotDistribution d;
    d.slot.name = std::string("operators.") + opName(op);
    d.slot.kind = SlotKind::Operator;
    d.slot.op = op;
    d.slot.values = std::move(options);
    d.probabilities = std::move(probabilities);
    return d;
}

SearchProgress::SlotDistribution degreeSlot(const char* name, SlotKind kind, std::vector<int> values)
{
    SearchProgress::SlotDistribution d;
    d.slot.name = name;
    d.slot.kind = kind;
    d.slot.values = std::move(values);
    d.probabilities.assign(d.slot.values.size(), 1.0 / d.slot.values.size());
    return d;
}

} // namespace

void TestHeatmapValues::policyProbabilitiesAreRead()
{
    const OpId op = OpId::LmHead;
    SearchProgress::SlotDistribution noOperator = operatorSlot(OpId::LmHead, {0}, {1.0});
    noOperator.slot.op = OpId::Count; // an operator slot that names no operator
    const std::vector<SearchProgress::SlotDistribution> distributions = {
        degreeSlot("tensor_parallel", SlotKind::TensorParallel, {1, 2, 4, 8}), // not an operator: not on the map
        operatorSlot(op, {0, 1, 9}, {0.75, 0.25, 1.0}),                       // option 9: no such option
        noOperator,
        operatorSlot(OpId::Combine, {0}, {std::nan("")}),
    };
    const auto grid = policyOptionProbabilities(distributions);
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

void TestHeatmapValues::noOperatorSlotGivesNoProbabilities()
{
    QVERIFY(!policyOptionProbabilities({degreeSlot("batch", SlotKind::Batch, {16, 32, 64})}).has_value());
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

// DeepSeek-V3's fifteen rows in a heatmap narrower than the one a 1024x700 window gives it
// (about 255 px): every cell names its option, whole, in its short form, or elided to at
// least three letters (the colour says the share); such cells used to show only "100%".
// A row's options read apart (all_gather and all_to_all both elide to "all…").
void TestHeatmapValues::narrowCellsNameTheirOptions()
{
    HeatmapWidget h;
    h.setOperators(presentOperators(scenarioPreset("deepseek-v3-256gpu").value.model));
    HeatmapWidget::Grid values{};
    for (auto& row : values)
        row.fill(1.0); // "100%": the widest share beside a name
    h.setValues(values, QStringLiteral("shares"));
    h.resize(230, 260);
    QVERIFY(h.operators().size() >= 15);
    for (int r = 0; r < int(h.operators().size()); ++r) {
        const OpInfo& info = opInfo(h.operators()[size_t(r)]);
        QSet<QString> names;
        for (int c = 0; c < info.optionCount; ++c) {
            const QString name = QString::fromLatin1(info.options[c].name), shown = h.cellText(r, c);
            names.insert(shown.section(QLatin1Char(' '), -1));
            QVERIFY2(shown.contains(name) || shown == shortOptionName(name)
                         || (shown.endsWith(QChar(0x2026)) && name.startsWith(shown.chopped(1)) && shown.size() >= 4),
                     qPrintable(QStringLiteral("%1 %2: '%3'").arg(QString::fromLatin1(info.name), name, shown)));
        }
        QCOMPARE(int(names.size()), info.optionCount);
    }
}

QTEST_MAIN(TestHeatmapValues)
#include "tst_heatmap_values.moc"
