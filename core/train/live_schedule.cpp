// The live schedule (trainer_state.h): edits from other threads through EditableSchedule's rules, each
// accepted one recorded; the events due at a step, fired before its first micro-batch; worker 0's schedule
// shared with the other workers before each step.
#include <set>

#include "io/atomic_file.h"
#include "run/metrics_log.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/checkpoint.h"
#include "train/trainer_state.h"

namespace nf {

using json = nlohmann::json;

// Only a removal has events: the tracker of another mode measures no scales to freeze.
std::string Trainer::Impl::notARemoval() const {
  return std::string("this run is a ") + trainingModeName(config().mode) +
         ", not a removal: its schedule has no events to add or change";
}

// A removal may leave sites normed on purpose (events deleted for a partial removal), or by a slip (a
// preset made for another depth, chosen in the workbench): either way it is said when the run starts.
void Trainer::Impl::warnOfWhatScheduleLeaves() {
  const Schedule::LeftUndone left =
      schedule->schedule().leftUndone(model->config().nLayer, config().removal.treatments());
  std::vector<SiteId> kept;  // a site the starting model has made fake already is not kept
  for (const SiteId& site : left.keptReal)
    if (dividesPerToken(model->norms().at(site))) kept.push_back(site);
  if (!kept.empty())
    warn(warning_code::kSitesKept,
         "the schedule never makes " + siteList(kept) +
             " fake: they keep their norm, and the result will not be LayerNorm-free");
  // A treatment left on ends the run unexportable; said now rather than at its end.
  auto leftOn = [&](const std::vector<SiteId>& sites, const char* treatment) {
    if (!sites.empty())
      warn(warning_code::kTreatmentsLeftOn,
           std::string("the schedule never switches off the ") + treatment + " treatment of " +
               siteList(sites) + ": the run will end with it on, and export refuses such a model");
  };
  leftOn(left.pos0On, "position-0");
  leftOn(left.eotOn, "end-of-text");
}

// `used`: the treatments whose switch-off events are accepted (a new run's, or a resumed run's with those
// it applied already).
void Trainer::Impl::setSchedule(Schedule s, Treatments used) {
  schedule = std::make_unique<EditableSchedule>(std::move(s), model->config().nLayer,
                                                config().optimizer.maxSteps, used);
  if (!isMain()) return;  // worker 0 writes schedule.json
  // An edit is accepted only once schedule.json holds it.
  const std::string path = run::schedulePath(owner.m_dir);
  schedule->persist = [path](const Schedule& edited) { writeScheduleFile(path, edited); };
}

// A new run's schedule must validate for the model and its steps, and may not make a site fake that the
// starting model has made fake already: that event would freeze a second scale over the first.
void Trainer::Impl::requireScheduleFits(const Schedule& schedule) const {
  const int nLayer = model->config().nLayer;
  try {
    schedule.validate(nLayer, config().optimizer.maxSteps, config().removal.treatments());
    std::string alreadyFake;
    for (const ScheduleEvent& e : schedule.events)
      for (const SiteId& site : Schedule::sitesOf(e, nLayer))
        if (e.action == EventAction::MakeFake && isFakeNorm(model->norms().at(site).kind))
          alreadyFake += "\nevent " + std::to_string(e.id) + " (" + describe(e) + "): " + siteName(site) +
                         " is " + normKindName(model->norms().at(site).kind) + " already in " +
                         config().model;
    if (!alreadyFake.empty()) throw std::invalid_argument(alreadyFake.substr(1));
    requireRampsEnd(schedule, config());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("the schedule does not fit this run:\n") + e.what());
  }
}

// The current schedule (live edits made after the checkpoint included) must agree with what the
// checkpoint already applied: the companion code's resumed runs did not know which events had fired.
nlohmann::json Trainer::Impl::resumeSchedule(const ResumeOverrides& overrides, const TrainingState& state) {
  const std::string path = overrides.schedule && !overrides.scheduleSource.empty()
                               ? overrides.scheduleSource
                               : run::schedulePath(owner.m_dir);
  const int64_t stepsDone = state.stepsDone;
  try {
    Schedule s = overrides.schedule ? *overrides.schedule : readScheduleFile(path);
    if (config().mode != TrainingMode::Remove && !s.events.empty())
      throw std::invalid_argument(notARemoval());
    // A switch-off of a treatment the run does not use takes no effect; runs written before that was
    // checked may have applied one, which stays accepted. New ones are refused as in a new run.
    Treatments used = config().removal.treatments();
    for (const ScheduleEvent& e : s.events) {
      if (e.step >= stepsDone) continue;
      used.pos0 = used.pos0 || e.action == EventAction::EndPos0Treatment;
      used.eot = used.eot || e.action == EventAction::EndEotTreatment;
    }
    if (overrides.maxSteps && config().autopilot.enabled) waitAtTheLastStep(s, config(), stepsDone);
    s.validate(model->config().nLayer, config().optimizer.maxSteps, used);
    s.requireApplied(state.schedule, applied, stepsDone);
    // A new schedule or budget given to resume is checked as a new run's; schedule.json as the run left it
    // (live edits, the autopilot's moves) is not: a late ramp there ends in the norms_left warning instead.
    if (overrides.schedule || overrides.maxSteps) requireRampsEnd(s, config());  // a ramp under way too
    setSchedule(s, used);
  } catch (const std::invalid_argument& e) {
    throw FileError(path, std::string("is not a valid schedule for this run:\n") + e.what());
  }
  schedule->lockBefore(stepsDone);
  const nlohmann::json now = toJson(schedule->schedule());
  if (overrides.schedule) return {{"schedule", now}};
  if (now != toJson(state.schedule)) return {{"schedule.json", now}};
  return nlohmann::json::object();
}

