// The schedules the timeline edits, headless: a draft follows the engine's edit rules, answers a dry-run
// check as it would the edit, and trims to a new step budget; a followed run's schedule is read from its
// schedule.json and refuses every edit.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "check.h"
#include "io/atomic_file.h"
#include "logic/ScheduleEditor.h"
#include "run/run_directory.h"
#include "temp_dir.h"
#include "train/settings.h"

using namespace nf;
using nf::test::TempDir;

TEST_CASE(draft_follows_the_edit_rules_and_trims_to_the_budget) {
  DraftSchedule draft(findPreset("tiny").schedule, 4, 500);
  REQUIRE_EQ(draft.stepsDone(), 0);
  const EditResult twice = draft.add({0, 300, EventAction::MakeFake, SiteKind::Final, -1});  // LN_f again
  REQUIRE(!twice.accepted && twice.refusal->code == EditRefusal::Code::InvalidSchedule);
  REQUIRE(twice.refusal->problems.at(0).code == ScheduleProblem::Code::SiteAlreadyChanged);
  REQUIRE(draft.move(1, 0).accepted);  // nothing has started in a draft
  const std::vector<ScheduleEvent> dropped = draft.trimTo(100);
  REQUIRE_EQ(draft.maxSteps(), 100);
  REQUIRE(!dropped.empty());
  for (const auto& e : draft.schedule().events) REQUIRE(e.step < 100);
  REQUIRE_EQ(dropped.size() + draft.schedule().events.size(), findPreset("tiny").schedule.events.size());
  // Typing 500 passes through 5: the events set aside come back with the budget that holds them (the
  // whole schedule was lost for good), each at its step.
  const std::vector<ScheduleEvent> before = [&] {
    DraftSchedule whole(findPreset("tiny").schedule, 4, 500);
    REQUIRE(whole.move(1, 0).accepted);
    return whole.schedule().events;
  }();
  draft.trimTo(5);
  REQUIRE(draft.schedule().events.size() < before.size());
  draft.trimTo(500);
  std::vector<std::tuple<int64_t, EventAction, SiteKind, int>> expected, got;
  for (const ScheduleEvent& e : before) expected.emplace_back(e.step, e.action, e.site, e.layer);
  for (const ScheduleEvent& e : draft.schedule().events) got.emplace_back(e.step, e.action, e.site, e.layer);
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  REQUIRE(got == expected);
}

TEST_CASE(draft_check_answers_as_add_would_and_changes_nothing) {
  const Schedule tiny = findPreset("tiny").schedule;
  DraftSchedule draft(tiny, 4, 500);
  // Every site of the tiny preset is made fake already: a second time is refused, by check as by add.
  const ScheduleEvent again{0, 300, EventAction::MakeFake, SiteKind::Qk, 2};
  const EditResult checked = draft.check(again);
  REQUIRE(!checked.accepted && checked.refusal->code == EditRefusal::Code::InvalidSchedule);
  REQUIRE(checked.refusal->problems.at(0).code == ScheduleProblem::Code::SiteAlreadyChanged);
  REQUIRE_EQ(checked.reason, draft.add(again).reason);
  const EditResult past = draft.check({0, 500, EventAction::MakeFake, SiteKind::Final, -1});
  REQUIRE(!past.accepted && past.refusal->problems.at(0).code == ScheduleProblem::Code::PastLastStep);
  REQUIRE(draft.schedule() == tiny);

  // On a schedule with room, an accepted check leaves the schedule and the next id as they were.
  DraftSchedule empty({}, 4, 500);
  const ScheduleEvent mlp0{0, 40, EventAction::MakeFake, SiteKind::Mlp, 0};
  const EditResult ok = empty.check(mlp0);
  REQUIRE(ok.accepted);
  REQUIRE(empty.schedule().events.empty());
  REQUIRE_EQ(empty.add(mlp0).eventId, ok.eventId);
  // A treatment's end needs its sites made fake first (LN_mlp.all: layers 1–3 are not).
  const ScheduleEvent pos0{0, 60, EventAction::EndPos0Treatment, SiteKind::Mlp, 0};
  REQUIRE(empty.check(pos0).accepted);
  REQUIRE(!empty.check({0, 60, EventAction::EndPos0Treatment, SiteKind::Mlp, -1}).accepted);

  // A run without the treatments refuses their ends.
  DraftSchedule plain(tiny, 4, 500, Treatments{false, false});
  const EditResult unused = plain.check({0, 450, EventAction::EndEotTreatment, SiteKind::V, -1});
  REQUIRE(!unused.accepted);
  REQUIRE(unused.refusal->problems.at(0).code == ScheduleProblem::Code::TreatmentNotUsed);
  REQUIRE(
      DraftSchedule(tiny, 4, 500).check({0, 450, EventAction::EndEotTreatment, SiteKind::V, -1}).accepted);
}

TEST_CASE(followed_schedule_reads_the_file_and_refuses_edits) {
  TempDir dir;
  const Schedule tiny = findPreset("tiny").schedule;
  writeFileAtomic(run::schedulePath(dir.path()), toJson(tiny).dump());
  int64_t done = 45, budget = 500;
  FollowedSchedule followed(
      dir.path(), 4, [&] { return budget; }, [&] { return done; });
  REQUIRE(followed.schedule() == tiny);
  REQUIRE_EQ(followed.stepsDone(), 45);
  REQUIRE_EQ(followed.maxSteps(), 500);
  budget = 800;  // the run was resumed with a new budget: the timeline reaches it
  REQUIRE_EQ(followed.maxSteps(), 800);
  const EditResult r = followed.move(13, 400);
  REQUIRE(!r.accepted && r.refusal->code == EditRefusal::Code::NotEditable);
  REQUIRE(r.reason.find("edit it where it runs") != std::string::npos);
  REQUIRE(followed.check({0, 450, EventAction::MakeFake, SiteKind::Final, -1}).refusal->code ==
          EditRefusal::Code::NotEditable);
  // A schedule.json replaced by the trainer is re-read; an unreadable one leaves the last good version.
  Schedule edited = tiny;
  edited.events.back().step = 250;
  writeFileAtomic(run::schedulePath(dir.path()), toJson(edited).dump());
  REQUIRE(followed.schedule() == edited);
  REQUIRE_EQ(followed.problem(), "");
  REQUIRE(followed.rereadsFile() && !DraftSchedule(tiny, 4, 500).rereadsFile());  // a file: looked at again
  writeFileAtomic(run::schedulePath(dir.path()), "{ half a file");
  REQUIRE(followed.schedule() == edited);
  // … and says why it may be out of date (a hand edit with a slip), until the file reads again.
  REQUIRE(followed.problem().find("schedule.json") != std::string::npos);
  writeFileAtomic(run::schedulePath(dir.path()), toJson(tiny).dump());
  REQUIRE(followed.schedule() == tiny);
  REQUIRE_EQ(followed.problem(), "");
  // Its pending events are tentative while the run's autopilot is on, as its config.json says now.
  REQUIRE(!followed.tentative());  // no config.json: not known to be on
  RunConfig config;
  config.model = dir.path("model");
  config.trainData = dir.path("train.bin");
  config.autopilot.enabled = true;
  writeRunConfig(dir.path(), config);
  REQUIRE(followed.tentative());
  config.autopilot.enabled = false;  // switched off while it trains
  writeRunConfig(dir.path(), config);
  REQUIRE(!followed.tentative());
}

TEST_MAIN()
