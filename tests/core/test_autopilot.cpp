// The autopilot's policy on synthetic loss curves, as a table: each removal adds a loss spike that decays
// with its own time constant (and a gradient-norm bump), on a slowly falling base. Fast recovery fires at
// the minimum gap and grows the group; slow recovery waits for it; a spike that never decays fires at the
// maximum gap; a divergence sets the group to one site and doubles the gap; after the last removal a flat
// loss ends the run after the patience, a falling one never; the state survives JSON.
#include <cmath>
#include <limits>
#include <vector>

#include "check.h"
#include "schedule/autopilot.h"

using namespace nf;

namespace {

// The tiny preset's order: LN_mlp.0–3, LN_qk.0–3, LN_v.0–3, LN_f (the first planned at step 40).
std::vector<ScheduleEvent> tinyOrder() {
  std::vector<ScheduleEvent> events;
  int64_t id = 1, step = 40;
  for (SiteKind kind : {SiteKind::Mlp, SiteKind::Qk, SiteKind::V})
    for (int layer = 0; layer < 4; ++layer)
      events.push_back({id++, step++, EventAction::MakeFake, kind, layer});
  events.push_back({id, step, EventAction::MakeFake, SiteKind::Final, -1});
  return events;
}

struct Curve {
  double spike = 0.3;  // nats a removal adds
  double decay = 3;    // its time constant in steps (infinity: never decays)
};

struct Fired {
  int64_t step;
  int count;
};

// Runs the policy for `steps` on the curve; returns when each group fired.
std::vector<Fired> simulate(const AutopilotSettings& settings, const Curve& curve, int64_t steps,
                            int64_t lastStep = std::numeric_limits<int64_t>::max()) {
  Autopilot pilot(settings);
  std::vector<ScheduleEvent> pending = tinyOrder();
  std::vector<Fired> fired;
  std::vector<int64_t> spikes;  // the steps removals fired at
  for (int64_t step = 0; step < steps; ++step) {
    const AutopilotDecision d = pilot.decide(step, pending, lastStep);
    if (d.fire > 0) {
      REQUIRE_MSG(!d.reason.empty(), "a decision says why");
      fired.push_back({step, d.fire});
      for (int i = 0; i < d.fire; ++i) spikes.push_back(step);
      pending.erase(pending.begin(), pending.begin() + d.fire);
      pilot.fired(step, d.fire);
    }
    double loss = 3.0 - 0.001 * static_cast<double>(step), grad = 1.0;
    for (int64_t at : spikes) {
      const double left =
          std::isinf(curve.decay) ? 1.0 : std::exp(-static_cast<double>(step - at) / curve.decay);
      loss += curve.spike * left;
      grad += 2.0 * left;
    }
    pilot.observe(loss, grad);
  }
  return fired;
}

int total(const std::vector<Fired>& fired) {
  int n = 0;
  for (const Fired& f : fired) n += f.count;
  return n;
}

}  // namespace

TEST_CASE(the_first_removal_waits_for_its_planned_step) {
  const std::vector<Fired> fired = simulate({}, {}, 60);
  REQUIRE(!fired.empty());
  REQUIRE_EQ(fired.front().step, 40);
  REQUIRE_EQ(fired.front().count, 1);
}

double meanGap(const std::vector<Fired>& fired) {
  return static_cast<double>(fired.back().step - fired[1].step) / static_cast<double>(fired.size() - 2);
}

TEST_CASE(fast_recovery_fires_soon_after_the_minimum_gap_and_grows_the_group) {
  AutopilotSettings s;
  s.minGap = 10;
  const std::vector<Fired> fired = simulate(s, {0.3, 2}, 400);
  REQUIRE_EQ(total(fired), 13);                            // every site, well within the budget
  REQUIRE(fired[1].step - fired[0].step <= s.minGap + 3);  // recovered by about the minimum gap
  for (size_t i = 1; i < fired.size(); ++i) REQUIRE(fired[i].step - fired[i - 1].step <= 2 * s.minGap);
  int largest = 0;
  for (const Fired& f : fired) largest = std::max(largest, f.count);
  REQUIRE(largest > 1);            // several sites of one kind at once
  REQUIRE(largest <= s.maxGroup);  // never more than allowed
  REQUIRE(fired.size() < 13);      // so fewer decisions than sites
}

