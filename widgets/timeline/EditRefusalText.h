// The engine's schedule-edit refusals (codes with arguments, nf::EditRefusal) and schedule problems as
// text in the GUI's language.
#pragma once
#include <QCoreApplication>
#include <QString>

#include "schedule/editable_schedule.h"

class EditRefusalText {
  Q_DECLARE_TR_FUNCTIONS(EditRefusalText)

 public:
  static QString of(const nf::EditResult& result);  // empty when accepted
  static QString of(const nf::ScheduleProblem& problem);
};
