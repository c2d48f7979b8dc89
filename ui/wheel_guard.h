// The mouse wheel edits a field only when the user means it. A spin box, combo box or
// slider under the pointer takes a wheel event only when it has the keyboard focus and the
// user is not in the middle of scrolling something else; otherwise the event scrolls the
// nearest scroll area around it (the scenario dock), as the user intended. Without this, a
// field focused earlier changes value (NVLink 450 -> 436 GB/s) when it passes under the
// pointer while the dock scrolls.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

namespace shardlab::ui {

class WheelGuard : public QObject {
public:
    explicit WheelGuard(QObject* parent = nullptr);
    // Wheel events within this many ms of one that scrolled an area continue that scroll.
    static constexpr int kGestureMs = 600;
    // True while a wheel event would continue a scroll of an area (within kGestureMs of it).
    bool isScrolling() const { return m_scrolled && m_lastScroll.elapsed() < kGestureMs; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QElapsedTimer m_lastScroll; // when a wheel event last went to a scroll area
    bool m_scrolled = false;
    bool m_forwarding = false;
};

// Installs one guard on the application (idempotent).
void installWheelGuard();
// The installed guard, or null.
const WheelGuard* wheelGuard();

} // namespace shardlab::ui
