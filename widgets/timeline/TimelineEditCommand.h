// The timeline's undo history: one accepted edit, replayable through the schedule editor. Ids can change
// when an undo re-adds a deleted event, so commands refer to events through the widget's alias table.
#pragma once
#include <QUndoCommand>
#include <vector>

#include "schedule/schedule.h"

class TimelineWidget;

class TimelineEditCommand : public QUndoCommand {
 public:
  enum class Kind { Move, Add, Delete };
  TimelineEditCommand(TimelineWidget* w, Kind kind, std::vector<nf::ScheduleEvent> before,
                      std::vector<nf::ScheduleEvent> after, const QString& text);
  void redo() override;
  void undo() override;

 private:
  int64_t resolve(int64_t id) const;
  void apply(bool undoing);

  TimelineWidget* m_w;
  Kind m_kind;
  std::vector<nf::ScheduleEvent> m_before, m_after;
  bool m_first = true;  // pushed after it was applied: the first redo does nothing
};
