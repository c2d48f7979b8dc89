#include "heatmap_widget.h"

#include <QHash>

#include <QHelpEvent>
#include <QLinearGradient>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace shardlab::ui {

namespace {
// White -> deep blue; text stays readable on both ends.
QColor scaleColour(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(1.0 - 0.85 * t, 1.0 - 0.6 * t, 1.0 - 0.15 * t);
}
const QColor kNoData(235, 235, 235);
const QColor kBest(220, 90, 0);
constexpr int kLegendLines = 2; // the legend's height: room for two lines of items
} // namespace

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    for (auto& row : m_values)
        row.fill(std::nan(""));
    for (auto& row : m_equivalent)
        row.fill(false);
}

void HeatmapWidget::setOperators(const std::vector<OpId>& ops)
{
    m_ops = ops;
    updateGeometry();
    update();
}

void HeatmapWidget::setValues(const Grid& values, const QString& caption, const QString& about)
{
    m_values = values;
    m_haveValues = true;
    m_caption = caption;
    m_about = about;
    update();
}

void HeatmapWidget::setHighlight(const Plan& plan)
{
    if (!m_haveHighlight || !(plan == m_highlight))
        for (auto& row : m_equivalent)
            row.fill(false); // they were about another plan
    m_highlight = plan;
    m_haveHighlight = true;
    update();
}

void HeatmapWidget::setEquivalent(const Flags& equivalent)
{
    m_equivalent = equivalent;
    update();
}

void HeatmapWidget::clearValues(const QString& caption)
{
    for (auto& row : m_values)
        row.fill(std::nan(""));
    for (auto& row : m_equivalent)
        row.fill(false);
    m_haveValues = false;
    m_haveHighlight = false;
    m_caption = caption;
    m_about.clear();
    update();
}

int HeatmapWidget::columnCount() const
{
    int cols = 1;
    for (OpId id : m_ops)
        cols = std::max(cols, opInfo(id).optionCount);
    return cols;
}

QSize HeatmapWidget::minimumSizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    const int rows = std::max<int>(1, int(m_ops.size()));
    return {240, fm.height() + 6 + rows * (fm.height() + 2) + kLegendLines * (fm.height() + 4) + 8};
}

QSize HeatmapWidget::sizeHint() const
{
    // The least legible height is also the preferred one: the search panel's column asks
    // for exactly this much, so the whole heatmap shows above the policy views (which the
    // column scrolls to); extra room still stretches the rows.
    return {420, minimumSizeHint().height()};
}

HeatmapWidget::Geometry HeatmapWidget::geometry() const
{
    const QFontMetrics fm = fontMetrics();
    Geometry g{};
    g.captionH = fm.height() + 6;
    int labelW = 0;
    for (OpId id : m_ops)
        labelW = std::max(labelW, fm.horizontalAdvance(QString::fromLatin1(opName(id))));
    g.labelW = labelW + 12;
    g.top = g.captionH;
    const int rows = std::max<int>(1, int(m_ops.size()));
    const int legendH = legendHeight();
    g.rowH = std::max(fm.height() + 2, (height() - g.top - legendH) / rows);
    g.cols = columnCount();
    g.legendTop = g.top + rows * g.rowH + 4;
    return g;
}

QString shortOptionName(const QString& name)
{
    static const QHash<QString, QString> brief{
        {QStringLiteral("replicated"), QStringLiteral("rep")}, {QStringLiteral("column"), QStringLiteral("col")},
        {QStringLiteral("column_row"), QStringLiteral("c/r")}, {QStringLiteral("sequence"), QStringLiteral("seq")},
        {QStringLiteral("token"), QStringLiteral("tok")},      {QStringLiteral("vocab"), QStringLiteral("voc")},
        {QStringLiteral("all_gather"), QStringLiteral("AG")},  {QStringLiteral("all_to_all"), QStringLiteral("A2A")},
        {QStringLiteral("reduce_scatter"), QStringLiteral("RS")}};
    return brief.value(name, name);
}