// A removal the budget forced before the loss was back is no quick recovery: the group stays (it grew, and
// three sites fired together after a string of forced ones).
TEST_CASE(only_a_recovery_at_the_first_chance_grows_the_group) {
  AutopilotSettings s;
  s.minGap = 10;
  Autopilot pilot(s);
  pilot.observe(3.0, 1.0);
  pilot.fired(40, 1);       // the first removal, from a smoothed 3.0
  pilot.observe(3.5, 1.0);  // smoothed 3.05: not back within 0.02
  pilot.fired(45, 1);       // forced early (a short budget)
  REQUIRE_EQ(pilot.state().group, 1);
  pilot.observe(3.0, 1.0);  // smoothed 3.045: back within 0.02 of 3.05
  pilot.fired(50, 1);
  REQUIRE_EQ(pilot.state().group, 2);
}

TEST_CASE(slow_recovery_waits_for_the_loss) {
  AutopilotSettings s;
  s.minGap = 10;
  s.maxGap = 200;
  const std::vector<Fired> slow = simulate(s, {0.3, 20}, 2000), fast = simulate(s, {0.3, 2}, 2000);
  REQUIRE_EQ(total(slow), 13);
  // 0.3·e^(−t/20), seen through the average, falls within 0.02 after some 50 steps: well past the minimum.
  REQUIRE_MSG(slow[1].step - slow[0].step > 40, "first gap " << slow[1].step - slow[0].step);
  REQUIRE_EQ(slow[1].count, 1);
  REQUIRE(meanGap(slow) > 1.5 * meanGap(fast));
  for (size_t i = 1; i < slow.size(); ++i) REQUIRE(slow[i].step - slow[i - 1].step < s.maxGap);
}

TEST_CASE(a_loss_that_never_recovers_fires_at_the_maximum_gap) {
  AutopilotSettings s;
  s.minGap = 5;
  s.maxGap = 30;
  const std::vector<Fired> fired = simulate(s, {0.3, INFINITY}, 600);
  REQUIRE_EQ(total(fired), 13);
  for (size_t i = 1; i < fired.size(); ++i) {
    REQUIRE_EQ(fired[i].step - fired[i - 1].step, 30);
    REQUIRE_EQ(fired[i].count, 1);
  }
}

// A removal of 120 steps: waiting the maximum gap (80) for a loss that never recovers had left twelve
// removals to fire together at the last step, with no step to recover from them.
TEST_CASE(a_short_budget_shares_the_steps_left_among_the_removals) {
  AutopilotSettings s;
  s.minGap = 5;
  s.maxGap = 80;
  const std::vector<Fired> fired = simulate(s, {0.3, INFINITY}, 120, /*lastStep=*/119);
  REQUIRE_EQ(total(fired), 13);  // every one by the last step
  for (size_t i = 1; i < fired.size(); ++i) {
    const int64_t gap = fired[i].step - fired[i - 1].step;
    REQUIRE_MSG(gap >= s.minGap && gap <= (119 - fired[i - 1].step) / (13 - static_cast<int64_t>(i)),
                "gap " << gap << " before removal " << i);
  }
  // With steps to spare, the budget changes nothing: the maximum gap rules.
  REQUIRE(simulate(s, {0.3, INFINITY}, 2000, 1999).at(1).step - 40 == 80);
  // A budget shorter than the minimum gap for each: the removals spread over it, one at a time (the
  // minimum gap had held them back, and they fired together at the last step, LN_v with LN_f).
  s.minGap = 10;
  const std::vector<Fired> tight = simulate(s, {0.3, INFINITY}, 60, /*lastStep=*/59);
  REQUIRE_EQ(total(tight), 13);
  REQUIRE_EQ(tight.size(), size_t{13});
  for (size_t i = 1; i < tight.size(); ++i)
    REQUIRE_MSG(tight[i].step > tight[i - 1].step && tight[i].step - tight[i - 1].step < s.minGap,
                "removal " << i << " at step " << tight[i].step);
}

