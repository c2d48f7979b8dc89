// Building blocks of the scenario editor's forms: spin boxes that leave the mouse wheel
// to the scroll area unless focused, and the inline error marking of a field.
#pragma once

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QWheelEvent>

class QLabel;

namespace shardlab::ui {

// A long form in a scroll area: a wheel turn over an unfocused spin box must scroll
// the form, not silently change a model dimension.
template <typename Base>
class FocusWheel : public Base {
public:
    using Base::Base;

protected:
    void wheelEvent(QWheelEvent* e) override
    {
        if (this->hasFocus())
            Base::wheelEvent(e);
        else
            e->ignore();
    }
};
using FieldSpinBox = FocusWheel<QSpinBox>;
using FieldDoubleSpinBox = FocusWheel<QDoubleSpinBox>;
using FieldComboBox = FocusWheel<QComboBox>;

// Red border and tint on `field`, red text on its form label, and the reasons prepended
// to its tooltip. An empty `reasons` restores the field's normal look and tooltip.
void markFieldError(QWidget* field, QLabel* label, const QString& reasons);

// Sets the tooltip that markFieldError restores (call instead of setToolTip on fields).
void setFieldToolTip(QWidget* field, const QString& tip);

} // namespace shardlab::ui
