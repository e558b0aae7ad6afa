#include "logic/ScheduleEditor.h"

#include "run/run_directory.h"
#include "train/settings.h"

DraftSchedule::DraftSchedule(nf::Schedule schedule, int layers, int64_t maxSteps, nf::Treatments used)
    : m_schedule(std::move(schedule), layers, maxSteps, used) {}

nf::EditResult DraftSchedule::add(nf::ScheduleEvent event) { return m_schedule.add(event); }

nf::EditResult DraftSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return m_schedule.moveEvents(idAndStep);
}

nf::EditResult DraftSchedule::remove(int64_t id) { return m_schedule.remove(id); }

std::vector<nf::ScheduleEvent> DraftSchedule::trimTo(int64_t maxSteps) {
  std::vector<nf::ScheduleEvent> dropped = m_schedule.trimTo(maxSteps);
  std::vector<nf::ScheduleEvent> still;  // an edit since may conflict with one: it stays aside
  for (const nf::ScheduleEvent& e : m_setAside)
    if (e.step >= maxSteps || !m_schedule.add(e).accepted) still.push_back(e);
  m_setAside = std::move(still);
  m_setAside.insert(m_setAside.end(), dropped.begin(), dropped.end());
  return dropped;
}

LiveSchedule::LiveSchedule(std::shared_ptr<nf::Trainer> trainer, int layers)
    : m_trainer(std::move(trainer)), m_layers(layers) {}

// The trainer refuses with a reason; anything it throws (it should not) is a refusal too, never a crash
// in the GUI's event loop.
template <class Edit>
static nf::EditResult guarded(Edit edit) {
  try {
    return edit();
  } catch (const std::exception& e) {
    nf::EditRefusal why{nf::EditRefusal::Code::Failed};
    why.detail = e.what();
    return nf::EditResult::refuse(why);
  }
}

nf::EditResult LiveSchedule::add(nf::ScheduleEvent event) {
  return guarded([&] { return m_trainer->addEvent(event); });
}

nf::EditResult LiveSchedule::check(const nf::ScheduleEvent& event) const {
  return guarded([&] { return m_trainer->checkEvent(event); });
}

nf::EditResult LiveSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return guarded([&] { return m_trainer->moveEvents(idAndStep); });
}

nf::EditResult LiveSchedule::remove(int64_t id) {
  return guarded([&] { return m_trainer->deleteEvent(id); });
}

FollowedSchedule::FollowedSchedule(std::string runDir, int layers, std::function<int64_t()> maxSteps,
                                   std::function<int64_t()> stepsDone)
    : m_runDir(std::move(runDir)),
      m_layers(layers),
      m_maxSteps(std::move(maxSteps)),
      m_stepsDone(std::move(stepsDone)) {}

nf::Schedule FollowedSchedule::schedule() const {
  const std::string path = nf::run::schedulePath(m_runDir);
  try {
    m_last = nf::readScheduleFile(path);
    m_problem.clear();
  } catch (const std::exception& e) {
    // The trainer replaces it whole, but a person may edit it by hand (a resume's error asks for that): the
    // last readable version stays shown, and why it may be out of date with it.
    m_problem = e.what();
  }
  return m_last;
}

bool FollowedSchedule::tentative() const {
  try {
    m_autopilot = nf::readRunConfig(m_runDir).autopilot.enabled;
  } catch (const std::exception&) {
    // Replaced atomically too: unreadable only if deleted, when the last answer stands.
  }
  return m_autopilot;
}

nf::EditResult FollowedSchedule::refused() {
  return nf::EditResult::refuse(nf::EditRefusal(nf::EditRefusal::Code::NotEditable));
}
