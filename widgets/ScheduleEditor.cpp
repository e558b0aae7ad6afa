#include "ScheduleEditor.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/atomic_file.h"
#include "train/run_directory.h"

DraftSchedule::DraftSchedule(nf::Schedule schedule, int layers, int64_t maxSteps)
    : m_schedule(std::move(schedule)), m_layers(layers), m_maxSteps(maxSteps) {
  m_schedule.sort();
  m_highestId = m_schedule.nextId() - 1;
}

nf::EditResult DraftSchedule::commit(nf::Schedule edited, int64_t id) {
  try {
    edited.validate(m_layers, m_maxSteps);
  } catch (const std::invalid_argument& e) {
    return {false, e.what()};
  }
  edited.sort();
  m_schedule = std::move(edited);
  return {true, "", id};
}

nf::EditResult DraftSchedule::add(nf::ScheduleEvent event) {
  event.id = std::max(m_schedule.nextId(), m_highestId + 1);
  nf::Schedule edited = m_schedule;
  edited.events.push_back(event);
  nf::EditResult r = commit(std::move(edited), event.id);
  if (r.accepted) m_highestId = event.id;
  return r;
}

nf::EditResult DraftSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  nf::Schedule edited = m_schedule;
  for (const auto& [id, step] : idAndStep) {
    if (!m_schedule.find(id)) return {false, "no event " + std::to_string(id)};
    for (auto& e : edited.events)
      if (e.id == id) e.step = step;
  }
  return commit(std::move(edited), idAndStep.empty() ? 0 : idAndStep.front().first);
}

nf::EditResult DraftSchedule::remove(int64_t id) {
  if (!m_schedule.find(id)) return {false, "no event " + std::to_string(id)};
  nf::Schedule edited = m_schedule;
  edited.events.erase(std::remove_if(edited.events.begin(), edited.events.end(),
                                     [&](const nf::ScheduleEvent& e) { return e.id == id; }),
                      edited.events.end());
  return commit(std::move(edited), id);
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
    return {false, e.what()};
  }
}

nf::EditResult LiveSchedule::add(nf::ScheduleEvent event) {
  return guarded([&] { return m_trainer->addEvent(event); });
}

nf::EditResult LiveSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return guarded([&] { return m_trainer->moveEvents(idAndStep); });
}

nf::EditResult LiveSchedule::remove(int64_t id) {
  return guarded([&] { return m_trainer->deleteEvent(id); });
}

FollowedSchedule::FollowedSchedule(std::string runDir, int layers, int64_t maxSteps,
                                   std::function<int64_t()> stepsDone)
    : m_runDir(std::move(runDir)), m_layers(layers), m_maxSteps(maxSteps), m_stepsDone(std::move(stepsDone)) {}

nf::Schedule FollowedSchedule::schedule() const {
  const std::string path = nf::run::schedulePath(m_runDir);
  try {
    m_last = nf::scheduleFromJson(nlohmann::json::parse(nf::readTextFile(path)), path);
  } catch (const std::exception&) {
    // Replaced atomically by the trainer, so unreadable only if deleted: keep showing the last version.
  }
  return m_last;
}

nf::EditResult FollowedSchedule::refused() {
  return {false, "this run is trained by another process (followed through its files); edit it where it runs"};
}
