// How the removal timeline names and colours its rows and events — the engine's site names, and sentences in
// the GUI's language (translated in the context "TimelineWidget") — for its row labels, markers, tooltips,
// status messages and undo texts.
#pragma once
#include <QColor>
#include <QCoreApplication>
#include <QString>
#include <vector>

#include "schedule/schedule.h"

class TimelineNames {
  Q_DECLARE_TR_FUNCTIONS(TimelineWidget)

 public:
  static QString rowName(int row);  // "LN_mlp", "LN_qk", "LN_v", "LN_f", "treatments"
  static QColor rowColor(int row);
  static QString sitesOf(const nf::ScheduleEvent& e);    // "LN_v.1", "LN_mlp.all", "LN_f"
  static QString subjectOf(const nf::ScheduleEvent& e);  // "LN_v.1", "the end of LN_mlp.all's …"
  static QString subjectsOf(const std::vector<nf::ScheduleEvent>& events);  // three, then how many more
  static QString happeningOf(const nf::ScheduleEvent& e);  // "LN_v.1 becomes fake at step 40"
  static QString layerLabel(const nf::ScheduleEvent& e);   // a marker's text: its layer, "f", "0", "E", "∀"
};
