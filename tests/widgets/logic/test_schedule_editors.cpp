// The schedules the timeline edits, headless: a draft follows the engine's edit rules and trims to a new
// step budget; a followed run's schedule is read from its schedule.json and refuses every edit.
#include <filesystem>
#include <nlohmann/json.hpp>

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
}

TEST_CASE(followed_schedule_reads_the_file_and_refuses_edits) {
  TempDir dir;
  const Schedule tiny = findPreset("tiny").schedule;
  writeFileAtomic(run::schedulePath(dir.path()), toJson(tiny).dump());
  int64_t done = 45;
  FollowedSchedule followed(dir.path(), 4, 500, [&] { return done; });
  REQUIRE(followed.schedule() == tiny);
  REQUIRE_EQ(followed.stepsDone(), 45);
  const EditResult r = followed.move(13, 400);
  REQUIRE(!r.accepted && r.refusal->code == EditRefusal::Code::NotEditable);
  REQUIRE(r.reason.find("edit it where it runs") != std::string::npos);
  // A schedule.json replaced by the trainer is re-read; an unreadable one leaves the last good version.
  Schedule edited = tiny;
  edited.events.back().step = 250;
  writeFileAtomic(run::schedulePath(dir.path()), toJson(edited).dump());
  REQUIRE(followed.schedule() == edited);
  writeFileAtomic(run::schedulePath(dir.path()), "{ half a file");
  REQUIRE(followed.schedule() == edited);
}

TEST_MAIN()
