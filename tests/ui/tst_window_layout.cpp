// What a user sees of the window at 1024x700 (a laptop) offscreen: the message line keeps
// its height whatever it says, Start is never disabled under a "Ready to run" banner, the
// search tables show what fits instead of scrolling sideways, the plan chart's labels do
// not collide, and the scenario form fits its dock.
#include <QtTest>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QStyleOptionComboBox>
#include <QTabWidget>
#include <QScrollArea>
#include <QTableWidget>
#include <QTextDocument>

#include "breakdown_plot.h"
#include "elided_label.h"
#include "heatmap_values.h"
#include "heatmap_widget.h"
#include "search_panel.h"
#include "io/presets.h"
#include "main_window.h"
#include "pareto_view.h"
#include "plan_view.h"
#include "qcp.h"
#include "scenario_editor.h"
#include "window_fixtures.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

class TestWindowLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { startFreshSession(); }
    void longMessageKeepsTheTabsInPlace();
    void readyToRunOnlyWhenStartIsEnabled();
    void searchTabFitsAt1024x700();
    void heatmapShowsTheSelectedRunsOperators();
    void textFitsAt1024x700();
    void curveLegendRewrapsWhenTheWindowShrinks();
    void emptyCurveKeepsItsWidth();
    void tablesShowEveryColumnWhenWide();
    void planChartIsLegibleAt1024x700();
    void scenarioFormFitsTheDockAt1024x700();
};

namespace {


QPoint topLeftIn(QWidget* w, QWidget* top) { return w->mapTo(top, QPoint(0, 0)); }

// `w` at `size` on the Llama preset with two finished runs (anneal and genetic, 400 calls
// each) and its Search tab replotted: the tables and legends the layout tests measure.
bool showWithTwoRuns(MainWindow& w, QSize size)
{
    w.setScenario(preset("llama3-70b-8gpu"));
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !runSearch(w, QStringLiteral("anneal"), 400)
        || !runSearch(w, QStringLiteral("genetic"), 400))
        return false;
    return QTest::qWaitFor([&] { return !w.searchPanel()->isReplotPending(); }) && w.size() == size;
}

// Every header and cell of `t` shown fits its column: the width the view's delegate asks
// for the text (with its margins and check box) is at most the column's. Hidden columns are
// the fitted tables' (verifyNoSidewaysScrolling checks their text is in the tooltips).
void verifyColumnsFit(const QTableWidget* t)
{
    QVERIFY(t->isVisible());
    QVERIFY(t->rowCount() > 0);
    for (int c = 0; c < t->columnCount(); ++c) {
        if (t->isColumnHidden(c))
            continue;
        const int width = t->columnWidth(c);
        const QString name = t->horizontalHeaderItem(c) ? t->horizontalHeaderItem(c)->text() : QString();
        QVERIFY2(t->horizontalHeader()->sectionSizeHint(c) <= width,
                 qPrintable(QStringLiteral("%1: header \"%2\" needs %3 px, has %4")
                                .arg(t->objectName(), name)
                                .arg(t->horizontalHeader()->sectionSizeHint(c))
                                .arg(width)));
        for (int r = 0; r < t->rowCount(); ++r) {
            const QTableWidgetItem* it = t->item(r, c);
            if (!it)
                continue;
            QStyleOptionViewItem opt;
            opt.initFrom(t);
            opt.font = it->font();
            opt.fontMetrics = QFontMetrics(it->font());
            opt.features = QStyleOptionViewItem::HasDisplay;
            const int needed = t->itemDelegate()->sizeHint(opt, t->model()->index(r, c)).width();
            QVERIFY2(needed <= width, qPrintable(QStringLiteral("%1 row %2: \"%3\" needs %4 px, its column %5 has %6")
                                                     .arg(t->objectName())
                                                     .arg(r)
                                                     .arg(it->text())
                                                     .arg(needed)
                                                     .arg(name)
                                                     .arg(width)));
        }
    }
}

