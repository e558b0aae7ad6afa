// A served run as the workbench sees it, over loopback against an in-process trainer and its endpoint.
// RemoteSchedule: edits are shown at once and applied by the run once, in order; a refusal by the run
// restores the run's schedule and says why; edits made elsewhere show up; an added event keeps the id
// the run gave it for later edits; a run that cannot be reached keeps the edit waiting and blocks nothing;
// a run restarted with a new token keeps it waiting too; a check is answered by the local copy's rules and
// sends nothing.
// RemoteRun: the metrics stream from the start, the status, and controls.
#include <atomic>
#include <chrono>
#include <thread>

#include "check.h"
#include "distributed/worker_environment.h"
#include "logic/RemoteRun.h"
#include "logic/RemoteSchedule.h"
#include "run_fixtures.h"
#include "serve/steering_server.h"
#include "train/trainer.h"

using namespace nf;
using namespace nf::test;

namespace {

// A removal run (smallRun: 2 layers, 30 steps, events 1–6 at steps 5–16), not trained, and its endpoint.
struct Served {
  TempDir dir;
  std::unique_ptr<Trainer> trainer = Trainer::start(dir.path("run"), smallRun(dir));
  std::unique_ptr<SteeringServer> server = std::make_unique<SteeringServer>(*trainer, ServeOptions{});
  ServeAddress address() const { return {"127.0.0.1", server->port(), server->token(), {}}; }
};

// Waits for what the threads do: polls `done` (the deadline only turns a hang into a failure).
template <class Done>
void waitFor(Done done, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!done()) {
    REQUIRE_MSG(std::chrono::steady_clock::now() < deadline, "gave up waiting for " << what);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

const ScheduleEvent* find(const Schedule& s, int64_t id) {
  for (const ScheduleEvent& e : s.events)
    if (e.id == id) return &e;
  return nullptr;
}

int64_t stepOf(const Schedule& s, int64_t id) {
  const ScheduleEvent* e = find(s, id);
  return e ? e->step : -1;
}

// Told by RemoteSchedule's thread.
struct Told {
  std::mutex mutex;
  std::vector<EditResult> refused;
  std::atomic<int> changed{0};
  RemoteSchedule::Callbacks callbacks() {
    return {[this](const EditResult& r) {
              std::lock_guard<std::mutex> lock(mutex);
              refused.push_back(r);
            },
            [this] { ++changed; }};
  }
  size_t refusals() {
    std::lock_guard<std::mutex> lock(mutex);
    return refused.size();
  }
};

RemoteSchedule::Callbacks none() { return {}; }
std::function<int64_t()> atStep(int64_t step) {
  return [step] { return step; };
}

}  // namespace

TEST_CASE(edits_are_shown_at_once_and_applied_by_the_run_once_in_order) {
  Served s;
  RemoteSchedule remote(s.address(), s.trainer->schedule(), s.trainer->layers(), 30, atStep(0), none());
  REQUIRE_EQ(remote.layers(), 2);
  REQUIRE(remote.move(6, 20).accepted);
  REQUIRE(remote.moveEvents({{5, 18}, {4, 17}}).accepted);
  REQUIRE(remote.move(6, 22).accepted);
  REQUIRE_EQ(stepOf(remote.schedule(), 6), 22);  // shown before the run has answered
  const EditResult local = remote.move(6, 40);   // past the last step: refused here, never sent
  REQUIRE(!local.accepted && local.refusal->code == EditRefusal::Code::InvalidSchedule);
  waitFor([&] { return remote.waitingEdits() == 0; }, "the run to answer three edits");
  const Schedule runs = s.trainer->schedule();
  REQUIRE_EQ(stepOf(runs, 6), 22);
  REQUIRE_EQ(stepOf(runs, 5), 18);
  REQUIRE_EQ(stepOf(runs, 4), 17);
  REQUIRE(runs == remote.schedule());
  REQUIRE(remote.problem().empty());
}

TEST_CASE(an_edit_the_run_refuses_restores_its_schedule_and_says_why) {
  Served s;
  Told told;
  RemoteSchedule remote(s.address(), s.trainer->schedule(), 2, 30, atStep(0), told.callbacks());
  REQUIRE(s.trainer->deleteEvent(4).accepted);  // elsewhere: the copy may not know yet
  const EditResult r = remote.move(4, 22);
  if (r.accepted) {  // the copy still had it: the run refuses
    waitFor([&] { return told.refusals() == 1; }, "the run's refusal");
    std::lock_guard<std::mutex> lock(told.mutex);
    REQUIRE(told.refused[0].refusal && told.refused[0].refusal->code == EditRefusal::Code::NoSuchEvent);
  } else {  // the copy had been refreshed already
    REQUIRE(r.refusal->code == EditRefusal::Code::NoSuchEvent);
  }
  waitFor([&] { return find(remote.schedule(), 4) == nullptr; }, "the run's schedule to be shown");
  REQUIRE(remote.schedule() == s.trainer->schedule());
}

TEST_CASE(edits_made_elsewhere_show_up) {
  Served s;
  Told told;
  RemoteSchedule remote(s.address(), s.trainer->schedule(), 2, 30, atStep(0), told.callbacks());
  REQUIRE(s.trainer->moveEvent(6, 25).accepted);
  waitFor([&] { return stepOf(remote.schedule(), 6) == 25; }, "the edit made elsewhere");
  REQUIRE(told.changed >= 1);
}

TEST_CASE(an_added_event_keeps_the_id_the_run_gave_it) {
  Served s;
  // The run has used id 7 for an event deleted since: a copy made now would give its next event id 7.
  REQUIRE(s.trainer->deleteEvent(1).accepted);  // frees LN_mlp.0 for the events added below
  const EditResult added = s.trainer->addEvent({0, 20, EventAction::MakeFake, SiteKind::Mlp, 0});
  REQUIRE(added.accepted && added.eventId == 7);
  REQUIRE(s.trainer->deleteEvent(7).accepted);
  RemoteSchedule remote(s.address(), s.trainer->schedule(), 2, 30, atStep(0), none());
  const EditResult mine = remote.add({0, 21, EventAction::MakeFake, SiteKind::Mlp, 0});
  REQUIRE(mine.accepted);
  REQUIRE(remote.move(mine.eventId, 27).accepted);  // by the id shown, before the run has answered
  waitFor([&] { return remote.waitingEdits() == 0; }, "the run to answer");
  const Schedule runs = s.trainer->schedule();
  const ScheduleEvent* theirs = nullptr;
  for (const ScheduleEvent& e : runs.events)
    if (e.site == SiteKind::Mlp && e.layer == 0) theirs = &e;
  REQUIRE(theirs != nullptr);
  REQUIRE(theirs->id != 7);  // the run never reuses an id
  REQUIRE_EQ(theirs->step, 27);
  waitFor([&] { return remote.schedule() == s.trainer->schedule(); }, "the run's ids to be shown");
  // The timeline's handles follow the rename (its undo commands and selection), once.
  const auto renamed = remote.takeRenamedIds();
  REQUIRE_EQ(renamed.size(), 1u);
  REQUIRE_EQ(renamed[0].first, mine.eventId);
  REQUIRE_EQ(renamed[0].second, theirs->id);
  REQUIRE(remote.takeRenamedIds().empty());
}

TEST_CASE(an_unreachable_run_keeps_the_edit_waiting_and_blocks_nothing) {
  const int port = freeLoopbackPort();  // nothing listens there
  Served s;
  auto remote = std::make_unique<RemoteSchedule>(ServeAddress{"127.0.0.1", port, "x", {}},
                                                 s.trainer->schedule(), 2, 30, atStep(0), none());
  REQUIRE(remote->move(6, 20).accepted);
  REQUIRE_EQ(stepOf(remote->schedule(), 6), 20);
  waitFor([&] { return !remote->problem().empty(); }, "the run to be found unreachable");
  REQUIRE(remote->problem().find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  REQUIRE_EQ(remote->waitingEdits(), 1);
  remote.reset();  // returns without waiting for the run
}

// A run restarted with a new token answers 401: the edit was not taken, so it waits (a resumed run that had
// applied it answers its retry from its record) rather than being dropped as refused; the problem says why.
// Status polls that fail so are said too: they had been dropped unsaid, and a control waits as an edit does.
TEST_CASE(a_run_that_no_longer_knows_the_token_keeps_the_edit_waiting_and_says_why) {
  Served s;
  ServeAddress stale = s.address();
  stale.token = "the token of the run before its restart";
  Told told;
  auto remote =
      std::make_unique<RemoteSchedule>(stale, s.trainer->schedule(), 2, 30, atStep(0), told.callbacks());
  REQUIRE(remote->move(6, 20).accepted);
  waitFor([&] { return !remote->problem().empty(); }, "the edit's 401");
  REQUIRE_MSG(remote->problem().find("401") != std::string::npos &&
                  remote->problem().find("Connect to it again") != std::string::npos,
              remote->problem());
  REQUIRE_EQ(remote->waitingEdits(), 1);
  REQUIRE_EQ(told.refusals(), 0u);
  REQUIRE_EQ(stepOf(s.trainer->schedule(), 6), 16);  // the run's own schedule is untouched
  remote.reset();

  RemoteRun run(stale);
  run.request(RemoteRun::Control::Stop);
  RemoteRun::News news;
  waitFor(
      [&] {
        RemoteRun::News more = run.take();
        news.failures.insert(news.failures.end(), more.failures.begin(), more.failures.end());
        news.problem = more.problem;
        return !news.problem.empty();
      },
      "the status poll's 401");
  REQUIRE_MSG(news.problem.find("401") != std::string::npos, news.problem);
  REQUIRE_MSG(news.failures.empty(), news.failures.front());  // the stop waits; it did not fail
  REQUIRE(!s.trainer->stopRequested());
}

TEST_CASE(a_check_is_answered_by_the_local_copy_and_sends_nothing) {
  const int port = freeLoopbackPort();  // nothing listens there: a check needs no answer
  Served s;
  int64_t done = 0;
  RemoteSchedule remote(
      ServeAddress{"127.0.0.1", port, "x", {}}, s.trainer->schedule(), 2, 30, [&] { return done; }, none());
  const ScheduleEvent again{0, 20, EventAction::MakeFake, SiteKind::Mlp, 0};  // made fake at step 5
  const EditResult twice = remote.check(again);
  REQUIRE(!twice.accepted && twice.refusal->code == EditRefusal::Code::InvalidSchedule);
  REQUIRE_EQ(twice.reason, remote.add(again).reason);
  REQUIRE(remote.remove(6).accepted);  // LN_f's event, taken by the copy (it waits for the run)
  const ScheduleEvent lnF{0, 20, EventAction::MakeFake, SiteKind::Final, -1};
  REQUIRE(remote.check(lnF).accepted);
  REQUIRE_EQ(remote.waitingEdits(), 1);
  REQUIRE(find(remote.schedule(), 7) == nullptr);
  done = 21;  // the metrics show step 21: step 20 has started
  REQUIRE(remote.check(lnF).refusal->code == EditRefusal::Code::StepAlreadyStarted);
  remote.close();
  REQUIRE(remote.check(lnF).reason.find("no longer connected") != std::string::npos);
}

TEST_CASE(a_check_refuses_ending_a_treatment_the_run_does_not_use) {
  const int port = freeLoopbackPort();  // a check needs no answer
  Served s;
  RemoteSchedule plain(ServeAddress{"127.0.0.1", port, "x", {}}, s.trainer->schedule(), 2, 30, atStep(0),
                       none(), Treatments{false, false});
  const EditResult unused = plain.check({0, 25, EventAction::EndPos0Treatment, SiteKind::Mlp, -1});
  REQUIRE(!unused.accepted && unused.refusal->code == EditRefusal::Code::InvalidSchedule);
  REQUIRE(unused.refusal->problems.front().code == ScheduleProblem::Code::TreatmentNotUsed);
  RemoteSchedule treated(ServeAddress{"127.0.0.1", port, "x", {}}, s.trainer->schedule(), 2, 30, atStep(0),
                         none(), Treatments{true, false});
  REQUIRE(treated.check({0, 25, EventAction::EndPos0Treatment, SiteKind::Mlp, -1}).accepted);
}

TEST_CASE(a_remote_run_streams_its_metrics_and_status_and_takes_controls) {
  Served s;
  RemoteRun run(s.address());
  std::vector<std::string> lines;
  nlohmann::json status;
  auto collect = [&] {
    RemoteRun::News news = run.take();
    if (news.restarted) lines.clear();
    lines.insert(lines.end(), news.lines.begin(), news.lines.end());
    if (news.status) status = *news.status;
    REQUIRE_MSG(news.problem.empty(), news.problem);
  };
  waitFor(
      [&] {
        collect();
        return !lines.empty() && !status.is_null();
      },
      "the first record and status");
  REQUIRE(nlohmann::json::parse(lines.front())["type"] == "start");
  REQUIRE_EQ(status["layers"].get<int>(), 2);
  REQUIRE_EQ(status["config"]["optimizer"]["max_steps"].get<int64_t>(), 30);
  run.request(RemoteRun::Control::Pause);
  waitFor(
      [&] {
        collect();
        return status["pause_requested"] == true;
      },
      "the pause to be taken");
  REQUIRE(s.trainer->pauseRequested());
  run.request(RemoteRun::Control::Continue);
  waitFor([&] { return !s.trainer->pauseRequested(); }, "the continue to be taken");
}

TEST_CASE(a_remote_run_that_cannot_be_reached_says_so) {
  const int port = freeLoopbackPort();
  RemoteRun run(ServeAddress{"127.0.0.1", port, "x", {}});
  run.request(RemoteRun::Control::Stop);  // kept until the run can be asked
  std::string problem;
  waitFor(
      [&] {
        problem = run.take().problem;
        return !problem.empty();
      },
      "the problem");
  REQUIRE(problem.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
}

TEST_MAIN()
