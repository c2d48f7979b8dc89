// QCustomPlot's header uses the `signals` and `foreach` keywords, which QT_NO_KEYWORDS
// (needed beside LibTorch) turns off. Include QCustomPlot only through this header.
#pragma once

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
