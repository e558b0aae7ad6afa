// Schedules and presets: the paper's Table 4 exactly, readable validation errors, JSON round trip, the
// edit rules every editor follows (codes with arguments), and a run's settings from a preset.
#include <functional>
#include <nlohmann/json.hpp>

#include "check.h"
#include "io/atomic_file.h"
#include "schedule/editable_schedule.h"
#include "temp_dir.h"
#include "train/settings.h"

using namespace nf;

namespace {

// Steps of the make_fake events of one site kind, by layer.
std::vector<int64_t> stepsOf(const Schedule& s, SiteKind kind) {
  std::vector<int64_t> steps;
  for (const auto& e : s.events)
    if (e.site == kind && e.action == EventAction::MakeFake) steps.push_back(e.step);
  return steps;
}

std::vector<int64_t> range(int64_t first, int64_t last, int64_t gap) {
  std::vector<int64_t> r;
  for (int64_t s = first; s <= last; s += gap) r.push_back(s);
  return r;
}

}  // namespace

TEST_CASE(paper_presets_reproduce_table_4) {
  struct Row {
    const char* name;
    int layers;
    int64_t micro, accumulation;
    double lr, minLr;
    int64_t warmup, maxSteps, mlp0, mlp1, mlpGap, qk0, qk1, qkGap, v0, v1, vGap, f;
    double lambda, momentum;
  };
  const Row rows[] = {
      {"gpt2", 12, 32, 16, 6e-4, 3e-4, 25, 300, 20, 42, 2, 44, 66, 2, 68, 101, 3, 104, 0.1, 0.9},
      {"gpt2-medium", 24, 22, 23, 6e-4, 3e-4, 10, 500, 20, 66, 2, 68, 114, 2, 116, 185, 3, 188, 0.1, 0.9},
      {"gpt2-large", 36,  28, 18,  3e-4, 4e-5, 15,  1200, 30,   170, 4,
       174,          314, 4,  318, 528,  6,    534, 0.03, 0.912},
      {"gpt2-xl", 48, 18, 28, 1e-4, 2e-5, 20, 1200, 50, 238, 4, 242, 430, 4, 434, 716, 6, 722, 0.01, 0.942},
  };
  for (const Row& row : rows) {
    const Preset& p = findPreset(row.name);
    REQUIRE_EQ(p.nLayer, row.layers);
    REQUIRE_EQ(p.optimizer.microBatch, row.micro);
    REQUIRE_EQ(p.optimizer.accumulation, row.accumulation);
    REQUIRE_EQ(p.optimizer.context, 1024);
    REQUIRE_EQ(p.optimizer.lr, row.lr);
    REQUIRE_EQ(p.optimizer.minLr, row.minLr);
    REQUIRE_EQ(p.optimizer.warmupSteps, row.warmup);
    REQUIRE_EQ(p.optimizer.maxSteps, row.maxSteps);
    REQUIRE_EQ(p.optimizer.weightDecay, 0.01);
    REQUIRE_EQ(p.optimizer.clipNorm, 1.0);
    REQUIRE_EQ(p.removal.auxWeight, row.lambda);
    REQUIRE_MSG(std::abs(p.removal.emaMomentum - row.momentum) < 5e-4,
                row.name << " k " << p.removal.emaMomentum);
    REQUIRE(stepsOf(p.schedule, SiteKind::Mlp) == range(row.mlp0, row.mlp1, row.mlpGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::Qk) == range(row.qk0, row.qk1, row.qkGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::V) == range(row.v0, row.v1, row.vGap));
    REQUIRE(stepsOf(p.schedule, SiteKind::Final) == std::vector<int64_t>{row.f});
    REQUIRE_EQ(stepsOf(p.schedule, SiteKind::Mlp).size(), static_cast<std::size_t>(row.layers));
    // Layer i of a group at start + i·gap, from block 0 upward.
    for (const auto& e : p.schedule.events)
      if (e.site == SiteKind::V) REQUIRE_EQ(e.step, row.v0 + e.layer * row.vGap);
    p.schedule.validate(p.nLayer, p.optimizer.maxSteps);
  }
  for (const char* name : {"blog-v2", "tiny", "small", "small-12"}) {
    const Preset& p = findPreset(name);
    p.schedule.validate(p.nLayer, p.optimizer.maxSteps);
  }
  // Every preset removes every norm of its depth and switches off each treatment it uses: a run on it ends
  // exportable.
  for (const Preset& p : presets()) {
    const int depth = p.nLayer != 0 ? p.nLayer : 12;
    const Schedule::LeftUndone left = presetSchedule(p, depth).leftUndone(depth, p.removal.treatments());
    REQUIRE_MSG(left.empty(), p.name << ": " << siteList(left.keptReal) << " / " << siteList(left.pos0On)
                                     << " / " << siteList(left.eotOn));
  }
  // What a schedule leaves: sites never made fake, and a used treatment never switched off where a site is.
  Schedule partial;
  partial.events = {{1, 0, EventAction::MakeFake, SiteKind::V, -1},
                    {2, 1, EventAction::EndEotTreatment, SiteKind::V, 1},
                    {3, 1, EventAction::EndPos0Treatment, SiteKind::V, -1}};
  Schedule::LeftUndone left = partial.leftUndone(2, {true, true});
  REQUIRE_EQ(siteList(left.keptReal), "LN_qk.0, LN_mlp.0, LN_qk.1, LN_mlp.1 and LN_f");
  REQUIRE(left.pos0On.empty());
  REQUIRE_EQ(siteList(left.eotOn), "LN_v.0");
  REQUIRE(partial.leftUndone(2, {false, false}).eotOn.empty());  // a treatment the run does not use
  REQUIRE_THROWS_WITH(findPreset("gpt3"), "unknown preset 'gpt3'", "gpt2-xl");
}

