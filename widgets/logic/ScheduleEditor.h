// What the removal timeline edits: a schedule before its run starts (a draft in memory), the schedule of
// a running trainer (through the engine's thread-safe live-edit API), or that of a run another process
// trains (read-only). Each follows the engine's edit rules (nf::EditableSchedule) and refuses an edit with
// a code; the timeline then snaps back and says why. Plain C++: no Qt, no torch.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "schedule/editable_schedule.h"
#include "train/trainer.h"

class ScheduleEditor {
 public:
  virtual ~ScheduleEditor() = default;
  virtual nf::Schedule schedule() const = 0;
  virtual int64_t stepsDone() const = 0;  // events before this step have been applied and are locked
  virtual int64_t maxSteps() const = 0;
  virtual int layers() const = 0;
  virtual nf::EditResult add(nf::ScheduleEvent event) = 0;
  // What add(event) would answer now, changing nothing: the timeline offers only what this accepts.
  virtual nf::EditResult check(const nf::ScheduleEvent& event) const = 0;
  // Several moves as one edit: all are made or, with the reason of the first refused, none.
  virtual nf::EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) = 0;
  nf::EditResult move(int64_t id, int64_t step) { return moveEvents({{id, step}}); }
  virtual nf::EditResult remove(int64_t id) = 0;
  // Events whose ids changed under the caller's handles (a served run's copy taking the ids the run gave
  // them): old → new, each reported once.
  virtual std::vector<std::pair<int64_t, int64_t>> takeRenamedIds() { return {}; }
  // The pending events' steps are the autopilot's expectation (schedule/autopilot.h), not fixed: they
  // move until they fire.
  virtual bool tentative() const { return false; }
  // Why the schedule shown may be out of date ("" while it is current): a run's file that cannot be read.
  virtual std::string problem() const { return {}; }
  // The schedule is a file that a person or another process may rewrite at any time, also while no record
  // of the run moves (a stopped run's, edited by hand for its resume): a viewer looks again now and then.
  virtual bool rereadsFile() const { return false; }
};

// A schedule not yet handed to a run: edits must keep it valid for the model's depth, the step budget and
// the treatments the run will use (`used`; both by default, as when they are not known).
class DraftSchedule : public ScheduleEditor {
 public:
  DraftSchedule(nf::Schedule schedule, int layers, int64_t maxSteps, nf::Treatments used = {});
  nf::Schedule schedule() const override { return m_schedule.schedule(); }
  int64_t stepsDone() const override { return 0; }
  int64_t maxSteps() const override { return m_schedule.maxSteps(); }
  int layers() const override { return m_schedule.nLayer(); }
  nf::EditResult add(nf::ScheduleEvent event) override;
  nf::EditResult check(const nf::ScheduleEvent& event) const override { return m_schedule.checkAdd(event); }
  nf::EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) override;
  nf::EditResult remove(int64_t id) override;
  // A new step budget: the events it leaves out are set aside (and returned, to say so), and those set
  // aside before that it holds again come back — typing 500 over 60 passes through 5, which dropped every
  // event for good.
  std::vector<nf::ScheduleEvent> trimTo(int64_t maxSteps);
  const std::vector<nf::ScheduleEvent>& setAside() const { return m_setAside; }  // past the budget now

 private:
  nf::EditableSchedule m_schedule;
  std::vector<nf::ScheduleEvent> m_setAside;
};

// The schedule of a trainer that is running, paused or stopped; the trainer decides what it accepts.
class LiveSchedule : public ScheduleEditor {
 public:
  LiveSchedule(std::shared_ptr<nf::Trainer> trainer, int layers);
  nf::Schedule schedule() const override { return m_trainer->schedule(); }
  int64_t stepsDone() const override { return m_trainer->stepsDone(); }
  int64_t maxSteps() const override { return m_trainer->config().optimizer.maxSteps; }
  int layers() const override { return m_layers; }
  nf::EditResult add(nf::ScheduleEvent event) override;
  nf::EditResult check(const nf::ScheduleEvent& event) const override;
  nf::EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) override;
  nf::EditResult remove(int64_t id) override;
  bool tentative() const override { return m_trainer->autopilotOn(); }

 private:
  std::shared_ptr<nf::Trainer> m_trainer;
  int m_layers;
};

// The schedule of a run another process trains (the CLI on a server), read from its schedule.json: shown
// with the playhead where the metrics are, never edited (edits reach only a trainer in this process).
class FollowedSchedule : public ScheduleEditor {
 public:
  // maxSteps and stepsDone are asked each time: a followed run can be resumed with a new budget.
  FollowedSchedule(std::string runDir, int layers, std::function<int64_t()> maxSteps,
                   std::function<int64_t()> stepsDone);
  nf::Schedule schedule() const override;  // the last readable version of schedule.json
  // Pending events are the autopilot's expectation while the run's config.json says it is on (the trainer
  // rewrites the file when it is switched).
  bool tentative() const override;
  std::string problem() const override { return m_problem; }  // schedule.json's, when it cannot be read
  bool rereadsFile() const override { return true; }
  int64_t stepsDone() const override { return m_stepsDone(); }
  int64_t maxSteps() const override { return m_maxSteps(); }
  int layers() const override { return m_layers; }
  nf::EditResult add(nf::ScheduleEvent) override { return refused(); }
  nf::EditResult check(const nf::ScheduleEvent&) const override { return refused(); }
  nf::EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>&) override { return refused(); }
  nf::EditResult remove(int64_t) override { return refused(); }

 private:
  static nf::EditResult refused();
  std::string m_runDir;
  int m_layers;
  std::function<int64_t()> m_maxSteps;
  std::function<int64_t()> m_stepsDone;
  mutable nf::Schedule m_last;
  mutable std::string m_problem;
  mutable bool m_autopilot = false;  // as config.json last said
};
