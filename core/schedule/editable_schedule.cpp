#include "schedule/editable_schedule.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/json_read.h"

namespace nf {

std::string describe(const EditRefusal& r) {
  using Code = EditRefusal::Code;
  switch (r.code) {
    case Code::NoSuchEvent:
      return "there is no event " + std::to_string(r.eventId);
    case Code::EventAlreadyApplied:
      return "event " + std::to_string(r.eventId) + " (" + r.event + ") has already been applied";
    case Code::StepAlreadyStarted:
      return "step " + std::to_string(r.step) + " has already started: an edit can reach step " +
             std::to_string(r.runStep + 1) + " or later";
    case Code::InvalidSchedule: {
      std::string text;
      for (const ScheduleProblem& p : r.problems) text += (text.empty() ? "" : "\n") + describe(p);
      return text;
    }
    case Code::Failed:
      return r.detail;
    case Code::NotEditable:
      return "this run is trained by another process (followed through its files); edit it where it runs";
  }
  return "?";
}

namespace {

const char* codeName(EditRefusal::Code code) {
  using Code = EditRefusal::Code;
  switch (code) {
    case Code::NoSuchEvent:
      return "no_such_event";
    case Code::EventAlreadyApplied:
      return "event_already_applied";
    case Code::StepAlreadyStarted:
      return "step_already_started";
    case Code::InvalidSchedule:
      return "invalid_schedule";
    case Code::Failed:
      return "failed";
    case Code::NotEditable:
      return "not_editable";
  }
  return "?";
}

const char* codeName(ScheduleProblem::Code code) {
  using Code = ScheduleProblem::Code;
  switch (code) {
    case Code::DuplicateId:
      return "duplicate_id";
    case Code::NegativeStep:
      return "negative_step";
    case Code::PastLastStep:
      return "past_last_step";
    case Code::LayerOutOfRange:
      return "layer_out_of_range";
    case Code::EotTreatmentNotOnV:
      return "eot_treatment_not_on_v";
    case Code::SiteAlreadyChanged:
      return "site_already_changed";
    case Code::TreatmentNotUsed:
      return "treatment_not_used";
    case Code::SiteNeverFake:
      return "site_never_fake";
  }
  return "?";
}

}  // namespace

nlohmann::json toJson(const EditResult& result) {
  nlohmann::json j{{"accepted", result.accepted}, {"event_id", result.eventId}};
  if (!result.refusal) return j;
  const EditRefusal& r = *result.refusal;
  nlohmann::json problems = nlohmann::json::array();
  for (const ScheduleProblem& p : r.problems)
    problems.push_back({{"code", codeName(p.code)},
                        {"event_id", p.eventId},
                        {"event", p.event},
                        {"step", p.step},
                        {"layer", p.layer},
                        {"limit", p.limit},
                        {"site", p.site},
                        {"first_step", p.firstStep},
                        {"make_fake", p.makeFake},
                        {"text", describe(p)}});
  j["reason"] = result.reason;
  j["refusal"] = {{"code", codeName(r.code)}, {"event_id", r.eventId}, {"event", r.event},
                  {"step", r.step},           {"run_step", r.runStep}, {"detail", r.detail},
                  {"problems", problems}};
  return j;
}

namespace {
EditResult readEditResult(const nlohmann::json& j) {
  using Code = EditRefusal::Code;
  using Problem = ScheduleProblem::Code;
  auto fail = [](const std::string& what) { throw std::invalid_argument("an edit's answer: " + what); };
  if (!j.is_object() || !j.contains("accepted") || !j["accepted"].is_boolean() || !j.contains("event_id") ||
      !j["event_id"].is_number_integer())
    fail("needs \"accepted\" and \"event_id\"");
  if (j["accepted"].get<bool>()) return EditResult::accept(j["event_id"].get<int64_t>());
  const nlohmann::json& r = j.value("refusal", nlohmann::json());
  if (!r.is_object() || !r.contains("code") || !r["code"].is_string()) fail("a refusal needs its \"code\"");
  // An optional field of the answer, type-checked (JsonIn): a step of 1e40 is refused, never converted.
  auto field = [](const nlohmann::json& o, const char* key, auto otherwise) {
    readJson(o, "an edit's answer", [&](const JsonIn& in) {
      in[key].readIfPresent(otherwise);
      return 0;
    });
    return otherwise;
  };
  std::optional<EditRefusal> refusal;
  for (Code c : {Code::NoSuchEvent, Code::EventAlreadyApplied, Code::StepAlreadyStarted,
                 Code::InvalidSchedule, Code::Failed, Code::NotEditable})
    if (r["code"] == codeName(c)) refusal.emplace(c);
  if (!refusal) fail("unknown refusal code " + r["code"].dump());
  refusal->eventId = field(r, "event_id", int64_t{0});
  refusal->event = field(r, "event", std::string());
  refusal->step = field(r, "step", int64_t{0});
  refusal->runStep = field(r, "run_step", int64_t{0});
  refusal->detail = field(r, "detail", std::string());
  for (const nlohmann::json& p : r.value("problems", nlohmann::json::array())) {
    std::optional<ScheduleProblem> problem;
    for (Problem c : {Problem::DuplicateId, Problem::NegativeStep, Problem::PastLastStep,
                      Problem::LayerOutOfRange, Problem::EotTreatmentNotOnV, Problem::SiteAlreadyChanged,
                      Problem::TreatmentNotUsed, Problem::SiteNeverFake})
      if (p.is_object() && p.value("code", std::string()) == codeName(c)) problem.emplace(c);
    if (!problem) fail("unknown schedule problem " + p.dump());
    problem->eventId = field(p, "event_id", int64_t{0});
    problem->event = field(p, "event", std::string());
    problem->step = field(p, "step", int64_t{0});
    problem->layer = field(p, "layer", int64_t{0});
    problem->limit = field(p, "limit", int64_t{0});
    problem->site = field(p, "site", std::string());
    problem->makeFake = field(p, "make_fake", true);
    problem->firstStep = field(p, "first_step", int64_t{0});
    refusal->problems.push_back(*problem);
  }
  EditResult result = EditResult::refuse(*refusal);
  result.eventId = j["event_id"].get<int64_t>();
  return result;
}
}  // namespace

EditResult editResultFromJson(const nlohmann::json& j) {
  try {
    return readEditResult(j);
  } catch (const nlohmann::json::exception& e) {  // a field of another type
    throw std::invalid_argument(std::string("an edit's answer: ") + e.what());
  }
}

EditResult EditResult::refuse(EditRefusal why) {
  EditResult r;
  r.reason = describe(why);
  r.refusal = std::move(why);
  return r;
}

EditableSchedule::EditableSchedule(Schedule schedule, int nLayer, int64_t maxSteps, Treatments used)
    : m_schedule(std::move(schedule)), m_nLayer(nLayer), m_maxSteps(maxSteps), m_used(used) {
  m_schedule.sort();
  m_highestId = m_schedule.nextId() - 1;
}

std::optional<EditRefusal> EditableSchedule::tooLate(int64_t step) const {
  if (step >= m_lockedBefore || step < 0) return std::nullopt;  // a negative step is the validation's
  EditRefusal r{EditRefusal::Code::StepAlreadyStarted};
  r.step = step;
  r.runStep = m_lockedBefore - 1;
  return r;
}

std::optional<EditRefusal> EditableSchedule::notEditable(int64_t id) const {
  const ScheduleEvent* e = m_schedule.find(id);
  if (!e) {
    EditRefusal r{EditRefusal::Code::NoSuchEvent};
    r.eventId = id;
    return r;
  }
  if (e->step >= m_lockedBefore) return std::nullopt;
  EditRefusal r{EditRefusal::Code::EventAlreadyApplied};
  r.eventId = id;
  r.event = describe(*e);
  r.step = e->step;
  return r;
}

EditResult EditableSchedule::commit(Schedule edited, std::vector<ScheduleChange> changes, int64_t id) {
  std::vector<ScheduleProblem> problems = edited.problems(m_nLayer, m_maxSteps, m_used);
  if (!problems.empty()) {
    EditRefusal r{EditRefusal::Code::InvalidSchedule};
    r.problems = std::move(problems);
    return EditResult::refuse(std::move(r));
  }
  edited.sort();
  // Persisted first: if it cannot be, the edit is refused and nothing changed.
  if (persist) {
    try {
      persist(edited);
    } catch (const std::exception& e) {
      EditRefusal r{EditRefusal::Code::Failed};
      r.detail = e.what();
      return EditResult::refuse(std::move(r));
    }
  }
  m_schedule = std::move(edited);
  m_lastChanges = std::move(changes);
  return EditResult::accept(id);
}

EditResult EditableSchedule::add(ScheduleEvent event) {
  if (auto why = tooLate(event.step)) return EditResult::refuse(*why);
  event.id = std::max(m_schedule.nextId(), m_highestId + 1);
  Schedule edited = m_schedule;
  edited.events.push_back(event);
  EditResult r = commit(std::move(edited), {{ScheduleChange::Kind::Add, event}}, event.id);
  if (r.accepted) m_highestId = event.id;
  return r;
}

EditResult EditableSchedule::checkAdd(ScheduleEvent event) const {
  EditableSchedule dryRun = *this;
  dryRun.persist = nullptr;
  return dryRun.add(std::move(event));
}

EditResult EditableSchedule::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  Schedule edited = m_schedule;
  std::vector<ScheduleChange> changes;
  for (const auto& [id, step] : idAndStep) {
    if (auto why = notEditable(id)) return EditResult::refuse(*why);
    if (auto why = tooLate(step)) return EditResult::refuse(*why);
    for (auto& e : edited.events)
      if (e.id == id && e.step != step) {  // a move to where it is changes nothing, and is not logged
        changes.push_back({ScheduleChange::Kind::Move, e, e.step});
        e.step = step;
        changes.back().event.step = step;
      }
  }
  return commit(std::move(edited), std::move(changes), idAndStep.empty() ? 0 : idAndStep.front().first);
}

EditResult EditableSchedule::remove(int64_t id) {
  if (auto why = notEditable(id)) return EditResult::refuse(*why);
  Schedule edited = m_schedule;
  const ScheduleEvent removed = *m_schedule.find(id);
  edited.events.erase(std::remove_if(edited.events.begin(), edited.events.end(),
                                     [&](const ScheduleEvent& e) { return e.id == id; }),
                      edited.events.end());
  return commit(std::move(edited), {{ScheduleChange::Kind::Delete, removed}}, id);
}

std::vector<ScheduleEvent> EditableSchedule::trimTo(int64_t maxSteps) {
  std::vector<ScheduleEvent> dropped;
  auto past = [&](const ScheduleEvent& e) { return e.step >= maxSteps; };
  std::copy_if(m_schedule.events.begin(), m_schedule.events.end(), std::back_inserter(dropped), past);
  m_schedule.events.erase(std::remove_if(m_schedule.events.begin(), m_schedule.events.end(), past),
                          m_schedule.events.end());
  m_maxSteps = maxSteps;
  return dropped;
}

}  // namespace nf
