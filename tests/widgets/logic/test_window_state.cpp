// What the window shows, as a table: every transition (open a model or run, connect, start, resume, the
// run's phases, close) and what each part of the window shows after it. The cases issue 36 found by hand are
// named: Resume after opening another model resumed the old run, the old run's plots stayed under the new
// model's title, Start sat next to Resume while paused, a connected run kept the last model's title and
// memory plan, and a stopped connected run's status bar still named its next event.
#include <sstream>
#include <vector>

#include "check.h"
#include "logic/WindowState.h"

namespace {

using S = Subject;
using P = RunPhase;
using E = WindowEvent;

const WindowState kNothing{};
const WindowState kModel{S::Model, P::None, true};
WindowState local(P phase) { return {S::LocalRun, phase, true}; }
WindowState followed(P phase, bool modelHere = true) { return {S::FollowedRun, phase, modelHere}; }
WindowState connected(P phase) { return {S::ConnectedRun, phase, false}; }

std::string describe(const std::optional<WindowState>& s) {
  if (!s) return "refused";
  std::ostringstream out;
  out << "subject " << static_cast<int>(s->subject) << " phase " << static_cast<int>(s->phase)
      << " model here " << s->modelHere;
  return out.str();
}

struct Transition {
  WindowState from;
  WindowEvent event;
  std::optional<WindowState> to;  // nullopt: refused
};

}  // namespace

TEST_CASE(every_transition_goes_where_the_table_says) {
  const std::optional<WindowState> refused;
  const std::vector<Transition> table = {
      // Opening something: from nothing, a model, or any run that does not train here now.
      {kNothing, E::OpenModel, kModel},
      {kModel, E::OpenModel, kModel},
      {local(P::Stopped), E::OpenModel, kModel},
      {local(P::Paused), E::OpenModel, kModel},  // the pause wrote its checkpoint: the run is let go
      {local(P::Finished), E::OpenModel, kModel},
      {local(P::Failed), E::OpenModel, kModel},
      {followed(P::Running), E::OpenModel, kModel},
      {connected(P::Running), E::OpenModel, kModel},  // it trains on where it is
      {connected(P::Stopped), E::OpenModel, kModel},
      {kModel, E::OpenRun, followed(P::Running, false)},
      {kModel, E::OpenRunWithModel, followed(P::Running, true)},
      {connected(P::Paused), E::OpenRunWithModel, followed(P::Running, true)},
      {kModel, E::Connect, connected(P::Preparing)},
      {local(P::Stopped), E::Connect, connected(P::Preparing)},
      {followed(P::Finished), E::Connect, connected(P::Preparing)},
      // ... refused while a run trains in this process.
      {local(P::Preparing), E::OpenModel, refused},
      {local(P::Running), E::OpenModel, refused},
      {local(P::Pausing), E::OpenRun, refused},
      {local(P::Stopping), E::Connect, refused},
      // Start: a new run of the opened model only.
      {kModel, E::Start, local(P::Preparing)},
      {kNothing, E::Start, refused},
      {local(P::Running), E::Start, refused},
      {local(P::Paused), E::Start, refused},
      {local(P::Stopped), E::Start, refused},  // its setup and draft are not on screen: open the model
      {local(P::Finished), E::Start, refused},
      {followed(P::Stopped), E::Start, refused},
      {connected(P::Stopped), E::Start, refused},
      // Resume: the run shown, where it can go on.
      {local(P::Paused), E::Resume, local(P::Paused)},
      {local(P::Stopped), E::Resume, local(P::Stopped)},
      {local(P::Failed), E::Resume, local(P::Failed)},
      {local(P::Running), E::Resume, refused},
      {local(P::Finished), E::Resume, refused},
      {followed(P::Stopped), E::Resume, local(P::Preparing)},  // taken over from its checkpoint, here
      {followed(P::Stopped, false), E::Resume, WindowState{S::LocalRun, P::Preparing, false}},
      {followed(P::Running), E::Resume, refused},  // its own process trains it
      {followed(P::Paused), E::Resume, refused},
      {followed(P::Finished), E::Resume, refused},
      {connected(P::Paused), E::Resume, connected(P::Paused)},
      {connected(P::Running), E::Resume, refused},
      {connected(P::Stopped), E::Resume, refused},  // resumed on its server
      {kModel, E::Resume, refused},
      {kNothing, E::Resume, refused},
      // Close: nothing is shown, whatever was.
      {kModel, E::Close, kNothing},
      {local(P::Running), E::Close, kNothing},
      {connected(P::Paused), E::Close, kNothing},
  };
  for (const Transition& t : table) {
    const std::optional<WindowState> got = nextWindowState(t.from, t.event);
    REQUIRE_MSG(got == t.to, "from " << describe(t.from) << " on event " << static_cast<int>(t.event)
                                     << ": got " << describe(got) << ", want " << describe(t.to));
  }
}

