// Helpers of the scenario editor's tests: a shipped scenario, whether a problem names a
// field, whether a field is marked, and choosing a combo item as a user does.
#pragma once

#include <QComboBox>
#include <QtTest>

#include "io/presets.h"
#include "model/error.h"

namespace shardlab::testing {

inline Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("preset %s: %s", name, s.firstError().c_str());
    return s.value;
}

inline bool names(const FieldErrors& errors, const QString& path)
{
    for (const FieldError& e : errors)
        if (QString::fromStdString(e.where) == path)
            return true;
    return false;
}

inline bool marked(QWidget* w) { return w->property("shardlabFieldError").toBool(); }

// Selects a combo item the way a user does: activated() is what the editor listens to.
inline void activate(QComboBox* box, const QString& text)
{
    const int i = box->findText(text);
    QVERIFY2(i >= 0, qPrintable(text));
    box->setCurrentIndex(i);
    Q_EMIT box->activated(i);
}

} // namespace shardlab::testing
