// qcustomplot.h uses Qt's keyword macros (signals, slots, emit, foreach), which this project turns off
// (QT_NO_KEYWORDS: they clash with LibTorch). Include QCustomPlot through this header only.
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