TEST_CASE(the_runs_phase_as_the_session_reports_it_moves_only_the_run_shown) {
  struct PhaseReport {
    WindowState from;
    RunPhase phase;
    WindowState to;
  };
  const std::vector<PhaseReport> table = {
      {local(P::Preparing), P::Running, local(P::Running)},
      {local(P::Running), P::Pausing, local(P::Pausing)},
      {local(P::Pausing), P::Paused, local(P::Paused)},
      {local(P::Paused), P::Running, local(P::Running)},
      {local(P::Running), P::Stopping, local(P::Stopping)},
      {local(P::Stopping), P::Stopped, local(P::Stopped)},
      {local(P::Running), P::Finished, local(P::Finished)},
      {local(P::Running), P::Failed, local(P::Failed)},
      {followed(P::Running), P::Stopped, followed(P::Stopped)},
      {followed(P::Running, false), P::Finished, followed(P::Finished, false)},
      {connected(P::Preparing), P::Running, connected(P::Running)},
      {connected(P::Preparing), P::Failed, connected(P::Failed)},
      {connected(P::Stopping), P::Stopped, connected(P::Stopped)},
      // A late report of a run no longer shown changes nothing, nor does a session that holds no run.
      {kModel, P::Running, kModel},
      {kModel, P::Stopped, kModel},
      {kNothing, P::Failed, kNothing},
      {local(P::Stopped), P::None, local(P::Stopped)},
  };
  for (const PhaseReport& t : table) {
    const WindowState got = withRunPhase(t.from, t.phase);
    REQUIRE_MSG(got == t.to, "from " << describe(t.from) << " on phase " << static_cast<int>(t.phase)
                                     << ": got " << describe(got) << ", want " << describe(t.to));
  }
}

TEST_CASE(an_action_is_enabled_exactly_where_its_transition_is_allowed) {
  const std::vector<WindowState> states = {kNothing,
                                           kModel,
                                           local(P::Preparing),
                                           local(P::Running),
                                           local(P::Pausing),
                                           local(P::Paused),
                                           local(P::Stopping),
                                           local(P::Stopped),
                                           local(P::Finished),
                                           local(P::Failed),
                                           followed(P::Running),
                                           followed(P::Paused),
                                           followed(P::Stopped),
                                           followed(P::Finished, false),
                                           connected(P::Preparing),
                                           connected(P::Running),
                                           connected(P::Paused),
                                           connected(P::Stopped),
                                           connected(P::Finished),
                                           connected(P::Failed)};
  for (const WindowState& s : states) {
    const WindowView v = viewOf(s);
    REQUIRE_MSG(v.start == nextWindowState(s, E::Start).has_value(), describe(s));
    REQUIRE_MSG((v.resume != ResumeMeans::Disabled) == nextWindowState(s, E::Resume).has_value(),
                describe(s));
    for (E open : {E::OpenModel, E::OpenRun, E::Connect})
      REQUIRE_MSG(v.openOther == nextWindowState(s, open).has_value(), describe(s));
    REQUIRE_MSG(v.openOther == !trainsHere(s), describe(s));
    // The plots show a run exactly when a run is shown, and never a run next to a model's title.
    const bool run = s.subject != S::Nothing && s.subject != S::Model;
    REQUIRE_MSG(v.runPlots == run, describe(s));
    REQUIRE_MSG(run == (v.title == TitleShows::Run || v.title == TitleShows::ConnectedRun), describe(s));
    // Only the opened model's draft is edited as a draft, and only then is a new run set up.
    REQUIRE_MSG((v.timeline == TimelineShows::Draft) == (s.subject == S::Model), describe(s));
    REQUIRE_MSG(v.setupEditable == (s.subject == S::Model), describe(s));
    REQUIRE_MSG(!(v.start && v.resume != ResumeMeans::Disabled), describe(s));  // never both
    REQUIRE_MSG(!(v.pause && !v.stop), describe(s));                            // what can pause can stop
  }
}

TEST_CASE(resume_after_opening_another_model_is_disabled_and_the_old_run_leaves_the_screen) {
  // Stop the GPT-2 run, open tiny-llama: the window shows tiny-llama, nothing of the run.
  const std::optional<WindowState> after = nextWindowState(local(P::Stopped), E::OpenModel);
  REQUIRE(after && *after == kModel);
  const WindowView v = viewOf(*after);
  REQUIRE(v.resume == ResumeMeans::Disabled);
  REQUIRE(!v.runPlots);  // the loss, LR and scale plots and the status bar no longer show the old run
  REQUIRE(v.title == TitleShows::Model);
  REQUIRE(v.modelPane == ModelPaneShows::Folder);  // its own sites, none of the run's FakeRMS scales
  REQUIRE(v.timeline == TimelineShows::Draft);     // its own schedule, a drag edits that
  REQUIRE(!nextWindowState(*after, E::Resume));
  // The session's late report of the old run does not bring it back.
  REQUIRE(withRunPhase(*after, P::Stopped) == kModel);
}