// Before a step of a multi-worker run: worker 0 locks its schedule at the step and, when it was edited
// since the schedule was last shared, sends it to the others, so the same events fire everywhere at the
// same step.
void Trainer::Impl::shareSchedule(int64_t step) {
  if (!group) return;
  const std::string during = "the schedule of step " + std::to_string(step + 1);
  int64_t version = 0;
  std::string text;
  if (isMain()) {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    schedule->lockBefore(std::max(schedule->lockedBefore(), step + 1));
    version = scheduleVersion;
    if (version != sharedVersion) text = toJson(schedule->schedule()).dump();
  }
  version = group->broadcast(version, during);
  if (version == sharedVersion) return;
  text = group->broadcastText(text, during);
  sharedVersion = version;
  if (isMain()) return;
  std::lock_guard<std::mutex> lock(scheduleMutex);
  setSchedule(scheduleFromJson(json::parse(text), "worker 0's schedule"));
  schedule->lockBefore(step + 1);
}

// Events of step `step` fire before its first micro-batch (PROTOCOL §4); then the ramps move on.
int Trainer::Impl::applyEvents(int64_t step) {
  std::vector<ScheduleEvent> due;
  if (step <= eventsFiredThrough) return 0;  // run() called again after a failed step
  shareSchedule(step);
  {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    for (const auto& e : schedule->schedule().events)
      if (e.step == step) due.push_back(e);
    schedule->lockBefore(std::max(schedule->lockedBefore(), step + 1));
    eventsFiredThrough = step;
    for (const auto& e : due) applied.emplace_back(e.id, e.step);
  }
  int planned = 0;  // fired where the schedule put them, not by the autopilot's decision now
  for (const auto& e : due) {
    json r{{record::kType, record::kEvent},
           {"step", step},
           {"event", toJson(e)},
           {"description", describe(e)},
           {"sites", tracker->apply(e, step)}};
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      if (const auto why = autopilotReasons.find(e.id); why != autopilotReasons.end()) {
        r["reason"] = "autopilot: " + why->second;
        autopilotReasons.erase(why);
      } else {
        ++planned;
      }
    }
    record(std::move(r));
  }
  // A removal the autopilot did not decide (it was off, or a person placed it) is still the last removal
  // it measures recovery from.
  if (autopilot && planned > 0) autopilot->fired(step, planned);
  return static_cast<int>(due.size());
}

std::string Trainer::Impl::nextEventText() const {
  std::lock_guard<std::mutex> lock(scheduleMutex);
  for (const auto& e : schedule->schedule().events)
    if (e.step >= schedule->lockedBefore()) return describe(e);
  return "";
}

namespace {
// Worker 0 alone edits: the others take its schedule before each step.
EditResult notMainWorker() { return EditResult::refuse(EditRefusal(EditRefusal::Code::NotEditable)); }
EditResult refusedAs(std::string detail) {
  EditRefusal refusal(EditRefusal::Code::Failed);
  refusal.detail = std::move(detail);
  return EditResult::refuse(refusal);
}
}  // namespace

// An edit through the rules of EditableSchedule; accepted edits are logged (metrics, checkpoint).
EditResult Trainer::Impl::edit(const std::function<EditResult(EditableSchedule&)>& apply,
                               const ClientRequest& request) {
  if (!isMain()) return notMainWorker();
  if (config().mode != TrainingMode::Remove) return refusedAs(notARemoval());
  std::lock_guard<std::mutex> lock(scheduleMutex);
  EditResult result = apply(*schedule);
  if (!result.accepted) return result;
  // A person's move or addition overrides the autopilot for that event: it fires where it was put.
  if (autopilot)
    for (const ScheduleChange& change : schedule->lastChanges())
      if (change.kind != ScheduleChange::Kind::Delete) autopilot->state().pinned.push_back(change.event.id);
  // schedule.json holds the edit and the next checkpoint its record: it is made, whether or not its record
  // fits in metrics.jsonl now (a disk still full stops the run at its next step's record, with the error).
  // A client's request is kept with the record: sent again after a restart, it is answered from it.
  json client = nullptr;
  if (!request.id.empty())
    client = {{"id", request.id}, {"text", request.text}, {"event_id", result.eventId}};
  try {
    recordChanges({}, {}, client);
  } catch (const FileError&) {
  }
  return result;
}