// `T` (RunsTable or EliteTable) shows no horizontal scroll range, keeps the `kept` columns
// shown, and every cell of a hidden column is in what hovering a kept cell of its row
// shows (with the column's name); the columns shown fit (verifyColumnsFit).
template <class T>
void verifyNoSidewaysScrolling(T* t, const std::vector<int>& kept)
{
    QVERIFY(t);
    QTRY_COMPARE(t->horizontalScrollBar()->maximum(), 0);
    for (int c : kept)
        QVERIFY2(!t->isColumnHidden(c), qPrintable(QStringLiteral("%1: column %2 hidden").arg(t->objectName()).arg(c)));
    int shownWidth = 0;
    for (int c = 0; c < t->columnCount(); ++c)
        shownWidth += t->isColumnHidden(c) ? 0 : t->columnWidth(c);
    QVERIFY2(shownWidth <= t->viewport()->width(), qPrintable(QStringLiteral("%1: %2 px of columns in %3")
                                                                  .arg(t->objectName())
                                                                  .arg(shownWidth)
                                                                  .arg(t->viewport()->width())));
    for (int c : t->hiddenColumns())
        for (int r = 0; r < t->rowCount(); ++r)
            for (int shown : kept) {
                const QString tip = t->toolTipAt(r, shown);
                const QString want =
                    QStringLiteral("%1: %2").arg(t->horizontalHeaderItem(c)->text(), t->item(r, c)->text());
                QVERIFY2(tip.contains(want), qPrintable(QStringLiteral("%1 row %2: \"%3\" not in \"%4\"")
                                                            .arg(t->objectName())
                                                            .arg(r)
                                                            .arg(want, tip)));
            }
    verifyColumnsFit(t);
}

// Every visible combo box shows each of its items whole when chosen (all that do not, in
// one message).
void verifyCombosFit(QWidget* top)
{
    QStringList clipped;
    for (QComboBox* box : top->findChildren<QComboBox*>()) {
        if (!box->isVisible())
            continue;
        QStyleOptionComboBox opt;
        opt.initFrom(box);
        opt.editable = box->isEditable();
        const QRect field = box->style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, box);
        for (int i = 0; i < box->count(); ++i) {
            const int needed = box->fontMetrics().horizontalAdvance(box->itemText(i));
            if (needed > field.width())
                clipped << QStringLiteral("%1: \"%2\" needs %3 px, its field has %4")
                               .arg(box->objectName(), box->itemText(i))
                               .arg(needed)
                               .arg(field.width());
        }
    }
    QVERIFY2(clipped.isEmpty(), qPrintable(clipped.join(QStringLiteral("; "))));
}

// `inner` lies wholly inside `outer`'s widget rectangle.
void verifyInside(QWidget* inner, QWidget* outer, const QString& what)
{
    const QRect r(inner->mapTo(outer, QPoint(0, 0)), inner->size());
    QVERIFY2(outer->rect().contains(r), qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 is outside %6x%7")
                                                       .arg(what)
                                                       .arg(r.x())
                                                       .arg(r.y())
                                                       .arg(r.width())
                                                       .arg(r.height())
                                                       .arg(outer->width())
                                                       .arg(outer->height())));
}

