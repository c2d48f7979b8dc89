// A message line of a fixed height: the text fills at most `lines` lines and the last
// one ends in "…" when it does not fit; the whole text is the tooltip and fullText().
// A long message (a list of problems, a search summary with its proof) then never moves
// the widgets below it.
#pragma once

#include <QLabel>

namespace shardlab::ui {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(int lines, QWidget* parent = nullptr);

    void setFullText(const QString& text);
    QString fullText() const { return m_full; }
    // True when the shown text is shorter than the full text.
    bool isElided() const { return m_elided; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void relayout();

    int m_lines;
    QString m_full;
    bool m_elided = false;
};

} // namespace shardlab::ui
