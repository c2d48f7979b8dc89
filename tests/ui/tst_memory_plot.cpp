// The plan tab's memory bars: every term of the simulator's memory breakdown is stacked, so a
// bar ends at the total the simulator checks against the capacity; the memory an engine keeps
// out of its KV pool is its own segment, named in the legend only when a plan has some.
#include <QtTest>

#include "memory_plot.h"
#include "qcp.h"

using namespace shardlab;
using namespace shardlab::ui;

namespace {

QCPBars* barsNamed(QCustomPlot* plot, const QString& name)
{
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (plot->plottable(i)->name() == name)
            return qobject_cast<QCPBars*>(plot->plottable(i));
    return nullptr;
}

// The stacked bar's length at key 0: every segment's value.
double stackedTotal(QCustomPlot* plot)
{
    double sum = 0;
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i)); bars && !bars->data()->isEmpty())
            sum += bars->data()->begin()->value;
    return sum;
}

SimResult breakdown(double heldBack)
{
    SimResult r;
    MemoryBreakdown& m = r.memory;
    m.weightsGb = 35;
    m.kvCacheGb = 30;
    m.kvHeldBackGb = heldBack;
    m.activationGb = 2;
    m.reserveGb = 6;
    m.totalGb = 35 + 30 + heldBack + 2 + 6;
    m.capacityGb = 85.52;
    return r;
}

// The total label the plot drew for its first bar ("88.3 GB"), and its colour.
QCPItemText* totalLabel(QCustomPlot* plot)
{
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->text().endsWith(QStringLiteral(" GB"))
            && !t->text().contains(QStringLiteral("HBM")) && t->position->value() == 0)
            return t;
    return nullptr;
}

} // namespace

class TestMemoryPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void heldBackMemoryIsStackedAndNamed();
    void labelIsTheSimulatorsTotalAndVerdict();
};

void TestMemoryPlot::heldBackMemoryIsStackedAndNamed()
{
    MemoryPlot view;
    view.resize(600, 200);
    auto* plot = view.findChild<QCustomPlot*>(QStringLiteral("memoryPlot"));
    QVERIFY(plot);
    QCPBars* held = barsNamed(plot, QStringLiteral("kept out of the KV pool"));
    QVERIFY(held);

    view.setMemory(breakdown(3.3), nullptr, QString());
    QVERIFY(plot->legend->hasItemWithPlottable(held));
    QCOMPARE(held->data()->size(), 1);
    QCOMPARE(held->data()->begin()->value, 3.3);
    // The stack ends at the simulator's total.
    QCOMPARE(stackedTotal(plot), breakdown(3.3).memory.totalGb);

    view.setMemory(breakdown(0), nullptr, QString());
    QVERIFY(!plot->legend->hasItemWithPlottable(held));
    QCOMPARE(stackedTotal(plot), breakdown(0).memory.totalGb);
}

// The bar's label is the simulator's total, not a sum of the drawn segments (the sampler's
// warm-up is in the total and has no segment), and it is red exactly when the simulator
// set the plan's memory violation, whatever the label's rounding.
void TestMemoryPlot::labelIsTheSimulatorsTotalAndVerdict()
{
    MemoryPlot view;
    view.resize(600, 200);
    auto* plot = view.findChild<QCustomPlot*>(QStringLiteral("memoryPlot"));
    QVERIFY(plot);
    SimResult r = breakdown(0);
    r.memory.samplerWarmupGb = 4;
    r.memory.totalGb += 4; // 77 GB
    view.setMemory(r, nullptr, QString());
    QCPItemText* label = totalLabel(plot);
    QVERIFY(label);
    QCOMPARE(label->text(), QStringLiteral("77.0 GB"));
    const QColor fits = label->color();
    r.violations = 1u << static_cast<int>(Violation::Memory);
    view.setMemory(r, nullptr, QString());
    label = totalLabel(plot);
    QVERIFY(label);
    QVERIFY(label->color() != fits);
}

QTEST_MAIN(TestMemoryPlot)
#include "tst_memory_plot.moc"