// The plan chart as drawn: no value label overlaps another or a reference marker or leaves
// the bars' area, at most a quarter of the bars go without their value (it is in the
// hover), the operators' rows are at least a line of text apart (their names cannot touch),
// every line of the title and the axis label fits the plot, and the plot fits its tab.
void verifyChartLegible(ui::BreakdownPlot* chart)
{
    QCustomPlot* plot = chart->plot();
    // The second replot draws with the tick count the first one fitted to the width, and
    // fits the same count again (no flip-flop between two layouts).
    plot->replot();
    const int tickCount = plot->xAxis->ticker()->tickCount();
    plot->replot();
    QCOMPARE(plot->xAxis->ticker()->tickCount(), tickCount);
    const QRectF area = plot->axisRect()->rect();
    const std::vector<QRectF> labels = chart->valueLabelRects(), markers = chart->markerRects();
    const int bars = int(chart->barTotals().size());
    QVERIFY(bars > 0);
    QCOMPARE(int(labels.size()) + chart->hiddenValueLabels(), bars);
    QVERIFY2(chart->hiddenValueLabels() * 4 <= bars,
             qPrintable(QStringLiteral("%1 of %2 values hidden").arg(chart->hiddenValueLabels()).arg(bars)));
    auto text = [](const QRectF& r) {
        return QStringLiteral("%1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
    };
    for (size_t i = 0; i < labels.size(); ++i) {
        QVERIFY2(area.contains(labels[i]), qPrintable(text(labels[i]) + QStringLiteral(" outside ") + text(area)));
        for (size_t j = i + 1; j < labels.size(); ++j)
            QVERIFY2(!labels[i].intersects(labels[j]), qPrintable(text(labels[i]) + QStringLiteral(" on ") + text(labels[j])));
        for (const QRectF& m : markers)
            QVERIFY2(!labels[i].intersects(m), qPrintable(text(labels[i]) + QStringLiteral(" on marker ") + text(m)));
    }
    // The value axis's tick labels (centred on their ticks) keep apart.
    const QVector<double> ticks = plot->xAxis->tickVector();
    const QVector<QString> tickLabels = plot->xAxis->tickVectorLabels();
    const QFontMetrics tickFont(plot->xAxis->tickLabelFont());
    for (int i = 1; i < ticks.size(); ++i) {
        const double apart = plot->xAxis->coordToPixel(ticks[i]) - plot->xAxis->coordToPixel(ticks[i - 1]);
        const double needed = (tickFont.horizontalAdvance(tickLabels[i]) + tickFont.horizontalAdvance(tickLabels[i - 1])) / 2.0;
        QVERIFY2(apart >= needed + 4, qPrintable(QStringLiteral("ticks %1 and %2: %3 px apart")
                                                     .arg(tickLabels[i - 1], tickLabels[i])
                                                     .arg(apart)));
    }
    const double pitch = std::fabs(plot->yAxis->coordToPixel(1) - plot->yAxis->coordToPixel(0));
    QVERIFY2(pitch >= QFontMetrics(plot->yAxis->tickLabelFont()).height(), qPrintable(QString::number(pitch)));
    auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    QVERIFY(title);
    for (const QString& line : title->text().split(QLatin1Char('\n')))
        QVERIFY2(QFontMetrics(title->font()).horizontalAdvance(line) <= plot->width(), qPrintable(line));
    // The axis label's lines are centred under the bars.
    const double centre = area.center().x();
    for (const QString& line : plot->xAxis->label().split(QLatin1Char('\n'))) {
        const double half = QFontMetrics(plot->xAxis->labelFont()).horizontalAdvance(line) / 2.0;
        QVERIFY2(centre - half >= 0 && centre + half <= plot->width(), qPrintable(line));
    }
    // The tab scrolls up and down only: the chart's right edge is in view.
    QWidget* viewport = chart->parentWidget()->parentWidget();
    QVERIFY2(chart->mapTo(viewport, QPoint(chart->width(), 0)).x() <= viewport->width(),
             qPrintable(QStringLiteral("%1 px wide at %2 in %3")
                            .arg(chart->width())
                            .arg(chart->mapTo(viewport, QPoint(0, 0)).x())
                            .arg(viewport->width())));
}

} // namespace

// A scenario with many problems says them all, in the tooltip: the line stays two lines
// high and the tabs below it do not move.
void TestWindowLayout::longMessageKeepsTheTabsInPlace()
{
    MainWindow w;
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* tabs = w.findChild<QTabWidget*>();
    auto* line = w.findChild<ui::ElidedLabel*>(QStringLiteral("messageLine"));
    QVERIFY(tabs && line);
    const QPoint before = topLeftIn(tabs, &w);
    const int height = line->height();

    Scenario bad = w.scenario();
    bad.model.layers = 0;
    bad.model.hiddenSize = 0;
    bad.cluster.nodes = 0;
    bad.workload.tpotSloMs = -1;
    bad.workload.outputTokens = 0;
    w.setScenario(bad);
    QCoreApplication::processEvents();
    QVERIFY2(w.statusText().size() > 300, qPrintable(w.statusText()));
    QCOMPARE(line->toolTip(), w.statusText());
    QVERIFY(line->isElided());
    QCOMPARE(line->height(), height);
    QVERIFY(line->text().count(QLatin1Char('\n')) <= 1);
    QCOMPARE(topLeftIn(tabs, &w), before);

    w.setScenario(preset("llama3-70b-8gpu"));
    QCoreApplication::processEvents();
    QCOMPARE(line->height(), height);
    QCOMPARE(topLeftIn(tabs, &w), before);
}

