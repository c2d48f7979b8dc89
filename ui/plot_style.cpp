#include "plot_style.h"

#include <QResizeEvent>

#include "qcp.h"

namespace shardlab::ui {

QCPBars* addStackedBars(QCustomPlot* plot, const QString& name, const QColor& colour, QCPBars* below,
                        double width)
{
    auto* b = new QCPBars(plot->yAxis, plot->xAxis);
    b->setName(name);
    b->setWidth(width);
    b->setPen(QPen(colour.darker(125), 0.8));
    b->setBrush(colour);
    b->setStackingGap(0);
    b->setAntialiased(false); // axis-aligned rectangles: nothing to smooth
    if (below)
        b->moveAbove(below);
    return b;
}

void stylePlot(QCustomPlot* plot)
{
    plot->setBackground(Qt::white);
    plot->setInteractions(QCP::Interactions());
    plot->setAntialiasedElements(QCP::aeAll);
    plot->setNotAntialiasedElements(QCP::aeGrid | QCP::aeAxes | QCP::aePlottables);
    const QColor axis(0x54, 0x6e, 0x7a), grid(0xe3, 0xe7, 0xea);
    for (QCPAxis* a : {plot->xAxis, plot->yAxis}) {
        a->setBasePen(QPen(axis, 1));
        a->setTickPen(QPen(axis, 1));
        a->setSubTickPen(QPen(axis, 1));
        a->setTickLabelColor(QColor(0x26, 0x32, 0x38));
        a->setLabelColor(QColor(0x26, 0x32, 0x38));
        a->setTickLengthIn(0);
        a->setTickLengthOut(4);
        a->setSubTickLengthIn(0);
        a->setSubTickLengthOut(2);
        a->grid()->setPen(QPen(grid, 1));
        a->grid()->setSubGridVisible(false);
        a->grid()->setZeroLinePen(Qt::NoPen);
    }
    plot->xAxis2->setVisible(false);
    plot->yAxis2->setVisible(false);
}

void placeLegendBelow(QCustomPlot* plot, int columns)
{
    QCPLegend* legend = plot->legend;
    legend->setVisible(true);
    const int row = plot->plotLayout()->rowCount();
    plot->plotLayout()->addElement(row, 0, legend);
    plot->plotLayout()->setRowStretchFactor(row, 0.001);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setWrap(columns);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setMargins(QMargins(6, 2, 6, 4));
    legend->setFont(plot->font());
    legend->setRowSpacing(0);
    legend->setColumnSpacing(12);
    legend->setIconSize(16, 10);
    // A finite maximum width: at QWIDGETSIZE_MAX QCP takes the legend grid's own hint, which
    // for an empty legend (no runs yet) is its margins, and caps the plot's column, the axis
    // rect above it, there.
    legend->setMaximumSize(QWIDGETSIZE_MAX / 2, QWIDGETSIZE_MAX);
}

void fitLegend(QCustomPlot* plot, int width)
{
    QCPLegend* legend = plot->legend;
    const QFontMetrics fm(legend->font());
    // The legend is a grid: every column is as wide as its widest entry, so size by the widest.
    int widest = 0, visible = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
            // Items clip to their rect, which QCP sizes with the screen's font metrics; a
            // few pixels of slack keep descenders when painting to another device (export).
            item->setMargins(QMargins(2, 1, 2, 5));
            widest = std::max(widest, fm.horizontalAdvance(item->plottable()->name()) + legend->iconSize().width()
                                          + legend->iconTextPadding() + legend->columnSpacing() + 10);
            ++visible;
        }
    const int usable = width - legend->margins().left() - legend->margins().right();
    const int perRow = std::clamp(widest > 0 ? usable / widest : 1, 1, std::max(1, visible));
    if (legend->wrap() != perRow) {
        legend->setWrap(perRow);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true); // re-flow the existing entries
    }
}

namespace {
// Resize events of one plot, turned into a legend re-wrap and a queued replot.
class LegendRefitter : public QObject {
public:
    explicit LegendRefitter(QCustomPlot* plot) : QObject(plot), m_plot(plot) { plot->installEventFilter(this); }
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == m_plot && event->type() == QEvent::Resize) {
            fitLegend(m_plot, static_cast<QResizeEvent*>(event)->size().width());
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
        return false;
    }

private:
    QCustomPlot* m_plot;
};
} // namespace

void refitLegendOnResize(QCustomPlot* plot)
{
    new LegendRefitter(plot); // owned by the plot
}

QFont titleFont(const QFont& base)
{
    QFont f = base;
    f.setBold(true);
    return f;
}

} // namespace shardlab::ui