TEST_CASE(a_divergence_sets_one_site_at_a_time_and_a_longer_gap) {
  AutopilotSettings s;
  s.minGap = 10;
  s.maxGap = 100;
  Autopilot pilot(s);
  pilot.state().group = 3;
  pilot.rolledBack();
  REQUIRE_EQ(pilot.state().group, 1);
  REQUIRE_EQ(pilot.minGap(), 20);
  pilot.rolledBack();
  REQUIRE_EQ(pilot.minGap(), 40);
  for (int i = 0; i < 10; ++i) pilot.rolledBack();
  REQUIRE_EQ(pilot.minGap(), 100);  // never past the maximum gap
  // With the longer gap, a recovered loss still waits for it.
  Autopilot fresh(s);
  fresh.observe(2.0, 1.0);
  fresh.fired(50, 1);
  fresh.rolledBack();
  fresh.observe(2.0, 1.0);
  const std::vector<ScheduleEvent> pending = {{2, 60, EventAction::MakeFake, SiteKind::Qk, 0}};
  REQUIRE_EQ(fresh.decide(65, pending).fire, 0);
  REQUIRE_EQ(fresh.decide(70, pending).fire, 1);
}

TEST_CASE(a_group_takes_only_sites_of_one_kind) {
  AutopilotSettings s;
  s.maxGroup = 4;
  Autopilot pilot(s);
  pilot.observe(2.0, 1.0);
  pilot.fired(40, 1);
  pilot.state().group = 4;
  const std::vector<ScheduleEvent> pending = {{5, 90, EventAction::MakeFake, SiteKind::Mlp, 3},
                                              {6, 91, EventAction::MakeFake, SiteKind::Qk, 0},
                                              {7, 92, EventAction::MakeFake, SiteKind::Qk, 1}};
  const AutopilotDecision d = pilot.decide(60, pending);
  REQUIRE_EQ(d.fire, 1);  // LN_mlp.3 alone: the LN_qk sites are another kind
  REQUIRE_MSG(d.reason.find("back within") != std::string::npos, d.reason);
}

// Steps after the last removal until the policy says the run may end (−1: not within `steps`), the loss
// `base(t)` plus that removal's spike 0.3·e^(−t/3).
template <typename Base>
int64_t stepsUntilTrainedOut(const AutopilotSettings& s, Base base, int64_t steps) {
  Autopilot pilot(s);
  for (int i = 0; i < 50; ++i) pilot.observe(base(0), 1.0);
  REQUIRE_MSG(pilot.trainedOut().empty(), "no removal has fired yet");
  pilot.fired(50, 1);
  for (int64_t t = 0; t < steps; ++t) {
    if (!pilot.trainedOut().empty()) return t;
    pilot.observe(base(t) + 0.3 * std::exp(-static_cast<double>(t) / 3.0), 1.0);
  }
  return -1;
}

