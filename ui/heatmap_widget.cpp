#include "heatmap_widget.h"

#include <QPainter>

#include <cmath>

namespace shardlab::ui {

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent)
{
    setMinimumSize(320, 220);
    for (auto& row : m_values)
        row.fill(std::nan(""));
}

void HeatmapWidget::setOperators(const std::vector<OpId>& ops)
{
    m_ops = ops;
    update();
}

void HeatmapWidget::setValues(const std::array<std::array<double, kMaxOptions>, kOpCount>& values,
                              const QString& caption)
{
    m_values = values;
    m_haveValues = true;
    m_caption = caption;
    update();
}

void HeatmapWidget::setHighlight(const Plan& plan)
{
    m_highlight = plan;
    m_haveHighlight = true;
    update();
}

void HeatmapWidget::clearValues()
{
    for (auto& row : m_values)
        row.fill(std::nan(""));
    m_haveValues = false;
    m_haveHighlight = false;
    m_caption.clear();
    update();
}

void HeatmapWidget::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setRenderHint(QPainter::Antialiasing, false);
    const QFontMetrics fm = p.fontMetrics();
    const int rows = static_cast<int>(m_ops.size());
    if (rows == 0)
        return;
    const int captionH = fm.height() + 6;
    int labelW = 0;
    for (OpId id : m_ops)
        labelW = std::max(labelW, fm.horizontalAdvance(QString::fromLatin1(opName(id))));
    labelW += 12;
    const int top = captionH;
    const int rowH = std::max(fm.height() + 4, (height() - top - 4) / rows);
    const int colW = std::max(60, (width() - labelW - 4) / kMaxOptions);

    p.setPen(palette().text().color());
    p.drawText(QRect(4, 0, width() - 8, captionH), Qt::AlignVCenter | Qt::AlignLeft,
               m_caption.isEmpty() ? tr("Sharding heatmap: waiting for a search") : m_caption);

    for (int r = 0; r < rows; ++r) {
        const OpId id = m_ops[r];
        const OpInfo& info = opInfo(id);
        const int y = top + r * rowH;
        p.setPen(palette().text().color());
        p.drawText(QRect(4, y, labelW - 8, rowH), Qt::AlignVCenter | Qt::AlignRight, QString::fromLatin1(info.name));
        for (int c = 0; c < kMaxOptions; ++c) {
            const QRect cell(labelW + c * colW, y + 1, colW - 2, rowH - 2);
            if (c >= info.optionCount) {
                p.fillRect(cell, palette().window());
                continue;
            }
            const double v = m_values[static_cast<int>(id)][c];
            QColor fill(235, 235, 235);
            if (m_haveValues && std::isfinite(v)) {
                const double t = std::clamp(v, 0.0, 1.0);
                // White -> deep blue; readable text on both ends.
                fill = QColor::fromRgbF(1.0 - 0.85 * t, 1.0 - 0.6 * t, 1.0 - 0.15 * t);
            }
            p.fillRect(cell, fill);
            const bool light = !(m_haveValues && std::isfinite(v) && v > 0.55);
            p.setPen(light ? QColor(30, 30, 30) : Qt::white);
            QString text = QString::fromLatin1(info.options[c].name);
            if (m_haveValues && std::isfinite(v))
                text += QStringLiteral("\n%1%").arg(std::lround(v * 100));
            p.drawText(cell, Qt::AlignCenter, text);
            if (m_haveHighlight && m_highlight.option(id) == c) {
                p.setPen(QPen(QColor(220, 90, 0), 2));
                p.drawRect(cell.adjusted(1, 1, -1, -1));
            }
        }
    }
}

} // namespace shardlab::ui
