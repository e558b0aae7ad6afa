// The schedule of a run another process trains and serves (--serve, docs/STEERING.md), edited without
// waiting on the network: an edit is checked against a local copy by the engine's rules
// (nf::EditableSchedule) and shown at once, then sent, in order, from a thread of its own, with a request id
// kept across reconnects, so the run applies it once however often it is sent. The run has the last word:
// when it refuses an edit the local copy took (the run passed the step meanwhile, another client came
// first), its schedule is shown again — the edits made after it and not yet sent are dropped with it — and
// `refused` says why. While no edit waits, the copy is refreshed
// from the run every second, so edits made elsewhere show up. Plain C++: no Qt.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "logic/ScheduleEditor.h"
#include "serve/steering_client.h"

class RemoteSchedule : public ScheduleEditor {
 public:
  // Each is called on the sending thread.
  struct Callbacks {
    std::function<void(const nf::EditResult&)> refused;  // the run refused an edit shown as made
    std::function<void()> changed;  // the local copy was replaced by the run's (a refusal, edits elsewhere)
  };
  // `used`: the treatments the run uses (its config's), so the copy refuses ending another as the run does.
  RemoteSchedule(nf::ServeAddress address, nf::Schedule schedule, int layers, int64_t maxSteps,
                 std::function<int64_t()> stepsDone, Callbacks callbacks, nf::Treatments used = {});
  // Returns at once, as close() does.
  ~RemoteSchedule() override;
  // Whether the run's autopilot is on, asked on the caller's thread when the timeline draws.
  void setTentative(std::function<bool()> autopilotOn) { m_tentative = std::move(autopilotOn); }
  bool tentative() const override { return m_tentative && m_tentative(); }
  // No more edits or callbacks (for when the run is left while others still hold this editor): the edits
  // still waiting are sent while the run answers (not to one it cannot reach), later ones are refused.
  void close();

  nf::Schedule schedule() const override;
  int64_t stepsDone() const override { return m_stepsDone(); }
  int64_t maxSteps() const override { return m_maxSteps; }
  int layers() const override { return m_layers; }
  nf::EditResult add(nf::ScheduleEvent event) override;
  // By the local copy's rules, as add checks it (the run may still refuse, as it may an add).
  nf::EditResult check(const nf::ScheduleEvent& event) const override;
  nf::EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) override;
  nf::EditResult remove(int64_t id) override;

  std::vector<std::pair<int64_t, int64_t>> takeRenamedIds() override;
  int waitingEdits() const;              // taken here, not yet answered by the run
  std::string problem() const override;  // why the run cannot be reached now ("" when it can)

 private:
  // What the sending thread shares with this editor: it outlives the editor until the edits still waiting
  // are sent (or the run is found unreachable), so dropping the editor never blocks its owner's thread.
  struct Shared;
  nf::EditResult noLongerConnected() const;
  template <class Change>
  nf::EditResult edit(Change change, int kind, std::vector<std::pair<int64_t, int64_t>> moves = {},
                      nf::ScheduleEvent event = {}, int64_t id = 0);
  std::shared_ptr<Shared> m;
  std::function<bool()> m_tentative;
  const int m_layers;
  const int64_t m_maxSteps;
  std::function<int64_t()> m_stepsDone;  // read on the editing thread only
};
