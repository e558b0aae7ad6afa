// The removal schedule as data (PROTOCOL §4): events that turn LN sites fake or switch off a special
// treatment at the start of an optimizer step, the rules a valid schedule follows, and its JSON file.
// Plain C++ (no torch): the GUI's timeline edits it (through EditableSchedule, editable_schedule.h).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
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

// One way a schedule can be invalid, as a code with its arguments: the CLI prints describe(), the GUI its
// own translation.
struct ScheduleProblem {
  enum class Code {
    DuplicateId,         // the event's id is used twice
    NegativeStep,        // the event's step is negative
    PastLastStep,        // the event's step ≥ maxSteps (limit = the last step, maxSteps − 1)
    LayerOutOfRange,     // the event's layer ≥ the model's depth (limit = the depth)
    EotTreatmentNotOnV,  // end_eot_treatment on a site other than LN_v
    SiteAlreadyChanged,  // `site` is made fake (or its treatment switched off) twice; first at firstStep
    TreatmentNotUsed,    // a treatment is switched off that the run does not use (pos0 = makeFake)
    SiteNeverFake,       // a treatment of `site` is switched off before the schedule makes it fake, at
                         // firstStep (−1: never)
  };
  explicit ScheduleProblem(Code c) : code(c) {}
  Code code;
  int64_t eventId = 0;
  std::string event;  // describe(event): "step 20: LN_mlp.0 → fake"
  int64_t step = 0, layer = 0;
  int64_t limit = 0;
  std::string site;      // "LN_mlp.0"
  bool makeFake = true;  // SiteAlreadyChanged: made fake (true) or switched off (false); TreatmentNotUsed:
                         // the position-0 (true) or end-of-text (false) treatment
  int64_t firstStep = 0;
};
std::string describe(
    const ScheduleProblem& problem);  // "event 3 (step 14: LN_mlp.all → fake): LN_mlp.0 is …"

// The special treatments a run uses (PROTOCOL §3, RemovalSettings): switching off one it does not use can
// take no effect, so such an event is refused. Both by default, where the run is not known.
struct Treatments {
  bool pos0 = true;
  bool eot = true;
};

struct Schedule {
  std::vector<ScheduleEvent> events;  // kept sorted by (step, id)

  void sort();
  int64_t nextId() const;
  const ScheduleEvent* find(int64_t id) const;
  // The sites an event touches, for a model with nLayer blocks.
  static std::vector<SiteId> sitesOf(const ScheduleEvent& event, int nLayer);
  // Every problem found: layer out of range, a site made fake twice, an event at or past maxSteps, a
  // negative step, a treatment switched off twice, or one the run does not use, or of a site never made
  // fake, an id used twice. Empty when the schedule is valid.
  std::vector<ScheduleProblem> problems(int nLayer, int64_t maxSteps, Treatments used = {}) const;
  // Throws std::invalid_argument with every problem's description, one per line.
  void validate(int nLayer, int64_t maxSteps, Treatments used = {}) const;
  // A resumed run's check: the events a checkpoint of `stepsDone` steps applied, (id, step) each, must be
  // in this schedule at the same steps and, where the checkpoint's own schedule has them, as the same
  // events (action, site, layer: the model holds what they did); every event before stepsDone must be
  // among them. Throws std::invalid_argument naming the first event that disagrees.
  void requireApplied(const Schedule& atCheckpoint, const std::vector<std::pair<int64_t, int64_t>>& applied,
                      int64_t stepsDone) const;
  // What the schedule leaves for the run's end (a site never made fake; a treatment the run uses never
  // switched off where a site is made fake): export refuses a model left so. Several events at one step
  // count: only whether each ever comes.
  struct LeftUndone {
    std::vector<SiteId> keptReal;  // never made fake
    std::vector<SiteId> pos0On;    // made fake, its position-0 treatment never switched off
    std::vector<SiteId> eotOn;     // LN_v made fake, its end-of-text treatment never switched off
    bool empty() const { return keptReal.empty() && pos0On.empty() && eotOn.empty(); }
  };
  LeftUndone leftUndone(int nLayer, Treatments used) const;
  bool operator==(const Schedule& o) const { return events == o.events; }
};
// "LN_mlp.0, LN_mlp.1 and LN_f": a list of sites for messages.
std::string siteList(const std::vector<SiteId>& sites);

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
nlohmann::json toJson(const ScheduleEvent& event);  // one entry of "events"
Schedule scheduleFromJson(const nlohmann::json& j, const std::string& source);
// A schedule file (a run's schedule.json, or one written by hand): the one reader — FileError naming the file
// when it cannot be read, is not JSON or is no schedule — and the one writer (atomic).
Schedule readScheduleFile(const std::string& path);
void writeScheduleFile(const std::string& path, const Schedule& schedule);

}  // namespace nf
