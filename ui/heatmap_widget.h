// Operators x sharding options, each cell coloured by a value in [0, 1]: the policy's
// probability (ppo) or the option's frequency among the elite plans (other algorithms).
// A colour scale and legend sit below the cells; every cell has a tooltip; the best plan's
// option is framed, and options that give that plan exactly the same throughput are
// marked equivalent (a frame on a 0% cell then says "as good", not "chosen").
#pragma once

#include <QRect>
#include <QWidget>

#include <array>
#include <vector>

#include "model/plan.h"

class QPainter;

namespace shardlab::ui {

// An option's name in three letters or fewer, for a heatmap cell too narrow for the name:
// "rep", "col", "tok", "AG" (all-gather), "A2A", "RS"; a name already that short as it is.
QString shortOptionName(const QString& name);

class HeatmapWidget : public QWidget {
    Q_OBJECT
public:
    using Grid = std::array<std::array<double, kMaxOptions>, kOpCount>;
    using Flags = std::array<std::array<bool, kMaxOptions>, kOpCount>;

    explicit HeatmapWidget(QWidget* parent = nullptr);

    void setOperators(const std::vector<OpId>& ops);
    // values[op][option] in [0, 1]; non-finite values are drawn as "no data". The caption
    // is one short line above the cells; `about`, the tooltip of the caption and cells,
    // says what the values are in full.
    void setValues(const Grid& values, const QString& caption, const QString& about = {});
    // Marks one option per operator (e.g. the best plan's), drawn with a frame.
    void setHighlight(const Plan& plan);
    // Options that give the highlighted plan the same throughput as its own choice.
    void setEquivalent(const Flags& equivalent);
    // No values; `caption` (when given) says why instead of "waiting for a search".
    void clearValues(const QString& caption = {});
    const std::vector<OpId>& operators() const { return m_ops; }
    bool hasValues() const { return m_haveValues; }
    QString caption() const { return m_caption; }

    // For tests and tooltips: the rectangle of a cell, and the tooltip text there.
    QRect cellRect(int row, int option) const;
    // The text the cell shows at the widget's size (its option's name, its share, or both).
    QString cellText(int row, int option) const;
    QString toolTipAt(const QPoint& pos) const;
    bool isEquivalent(OpId id, int option) const { return m_equivalent[static_cast<int>(id)][option]; }

    // For layout tests: every operator's row is on screen at its least height, and every
    // legend item is whole (items that do not fit one line wrap to the next).
    bool rowsFit() const;
    bool legendFits() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QString cellLabel(const QFontMetrics& fm, OpId id, int option, int width, bool twoLines) const;
    struct Geometry {
        int captionH, labelW, top, rowH, cols, legendTop;
    };
    struct LegendItem {
        enum Kind { Scale, Best, Equivalent, NoData } kind;
        QString label;
        QRect rect;
    };
    Geometry geometry() const;
    std::vector<LegendItem> legendLayout(int top) const;
    int legendHeight() const;
    void paintRow(QPainter& p, const Geometry& g, int row) const;
    void paintLegend(QPainter& p, int top) const;
    int columnCount() const;

    std::vector<OpId> m_ops;
    Grid m_values{};
    Flags m_equivalent{};
    bool m_haveValues = false;
    Plan m_highlight;
    bool m_haveHighlight = false;
    QString m_caption;
    QString m_about;
};

} // namespace shardlab::ui
