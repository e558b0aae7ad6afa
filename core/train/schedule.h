// The removal schedule as data (PROTOCOL §4): events that turn LN sites fake or switch off a special
// treatment at the start of an optimizer step. Plain C++ (no torch): the GUI's timeline edits it.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/norm_state.h"

namespace nf {

enum class EventAction {
  MakeFake,          // the site(s) become FakeLN with s frozen at its tracked value
  EndPos0Treatment,  // position 0 is divided by the ordinary s from now on
  EndEotTreatment,   // end-of-text tokens (LN_v) are divided by the ordinary s from now on
};

struct ScheduleEvent {
  int64_t id = 0;  // stable handle for live edits; unique within a schedule
  int64_t step = 0;
  EventAction action = EventAction::MakeFake;
  SiteKind site = SiteKind::Mlp;
  int layer = -1;  // block index; -1: every layer of the kind (and always for LN_f)
  bool operator==(const ScheduleEvent& o) const {
    return id == o.id && step == o.step && action == o.action && site == o.site && layer == o.layer;
  }
};

struct Schedule {
  std::vector<ScheduleEvent> events;  // kept sorted by (step, id)

  void sort();
  int64_t nextId() const;
  const ScheduleEvent* find(int64_t id) const;
  // The sites an event touches, for a model with nLayer blocks.
  static std::vector<SiteId> sitesOf(const ScheduleEvent& event, int nLayer);
  // Throws std::invalid_argument with every problem found, one per line: layer out of range, a site made
  // fake twice, an event at or past maxSteps, a negative step, a treatment switched off twice.
  void validate(int nLayer, int64_t maxSteps) const;
  bool operator==(const Schedule& o) const { return events == o.events; }
};

// "LN_mlp" / "LN_qk" / "LN_v" / "LN_f"; "make_fake" / "end_pos0_treatment" / "end_eot_treatment".
std::string siteKindName(SiteKind kind);
SiteKind parseSiteKind(const std::string& name);
std::string eventActionName(EventAction action);
std::string describe(const ScheduleEvent& event);  // "step 20: LN_mlp.0 → fake"

// One group of the paper's schedules: layer i of `kind` at start + i·gap (gap 0: all layers at once).
std::vector<ScheduleEvent> layerGroup(SiteKind kind, int64_t start, int64_t gap, int nLayer);

// JSON: {"format": "normfree-schedule", "version": 1, "events": [{"id", "step", "action", "site", "layer"}]}
// ("layer" is a number or "all"; "action" defaults to make_fake). Errors name `source`.
nlohmann::json toJson(const Schedule& schedule);
Schedule scheduleFromJson(const nlohmann::json& j, const std::string& source);

}  // namespace nf
