#include "schedule/schedule.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"

namespace nf {

void Schedule::sort() {
  std::stable_sort(events.begin(), events.end(), [](const ScheduleEvent& a, const ScheduleEvent& b) {
    return a.step != b.step ? a.step < b.step : a.id < b.id;
  });
}

int64_t Schedule::nextId() const {
  int64_t id = 0;
  for (const auto& e : events) id = std::max(id, e.id);
  return id + 1;
}

const ScheduleEvent* Schedule::find(int64_t id) const {
  for (const auto& e : events)
    if (e.id == id) return &e;
  return nullptr;
}

std::vector<SiteId> Schedule::sitesOf(const ScheduleEvent& event, int nLayer) {
  if (event.site == SiteKind::Final) return {{SiteKind::Final, -1}};
  if (event.layer >= 0) return {{event.site, event.layer}};
  std::vector<SiteId> sites;
  for (int l = 0; l < nLayer; ++l) sites.push_back({event.site, l});
  return sites;
}

std::vector<ScheduleProblem> Schedule::problems(int nLayer, int64_t maxSteps, Treatments used) const {
  using Code = ScheduleProblem::Code;
  std::vector<ScheduleProblem> found;
  std::map<SiteId, int64_t> madeFake;  // → the step of the site's first make-fake event
  for (const auto& e : events)
    if (e.action == EventAction::MakeFake && (e.site == SiteKind::Final || e.layer < nLayer))
      for (const SiteId& site : sitesOf(e, nLayer)) {
        auto [it, fresh] = madeFake.emplace(site, e.step);
        if (!fresh) it->second = std::min(it->second, e.step);
      }
  std::map<std::pair<EventAction, SiteId>, int64_t> seen;  // → step of the first event
  std::set<int64_t> ids;
  for (const auto& e : events) {
    auto problem = [&](Code code) {
      ScheduleProblem p{code};
      p.eventId = e.id;
      p.event = describe(e);
      p.step = e.step;
      p.layer = e.layer;
      return p;
    };
    if (!ids.insert(e.id).second) found.push_back(problem(Code::DuplicateId));
    if (e.step < 0) found.push_back(problem(Code::NegativeStep));
    if (e.step >= maxSteps) {
      found.push_back(problem(Code::PastLastStep));
      found.back().limit = maxSteps - 1;
    }
    const bool layerOutOfRange = e.site != SiteKind::Final && e.layer >= nLayer;
    if (layerOutOfRange) {
      found.push_back(problem(Code::LayerOutOfRange));
      found.back().limit = nLayer;
    }
    const bool eotNotOnV = e.action == EventAction::EndEotTreatment && e.site != SiteKind::V;
    if (eotNotOnV) found.push_back(problem(Code::EotTreatmentNotOnV));
    const bool pos0 = e.action == EventAction::EndPos0Treatment;
    if ((pos0 && !used.pos0) || (e.action == EventAction::EndEotTreatment && !used.eot)) {
      found.push_back(problem(Code::TreatmentNotUsed));
      found.back().makeFake = pos0;
    }
    if (layerOutOfRange) continue;
    for (const SiteId& site : sitesOf(e, nLayer)) {
      // A switch-off before its site is made fake would leave the site without the treatment asked for.
      const auto fake = madeFake.find(site);
      if (e.action != EventAction::MakeFake && !eotNotOnV &&
          (fake == madeFake.end() || fake->second > e.step)) {
        found.push_back(problem(Code::SiteNeverFake));
        found.back().site = siteName(site);
        found.back().firstStep = fake == madeFake.end() ? -1 : fake->second;
      }
      auto [it, fresh] = seen.emplace(std::make_pair(e.action, site), e.step);
      if (fresh) continue;
      found.push_back(problem(Code::SiteAlreadyChanged));
      found.back().site = siteName(site);
      found.back().makeFake = e.action == EventAction::MakeFake;
      found.back().firstStep = it->second;
    }
  }
  return found;
}

Schedule::LeftUndone Schedule::leftUndone(int nLayer, Treatments used) const {
  std::set<std::pair<EventAction, SiteId>> done;
  for (const ScheduleEvent& e : events)
    if (e.site == SiteKind::Final || e.layer < nLayer)
      for (const SiteId& site : sitesOf(e, nLayer)) done.insert({e.action, site});
  LeftUndone left;
  for (const SiteId& site : allSites(nLayer)) {
    if (!done.count({EventAction::MakeFake, site})) {
      left.keptReal.push_back(site);
      continue;
    }
    if (used.pos0 && !done.count({EventAction::EndPos0Treatment, site})) left.pos0On.push_back(site);
    if (used.eot && site.kind == SiteKind::V && !done.count({EventAction::EndEotTreatment, site}))
      left.eotOn.push_back(site);
  }
  return left;
}

std::string siteList(const std::vector<SiteId>& sites) {
  std::string text;
  for (size_t i = 0; i < sites.size(); ++i)
    text += (i == 0 ? "" : i + 1 == sites.size() ? " and " : ", ") + siteName(sites[i]);
  return text;
}

std::string describe(const ScheduleProblem& p) {
  using Code = ScheduleProblem::Code;
  const std::string where = "event " + std::to_string(p.eventId) + " (" + p.event + "): ";
  switch (p.code) {
    case Code::DuplicateId:
      return where + "the id is used twice";
    case Code::NegativeStep:
      return where + "the step is negative";
    case Code::PastLastStep:
      return where + "step " + std::to_string(p.step) + " is past the last step " + std::to_string(p.limit);
    case Code::LayerOutOfRange:
      return where + "layer " + std::to_string(p.layer) + " is out of range (the model has " +
             std::to_string(p.limit) + " layers)";
    case Code::EotTreatmentNotOnV:
      return where + "the end-of-text treatment exists on LN_v only";
    case Code::SiteAlreadyChanged:
      return where + p.site + " is already " + (p.makeFake ? "made fake" : "switched off") + " at step " +
             std::to_string(p.firstStep);
    case Code::TreatmentNotUsed:
      return where + "the run does not use the " + (p.makeFake ? "position-0" : "end-of-text") +
             " treatment, so there is nothing to switch off";
    case Code::SiteNeverFake:
      if (p.firstStep >= 0)
        return where + p.site + " is made fake only at step " + std::to_string(p.firstStep) +
               ", so it has no treatment yet to switch off";
      return where + p.site + " is never made fake, so it never gets a treatment to switch off";
  }
  return where + "?";
}

void Schedule::validate(int nLayer, int64_t maxSteps, Treatments used) const {
  std::string text;
  for (const ScheduleProblem& p : problems(nLayer, maxSteps, used))
    text += (text.empty() ? "" : "\n") + describe(p);
  if (!text.empty()) throw std::invalid_argument(text);
}

void Schedule::requireApplied(const Schedule& atCheckpoint,
                              const std::vector<std::pair<int64_t, int64_t>>& applied,
                              int64_t stepsDone) const {
  for (const auto& [id, step] : applied) {
    const ScheduleEvent* e = find(id);
    if (!e || e->step != step)
      throw std::invalid_argument(
          "event " + std::to_string(id) + " was applied at step " + std::to_string(step) +
          " but the schedule " +
          (e ? "now puts it at step " + std::to_string(e->step) : std::string("no longer has it")));
    const ScheduleEvent* was = atCheckpoint.find(id);
    if (was && !(*was == *e))
      throw std::invalid_argument("event " + std::to_string(id) + " was applied as " + describe(*was) +
                                  " but the schedule now says " + describe(*e) +
                                  ": an applied event cannot change");
  }
  for (const ScheduleEvent& e : events) {
    const bool wasApplied =
        std::any_of(applied.begin(), applied.end(), [&](auto& a) { return a.first == e.id; });
    if (e.step < stepsDone && !wasApplied)
      throw std::invalid_argument("event " + std::to_string(e.id) + " (" + describe(e) +
                                  ") lies before the checkpoint's step " + std::to_string(stepsDone) +
                                  " but was never applied");
  }
}

std::string siteKindName(SiteKind kind) {
  switch (kind) {
    case SiteKind::Qk:
      return "LN_qk";
    case SiteKind::V:
      return "LN_v";
    case SiteKind::Mlp:
      return "LN_mlp";
    case SiteKind::Final:
      return "LN_f";
  }
  return "?";
}

SiteKind parseSiteKind(const std::string& name) {
  for (SiteKind k : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp, SiteKind::Final})
    if (siteKindName(k) == name) return k;
  throw std::invalid_argument("unknown site '" + name + "' (expected LN_mlp, LN_qk, LN_v or LN_f)");
}