void Trainer::Impl::recordChanges(const std::string& by, const std::string& reason, const json& request) {
  ++scheduleVersion;
  json changes = json::array();  // one record per accepted edit, however many events it changed
  for (const ScheduleChange& change : schedule->lastChanges()) {
    if (change.kind == ScheduleChange::Kind::Move)
      changes.push_back({{"edit", "move"},
                         {"event_id", change.event.id},
                         {"from", change.from},
                         {"to", change.event.step}});
    else
      changes.push_back({{"edit", change.kind == ScheduleChange::Kind::Add ? "add" : "delete"},
                         {"event", toJson(change.event)}});
  }
  if (changes.empty()) return;
  json log{{record::kType, record::kEdit}, {"at_step", schedule->lockedBefore()}, {"changes", changes}};
  if (!by.empty()) log["by"] = by;
  if (!reason.empty()) log["reason"] = reason;
  if (!request.is_null()) log["request"] = request;
  edits.push_back(log);
  record(log);
}

// Edits made after the checkpoint are in schedule.json, which the resume follows, and their records in
// metrics.jsonl: the log takes them back, and a person's moves and additions stay the autopilot's to leave
// alone, as in the run that made them (unless the resume was given a schedule of its own).
void Trainer::Impl::takeBackEdits(const TrainingState& state, bool scheduleReplaced) {
  edits = state.edits;
  // A schedule given to the resume replaces every placement a person made, before the checkpoint as after.
  if (autopilot && scheduleReplaced) autopilot->state().pinned.clear();
  if (!isMain() || state.metricsBytes < 0) return;
  MetricsFollower follower(owner.m_dir, state.metricsBytes);
  if (!follower.startsAtLine()) return;  // not the log the checkpoint measured
  const MetricsFollower::NewLines since = follower.read();
  if (since.restarted) return;
  std::vector<int64_t> pins;
  for (const std::string& line : since.lines) {
    const json r = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!r.is_object()) continue;
    const std::string type = r.value(record::kType, "");
    // A resume given a schedule of its own replaced the events edited before it.
    if (type == record::kResume && r.value("overrides", json::object()).contains("schedule")) pins.clear();
    if (type != record::kEdit) continue;
    edits.push_back(r);
    if (r.contains("by")) continue;  // the autopilot's own moves
    for (const json& change : r.value("changes", json::array())) {
      const std::string kind = change.value("edit", "");
      if (kind == "move") pins.push_back(change.value("event_id", int64_t{-1}));
      if (kind == "add") pins.push_back(change.value("event", json::object()).value("id", int64_t{-1}));
    }
  }
  if (autopilot && !scheduleReplaced)
    autopilot->state().pinned.insert(autopilot->state().pinned.end(), pins.begin(), pins.end());
}

Schedule Trainer::schedule() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->schedule();
}

int Trainer::layers() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->nLayer();
}

EditResult Trainer::addEvent(ScheduleEvent event, const ClientRequest& request) {
  return m_impl->edit([&](EditableSchedule& s) { return s.add(event); }, request);
}

EditResult Trainer::checkEvent(const ScheduleEvent& event) const {
  if (!m_impl->isMain()) return notMainWorker();
  if (m_config.mode != TrainingMode::Remove) return refusedAs(m_impl->notARemoval());
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->checkAdd(event);
}

EditResult Trainer::moveEvent(int64_t id, int64_t step) { return moveEvents({{id, step}}); }

EditResult Trainer::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep,
                               const ClientRequest& request) {
  return m_impl->edit([&](EditableSchedule& s) { return s.moveEvents(idAndStep); }, request);
}

EditResult Trainer::deleteEvent(int64_t id, const ClientRequest& request) {
  return m_impl->edit([&](EditableSchedule& s) { return s.remove(id); }, request);
}

std::vector<std::pair<Trainer::ClientRequest, EditResult>> Trainer::answeredRequests() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  std::vector<std::pair<ClientRequest, EditResult>> answered;
  for (const json& edit : m_impl->edits) {
    const json request = edit.value("request", json());
    if (!request.is_object() || !request.value("id", json()).is_string() ||
        !request.value("text", json()).is_string() || !request.value("event_id", json()).is_number_integer())
      continue;  // a person's edit in the workbench, the autopilot's, or a record mangled by hand
    answered.emplace_back(ClientRequest{request["id"], request["text"]},
                          EditResult::accept(request["event_id"].get<int64_t>()));
  }
  return answered;
}

}  // namespace nf