TEST_CASE(a_paused_run_offers_resume_not_start) {
  const WindowView paused = viewOf(local(P::Paused));
  REQUIRE(paused.resume == ResumeMeans::ContinueHere);
  REQUIRE(!paused.start);
  REQUIRE(paused.stop && !paused.pause);
  REQUIRE(paused.timeline == TimelineShows::LiveEdits);  // edits apply when it goes on
  const WindowView stopped = viewOf(local(P::Stopped));
  REQUIRE(stopped.resume == ResumeMeans::ContinueHere && !stopped.start && !stopped.stop);
  // A failed run goes on from its last checkpoint: edits to its schedule in memory would be lost.
  const WindowView failed = viewOf(local(P::Failed));
  REQUIRE(failed.resume == ResumeMeans::ContinueHere && failed.timeline == TimelineShows::Ended);
  REQUIRE(viewOf(local(P::Finished)).resume == ResumeMeans::Disabled);
}

TEST_CASE(a_connected_run_is_named_in_the_title_and_plans_no_memory_here) {
  const std::optional<WindowState> after = nextWindowState(kModel, E::Connect);
  REQUIRE(after.has_value());
  for (P phase : {P::Preparing, P::Running, P::Paused, P::Stopped}) {
    const WindowView v = viewOf(connected(phase));
    REQUIRE(v.title == TitleShows::ConnectedRun);          // not the model opened before
    REQUIRE(v.modelPane == ModelPaneShows::RunElsewhere);  // its model is on the server
    REQUIRE(!v.memoryPlan && !v.setupEditable && !v.start && !v.loadSchedule);
  }
  REQUIRE(viewOf(*after).timeline == TimelineShows::Frozen);  // nothing to edit until the run answers
  REQUIRE(viewOf(connected(P::Running)).analyses == AnalysesCan::Compute);  // by the run's own process
}

TEST_CASE(a_run_that_ended_names_no_next_event_and_takes_no_edits) {
  for (const WindowState& s : {connected(P::Stopped), connected(P::Finished), local(P::Finished),
                               followed(P::Stopped), followed(P::Finished)}) {
    const WindowView v = viewOf(s);
    REQUIRE_MSG(!v.nextEvent, describe(s));
    REQUIRE_MSG(v.timeline != TimelineShows::LiveEdits && v.timeline != TimelineShows::Draft, describe(s));
  }
  // Its process serves no more: the panes say so rather than ask a server that is gone.
  REQUIRE(viewOf(connected(P::Stopped)).analyses == AnalysesCan::RunEnded);
  REQUIRE(viewOf(connected(P::Finished)).analyses == AnalysesCan::RunEnded);
  REQUIRE(viewOf(local(P::Finished)).analyses == AnalysesCan::Compute);  // its model is in memory here
  // A stopped or paused run here still fires its next event once resumed.
  REQUIRE(viewOf(local(P::Stopped)).nextEvent);
  REQUIRE(viewOf(connected(P::Paused)).nextEvent);
}

TEST_CASE(the_autopilot_switches_only_on_a_run_that_trains_here_or_serves) {
  for (P phase : {P::Running, P::Paused, P::Stopped}) REQUIRE(viewOf(local(phase)).autopilotSwitch);
  for (P phase : {P::Running, P::Paused}) REQUIRE(viewOf(connected(phase)).autopilotSwitch);
  for (const WindowState& s : {kNothing, kModel, local(P::Preparing), local(P::Finished), local(P::Failed),
                               followed(P::Running), connected(P::Stopped)})
    REQUIRE_MSG(!viewOf(s).autopilotSwitch, describe(s));
}

TEST_CASE(a_followed_run_is_resumed_here_only_once_its_own_process_stopped_it) {
  REQUIRE(viewOf(followed(P::Running)).resume == ResumeMeans::Disabled);
  REQUIRE(viewOf(followed(P::Paused)).resume == ResumeMeans::Disabled);
  REQUIRE(viewOf(followed(P::Stopped)).resume == ResumeMeans::TakeOverFollowed);
  REQUIRE(viewOf(followed(P::Running)).timeline == TimelineShows::Followed);  // read-only
  // Its model is shown site by site where a folder of it is here, else the run is named.
  REQUIRE(viewOf(followed(P::Running, true)).modelPane == ModelPaneShows::RunSites);
  REQUIRE(viewOf(followed(P::Running, false)).modelPane == ModelPaneShows::RunElsewhere);
  // Analyses need the model here: a run folder made elsewhere has none to compute on.
  REQUIRE(viewOf(followed(P::Running, true)).analyses == AnalysesCan::Compute);
  REQUIRE(viewOf(followed(P::Running, false)).analyses == AnalysesCan::ModelElsewhere);
  REQUIRE(viewOf(kNothing).analyses == AnalysesCan::NoModel);
}

TEST_CASE(while_a_run_is_made_nothing_is_edited_and_only_stop_is_offered) {
  for (const WindowState& s : {local(P::Preparing), connected(P::Preparing)}) {
    const WindowView v = viewOf(s);
    REQUIRE_MSG(v.timeline == TimelineShows::Frozen, describe(s));
    REQUIRE_MSG(v.stop && !v.pause && !v.start && v.resume == ResumeMeans::Disabled, describe(s));
    REQUIRE_MSG(v.analyses == AnalysesCan::WaitForRun, describe(s));
  }
}

TEST_MAIN()