std::string eventActionName(EventAction action) {
  switch (action) {
    case EventAction::MakeFake:
      return "make_fake";
    case EventAction::EndPos0Treatment:
      return "end_pos0_treatment";
    case EventAction::EndEotTreatment:
      return "end_eot_treatment";
  }
  return "?";
}

std::string describe(const ScheduleEvent& e) {
  std::string site = siteKindName(e.site);
  if (e.site != SiteKind::Final) site += e.layer < 0 ? ".all" : "." + std::to_string(e.layer);
  const std::string what = e.action == EventAction::MakeFake           ? "fake"
                           : e.action == EventAction::EndPos0Treatment ? "position-0 treatment off"
                                                                       : "end-of-text treatment off";
  return "step " + std::to_string(e.step) + ": " + site + " → " + what;
}

std::vector<ScheduleEvent> layerGroup(SiteKind kind, int64_t start, int64_t gap, int nLayer) {
  if (kind == SiteKind::Final) return {{0, start, EventAction::MakeFake, kind, -1}};
  if (gap == 0) return {{0, start, EventAction::MakeFake, kind, -1}};
  std::vector<ScheduleEvent> group;
  for (int l = 0; l < nLayer; ++l) group.push_back({0, start + l * gap, EventAction::MakeFake, kind, l});
  return group;
}

