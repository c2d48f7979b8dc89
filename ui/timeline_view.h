// The Plan tab's step timeline (core/report/step_timeline.h): the busiest stage's
// micro-batch step, operator by operator, and that stage over one cycle, drawn as two
// lanes of bars coloured by what the time is (compute, HBM, launch, communication on its
// link, overlap, hand-off, wait); hover a bar for its figures.
#pragma once

#include <QWidget>

#include "report/step_timeline.h"

namespace shardlab::ui {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    void setTimeline(const StepTimeline& t);
    void showMessage(const QString& text);
    const StepTimeline& timeline() const { return m_timeline; }
    // The bar under a widget position, if any: its lane (0 step, 1 cycle) and index.
    bool barAt(const QPointF& pos, int& lane, int& index) const;
    QString barText(int lane, int index) const;

    QSize sizeHint() const override { return {640, 340}; }
    QSize minimumSizeHint() const override { return {320, 340}; }

protected:
    void paintEvent(QPaintEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;

private:
    struct LaneGeometry {
        QRectF area;   // where the bars go
        double spanUs; // the time the area's width stands for
    };
    LaneGeometry lane(int i) const;
    QRectF barRect(int lane, const TimelineBar& b) const;

    StepTimeline m_timeline;
    QString m_message;
};

} // namespace shardlab::ui
