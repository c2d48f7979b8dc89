#include "elided_label.h"

#include <algorithm>

#include <QEvent>
#include <QFontMetrics>
#include <QTextLayout>

namespace shardlab::ui {

ElidedLabel::ElidedLabel(int lines, QWidget* parent) : QLabel(parent), m_lines(std::max(1, lines))
{
    setWordWrap(false); // the lines are broken here, so the height never follows the text
    setTextFormat(Qt::PlainText);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    setMinimumWidth(0);
    relayout();
}

void ElidedLabel::setFullText(const QString& text)
{
    m_full = text;
    setToolTip(text);
    relayout();
}

void ElidedLabel::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    relayout();
}

void ElidedLabel::changeEvent(QEvent* event)
{
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        relayout();
}

// Breaks the text into lines of the label's width; past the last allowed line the rest
// is elided onto that line.
void ElidedLabel::relayout()
{
    const QFontMetrics fm(font());
    const QMargins m = contentsMargins();
    setFixedHeight(m_lines * fm.lineSpacing() + m.top() + m.bottom() + 2);
    const int width = std::max(1, contentsRect().width() - 2 * margin());
    QString flat = m_full;
    flat.replace(QLatin1Char('\n'), QLatin1Char(' '));
    QTextLayout layout(flat, font());
    layout.beginLayout();
    QStringList shown;
    m_elided = false;
    while (true) {
        QTextLine line = layout.createLine();
        if (!line.isValid())
            break;
        line.setLineWidth(width);
        if (int(shown.size()) == m_lines - 1) {
            const QString rest = flat.mid(line.textStart());
            const QString last = fm.elidedText(rest, Qt::ElideRight, width);
            m_elided = last != rest;
            shown << last;
            break;
        }
        shown << flat.mid(line.textStart(), line.textLength()).trimmed();
    }
    layout.endLayout();
    QLabel::setText(shown.join(QLatin1Char('\n')));
}

} // namespace shardlab::ui