TEST_CASE(validation_names_every_problem) {
  Schedule s;
  s.events = {{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
              {2, 12, EventAction::MakeFake, SiteKind::Mlp, 7},     // layer out of range
              {3, 14, EventAction::MakeFake, SiteKind::Mlp, -1},    // removes LN_mlp.0 again
              {4, 99, EventAction::MakeFake, SiteKind::Final, -1},  // past the last step
              {5, 20, EventAction::EndEotTreatment, SiteKind::Qk, -1}};
  REQUIRE_THROWS_WITH(s.validate(4, 50), "layer 7 is out of range",
                      "LN_mlp.0 is already made fake at step 10", "step 99 is past the last step 49",
                      "end-of-text treatment exists on LN_v only");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"step": 3, "site": "LN_xx", "layer": 0}]})"),
                       "s.json"),
      "s.json", "event 0", "unknown site 'LN_xx'");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"site": "LN_v", "layer": 0}]})"), "s.json"),
      "s.json", "step");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [{"step": 1, "site": "LN_v", "layer": -2}]})"),
                       "s.json"),
      "layer must be a block index or \"all\"");
  // A misspelt key would read as left out: "Action" as make_fake, "layers" as a missing layer.
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(
                           R"([{"step": 1, "site": "LN_v", "layer": 0, "Action": "end_eot_treatment"}])"),
                       "s.json"),
      "s.json", "event 0", "unknown field \"Action\"", "id, step, action, site, layer");
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"({"events": [], "evnets": [{"step": 1, "site": "LN_f"}]})"),
                       "s.json"),
      "s.json", "unknown field \"evnets\"");
  // Ids are handles from 1 up: 0 or a negative one is refused, not kept beside the fresh ones.
  for (const char* id : {"0", "-3"})
    REQUIRE_THROWS_WITH(scheduleFromJson(nlohmann::json::parse(std::string(R"([{"id": )") + id +
                                                               R"(, "step": 1, "site": "LN_f"}])"),
                                         "s.json"),
                        "s.json", "id must be 1 or more");
  // A key given twice (an event copied and half edited) is refused in a file, naming it: JSON readers keep
  // the last value unsaid, and this event would have made LN_mlp.1 fake, not LN_mlp.0.
  test::TempDir dir;
  writeFileAtomic(dir.path("twice.json"),
                  R"({"events": [{"step": 1, "site": "LN_mlp", "layer": 0, "layer": 1}]})");
  REQUIRE_THROWS_WITH(readScheduleFile(dir.path("twice.json")), dir.path("twice.json"),
                      "the key \"layer\" appears twice in one object");
}