TEST_CASE(after_the_last_removal_a_flat_loss_ends_the_run_after_the_patience) {
  AutopilotSettings s;  // patience 100 steps, least improvement 0.005 nats
  auto flat = [](int64_t) { return 2.0; };
  // Windows of 100 steps from the removal: the first holds the spike (its mean 0.011 above the second's),
  // the second and third are equal, so the run may end after the third, and not before.
  REQUIRE_EQ(stepsUntilTrainedOut(s, flat, 1000), 300);
  // A loss still falling 0.01 nats every 100 steps keeps the run going.
  auto falling = [](int64_t t) { return 2.0 - 1e-4 * static_cast<double>(t); };
  REQUIRE_EQ(stepsUntilTrainedOut(s, falling, 1000), -1);
  // So does one that falls as slowly under the noise of round 5's small model (0.12 nats from step to step,
  // 12 times the fall per 100 steps; a deterministic sequence): the smoothed loss's dips had ended such a
  // run (there at step 373 of 800, 0.03 nats short).
  uint64_t state = 42;
  auto uniform = [&state] {  // splitmix64: the same numbers on every platform
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (static_cast<double>((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<double> noise(1000);
  for (double& n : noise) {  // Box-Muller, its two draws in a fixed order
    const double radius = std::sqrt(-2 * std::log(uniform()));
    n = 0.12 * radius * std::cos(6.283185307179586 * uniform());
  }
  auto noisy = [&](int64_t t) { return falling(t) + noise[static_cast<std::size_t>(t)]; };
  REQUIRE_EQ(stepsUntilTrainedOut(s, noisy, 1000), -1);
  // A loss that rises again ends the run once two windows without the spike show it: after 300 steps.
  auto rising = [](int64_t t) { return 2.0 + 1e-4 * static_cast<double>(t); };
  REQUIRE_EQ(stepsUntilTrainedOut(s, rising, 1000), 300);
  // Patience 0: the step budget alone ends it.
  s.patience = 0;
  REQUIRE_EQ(stepsUntilTrainedOut(s, flat, 1000), -1);
  // The reason names the numbers.
  s.patience = 20;
  Autopilot pilot(s);
  pilot.observe(2.0, 1.0);
  pilot.fired(10, 1);
  for (int i = 0; i < 40; ++i) pilot.observe(2.0, 1.0);
  REQUIRE_MSG(pilot.trainedOut().find("the mean loss of the last 20 steps, 2.0000, is 0.0000 below that of "
                                      "the 20 before (2.0000)") != std::string::npos,
              pilot.trainedOut());
}

TEST_CASE(the_state_survives_json_and_malformed_state_is_named) {
  Autopilot pilot(AutopilotSettings{});
  pilot.observe(2.5, 1.5);
  pilot.fired(40, 1);
  pilot.observe(2.7, 3.0);
  pilot.state().pinned = {3, 9};
  const AutopilotState back = autopilotStateFromJson(toJson(pilot.state()), "state.json");
  REQUIRE(back == pilot.state());
  REQUIRE(autopilotStateFromJson(toJson(AutopilotState{}), "x") == AutopilotState{});  // unknown levels
  REQUIRE(back.filling.steps == 1 && back.filling.sum == 2.7);  // the window after the removal
  // A checkpoint from before the windows (a smoothed level instead) or before any plateau is read, its
  // plateau measured afresh.
  nlohmann::json old = toJson(pilot.state());
  old.erase("plateau");
  old["improved_to"] = 2.6;
  old["since_improved"] = 1;
  const AutopilotState fromOld = autopilotStateFromJson(old, "state.json");
  REQUIRE(fromOld.filling == LossWindow{} && fromOld.last == LossWindow{} &&
          fromOld.group == pilot.state().group);
  nlohmann::json negative = toJson(pilot.state());
  negative["plateau"]["last"]["steps"] = -3;
  REQUIRE_THROWS_WITH(autopilotStateFromJson(negative, "state.json"), "state.json", "loss window");
  nlohmann::json bad = toJson(pilot.state());
  bad["group"] = 0;
  REQUIRE_THROWS_WITH(autopilotStateFromJson(bad, "checkpoints/step-0000040/state.json"),
                      "checkpoints/step-0000040/state.json", "autopilot");
}

TEST_CASE(settings_out_of_range_are_named) {
  AutopilotSettings s;
  s.minGap = 50;
  s.maxGap = 20;
  REQUIRE_THROWS_WITH(checkAutopilotSettings(s), "minimum gap");
  s = {};
  s.tolerance = 0;
  REQUIRE_THROWS_WITH(checkAutopilotSettings(s), "tolerance");
  s = {};
  s.maxGroup = 0;
  REQUIRE_THROWS_WITH(checkAutopilotSettings(s), "group");
  s = {};
  s.patience = -1;
  REQUIRE_THROWS_WITH(checkAutopilotSettings(s), "patience");
}

TEST_MAIN()