// A cell's text in `width` pixels: on two lines its option's name above its share; on one
// line both when they fit, else the name (the colour says the share, the tooltip has it to
// the percent), else its short form ("rep", "A2A"), else the name elided to no fewer than
// three letters, else the share alone.
QString HeatmapWidget::cellLabel(const QFontMetrics& fm, OpId id, int c, int width, bool twoLines) const
{
    const double v = m_values[static_cast<int>(id)][c];
    const bool have = m_haveValues && std::isfinite(v);
    const QString name = QString::fromLatin1(opInfo(id).options[c].name);
    const QString value = have ? QStringLiteral("%1%").arg(std::lround(v * 100)) : QString();
    if (twoLines)
        return fm.elidedText(name, Qt::ElideRight, width) + (value.isEmpty() ? QString() : QLatin1Char('\n') + value);
    // "Fits" as eliding judges it (its measure can exceed horizontalAdvance by a pixel,
    // which drew "100%" as "10…").
    auto fits = [&](const QString& x) { return fm.elidedText(x, Qt::ElideRight, width) == x; };
    const QString both = value.isEmpty() ? name : value + QLatin1Char(' ') + name;
    if (fits(both) || fits(name))
        return fits(both) ? both : name;
    // The short form before an elided name: all_gather and all_to_all both elide to "all…".
    if (const QString brief = shortOptionName(name); fits(brief))
        return brief;
    const QString elided = fm.elidedText(name, Qt::ElideRight, width);
    if (elided.size() >= 4 || value.isEmpty()) // three letters and the ellipsis
        return elided;
    const QString bare = QString::number(std::lround(v * 100)); // "100" without "%"
    return fits(value) ? value : fits(bare) ? bare : QString();
}

QString HeatmapWidget::cellText(int row, int option) const
{
    if (row < 0 || row >= int(m_ops.size()) || option < 0 || option >= opInfo(m_ops[row]).optionCount)
        return {};
    const Geometry g = geometry();
    const QFontMetrics fm = fontMetrics();
    const bool equivalent = m_haveHighlight && m_highlight.option(m_ops[row]) != option
        && m_equivalent[static_cast<int>(m_ops[row])][option];
    const int markWidth = equivalent ? fm.horizontalAdvance(QStringLiteral("≡")) + 2 : 0;
    const int width = cellRect(row, option).width() - 4 - markWidth;
    return cellLabel(fm, m_ops[row], option, width, g.rowH >= 2 * fm.height() + 4);
}

QRect HeatmapWidget::cellRect(int row, int option) const
{
    const Geometry g = geometry();
    // A row's options share its width: an operator of two options has cells twice as wide
    // as one of four (the columns of different rows are different options anyway).
    const int options = row >= 0 && row < int(m_ops.size()) ? opInfo(m_ops[size_t(row)]).optionCount : g.cols;
    const int w = std::max(24, (width() - g.labelW - 4) / std::max(1, options));
    return {g.labelW + option * w, g.top + row * g.rowH + 1, w - 2, g.rowH - 2};
}

QString HeatmapWidget::toolTipAt(const QPoint& pos) const
{
    if (pos.y() < geometry().captionH)
        return m_about.isEmpty() ? m_caption : m_about;
    if (pos.y() >= geometry().legendTop)
        return tr("Colour: the share of the plans using the option (0% white, 100% deep blue).<br>Solid frame: the "
                  "best plan's option. Dashed frame with ≡: an option that gives the best plan exactly the same "
                  "throughput. Grey: no data yet.");
    for (int r = 0; r < int(m_ops.size()); ++r) {
        const OpId id = m_ops[r];
        const OpInfo& info = opInfo(id);
        for (int c = 0; c < info.optionCount; ++c) {
            if (!cellRect(r, c).contains(pos))
                continue;
            const OpOption& o = info.options[c];
            QString tip = QStringLiteral("<b>%1</b> — <i>%2</i><br>%3")
                              .arg(QString::fromLatin1(info.label).toHtmlEscaped(), QString::fromLatin1(o.name),
                                   QString::fromLatin1(o.summary).toHtmlEscaped());
            const double v = m_values[static_cast<int>(id)][c];
            if (m_haveValues && std::isfinite(v))
                tip += QStringLiteral("<br>%1: <b>%2%</b>")
                           .arg((m_about.isEmpty() ? m_caption : m_about).toHtmlEscaped())
                           .arg(v * 100, 0, 'f', 1);
            else
                tip += tr("<br>No data yet.");
            if (m_haveHighlight && m_highlight.option(id) == c)
                tip += tr("<br><span style='color:#c05000'>The best plan uses this option.</span>");
            else if (m_equivalent[static_cast<int>(id)][c])
                tip += tr("<br><span style='color:#c05000'>Equivalent: the best plan with this option instead reaches "
                          "exactly the same throughput.</span>");
            return tip;
        }
    }
    return {};
}

