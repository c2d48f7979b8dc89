#include "wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QScrollBar>
#include <QSlider>
#include <QWheelEvent>

namespace shardlab::ui {

namespace {

// The value-editing widget a wheel event on `o` would change (a spin box's line edit
// belongs to its spin box), or null.
QWidget* editingWidget(QObject* o)
{
    for (auto* w = qobject_cast<QWidget*>(o); w; w = w->parentWidget()) {
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) || qobject_cast<QSlider*>(w))
            return w;
        if (qobject_cast<QAbstractScrollArea*>(w))
            return nullptr;
    }
    return nullptr;
}

QAbstractScrollArea* enclosingScrollArea(QWidget* w)
{
    for (QWidget* p = w ? w->parentWidget() : nullptr; p; p = p->parentWidget())
        if (auto* area = qobject_cast<QAbstractScrollArea*>(p))
            return area;
    return nullptr;
}

} // namespace

WheelGuard::WheelGuard(QObject* parent) : QObject(parent) {}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::Wheel || m_forwarding || !watched->isWidgetType())
        return false;
    QWidget* field = editingWidget(watched);
    if (!field) {
        if (qobject_cast<QAbstractScrollArea*>(watched->parent()) || qobject_cast<QScrollBar*>(watched)) {
            m_scrolled = true; // the user scrolls an area (its viewport or scroll bar)
            m_lastScroll.start();
        }
        return false;
    }
    const bool scrolling = isScrolling();
    if (field->hasFocus() && !scrolling)
        return false; // the user means the field
    // Not meant for the field: the scroll area around it scrolls instead.
    if (QAbstractScrollArea* area = enclosingScrollArea(field)) {
        m_forwarding = true;
        QCoreApplication::sendEvent(area->viewport(), event);
        m_forwarding = false;
        m_scrolled = true;
        m_lastScroll.start();
    }
    return true;
}

namespace {
WheelGuard* guard = nullptr;
}

const WheelGuard* wheelGuard() { return guard; }

void installWheelGuard()
{
    if (!guard && qApp) {
        guard = new WheelGuard(qApp);
        qApp->installEventFilter(guard);
    }
}

} // namespace shardlab::ui