// Start disabled by a proof that no plan meets the limits: the editor's banner says
// "Cannot start" and why, not "Ready to run"; relaxing the limit brings "Ready" back.
void TestWindowLayout::readyToRunOnlyWhenStartIsEnabled()
{
    MainWindow w;
    QSignalSpy checked(&w, &MainWindow::feasibilityChecked);
    Scenario s = w.scenario();
    s.workload.tpotSloMs = 0.5;
    w.scenarioEditor()->setScenario(s); // as loaded; the edit below is the user's
    auto* tpot = w.scenarioEditor()->findChild<QDoubleSpinBox*>(QStringLiteral("workload.tpot_slo_ms"));
    QVERIFY(tpot);
    tpot->setValue(0.6);
    QVERIFY(checked.wait(20000));
    QVERIFY(w.isProvedInfeasible());
    QVERIFY(!w.startSearch());
    const QString banner = w.scenarioEditor()->statusHtml();
    QVERIFY2(!banner.contains(QStringLiteral("Ready to run")), qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("Cannot start")), qPrintable(banner));
    QVERIFY2(banner.contains(QStringLiteral("time per output token")), qPrintable(banner));

    tpot->setValue(50);
    QVERIFY(checked.wait(20000));
    QVERIFY(!w.isProvedInfeasible());
    QVERIFY2(w.scenarioEditor()->statusHtml().contains(QStringLiteral("Ready to run")),
             qPrintable(w.scenarioEditor()->statusHtml()));
    // While a search runs, Start is disabled: the banner says a search is running.
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(1000000);
    QVERIFY(w.startSearch());
    QVERIFY2(w.scenarioEditor()->statusHtml().contains(QStringLiteral("A search is running")),
             qPrintable(w.scenarioEditor()->statusHtml()));
    QSignalSpy done(&w, &MainWindow::searchDone);
    w.stopSearch();
    QVERIFY(done.wait(20000));
    QVERIFY2(w.scenarioEditor()->statusHtml().contains(QStringLiteral("Ready to run")),
             qPrintable(w.scenarioEditor()->statusHtml()));
}

// DeepSeek-V3 (15 operator rows) at 1024x700: the window is not forced taller than the
// screen, and every heatmap row and legend item is on screen, whole.
void TestWindowLayout::searchTabFitsAt1024x700()
{
    MainWindow w;
    w.setScenario(preset("deepseek-v3-256gpu"));
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.size(), QSize(1024, 700));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 800));
    QTRY_VERIFY(!w.searchPanel()->isReplotPending());
    QCOMPARE(w.size(), QSize(1024, 700));
    ui::HeatmapWidget* h = w.searchPanel()->heatmap();
    QCOMPARE(h->operators(), ui::presentOperators(w.scenario().model));
    QVERIFY(h->operators().size() >= 15); // lm_head the last row
    QVERIFY(h->isVisible());
    QVERIFY2(h->rowsFit(), qPrintable(QStringLiteral("heatmap %1 px high").arg(h->height())));
    QVERIFY(h->legendFits());
    QVERIFY(h->mapTo(&w, QPoint(0, h->height())).y() <= w.height());
    // Every cell names its option there: tst_heatmap_values::narrowCellsNameTheirOptions.
}

