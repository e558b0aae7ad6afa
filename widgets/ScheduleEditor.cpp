#include "ScheduleEditor.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/atomic_file.h"
#include "train/run_directory.h"

nf::EditResult ScheduleEditor::moveAll(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  const nf::Schedule before = schedule();
  std::vector<std::pair<int64_t, int64_t>> made;  // id, step it came from
  for (const auto& [id, step] : idAndStep) {
    const nf::ScheduleEvent* event = before.find(id);
    if (!event) return {false, "event " + std::to_string(id) + " is no longer in the schedule"};
    if (event->step == step) continue;
    nf::EditResult r = move(id, step);
    if (!r.accepted) {
      for (auto it = made.rbegin(); it != made.rend(); ++it) move(it->first, it->second);
      return r;
    }
    made.emplace_back(id, event->step);
  }
  return {true, "", idAndStep.empty() ? 0 : idAndStep.front().first};
}

DraftSchedule::DraftSchedule(nf::Schedule schedule, int layers, int64_t maxSteps)
    : m_schedule(std::move(schedule)), m_layers(layers), m_maxSteps(maxSteps) {
  m_schedule.sort();
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
  event.id = m_schedule.nextId();
  nf::Schedule edited = m_schedule;
  edited.events.push_back(event);
  return commit(std::move(edited), event.id);
}

nf::EditResult DraftSchedule::move(int64_t id, int64_t step) {
  if (!m_schedule.find(id)) return {false, "no event " + std::to_string(id)};
  nf::Schedule edited = m_schedule;
  for (auto& e : edited.events)
    if (e.id == id) e.step = step;
  return commit(std::move(edited), id);
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