nlohmann::json toJson(const ScheduleEvent& e) {
  nlohmann::json j{
      {"id", e.id}, {"step", e.step}, {"action", eventActionName(e.action)}, {"site", siteKindName(e.site)}};
  if (e.site != SiteKind::Final) j["layer"] = e.layer < 0 ? nlohmann::json("all") : nlohmann::json(e.layer);
  return j;
}

nlohmann::json toJson(const Schedule& schedule) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : schedule.events) events.push_back(toJson(e));
  return {{"format", kScheduleFormat.name}, {"version", kScheduleFormat.version}, {"events", events}};
}

Schedule scheduleFromJson(const nlohmann::json& j, const std::string& source) {
  Schedule schedule;
  const nlohmann::json* events = &j;
  if (j.is_object()) {
    // Hand-written schedules may leave out "format" and "version" (a bare list of events is fine too).
    checkFileFormat(j, kScheduleFormat, source, WhenUnmarked::IsVersion1);
    if (!j.contains("events")) throw FileError(source, "has no \"events\" list");
    try {
      JsonIn(j, "the schedule").requireKnown({"format", "version", "events"});
    } catch (const std::invalid_argument& e) {
      throw FileError(source, e.what());
    }
    events = &j["events"];
  }
  if (!events->is_array()) throw FileError(source, "\"events\" must be a list");
  // Every field type-checked: a step of 2.7 or a layer of 2^32 + 1 is refused, never truncated or wrapped.
  int64_t index = 0;
  for (const auto& json : *events) {
    const std::string what = "event " + std::to_string(index++);
    try {
      schedule.events.push_back(readJson(json, what.c_str(), [](const JsonIn& e) {
        e.requireKnown({"id", "step", "action", "site", "layer"});
        ScheduleEvent event;
        event.step = e["step"].whole<int64_t>();
        event.site = parseSiteKind(e["site"].text());
        const std::string action = e["action"].present() ? e["action"].text() : "make_fake";
        if (action == "make_fake")
          event.action = EventAction::MakeFake;
        else if (action == "end_pos0_treatment")
          event.action = EventAction::EndPos0Treatment;
        else if (action == "end_eot_treatment")
          event.action = EventAction::EndEotTreatment;
        else
          throw std::invalid_argument("unknown action '" + action + "'");
        if (event.site != SiteKind::Final) {
          const JsonIn layer = e["layer"];
          if (layer.isText() && layer.text() == "all")
            event.layer = -1;
          else if ((event.layer = layer.whole<int>()) < 0)
            throw std::invalid_argument("layer must be a block index or \"all\", got " +
                                        std::to_string(event.layer));
        } else if (e["layer"].present()) {  // it had been dropped unsaid: a slip for another site?
          throw std::invalid_argument("LN_f is one site, after the last block: leave \"layer\" out");
        }
        event.id = e["id"].present() ? e["id"].whole<int64_t>() : 0;
        if (e["id"].present() && event.id < 1)
          throw std::invalid_argument("id must be 1 or more (leave it out for a new event), got " +
                                      std::to_string(event.id));
        return event;
      }));
    } catch (const std::invalid_argument& ex) {
      const std::string message = ex.what();  // JsonIn's messages name the event already
      throw FileError(source, message.rfind(what, 0) == 0 ? message : what + ": " + message);
    }
  }
  // Events without ids get fresh ones, in file order.
  int64_t next = schedule.nextId();
  for (auto& e : schedule.events)
    if (e.id == 0) e.id = next++;
  schedule.sort();
  return schedule;
}

Schedule readScheduleFile(const std::string& path) { return scheduleFromJson(readFormatFile(path), path); }

void writeScheduleFile(const std::string& path, const Schedule& schedule) {
  writeFileAtomic(path, toJson(schedule).dump(2) + "\n");
}

}  // namespace nf