// The heatmap is about the selected run: its model's operators and its elites. A new run
// starts empty on its own operators instead of showing the previous run's shares.
void TestWindowLayout::heatmapShowsTheSelectedRunsOperators()
{
    MainWindow w;
    ui::SearchPanel* panel = w.searchPanel();
    ui::HeatmapWidget* h = panel->heatmap();
    w.setScenario(preset("llama3-70b-8gpu"));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 400));
    const size_t dense = h->operators().size();
    QTRY_VERIFY(h->hasValues());
    QVERIFY2(h->caption().contains(QStringLiteral("elite")), qPrintable(h->caption()));

    w.setScenario(preset("deepseek-v3-256gpu"));
    // The selected run is still the Llama one: its operators, its values.
    QCOMPARE(h->operators().size(), dense);
    QVERIFY(h->hasValues());
    // A new run on DeepSeek: its operators, and no values until it reports.
    w.setAlgorithm(QStringLiteral("random"));
    w.setBudget(1000000);
    QVERIFY(w.startSearch());
    const std::vector<OpId> moe = ui::presentOperators(w.scenario().model);
    QVERIFY(moe.size() > dense);
    QCOMPARE(h->operators(), moe);
    QVERIFY(!h->hasValues());
    QSignalSpy done(&w, &MainWindow::searchDone);
    w.stopSearch();
    QVERIFY(done.wait(20000));
    QVERIFY(panel->selectRun(0));
    QCOMPARE(h->operators().size(), dense);
    QVERIFY(panel->selectRun(1));
    QCOMPARE(h->operators(), moe);
}

// At 1024x700: the runs and elite tables' headers and cells fit their columns, the
// confidence plot of a learning search is shown whole, every combo box shows its text,
// and the Pareto front's legend lies inside the plot.
void TestWindowLayout::textFitsAt1024x700()
{
    MainWindow w;
    QVERIFY(showWithTwoRuns(w, QSize(1024, 700)));
    ui::SearchPanel* panel = w.searchPanel();
    // The run's name and best, the throughput and the four degrees stay in view.
    verifyNoSidewaysScrolling(panel->findChild<ui::RunsTable*>(QStringLiteral("runsTable")), {0, 2});
    if (QTest::currentTestFailed())
        return;
    verifyNoSidewaysScrolling(panel->findChild<ui::EliteTable*>(QStringLiteral("eliteTable")), {0, 1, 2, 3, 4});
    if (QTest::currentTestFailed())
        return;
    verifyCombosFit(&w);
    if (QTest::currentTestFailed())
        return;

    // A learning search's confidence and entropy (what ppo reports), under the heatmap: the
    // column scrolls to it rather than drawing it over the heatmap.
    for (int k = 1; k <= 4; ++k) {
        ui::LiveProgress p;
        p.core.calls = 100 * k;
        p.core.budget = 400;
        p.core.metrics = {{"confidence", 0.2 * k}, {"entropy", 2.0 / k}};
        panel->addProgress(p);
    }
    auto* policy = panel->findChild<QCustomPlot*>(QStringLiteral("policyPlot"));
    QVERIFY(policy);
    QTRY_VERIFY(policy->isVisible());
    QTRY_VERIFY(!panel->isReplotPending());
    QVERIFY2(policy->height() >= policy->minimumHeight(), qPrintable(QString::number(policy->height())));
    ui::HeatmapWidget* heat = panel->heatmap();
    // The column's layout settles through posted events, which a busy machine delivers late.
    QTRY_VERIFY(heat->rowsFit() && heat->legendFits());
    QVERIFY(!QRect(heat->pos(), heat->size()).intersects(QRect(policy->pos(), policy->size())));
    auto* column = panel->findChild<QScrollArea*>(QStringLiteral("policyColumn"));
    QVERIFY(column);
    column->ensureWidgetVisible(policy, 0, 0);
    verifyInside(policy, column->viewport(), QStringLiteral("the confidence plot, scrolled to"));
    if (QTest::currentTestFailed())
        return;
    QVERIFY(policy->mapTo(&w, QPoint(0, policy->height())).y() <= w.height());
    policy->replot();
    QVERIFY(policy->rect().contains(policy->legend->outerRect()));
    QVERIFY(policy->rect().contains(policy->axisRect()->outerRect()));

    QVERIFY(w.showTab(QStringLiteral("pareto")));
    QCustomPlot* front = w.paretoView()->frontPlot();
    QTRY_VERIFY(front->isVisible());
    front->replot();
    const QRect legend = front->legend->outerRect();
    QVERIFY2(front->rect().contains(legend), qPrintable(QStringLiteral("legend %1,%2 %3x%4 in a %5x%6 plot")
                                                            .arg(legend.x())
                                                            .arg(legend.y())
                                                            .arg(legend.width())
                                                            .arg(legend.height())
                                                            .arg(front->width())
                                                            .arg(front->height())));
    for (int i = 0; i < front->legend->itemCount(); ++i)
        QVERIFY(legend.contains(front->legend->item(i)->outerRect()));
    verifyCombosFit(&w);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(w.showTab(QStringLiteral("plan")));
    QTRY_VERIFY(w.planView()->isVisible());
    verifyCombosFit(&w);
    if (QTest::currentTestFailed())
        return;
}

