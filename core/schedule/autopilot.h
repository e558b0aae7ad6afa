// The autopilot (issue 37): a removal that finds its own schedule. The order of the removals is the
// schedule's (a preset's or a file's); when the next one fires is decided while training, from what the
// trainer measures anyway, as a person watching the loss would: once the training loss (smoothed) is back
// within a tolerance of its level just before the last event, the gradient norm back near its level then,
// and a minimum gap has passed — or when a maximum gap has passed whatever the loss. A quick recovery lets
// the next removal take several sites of one kind at once (the group grows); a slow one shrinks the group;
// a divergence after a removal (the divergence guard's rollback) sets the group back to one site and
// doubles the minimum gap. Once the last removal has fired, the run trains on until the loss stops
// improving (patience), or to the end of its step budget. The paper's gaps are "hyperparameters that have to
// be chosen carefully" (§3); these settings are few, in units a researcher reads (nats, steps), and each
// run's decisions are records with their reasons (docs/TRAINING.md, "The autopilot"). Plain C++: the trainer
// calls it between steps.
#pragma once
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace nf {

struct AutopilotSettings {
  bool enabled = false;
  double tolerance = 0.02;  // nats: how far above its level before the last event the smoothed loss may be
  double gradFactor = 2.0;  // the smoothed gradient norm at most this many times its level then
  int64_t minGap = 10;      // steps between two removals, at least
  int64_t maxGap = 80;      // and at most: then the next fires whatever the loss
  int maxGroup = 4;         // removals of one kind of site that fire together, at most
  double smoothing = 0.9;   // of the loss and gradient-norm averages (weight of the past, per step)
  // After the last removal: the run ends once the mean loss of the last `patience` steps is less than
  // `minImprovement` nats below that of the `patience` steps before them, by more than twice the standard
  // error of that difference (0: it trains to the end of its budget). Means of windows, not the smoothed
  // loss: that one's noise (0.03 nats where the loss varies 0.12 from step to step) set levels a run still
  // improving could not beat, and it ended 0.03 nats short (docs/RESULTS.md, round 5). A loss that noisy
  // shows no plateau within a few hundred steps: such a run trains to its budget.
  int64_t patience = 100;
  double minImprovement = 0.005;
};

// The training loss over one window of steps: its count, sum and sum of squares.
struct LossWindow {
  int64_t steps = 0;
  double sum = 0, squares = 0;
  double mean() const;
  double variance() const;  // of one step's loss (the sample variance)
  bool operator==(const LossWindow& o) const {
    return steps == o.steps && sum == o.sum && squares == o.squares;
  }
};

// What the autopilot has learned so far; in every checkpoint, so a resume continues it exactly.
struct AutopilotState {
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  double loss = kUnknown, gradNorm = kUnknown;              // smoothed, up to the last step trained
  double lossBefore = kUnknown, gradNormBefore = kUnknown;  // just before the last removal
  int64_t lastEventStep = -1;                               // -1: none fired yet
  int group = 1;                                            // removals the next decision may fire at once
  int retries = 0;                                          // divergences after a removal so far
  // Since the last removal (or a resume that counts the plateau afresh): the window being filled, and the
  // last two filled (none yet: 0 steps).
  LossWindow filling, last, beforeLast;
  std::vector<int64_t> pinned;  // events a person moved or added: they fire where the person put them
  bool operator==(const AutopilotState& o) const;
};
nlohmann::json toJson(const AutopilotState& state);
AutopilotState autopilotStateFromJson(const nlohmann::json& j, const std::string& source);

struct AutopilotDecision {
  int fire = 0;        // the first `fire` pending events fire now (0: wait)
  std::string reason;  // why, for the records: "loss 2.311 back within 0.05 of 2.302 after 14 steps", or
                       // why it waits: "loss 2.402 still 0.100 above 2.302 after 6 steps"
};

class Autopilot {
 public:
  explicit Autopilot(AutopilotSettings settings, AutopilotState state = {});
  // After each optimizer step: its cross-entropy and gradient norm.
  void observe(double loss, double gradNorm);
  // Before step `step`: of the pending events (in the order they fire, none pinned), how many fire now.
  // The first removal of a run fires at its planned step (the preset's warm-up). `lastStep`, the last a
  // removal may fire at: a budget too short for each pending removal to wait the maximum gap shares the
  // steps left equally among them.
  AutopilotDecision decide(int64_t step, const std::vector<ScheduleEvent>& pending,
                           int64_t lastStep = std::numeric_limits<int64_t>::max()) const;
  // The events decided fired at `step`: the levels now become the ones to recover to; the group adapts
  // to how long the recovery took.
  void fired(int64_t step, int count);
  void rolledBack();  // a divergence after a removal: one site at a time, twice the minimum gap
  // With no removal left to fire: why the run may end now (the loss has stopped improving), or "".
  std::string trainedOut() const;
  // The plateau is measured afresh from the next step (after a removal; when a resume trains on).
  void restartPlateau();
  // The step the next removal is expected at, at the earliest (a tentative step for the schedule).
  int64_t earliest(int64_t step) const;
  int64_t minGap() const;  // the minimum gap now (longer after divergences)
  // The smoothed loss back within the tolerance of its level before the last removal, and the gradient norm
  // within its factor.
  bool recovered() const;
  const AutopilotSettings& settings() const { return m_settings; }
  AutopilotState& state() { return m_state; }
  const AutopilotState& state() const { return m_state; }

 private:
  AutopilotSettings m_settings;
  AutopilotState m_state;
};

// Range checks of the settings; std::invalid_argument names the setting and its range.
void checkAutopilotSettings(const AutopilotSettings& settings);

}  // namespace nf
