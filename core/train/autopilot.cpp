// The autopilot steering the live schedule (trainer_state.h, schedule/autopilot.h): before each step,
// worker 0 asks the policy about the pending events — those a person moved or added excepted — and moves
// them: the ones it decides on to this step (their event records carry its reason), the others by as much,
// so the schedule keeps its spacing and always shows, as tentative steps, what the policy expects next.
// The moves are edits like a person's: one record per decision ("by": "autopilot", with its reason),
// schedule.json, the workers' copy. With none left to fire, it says when the run may end (trainedOut).
#include <algorithm>

#include "run/metrics_records.h"
#include "train/trainer_state.h"

namespace nf {

// Every removal has an autopilot, on or off: switched on mid-run it knows the loss and the last removal.
void Trainer::Impl::restoreAutopilot(const nlohmann::json& state, const std::string& source) {
  if (!removing()) return;
  const bool first = !autopilot;  // a rollback keeps the switch as it is, which config() does not hold
  autopilot = std::make_unique<Autopilot>(
      config().autopilot, state.is_null() ? AutopilotState{} : autopilotStateFromJson(state, source));
  if (first) autopilotOn = config().autopilot.enabled;
}

bool Trainer::setAutopilot(bool on) {
  return m_config.mode == TrainingMode::Remove && m_impl->takeSwitch(on, /*refusedOnceOver=*/false);
}

bool Trainer::setAutopilotBeforeTheEnd(bool on) {
  return m_config.mode == TrainingMode::Remove && m_impl->takeSwitch(on, /*refusedOnceOver=*/true);
}

bool Trainer::Impl::takeSwitch(bool on, bool refusedOnceOver) {
  {
    std::lock_guard<std::mutex> lock(switchMutex);
    if (refusedOnceOver && stepsOver) return false;
    autopilotSwitch = on ? 1 : 0;
  }
  controlRequested();  // a paused run makes it at once
  return true;
}

bool Trainer::autopilotOn() const {
  const int asked = m_impl->autopilotSwitch.load();
  return asked >= 0 ? asked == 1 : m_impl->autopilotOn.load();
}

// A switch asked for since the last step, on the training thread: the config and the record say it at this
// step. Also when the run stops or finishes before another step, so that an accepted switch is never lost.
void Trainer::Impl::applyAutopilotSwitch(int64_t step) {
  if (!autopilot || !isMain()) return;
  if (const int asked = autopilotSwitch.exchange(-1); asked >= 0 && (asked == 1) != autopilotOn) {
    autopilotOn = asked == 1;
    writeRunConfig(owner.m_dir, settingsNow());  // the switch, and a rollback's lowered learning rate
    record({{record::kType, record::kAutopilot}, {"step", step}, {"enabled", autopilotOn.load()}});
  }
}

void Trainer::Impl::beginSteps() {
  std::lock_guard<std::mutex> lock(switchMutex);
  stepsOver = false;
}

void Trainer::Impl::endSteps(int64_t step) {
  std::lock_guard<std::mutex> lock(switchMutex);
  stepsOver = true;
  applyAutopilotSwitch(step);
}

void Trainer::Impl::steerByAutopilot(int64_t step) {
  if (!autopilot || !isMain() || step <= eventsFiredThrough) return;
  applyAutopilotSwitch(step);
  if (!autopilotOn) return;
  std::lock_guard<std::mutex> lock(scheduleMutex);
  const std::vector<int64_t>& pinned = autopilot->state().pinned;
  std::vector<ScheduleEvent> pending;  // in the order they fire
  for (const ScheduleEvent& e : schedule->schedule().events)
    if (e.step >= step && std::find(pinned.begin(), pinned.end(), e.id) == pinned.end()) pending.push_back(e);
  std::sort(pending.begin(), pending.end(), [](const ScheduleEvent& a, const ScheduleEvent& b) {
    return a.step != b.step ? a.step < b.step : a.id < b.id;
  });
  if (pending.empty()) return;
  // The last step a removal may fire at: with an interpolation ramp, early enough for it to end.
  const int64_t last = std::max(step, config().optimizer.maxSteps - 1 - config().removal.interpolationSteps);
  AutopilotDecision decision = autopilot->decide(step, pending, last);
  if (decision.fire == 0 && step >= last) {  // no step left to wait for: what is due fires now, said so
    for (const ScheduleEvent& e : pending) decision.fire += e.step <= step;
    decision.reason = "the step budget ends: the removals still pending fire at its last step";
  }
  std::vector<std::pair<int64_t, int64_t>> moves;  // only the events whose step changes
  auto moveTo = [&moves](const ScheduleEvent& e, int64_t to) {
    if (to != e.step) moves.emplace_back(e.id, to);
  };
  std::string reason;
  if (decision.fire > 0) {
    // These now; the rest keep their spacing after them, the next no sooner than the minimum gap allows.
    const int64_t shift = step - pending[static_cast<size_t>(decision.fire - 1)].step;
    const int64_t soonest = std::min(step + autopilot->minGap(), last);
    for (size_t i = 0; i < pending.size(); ++i)
      moveTo(pending[i],
             static_cast<int>(i) < decision.fire ? step : std::clamp(pending[i].step + shift, soonest, last));
    reason = decision.reason;
  } else if (pending.front().step <= step) {
    // Due by the plan, but the model has not recovered: the plan moves to the next time the policy looks
    // (after the minimum gap, then every half of it), never past the maximum gap.
    const AutopilotState& s = autopilot->state();
    int64_t next = std::max(autopilot->earliest(step), step + std::max<int64_t>(1, autopilot->minGap() / 2));
    if (s.lastEventStep >= 0) next = std::min(next, s.lastEventStep + config().autopilot.maxGap);
    const int64_t shift = std::max<int64_t>(1, next - step);
    for (const ScheduleEvent& e : pending) moveTo(e, std::min(e.step + shift, last));
    reason = "waiting: " + decision.reason;
  }
  if (!moves.empty()) {
    if (!schedule->moveEvents(moves).accepted) return;  // the plan cannot move (the budget's end): it stands
    recordChanges("autopilot", reason);
  }
  if (decision.fire > 0) {
    for (int i = 0; i < decision.fire; ++i)
      autopilotReasons[pending[static_cast<size_t>(i)].id] = decision.reason;
    autopilot->fired(step, decision.fire);
  }
}

std::string Trainer::Impl::trainedOut(int64_t step) const {
  if (!autopilot || !autopilotOn || !isMain()) return {};
  {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    for (const ScheduleEvent& e : schedule->schedule().events)
      if (e.step >= step) return {};  // removals (or treatments' ends) still to come
  }
  return autopilot->trainedOut();
}

}  // namespace nf