// A window searched in at 1600x1000 and then shrunk to 1024x700: the throughput curve's
// legend re-wraps to the new width, so every run's entry shows its whole label.
void TestWindowLayout::curveLegendRewrapsWhenTheWindowShrinks()
{
    MainWindow w;
    QVERIFY(showWithTwoRuns(w, QSize(1600, 1000)));
    ui::SearchPanel* panel = w.searchPanel();
    auto* curve = panel->findChild<QCustomPlot*>(QStringLiteral("throughputCurve"));
    QVERIFY(curve);
    const int wideWrap = curve->legend->wrap();
    w.resize(1024, 700);
    QTRY_COMPARE(w.size(), QSize(1024, 700));
    QTRY_VERIFY(curve->legend->wrap() < wideWrap);
    curve->replot();
    const QFontMetrics fm(curve->legend->font());
    QVERIFY(curve->rect().contains(curve->legend->outerRect()));
    for (int i = 0; i < curve->legend->itemCount(); ++i) {
        auto* item = qobject_cast<QCPPlottableLegendItem*>(curve->legend->item(i));
        if (!item)
            continue;
        const int needed = fm.horizontalAdvance(item->plottable()->name()) + curve->legend->iconSize().width()
                           + curve->legend->iconTextPadding();
        QVERIFY2(item->outerRect().width() >= needed,
                 qPrintable(QStringLiteral("'%1': %2 px of %3").arg(item->plottable()->name())
                                .arg(item->outerRect().width()).arg(needed)));
    }
}

// With nothing to plot (a scenario that cannot run: no recipe line, no runs) the legend is
// empty, and the axis rect still takes the curve's width (QCP once capped it at the empty
// legend's margins: a 50 px plot).
void TestWindowLayout::emptyCurveKeepsItsWidth()
{
    MainWindow w;
    w.scenarioEditor()->findChild<QSpinBox*>(QStringLiteral("model.layers"))->setValue(0);
    QVERIFY(!w.scenarioEditor()->isRunnable());
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* curve = w.searchPanel()->findChild<QCustomPlot*>(QStringLiteral("throughputCurve"));
    QVERIFY(curve);
    QTRY_COMPARE(curve->legend->itemCount(), 0);
    curve->replot();
    QVERIFY2(curve->axisRect()->width() > curve->width() / 2,
             qPrintable(QStringLiteral("axis rect %1 px of a %2 px curve").arg(curve->axisRect()->width()).arg(curve->width())));
}

