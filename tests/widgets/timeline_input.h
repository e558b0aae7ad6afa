// Mouse input on the removal timeline as a user gives it, for the GUI tests: where a step is drawn, and a
// drag of an event's marker to a step.
#pragma once
#include <QPoint>
#include <QtTest>

#include "timeline/TimelineWidget.h"

namespace fixtures {

// The x pixel the timeline maps to `step` (the middle of the pixels that snap to it).
inline int xOfStep(const TimelineWidget& timeline, int64_t step) {
  int first = -1, last = -1;
  for (int x = 0; x < timeline.width(); ++x)
    if (timeline.stepAt(x) == step) {
      if (first < 0) first = x;
      last = x;
    }
  return (first + last) / 2;
}

// Press on the event's marker, move through the middle, release over `toStep`.
inline void dragEvent(TimelineWidget& timeline, int64_t id, int64_t toStep,
                      Qt::KeyboardModifiers modifiers = {}) {
  const QPoint from = timeline.markerCenter(id);
  const QPoint to(xOfStep(timeline, toStep), from.y());
  QTest::mousePress(&timeline, Qt::LeftButton, modifiers, from);
  QTest::mouseMove(&timeline, QPoint((from.x() + to.x()) / 2, from.y()));
  QTest::mouseMove(&timeline, to);
  QTest::mouseRelease(&timeline, Qt::LeftButton, modifiers, to);
}

}  // namespace fixtures