bool HeatmapWidget::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const QString tip = toolTipAt(he->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(he->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(e);
}

void HeatmapWidget::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setRenderHint(QPainter::Antialiasing, false);
    if (m_ops.empty())
        return;
    const Geometry g = geometry();
    const QFontMetrics fm = p.fontMetrics();
    p.setPen(palette().text().color());
    const QString caption = m_caption.isEmpty() ? tr("Sharding heatmap: waiting for a search") : m_caption;
    p.drawText(QRect(4, 0, width() - 8, g.captionH), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(caption, Qt::ElideRight, width() - 8));
    for (int r = 0; r < int(m_ops.size()); ++r)
        paintRow(p, g, r);
    paintLegend(p, g.legendTop);
}

void HeatmapWidget::paintRow(QPainter& p, const Geometry& g, int r) const
{
    const QFontMetrics fm = p.fontMetrics();
    const QColor text = palette().text().color();
    const bool twoLines = g.rowH >= 2 * fm.height() + 4;
    const OpId id = m_ops[r];
    const OpInfo& info = opInfo(id);
    const int y = g.top + r * g.rowH;
    p.setPen(text);
    p.drawText(QRect(4, y, g.labelW - 8, g.rowH), Qt::AlignVCenter | Qt::AlignRight, QString::fromLatin1(info.name));
    for (int c = 0; c < info.optionCount; ++c) {
        const QRect cell = cellRect(r, c);
        const double v = m_values[static_cast<int>(id)][c];
        const bool have = m_haveValues && std::isfinite(v);
        p.fillRect(cell, have ? scaleColour(v) : kNoData);
        p.setPen(have && v > 0.55 ? QColor(Qt::white) : QColor(30, 30, 30));
        const bool best = m_haveHighlight && m_highlight.option(id) == c;
        const bool equivalent = !best && m_haveHighlight && m_equivalent[static_cast<int>(id)][c];
        // An equivalent cell's "≡" sits in its top-right corner: the text keeps clear of it.
        const QString mark = QStringLiteral("≡");
        const int markWidth = equivalent ? fm.horizontalAdvance(mark) + 2 : 0;
        const QRect inner = cell.adjusted(2, 0, -2 - markWidth, 0);
        p.drawText(inner, Qt::AlignCenter, cellLabel(fm, id, c, inner.width(), twoLines));
        if (best) {
            p.setPen(QPen(kBest, 2));
            p.drawRect(cell.adjusted(1, 1, -1, -1));
        } else if (equivalent) {
            p.setPen(QPen(kBest, 1.5, Qt::DashLine));
            p.drawRect(cell.adjusted(1, 1, -1, -1));
            p.setPen(kBest.darker(120));
            p.drawText(cell.adjusted(3, 1, -3, -1), Qt::AlignTop | Qt::AlignRight, mark);
        }
    }
}

