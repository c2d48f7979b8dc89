#include "scenario_fields.h"

#include <QLabel>
#include <QPalette>
#include <QVariant>

namespace shardlab::ui {

namespace {
constexpr const char* kBaseTip = "shardlabBaseToolTip";
constexpr const char* kHasError = "shardlabFieldError";
} // namespace

void setFieldToolTip(QWidget* field, const QString& tip)
{
    field->setProperty(kBaseTip, tip);
    if (!field->property(kHasError).toBool())
        field->setToolTip(tip);
}

void markFieldError(QWidget* field, QLabel* label, const QString& reasons)
{
    const bool error = !reasons.isEmpty();
    const bool had = field->property(kHasError).toBool();
    const QString base = field->property(kBaseTip).toString();
    if (error) {
        // A palette, not a style sheet: style sheets replace the spin box arrows with the
        // style sheet style's own, so a marked field would look like a different widget.
        QPalette pal = field->palette();
        pal.setColor(QPalette::Base, QColor(0xfd, 0xdc, 0xdc));
        // Fusion draws frames in Window.darker(140): this makes the frame red.
        pal.setColor(QPalette::Window, QColor(0xf0, 0x40, 0x40));
        pal.setColor(QPalette::Button, QColor(0xfd, 0xdc, 0xdc));
        pal.setColor(QPalette::Text, QColor(0x8e, 0x00, 0x00));
        pal.setColor(QPalette::ButtonText, QColor(0x8e, 0x00, 0x00));
        field->setPalette(pal);
        QString tip = QStringLiteral("<p style='color:#b71c1c'><b>%1</b></p>")
                          .arg(reasons.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        if (!base.isEmpty())
            tip += QStringLiteral("<p>%1</p>").arg(base.toHtmlEscaped());
        field->setToolTip(tip);
    } else if (had) {
        field->setPalette(QPalette()); // back to the inherited palette
        field->setToolTip(base);
    }
    field->setProperty(kHasError, error);
    if (label)
        label->setStyleSheet(error ? QStringLiteral("color: #c62828; font-weight: 600;") : QString());
}

} // namespace shardlab::ui
