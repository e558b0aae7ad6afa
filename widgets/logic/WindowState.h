// What the window shows — one thing at a time, the one named in its title — and what each of its parts and
// actions means then. The thing is nothing, a model folder, a run trained here, a run another process trains
// followed through its folder, or a run connected to over the network; a run is in a phase. Every way the
// window changes is a transition here, so opening one thing never leaves another's state on screen and
// Resume always means the run shown (issue 36: Resume after opening another model resumed the old run).
// Plain C++ (no Qt): MainWindow applies what viewOf() says; tests/widgets/logic/test_window_state.cpp.
#pragma once
#include <optional>

// The thing the window shows.
enum class Subject { Nothing, Model, LocalRun, FollowedRun, ConnectedRun };

// Where the run shown is (None for Nothing and Model) — also where the session's run is (RunSession::phase;
// None: it holds no run). A followed run is Running while its own process trains it; a connected run is
// Preparing while it is first asked, Stopped or Finished once it has ended (it serves no more), Failed when
// it could not be reached.
enum class RunPhase { None, Preparing, Running, Pausing, Paused, Stopping, Stopped, Finished, Failed };
// The run is being made or trains in its process (a step in progress, or the checkpoint that ends one).
bool isTraining(RunPhase phase);

struct WindowState {
  Subject subject = Subject::Nothing;
  RunPhase phase = RunPhase::None;
  // A model folder on this machine is known: the opened one, or the model of the run shown (a run folder
  // made elsewhere may name a path that is not here; a connected run's model is on its machine). Start
  // trains it; the Run setup plans for it.
  bool modelHere = false;
  bool operator==(const WindowState& o) const {
    return subject == o.subject && phase == o.phase && modelHere == o.modelHere;
  }
};

enum class WindowEvent {
  OpenModel,         // a model folder was opened
  OpenRun,           // a run folder is followed; its model is not on this machine
  OpenRunWithModel,  // the same, its model (or a checkpoint of it) found here
  Connect,           // connecting to a served run
  Start,             // a new run of the setup, trained here
  Resume,            // the run shown goes on (a followed one that stopped: from its checkpoint, here)
  Close,             // the window shows nothing (the window closes)
};

// The state after `event`, or nullopt where the window refuses it (opening something else while a run
// trains here, Resume of a run that cannot go on, Start without a model): the window says why and keeps
// showing what it showed.
std::optional<WindowState> nextWindowState(const WindowState& state, WindowEvent event);
// The state once the session reports its run's phase: the run shown is in it. A report while no run is
// shown (a late one from a run no longer shown) or of no run (None) changes nothing.
WindowState withRunPhase(const WindowState& state, RunPhase phase);

// What the title names.
enum class TitleShows { Application, Model, Run, ConnectedRun };
// What the removal timeline shows and edits: the next run's draft, the run's schedule as it trains (edits
// reach the run), a followed run's schedule.json (read-only), a run that ended or failed (to look at), or
// nothing editable while a run is being made.
enum class TimelineShows { Empty, Draft, LiveEdits, Followed, Ended, Frozen };
// What the Model pane shows: the model folder as saved, its sites as the run has made them so far, or —
// for a run whose model is on another machine — the run named, with no folder to read here.
enum class ModelPaneShows { Empty, Folder, RunSites, RunElsewhere };
// What Resume does: nothing (disabled), the run trained here goes on (from memory, or its checkpoint once
// it failed), a stopped followed run is taken over from its checkpoint, a connected run is told to go on.
enum class ResumeMeans { Disabled, ContinueHere, TakeOverFollowed, ContinueConnected };
// Whether the analysis panes can compute, and if not, why (each pane says it in place of its button):
// nothing is open, the run is being made (no trainer yet), the run's model is on another machine, or the
// connected run's process has ended (it serves no more).
enum class AnalysesCan { Compute, NoModel, WaitForRun, ModelElsewhere, RunEnded };

struct WindowView {
  TitleShows title = TitleShows::Application;
  bool runPlots = false;  // the plots, status bar and analyses' steps show the run; else they are empty
  TimelineShows timeline = TimelineShows::Empty;
  ModelPaneShows modelPane = ModelPaneShows::Empty;
  bool setupEditable = false;  // the next local run's settings can be changed
  bool memoryPlan = false;     // the Run setup shows a memory plan (for the model here)
  bool start = false;          // a new run: only of the opened model, whose draft and setup are on screen
  bool pause = false, stop = false;
  ResumeMeans resume = ResumeMeans::Disabled;
  bool openOther = false;     // Open Model / Run / Recent / Bundled, Connect, Choose Datasets
  bool loadSchedule = false;  // into the draft
  AnalysesCan analyses = AnalysesCan::NoModel;
  bool nextEvent = false;        // the status bar names the next removal event (only where one will fire)
  bool autopilotSwitch = false;  // the autopilot of the run shown can be switched (one that trains or waits)
};

WindowView viewOf(const WindowState& state);

// Training happens in this process now: nothing else can be opened until it pauses or stops.
bool trainsHere(const WindowState& state);
