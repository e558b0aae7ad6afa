#include "logic/WindowState.h"

namespace {

bool isRun(Subject s) {
  return s == Subject::LocalRun || s == Subject::FollowedRun || s == Subject::ConnectedRun;
}

WindowView localRunView(RunPhase phase) {
  WindowView v;
  v.title = TitleShows::Run;
  v.runPlots = true;
  v.modelPane = ModelPaneShows::RunSites;
  v.analyses = phase == RunPhase::Preparing ? AnalysesCan::WaitForRun : AnalysesCan::Compute;
  v.autopilotSwitch = phase == RunPhase::Running || phase == RunPhase::Pausing || phase == RunPhase::Paused ||
                      phase == RunPhase::Stopping || phase == RunPhase::Stopped;
  switch (phase) {
    case RunPhase::Preparing:
      v.timeline = TimelineShows::Frozen;  // the old schedule no longer applies, the new one is not made yet
      v.stop = true;
      break;
    case RunPhase::Running:
      v.timeline = TimelineShows::LiveEdits;
      v.pause = v.stop = v.nextEvent = true;
      break;
    case RunPhase::Pausing:
    case RunPhase::Stopping:
      v.timeline = TimelineShows::LiveEdits;
      v.stop = phase == RunPhase::Pausing;
      v.nextEvent = true;
      break;
    case RunPhase::Paused:
    case RunPhase::Stopped:
      // Edits apply when it goes on; another model can be opened (the checkpoint is written).
      v.timeline = TimelineShows::LiveEdits;
      v.stop = phase == RunPhase::Paused;
      v.resume = ResumeMeans::ContinueHere;
      v.openOther = v.nextEvent = true;
      break;
    case RunPhase::Failed:  // Resume goes on from its last checkpoint, so edits to it now would be lost
      v.timeline = TimelineShows::Ended;
      v.resume = ResumeMeans::ContinueHere;
      v.openOther = true;
      break;
    case RunPhase::Finished:
    case RunPhase::None:
      v.timeline = TimelineShows::Ended;
      v.openOther = true;
      break;
  }
  return v;
}

WindowView followedRunView(RunPhase phase, bool modelHere) {
  WindowView v;
  v.title = TitleShows::Run;
  v.runPlots = v.openOther = true;
  v.analyses = modelHere ? AnalysesCan::Compute : AnalysesCan::ModelElsewhere;
  v.modelPane = modelHere ? ModelPaneShows::RunSites : ModelPaneShows::RunElsewhere;
  v.timeline = TimelineShows::Followed;
  // Only once its own process has stopped it: two trainers on one folder would overwrite each other.
  if (phase == RunPhase::Stopped) v.resume = ResumeMeans::TakeOverFollowed;
  v.nextEvent = phase == RunPhase::Running || phase == RunPhase::Paused;
  return v;
}

WindowView connectedRunView(RunPhase phase) {
  WindowView v;
  v.title = TitleShows::ConnectedRun;
  v.runPlots = v.openOther = true;  // it trains elsewhere: this window is free for anything
  v.modelPane = ModelPaneShows::RunElsewhere;
  const bool serving = phase == RunPhase::Running || phase == RunPhase::Pausing ||
                       phase == RunPhase::Paused || phase == RunPhase::Stopping;
  v.timeline = serving                        ? TimelineShows::LiveEdits
               : phase == RunPhase::Preparing ? TimelineShows::Frozen
                                              : TimelineShows::Ended;
  v.autopilotSwitch = serving;  // analyses are computed and the autopilot switched by the run's own process
  v.analyses = serving                        ? AnalysesCan::Compute
               : phase == RunPhase::Preparing ? AnalysesCan::WaitForRun
                                              : AnalysesCan::RunEnded;
  v.pause = phase == RunPhase::Running;
  // Stop while it is first asked gives up connecting.
  v.stop = (serving && phase != RunPhase::Stopping) || phase == RunPhase::Preparing;
  if (phase == RunPhase::Paused) v.resume = ResumeMeans::ContinueConnected;
  v.nextEvent = serving && phase != RunPhase::Stopping;
  return v;
}

}  // namespace

bool isTraining(RunPhase p) {
  return p == RunPhase::Preparing || p == RunPhase::Running || p == RunPhase::Pausing ||
         p == RunPhase::Stopping;
}

bool trainsHere(const WindowState& state) {
  return state.subject == Subject::LocalRun && isTraining(state.phase);
}

WindowView viewOf(const WindowState& state) {
  switch (state.subject) {
    case Subject::Nothing: {
      WindowView v;
      v.openOther = true;
      return v;
    }
    case Subject::Model: {
      WindowView v;
      v.title = TitleShows::Model;
      v.timeline = TimelineShows::Draft;
      v.modelPane = ModelPaneShows::Folder;
      v.setupEditable = v.memoryPlan = v.start = v.openOther = v.loadSchedule = v.nextEvent = true;
      v.analyses = AnalysesCan::Compute;
      return v;
    }
    case Subject::LocalRun:
      return localRunView(state.phase);
    case Subject::FollowedRun:
      return followedRunView(state.phase, state.modelHere);
    case Subject::ConnectedRun:
      return connectedRunView(state.phase);
  }
  return {};
}

std::optional<WindowState> nextWindowState(const WindowState& state, WindowEvent event) {
  const WindowView view = viewOf(state);
  switch (event) {
    case WindowEvent::OpenModel:
      if (!view.openOther) return std::nullopt;
      return WindowState{Subject::Model, RunPhase::None, true};
    case WindowEvent::OpenRun:
    case WindowEvent::OpenRunWithModel:
      if (!view.openOther) return std::nullopt;
      return WindowState{Subject::FollowedRun, RunPhase::Running, event == WindowEvent::OpenRunWithModel};
    case WindowEvent::Connect:
      if (!view.openOther) return std::nullopt;
      return WindowState{Subject::ConnectedRun, RunPhase::Preparing, false};
    case WindowEvent::Start:
      if (!view.start) return std::nullopt;
      return WindowState{Subject::LocalRun, RunPhase::Preparing, true};
    case WindowEvent::Resume:
      switch (view.resume) {
        case ResumeMeans::Disabled:
          return std::nullopt;
        case ResumeMeans::TakeOverFollowed:
          return WindowState{Subject::LocalRun, RunPhase::Preparing, state.modelHere};
        default:
          return state;  // the same run; its phase follows as it changes
      }
    case WindowEvent::Close:
      return WindowState{};
  }
  return state;
}

WindowState withRunPhase(const WindowState& state, RunPhase phase) {
  if (!isRun(state.subject) || phase == RunPhase::None) return state;
  WindowState after = state;
  after.phase = phase;
  return after;
}
