// The rules every schedule edit follows, in one place: for the trainer's live edits (other threads, the
// GUI's timeline, later the network) and for the GUI's draft before a run. An edit is accepted whole or
// refused with a code and its arguments (EditRefusal), which the CLI shows in English (describe()) and the
// GUI in its own language. Plain C++ (no torch); not thread-safe (the trainer holds its schedule lock).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedule/schedule.h"

namespace nf {

struct EditRefusal {
  enum class Code {
    NoSuchEvent,          // eventId
    EventAlreadyApplied,  // eventId, event (its description): its step has started
    StepAlreadyStarted,   // step: an edit would put or find something at a step that has started; runStep
    InvalidSchedule,      // problems: the edited schedule would not validate
    Failed,       // detail: the edit could not be made, e.g. schedule.json not written (nothing changed)
    NotEditable,  // the schedule belongs to a run trained by another process
  };
  explicit EditRefusal(Code c) : code(c) {}
  Code code;
  int64_t eventId = 0;
  std::string event;
  int64_t step = 0, runStep = 0;  // runStep: the step in progress
  std::vector<ScheduleProblem> problems;
  std::string detail;
};
std::string describe(const EditRefusal& refusal);  // English

struct EditResult {
  bool accepted = false;
  int64_t eventId = 0;                 // the event's id (new for an add)
  std::optional<EditRefusal> refusal;  // why not, when refused
  std::string reason;                  // describe(*refusal), English; empty when accepted

  static EditResult accept(int64_t id) { return {true, id, {}, ""}; }
  static EditResult refuse(EditRefusal why);
};
// An edit's result as the steering endpoint answers it: {"accepted", "event_id"} and, when refused,
// "reason" (English) and "refusal": {"code": "step_already_started", …its arguments, "problems": […]}.
nlohmann::json toJson(const EditResult& result);
// The same answer read back (a steering client's): std::invalid_argument when it is not one.
EditResult editResultFromJson(const nlohmann::json& j);

// What an accepted edit changed, one entry per event (the trainer logs these).
struct ScheduleChange {
  enum class Kind { Add, Move, Delete } kind;
  ScheduleEvent event;  // after the change (as it was, for a delete)
  int64_t from = -1;    // a move's step before
};

class EditableSchedule {
 public:
  // Sorts the schedule; it need not be valid yet (a preset for another depth): edits must leave it valid.
  // `used`: the treatments the run uses, whose switch-off events it accepts.
  EditableSchedule(Schedule schedule, int nLayer, int64_t maxSteps, Treatments used = {});

  const Schedule& schedule() const { return m_schedule; }
  int nLayer() const { return m_nLayer; }
  int64_t maxSteps() const { return m_maxSteps; }

  // Steps before `step` have started: their events are applied and locked, and no edit may touch them.
  void lockBefore(int64_t step) { m_lockedBefore = step; }
  int64_t lockedBefore() const { return m_lockedBefore; }

  // A new event (its id is chosen here: never one used before by this schedule, not even by a deleted
  // event, since callers keep ids as handles).
  EditResult add(ScheduleEvent event);
  // What add(event) would answer now, changing nothing (on a copy; persist is not called, so only a
  // failing write is not foreseen): lets an editor offer only the events it would accept.
  EditResult checkAdd(ScheduleEvent event) const;
  // Several moves as one edit: all are made or, with the reason of the first refused, none.
  EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep);
  EditResult move(int64_t id, int64_t step) { return moveEvents({{id, step}}); }
  EditResult remove(int64_t id);
  // A new step budget: events at or past it are dropped; returns them.
  std::vector<ScheduleEvent> trimTo(int64_t maxSteps);

  // Called with the edited schedule before an edit is accepted (the trainer writes schedule.json there);
  // if it throws, the edit is refused (Failed) and nothing changes.
  std::function<void(const Schedule&)> persist;
  // What the last accepted edit changed.
  const std::vector<ScheduleChange>& lastChanges() const { return m_lastChanges; }

 private:
  EditResult commit(Schedule edited, std::vector<ScheduleChange> changes, int64_t id);
  std::optional<EditRefusal> tooLate(int64_t step) const;    // the step has started
  std::optional<EditRefusal> notEditable(int64_t id) const;  // no such event, or it is applied

  Schedule m_schedule;
  int m_nLayer;
  int64_t m_maxSteps;
  Treatments m_used;
  int64_t m_lockedBefore = 0;
  int64_t m_highestId = 0;
  std::vector<ScheduleChange> m_lastChanges;
};

}  // namespace nf
