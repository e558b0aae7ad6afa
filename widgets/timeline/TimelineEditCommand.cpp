#include "timeline/TimelineEditCommand.h"

#include "timeline/EditRefusalText.h"
#include "timeline/TimelineWidget.h"

TimelineEditCommand::TimelineEditCommand(TimelineWidget* w, Kind kind, std::vector<nf::ScheduleEvent> before,
                                         std::vector<nf::ScheduleEvent> after, const QString& text)
    : QUndoCommand(text), m_w(w), m_kind(kind), m_before(std::move(before)), m_after(std::move(after)) {}

void TimelineEditCommand::redo() {
  if (m_first) {  // already applied when pushed
    m_first = false;
    return;
  }
  apply(false);
}

void TimelineEditCommand::undo() { apply(true); }

int64_t TimelineEditCommand::resolve(int64_t id) const {
  auto it = m_w->m_aliases.find(id);
  while (it != m_w->m_aliases.end()) {
    id = it->second;
    it = m_w->m_aliases.find(id);
  }
  return id;
}

void TimelineEditCommand::apply(bool undoing) {
  ScheduleEditor* editor = m_w->editor();
  if (!editor) return;
  nf::EditResult r = nf::EditResult::accept(0);
  const bool adding = (m_kind == Kind::Add) != undoing;
  if (m_kind == Kind::Move) {
    std::vector<std::pair<int64_t, int64_t>> moves;
    for (const auto& e : undoing ? m_before : m_after) moves.emplace_back(resolve(e.id), e.step);
    r = editor->moveEvents(moves);
  } else if (adding) {  // redo of an add, undo of a delete
    for (auto& e : m_kind == Kind::Add ? m_after : m_before) {
      nf::ScheduleEvent fresh = e;
      fresh.id = 0;
      r = editor->add(fresh);
      if (!r.accepted) break;
      if (r.eventId != resolve(e.id)) m_w->m_aliases[resolve(e.id)] = r.eventId;
    }
  } else {
    for (const auto& e : m_kind == Kind::Add ? m_after : m_before) {
      r = editor->remove(resolve(e.id));
      if (!r.accepted) break;
    }
  }
  if (!r.accepted) {
    setObsolete(true);  // the run has passed it: drop it from the history
    m_w->refuse(EditRefusalText::of(r));
  } else {
    Q_EMIT m_w->scheduleEdited();
    Q_EMIT m_w->editAccepted(undoing ? TimelineWidget::tr("Undone: %1").arg(text())
                                     : TimelineWidget::tr("Redone: %1").arg(text()));
  }
  m_w->refresh();
}
