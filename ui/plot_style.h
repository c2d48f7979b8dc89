// Shared look of the plan view's plots: colours with a fixed meaning (the same colour is
// the same quantity in every plot of the view) and the axis/legend styling.
#pragma once

#include <QColor>
#include <QFont>

class QCustomPlot;
class QCPBars;

namespace shardlab::ui {

// Time: both roofline colours are blues (it is the same quantity, split by what bounds
// it); communication is the one warm colour, so collectives stand out.
inline const QColor kComputeColour{0x2f, 0x5f, 0x9e};
inline const QColor kMemoryColour{0x8d, 0xb8, 0xe0};
inline const QColor kOverheadColour{0xbd, 0xbd, 0xbd};
inline const QColor kCommColour{0xe0, 0x7b, 0x1f};
// Memory.
inline const QColor kWeightsColour{0x4e, 0x79, 0xa7};
inline const QColor kKvColour{0x59, 0xa1, 0x4f};
inline const QColor kActivationColour{0xed, 0xc9, 0x48};
inline const QColor kReserveColour{0xba, 0xb0, 0xac};
inline const QColor kLimitColour{0xc6, 0x28, 0x28};

// White background, light grid, no ticks inside the plot; interactions off (these are
// read-only charts, and dragging an axis away only confuses).
void stylePlot(QCustomPlot* plot);
// The legend in its own layout row below the axis rect, `columns` entries per row.
void placeLegendBelow(QCustomPlot* plot, int columns);
QFont titleFont(const QFont& base);
// Horizontal bars (categories on the y axis) in one colour, stacked on `below` if given.
QCPBars* addStackedBars(QCustomPlot* plot, const QString& name, const QColor& colour, QCPBars* below,
                        double width);
// Re-wraps a legend placed by placeLegendBelow: all entries on one row when they fit in
// `width` pixels, else two per row. Call from the owner's resizeEvent.
void fitLegend(QCustomPlot* plot, int width);
// Re-wraps the plot's legend (fitLegend) whenever the plot is resized, and replots: for
// plots whose owner has no resizeEvent of its own.
void refitLegendOnResize(QCustomPlot* plot);

} // namespace shardlab::ui