// The legend's items left to right (the colour scale, the best plan's frame, the
// equivalent frame, no data), each whole: one that does not fit the line starts the next.
// Full labels when they fit on kLegendLines lines, else short ones (the tooltip over the
// legend has them in full).
std::vector<HeatmapWidget::LegendItem> HeatmapWidget::legendLayout(int top) const
{
    const QFontMetrics fm = fontMetrics();
    const int lineH = fm.height() + 4;
    const int barW = std::clamp(width() / 4, 60, 160);
    const int scaleW =
        fm.horizontalAdvance(QStringLiteral("0%")) + 4 + barW + 4 + fm.horizontalAdvance(QStringLiteral("100%")) + 2;
    std::vector<LegendItem> items;
    for (const bool full : {true, false}) {
        items = {{LegendItem::Scale, QString(), {}},
                 {LegendItem::Best, full ? tr("best plan's option") : tr("best"), {}},
                 {LegendItem::Equivalent, full ? tr("equivalent (same throughput)") : tr("same"), {}},
                 {LegendItem::NoData, tr("no data"), {}}};
        int x = 4, y = top;
        for (LegendItem& it : items) {
            const int w = it.kind == LegendItem::Scale ? scaleW : 26 + fm.horizontalAdvance(it.label) + 2;
            if (x > 4 && x + w > width() - 4) {
                x = 4;
                y += lineH;
            }
            it.rect = QRect(x, y, std::min(w, width() - 8), lineH);
            x += w + 12;
        }
        if (items.back().rect.bottom() < top + kLegendLines * lineH)
            break;
    }
    return items;
}

int HeatmapWidget::legendHeight() const
{
    const QFontMetrics fm = fontMetrics();
    return std::max(kLegendLines * (fm.height() + 4), legendLayout(0).back().rect.bottom() + 1) + 6;
}

void HeatmapWidget::paintLegend(QPainter& p, int top) const
{
    const QFontMetrics fm = p.fontMetrics();
    const QColor text = palette().text().color();
    for (const LegendItem& it : legendLayout(top)) {
        const QRect r = it.rect;
        if (it.kind == LegendItem::Scale) {
            const QString lo = QStringLiteral("0%"), hi = QStringLiteral("100%");
            int x = r.left();
            p.setPen(text);
            p.drawText(QRect(x, r.top(), fm.horizontalAdvance(lo) + 2, r.height()), Qt::AlignVCenter, lo);
            x += fm.horizontalAdvance(lo) + 4;
            const int barW = r.width() - fm.horizontalAdvance(lo) - fm.horizontalAdvance(hi) - 10;
            QLinearGradient grad(x, 0, x + barW, 0);
            for (double t : {0.0, 0.25, 0.5, 0.75, 1.0})
                grad.setColorAt(t, scaleColour(t));
            const QRect bar(x, r.top() + 3, barW, r.height() - 6);
            p.fillRect(bar, grad);
            p.setPen(QColor(150, 150, 150));
            p.drawRect(bar);
            p.setPen(text);
            p.drawText(QRect(bar.right() + 4, r.top(), fm.horizontalAdvance(hi) + 2, r.height()), Qt::AlignVCenter, hi);
            continue;
        }
        const QRect box(r.left(), r.top() + 3, 22, r.height() - 6);
        if (it.kind == LegendItem::NoData) {
            p.fillRect(box, kNoData);
        } else {
            p.fillRect(box, scaleColour(0.2));
            p.setPen(it.kind == LegendItem::Best ? QPen(kBest, 2) : QPen(kBest, 1.5, Qt::DashLine));
            p.drawRect(box);
            if (it.kind == LegendItem::Equivalent)
                p.drawText(box, Qt::AlignCenter, QStringLiteral("≡"));
        }
        p.setPen(text);
        const QRect label(r.left() + 26, r.top(), r.width() - 26, r.height());
        p.drawText(label, Qt::AlignVCenter, fm.elidedText(it.label, Qt::ElideRight, label.width()));
    }
}

bool HeatmapWidget::legendFits() const
{
    const QFontMetrics fm = fontMetrics();
    for (const LegendItem& it : legendLayout(geometry().legendTop)) {
        const int need = it.kind == LegendItem::Scale ? it.rect.width() : 26 + fm.horizontalAdvance(it.label) + 2;
        if (it.rect.width() < need || it.rect.right() > width() || it.rect.bottom() > height())
            return false;
    }
    return true;
}

bool HeatmapWidget::rowsFit() const
{
    const Geometry g = geometry();
    const QFontMetrics fm = fontMetrics();
    return g.rowH >= fm.height() + 2 && g.top + int(m_ops.size()) * g.rowH <= height();
}

} // namespace shardlab::ui