// At 1600x1000 both tables show every column; shrunk to 1024x700 they hide some instead of
// scrolling sideways, and grown again they show them all again.
void TestWindowLayout::tablesShowEveryColumnWhenWide()
{
    MainWindow w;
    QVERIFY(showWithTwoRuns(w, QSize(1600, 1000)));
    ui::SearchPanel* panel = w.searchPanel();
    auto* runs = panel->findChild<ui::RunsTable*>(QStringLiteral("runsTable"));
    auto* elites = panel->findChild<ui::EliteTable*>(QStringLiteral("eliteTable"));
    QVERIFY(runs && elites);
    auto verifyAllShown = [&] {
        for (QTableWidget* t : {static_cast<QTableWidget*>(runs), static_cast<QTableWidget*>(elites)})
            for (int c = 0; c < t->columnCount(); ++c)
                QVERIFY2(!t->isColumnHidden(c), qPrintable(QStringLiteral("%1: \"%2\" hidden at %3 px")
                                                               .arg(t->objectName(), t->horizontalHeaderItem(c)->text())
                                                               .arg(t->viewport()->width())));
        QVERIFY(runs->hiddenColumns().empty() && elites->hiddenColumns().empty());
    };
    verifyAllShown();
    if (QTest::currentTestFailed())
        return;
    verifyNoSidewaysScrolling(runs, {0, 1, 2, 3});
    verifyNoSidewaysScrolling(elites, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    if (QTest::currentTestFailed())
        return;

    w.resize(1024, 700);
    QTRY_COMPARE(w.size(), QSize(1024, 700));
    QTRY_VERIFY(!elites->hiddenColumns().empty());
    verifyNoSidewaysScrolling(runs, {0, 2});
    verifyNoSidewaysScrolling(elites, {0, 1, 2, 3, 4});
    if (QTest::currentTestFailed())
        return;
    w.resize(1600, 1000);
    QTRY_COMPARE(w.size(), QSize(1600, 1000));
    QTRY_VERIFY(elites->hiddenColumns().empty() && runs->hiddenColumns().empty());
    verifyAllShown();
}

// DeepSeek-V3's searched plan beside the Megatron recipe at 1024x700 (per output token, a
// marker on every row), then the recipe alone (per step, no markers): the chart's labels
// are legible (verifyChartLegible).
void TestWindowLayout::planChartIsLegibleAt1024x700()
{
    MainWindow w;
    w.setScenario(preset("deepseek-v3-256gpu"));
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(runSearch(w, QStringLiteral("anneal"), 400));
    QVERIFY(w.showTab(QStringLiteral("plan")));
    auto* chart = w.planView()->findChild<ui::BreakdownPlot*>();
    QVERIFY(chart);
    QTRY_VERIFY(chart->isVisible());
    QCOMPARE(w.size(), QSize(1024, 700));
    QVERIFY(chart->isPerToken());
    QVERIFY(!chart->markerRects().empty());
    verifyChartLegible(chart);
    if (QTest::currentTestFailed())
        return;
    w.planView()->showPlan(QStringLiteral("Megatron recipe"), w.planView()->referencePlan());
    QVERIFY(!chart->isPerToken());
    QVERIFY(chart->markerRects().empty());
    verifyChartLegible(chart);
}

// At 1024x700 the scenario form fits the dock: no horizontal scroll range, and the
// parameter summary (a mixture of experts' total and active counts, the weights) wraps
// within the dock and shows every line.
void TestWindowLayout::scenarioFormFitsTheDockAt1024x700()
{
    MainWindow w;
    w.setScenario(preset("deepseek-v3-256gpu"));
    w.resize(1024, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* area = w.scenarioEditor()->findChild<QScrollArea*>(QStringLiteral("formArea"));
    QVERIFY(area);
    QTRY_COMPARE(area->horizontalScrollBar()->maximum(), 0);
    QVERIFY2(area->widget()->width() <= area->viewport()->width(),
             qPrintable(QStringLiteral("form %1 px in %2").arg(area->widget()->width()).arg(area->viewport()->width())));
    auto* summary = w.scenarioEditor()->findChild<QLabel*>(QStringLiteral("parameterCount"));
    QVERIFY(summary);
    QVERIFY2(summary->text().contains(QStringLiteral("active")), qPrintable(summary->text()));
    QVERIFY(summary->mapTo(area->viewport(), QPoint(summary->width(), 0)).x() <= area->viewport()->width());
    QVERIFY2(summary->heightForWidth(summary->width()) <= summary->height(),
             qPrintable(QStringLiteral("%1 px high, needs %2")
                            .arg(summary->height())
                            .arg(summary->heightForWidth(summary->width()))));
    // No word sticks out of the label's width.
    QTextDocument doc;
    doc.setDefaultFont(summary->font());
    doc.setDocumentMargin(0);
    doc.setHtml(summary->text());
    doc.setTextWidth(summary->contentsRect().width());
    QVERIFY2(doc.idealWidth() <= summary->contentsRect().width(),
             qPrintable(QStringLiteral("%1 px of text in %2").arg(doc.idealWidth()).arg(summary->contentsRect().width())));
}

QTEST_MAIN(TestWindowLayout)
#include "tst_window_layout.moc"