TEST_CASE(schedule_json_round_trips) {
  const Schedule& s = findPreset("blog-v2").schedule;
  const Schedule back = scheduleFromJson(toJson(s), "x");
  REQUIRE(back == s);
  // Ids are assigned in file order when missing; "all" means every layer.
  const Schedule plain = scheduleFromJson(
      nlohmann::json::parse(R"([{"step": 5, "site": "LN_qk", "layer": "all"}, {"step": 2, "site": "LN_f"}])"),
      "x");
  REQUIRE_EQ(plain.events.size(), 2u);
  REQUIRE_EQ(plain.events[0].step, 2);  // sorted by step
  REQUIRE_EQ(plain.events[1].id, 1);
  REQUIRE_EQ(Schedule::sitesOf(plain.events[1], 3).size(), 3u);
  REQUIRE_EQ(describe(plain.events[1]), "step 5: LN_qk.all → fake");
  // LN_f is one site: a layer given to it had been dropped unsaid.
  REQUIRE_THROWS_WITH(
      scheduleFromJson(nlohmann::json::parse(R"([{"step": 2, "site": "LN_f", "layer": 99}])"), "s.json"),
      "s.json", "leave \"layer\" out");
}

TEST_CASE(validation_problems_are_codes_with_their_arguments) {
  using Code = ScheduleProblem::Code;
  Schedule s;
  s.events = {{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
              {2, 12, EventAction::MakeFake, SiteKind::Mlp, 7},
              {3, 14, EventAction::MakeFake, SiteKind::Mlp, -1},
              {4, 99, EventAction::MakeFake, SiteKind::Final, -1},
              {5, -1, EventAction::EndEotTreatment, SiteKind::Qk, -1}};
  const std::vector<ScheduleProblem> problems = s.problems(4, 50);
  REQUIRE_EQ(problems.size(), 5u);
  REQUIRE(problems[0].code == Code::LayerOutOfRange && problems[0].eventId == 2 && problems[0].layer == 7 &&
          problems[0].limit == 4);
  REQUIRE(problems[1].code == Code::SiteAlreadyChanged && problems[1].eventId == 3 &&
          problems[1].site == "LN_mlp.0" && problems[1].firstStep == 10 && problems[1].makeFake);
  REQUIRE(problems[2].code == Code::PastLastStep && problems[2].step == 99 && problems[2].limit == 49);
  REQUIRE(problems[3].code == Code::NegativeStep && problems[3].eventId == 5);
  REQUIRE(problems[4].code == Code::EotTreatmentNotOnV);
  REQUIRE_EQ(describe(problems[2]), "event 4 (step 99: LN_f → fake): step 99 is past the last step 49");
  REQUIRE(findPreset("tiny").schedule.problems(4, 500).empty());
  // A treatment switched off where it can never be on: a site never made fake, a treatment the run does
  // not use.
  Schedule treatments;
  treatments.events = {{1, 10, EventAction::MakeFake, SiteKind::V, 0},
                       {2, 20, EventAction::EndPos0Treatment, SiteKind::V, -1},
                       {3, 20, EventAction::EndEotTreatment, SiteKind::V, 0}};
  const auto notFake = treatments.problems(2, 50);
  REQUIRE_EQ(notFake.size(), 1u);
  REQUIRE(notFake[0].code == Code::SiteNeverFake && notFake[0].eventId == 2 && notFake[0].site == "LN_v.1");
  REQUIRE_EQ(describe(notFake[0]),
             "event 2 (step 20: LN_v.all → position-0 treatment off): LN_v.1 is never "
             "made fake, so it never gets a treatment to switch off");
  // Switched off before the site is made fake: the site would never have the treatment the run asked for.
  Schedule early;
  early.events = {{1, 5, EventAction::EndPos0Treatment, SiteKind::Mlp, 0},
                  {2, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
                  {3, 10, EventAction::EndEotTreatment, SiteKind::V, 0},
                  {4, 10, EventAction::MakeFake, SiteKind::V, 0}};
  const auto tooEarly = early.problems(1, 50);
  REQUIRE_EQ(tooEarly.size(), 1u);  // the same step is not too early
  REQUIRE(tooEarly[0].code == Code::SiteNeverFake && tooEarly[0].eventId == 1 && tooEarly[0].firstStep == 10);
  REQUIRE_EQ(describe(tooEarly[0]),
             "event 1 (step 5: LN_mlp.0 → position-0 treatment off): LN_mlp.0 is made fake only at step 10, "
             "so it has no treatment yet to switch off");
  const auto unused = treatments.problems(1, 50, Treatments{true, false});
  REQUIRE_EQ(unused.size(), 1u);
  REQUIRE(unused[0].code == Code::TreatmentNotUsed && unused[0].eventId == 3 && !unused[0].makeFake);
}

TEST_CASE(editable_schedule_refuses_with_codes_and_changes_nothing) {
  using Code = EditRefusal::Code;
  struct Row {
    const char* what;
    int64_t lockedBefore;
    std::function<EditResult(EditableSchedule&)> edit;
    bool accepted;
    Code code;  // when refused
  };
  const ScheduleEvent mlp0{0, 10, EventAction::MakeFake, SiteKind::Mlp, 0};
  const std::vector<Row> rows = {
      {"add in the future", 0,
       [&](EditableSchedule& e) {
         return e.add({0, 30, EventAction::MakeFake, SiteKind::V, 1});
       },
       true, Code::NoSuchEvent},
      {"add at a started step", 21,
       [&](EditableSchedule& e) {
         return e.add({0, 20, EventAction::MakeFake, SiteKind::V, 1});
       },
       false, Code::StepAlreadyStarted},
      {"add a site twice", 0, [&](EditableSchedule& e) { return e.add(mlp0); }, false, Code::InvalidSchedule},
      {"move an unknown event", 0, [](EditableSchedule& e) { return e.move(42, 5); }, false,
       Code::NoSuchEvent},
      {"move an applied event", 11, [](EditableSchedule& e) { return e.move(1, 30); }, false,
       Code::EventAlreadyApplied},
      {"move into the past", 11, [](EditableSchedule& e) { return e.move(2, 5); }, false,
       Code::StepAlreadyStarted},
      {"move past the budget", 0, [](EditableSchedule& e) { return e.move(2, 100); }, false,
       Code::InvalidSchedule},
      {"two moves, the second refused", 11,
       [](EditableSchedule& e) {
         return e.moveEvents({{2, 40}, {1, 45}});
       },
       false, Code::EventAlreadyApplied},
      {"delete an applied event", 11, [](EditableSchedule& e) { return e.remove(1); }, false,
       Code::EventAlreadyApplied},
      {"delete a future event", 11, [](EditableSchedule& e) { return e.remove(2); }, true, Code::NoSuchEvent},
  };
  for (const Row& row : rows) {
    Schedule start;
    start.events = {{1, 10, EventAction::MakeFake, SiteKind::Mlp, 0},
                    {2, 20, EventAction::MakeFake, SiteKind::Mlp, 1}};
    EditableSchedule editor(start, 4, 50);
    editor.lockBefore(row.lockedBefore);
    const EditResult r = row.edit(editor);
    REQUIRE_MSG(r.accepted == row.accepted, row.what << ": " << r.reason);
    if (row.accepted) {
      REQUIRE_MSG(!r.refusal && r.reason.empty(), row.what);
      continue;
    }
    REQUIRE_MSG(r.refusal && r.refusal->code == row.code, row.what << ": " << r.reason);
    REQUIRE_MSG(r.reason == describe(*r.refusal) && !r.reason.empty(), row.what);
    REQUIRE_MSG(editor.schedule() == start, row.what << ": a refused edit changed the schedule");
  }
}

TEST_CASE(editable_schedule_ids_are_never_reused_and_persist_failures_refuse) {
  EditableSchedule editor(findPreset("tiny").schedule, 4, 500);
  const int64_t highest = editor.schedule().nextId() - 1;
  const EditResult added = editor.add({0, 300, EventAction::EndPos0Treatment, SiteKind::Mlp, -1});
  REQUIRE(added.accepted && added.eventId == highest + 1);
  REQUIRE(editor.lastChanges().size() == 1 && editor.lastChanges()[0].kind == ScheduleChange::Kind::Add);
  REQUIRE(editor.remove(added.eventId).accepted);
  const EditResult again = editor.add({0, 301, EventAction::EndPos0Treatment, SiteKind::Mlp, -1});
  REQUIRE_EQ(again.eventId, highest + 2);  // the deleted event's id stays retired

  const EditResult moved = editor.moveEvents({{1, 45}, {2, 55}});
  REQUIRE(moved.accepted && editor.lastChanges().size() == 2);
  REQUIRE(editor.lastChanges()[0].from == 40 && editor.lastChanges()[0].event.step == 45);
  // An event moved to where it is (a drag let go at its start) is no change, and none is logged.
  const EditResult inPlace = editor.moveEvents({{1, 45}, {2, 60}});
  REQUIRE(inPlace.accepted && editor.lastChanges().size() == 1 && editor.lastChanges()[0].event.id == 2);
  REQUIRE(editor.moveEvents({{1, 45}}).accepted && editor.lastChanges().empty());

  const Schedule before = editor.schedule();
  editor.persist = [](const Schedule&) {
    throw std::runtime_error("schedule.json: No space left on device");
  };
  const EditResult refused = editor.move(3, 70);
  REQUIRE(!refused.accepted && refused.refusal->code == EditRefusal::Code::Failed);
  REQUIRE(refused.reason.find("No space left") != std::string::npos);
  REQUIRE(editor.schedule() == before);

  // A shorter budget drops what lies past it, and only that.
  const std::vector<ScheduleEvent> dropped = editor.trimTo(150);
  for (const auto& e : dropped) REQUIRE(e.step >= 150);
  for (const auto& e : editor.schedule().events) REQUIRE(e.step < 150);
  REQUIRE_EQ(dropped.size() + editor.schedule().events.size(), before.events.size());
  REQUIRE_EQ(editor.maxSteps(), 150);
}

TEST_CASE(the_depth_rule_gives_table_4_and_schedules_any_depth) {
  // The rule read off the paper reproduces each of its four schedules (the data of the presets above).
  for (const char* name : {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"}) {
    const Preset& p = findPreset(name);
    REQUIRE_MSG(scheduleForDepth(p.nLayer).events == p.schedule.events, name);
  }
  // Pythia-70M: 6 blocks, LN_mlp 20…30, LN_qk 32…42, LN_v 44…59, LN_f 62.
  const Schedule pythia = findPreset("pythia-70m").schedule;
  REQUIRE_EQ(pythia.events.size(), std::size_t{19});
  auto stepOf = [&](SiteKind kind, int layer) {
    for (const ScheduleEvent& e : pythia.events)
      if (e.site == kind && e.layer == layer) return e.step;
    return int64_t{-1};
  };
  REQUIRE_EQ(stepOf(SiteKind::Mlp, 0), 20);
  REQUIRE_EQ(stepOf(SiteKind::Mlp, 5), 30);
  REQUIRE_EQ(stepOf(SiteKind::Qk, 0), 32);
  REQUIRE_EQ(stepOf(SiteKind::V, 5), 59);
  REQUIRE_EQ(stepOf(SiteKind::Final, -1), 62);
  REQUIRE_EQ(findPreset("pythia-70m").optimizer.maxSteps, 300);
  // "by-depth" follows the model: 30 blocks (SmolLM2-135M) get the large-model gaps and their steps.
  ModelShape smol;
  smol.nLayer = 30;
  const RunConfig c = makeRunConfig("by-depth", TrainingMode::Remove, smol, {});
  REQUIRE(c.schedule.events == scheduleForDepth(30).events);
  REQUIRE_EQ(c.schedule.events.back().step, 30 + 14 * 30);
  REQUIRE_EQ(c.optimizer.maxSteps, 1200);  // 2.5 × 450 = 1125, rounded up to 100
}

TEST_CASE(run_settings_come_from_the_preset_then_the_choices) {
  ModelShape shape;
  shape.nLayer = 4;
  shape.nPositions = 64;  // shorter than the preset's context
  RunChoices choices;
  choices.model = "m";
  choices.trainData = "train.bin";
  choices.lr = 1e-3;
  choices.maxSteps = 300;
  choices.eotTreatment = true;
  const Preset& tiny = findPreset("tiny");
  const RunConfig c = makeRunConfig("tiny", TrainingMode::Remove, shape, choices);
  REQUIRE_EQ(c.preset, "tiny");
  REQUIRE_EQ(c.optimizer.lr, 1e-3);
  REQUIRE_EQ(c.optimizer.maxSteps, 300);
  REQUIRE_EQ(c.optimizer.minLr, tiny.optimizer.minLr);  // not chosen: the preset's
  REQUIRE_EQ(c.optimizer.microBatch, tiny.optimizer.microBatch);
  REQUIRE_EQ(c.optimizer.context, 64);  // capped at the model's positions
  REQUIRE(c.removal.eotTreatment && !c.removal.pos0Treatment);
  REQUIRE(c.schedule == tiny.schedule);
  REQUIRE_EQ(c.eval.interval, RunConfig().eval.interval);  // neither preset nor choice: the default
  REQUIRE(makeRunConfig("tiny", TrainingMode::Finetune, shape, choices).schedule.events.empty());
  REQUIRE_THROWS_WITH(makeRunConfig("gpt3", TrainingMode::Remove, shape, choices), "unknown preset 'gpt3'");
  // Weight decay is a choice too; a minimum learning rate above the peak would make the "decay" a rise.
  choices.weightDecay = 0.1;
  REQUIRE_EQ(makeRunConfig("tiny", TrainingMode::Remove, shape, choices).optimizer.weightDecay, 0.1);
  choices.minLr = 1e-2;
  REQUIRE_THROWS_WITH(validate(makeRunConfig("tiny", TrainingMode::Remove, shape, choices), "run"), "run",
                      "minimum learning rate 0.01 is above the peak 0.001");
}

// With the autopilot a schedule gives the order and the first step: a preset's later steps past a shorter
// budget had the run refused ("step 120 is past the last step 119") for steps the user never chose.
TEST_CASE(an_autopilot_run_fits_the_schedules_later_steps_into_its_budget) {
  ModelShape shape;
  shape.nLayer = 4;
  shape.nPositions = 64;
  RunChoices choices;
  choices.maxSteps = 120;
  const Schedule& planned = findPreset("tiny").schedule;
  REQUIRE(planned.events.back().step >= 120);  // else this test tests nothing
  REQUIRE_THROWS_WITH(makeRunConfig("tiny", TrainingMode::Remove, shape, choices)
                          .schedule.validate(4, 120, RemovalSettings().treatments()),
                      "past the last step 119");
  choices.autopilot = AutopilotSettings{};
  choices.autopilot->enabled = true;
  const RunConfig c = makeRunConfig("tiny", TrainingMode::Remove, shape, choices);
  c.schedule.validate(4, 120, c.removal.treatments());
  const int64_t last = 119 - c.removal.interpolationSteps;
  REQUIRE_EQ(c.schedule.events.size(), planned.events.size());
  for (size_t i = 0; i < planned.events.size(); ++i) {  // the same events, in the same order
    REQUIRE_EQ(c.schedule.events[i].id, planned.events[i].id);
    REQUIRE_EQ(c.schedule.events[i].step, std::min(planned.events[i].step, last));
  }
  // The first removal's step is the user's: one past the budget is still refused.
  choices.maxSteps = 20;
  REQUIRE_THROWS_WITH(makeRunConfig("tiny", TrainingMode::Remove, shape, choices)
                          .schedule.validate(4, 20, RemovalSettings().treatments()),
                      "past the last step 19");
}

TEST_MAIN()

// A resumed run's schedule against the events its checkpoint applied: the same events at the same steps,
// and none before the checkpoint left unapplied.
TEST_CASE(a_resumed_schedule_must_agree_with_the_applied_events) {
  Schedule s;
  s.events = {{1, 5, EventAction::MakeFake, SiteKind::Mlp, 0},
              {2, 10, EventAction::MakeFake, SiteKind::Qk, 0},
              {3, 20, EventAction::MakeFake, SiteKind::Final, -1}};
  const Schedule atCheckpoint = s;
  s.requireApplied(atCheckpoint, {{1, 5}, {2, 10}}, 12);  // both applied, event 3 still to come
  s.requireApplied(atCheckpoint, {{1, 5}}, 10);  // event 2 fires at the checkpoint's own step: still to come
  REQUIRE_THROWS_WITH(s.requireApplied(atCheckpoint, {{1, 5}}, 12), "event 2",
                      "before the checkpoint's step 12", "never applied");
  REQUIRE_THROWS_WITH(s.requireApplied(atCheckpoint, {{1, 6}}, 8), "event 1 was applied at step 6",
                      "now puts it at step 5");
  REQUIRE_THROWS_WITH(s.requireApplied(atCheckpoint, {{1, 5}, {9, 7}}, 8), "event 9 was applied at step 7",
                      "no longer has it");
  s.requireApplied(atCheckpoint, {}, 0);  // a run resumed before its first step
  // An applied event rewritten at its own id and step (another site, layer or action): the model holds
  // what the checkpoint's event did, so the schedule would misstate it.
  for (const ScheduleEvent& rewritten : {ScheduleEvent{1, 5, EventAction::MakeFake, SiteKind::Mlp, 1},
                                         ScheduleEvent{1, 5, EventAction::MakeFake, SiteKind::V, 0},
                                         ScheduleEvent{1, 5, EventAction::MakeFake, SiteKind::Mlp, -1}}) {
    Schedule edited = s;
    edited.events[0] = rewritten;
    REQUIRE_THROWS_WITH(edited.requireApplied(atCheckpoint, {{1, 5}}, 8),
                        "event 1 was applied as step 5: LN_mlp.0 → fake", "now says " + describe(rewritten),
                        "cannot change");
    // Not yet applied, the same edit is a plan, not a contradiction.
    edited.requireApplied(atCheckpoint, {}, 4);
  }
  // A checkpoint from before its schedule was kept: the ids and steps are all there is to compare.
  s.requireApplied(Schedule{}, {{1, 5}}, 8);
}
