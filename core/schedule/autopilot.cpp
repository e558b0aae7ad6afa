#include "schedule/autopilot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nf {

using json = nlohmann::json;

namespace {

bool sameKind(const ScheduleEvent& a, const ScheduleEvent& b) {
  return a.action == b.action && a.site == b.site;
}

// A smoothed value: the first one is taken as it is.
double smooth(double average, double value, double weight) {
  return std::isnan(average) ? value : weight * average + (1 - weight) * value;
}

std::string format(const char* pattern, double a, double b, double c, int64_t steps) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b, c, static_cast<long long>(steps));
  return text;
}

json number(double v) { return std::isnan(v) ? json(nullptr) : json(v); }
double numberFrom(const json& j) { return j.is_null() ? AutopilotState::kUnknown : j.get<double>(); }

json windowJson(const LossWindow& w) { return {{"steps", w.steps}, {"sum", w.sum}, {"squares", w.squares}}; }
LossWindow windowFrom(const json& j) {
  LossWindow w{j.at("steps").get<int64_t>(), j.at("sum").get<double>(), j.at("squares").get<double>()};
  if (w.steps < 0 || !std::isfinite(w.sum) || !std::isfinite(w.squares) || w.squares < 0)
    throw std::invalid_argument("a loss window has negative steps or a sum that is not finite");
  return w;
}

// The plateau's test: the last window's mean is below the one before by less than minImprovement even with
// this many standard errors of the difference added (so that noise alone cannot end a run still improving).
constexpr double kPlateauStandardErrors = 2;

}  // namespace

double LossWindow::mean() const {
  return steps > 0 ? sum / static_cast<double>(steps) : AutopilotState::kUnknown;
}

double LossWindow::variance() const {
  if (steps < 2) return 0;
  const double n = static_cast<double>(steps);
  return std::max(0.0, (squares - sum * sum / n) / (n - 1));
}

bool AutopilotState::operator==(const AutopilotState& o) const {
  auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  return same(loss, o.loss) && same(gradNorm, o.gradNorm) && same(lossBefore, o.lossBefore) &&
         same(gradNormBefore, o.gradNormBefore) && lastEventStep == o.lastEventStep && group == o.group &&
         retries == o.retries && filling == o.filling && last == o.last && beforeLast == o.beforeLast &&
         pinned == o.pinned;
}

json toJson(const AutopilotState& s) {
  return {{"loss", number(s.loss)},
          {"grad_norm", number(s.gradNorm)},
          {"loss_before", number(s.lossBefore)},
          {"grad_norm_before", number(s.gradNormBefore)},
          {"last_event_step", s.lastEventStep},
          {"group", s.group},
          {"retries", s.retries},
          {"plateau",
           {{"filling", windowJson(s.filling)},
            {"last", windowJson(s.last)},
            {"before_last", windowJson(s.beforeLast)}}},
          {"pinned", s.pinned}};
}

AutopilotState autopilotStateFromJson(const json& j, const std::string& source) {
  try {
    AutopilotState s;
    s.loss = numberFrom(j.at("loss"));
    s.gradNorm = numberFrom(j.at("grad_norm"));
    s.lossBefore = numberFrom(j.at("loss_before"));
    s.gradNormBefore = numberFrom(j.at("grad_norm_before"));
    s.lastEventStep = j.at("last_event_step").get<int64_t>();
    s.group = j.at("group").get<int>();
    s.retries = j.at("retries").get<int>();
    s.pinned = j.at("pinned").get<std::vector<int64_t>>();
    // Checkpoints written before the windows (a smoothed level, "improved_to") or before any plateau lack
    // them: the plateau is measured afresh.
    if (j.contains("plateau")) {
      const json& p = j.at("plateau");
      s.filling = windowFrom(p.at("filling"));
      s.last = windowFrom(p.at("last"));
      s.beforeLast = windowFrom(p.at("before_last"));
    }
    if (s.group < 1 || s.retries < 0) throw std::invalid_argument("group < 1 or retries < 0");
    return s;
  } catch (const std::exception& e) {
    throw std::invalid_argument(source + ": the autopilot's state is malformed: " + e.what());
  }
}

void checkAutopilotSettings(const AutopilotSettings& s) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("autopilot: " + what);
  };
  require(s.tolerance > 0 && s.tolerance <= 10, "the tolerance must be in (0, 10] nats");
  require(s.gradFactor >= 1 && s.gradFactor <= 100, "the gradient-norm factor must be in [1, 100]");
  require(s.minGap >= 1 && s.minGap <= s.maxGap,
          "the minimum gap must be at least 1 and at most the maximum gap");
  require(s.maxGap <= 1'000'000, "the maximum gap must be at most 1000000 steps");
  require(s.maxGroup >= 1 && s.maxGroup <= 64, "the largest group must be in [1, 64]");
  require(s.smoothing >= 0 && s.smoothing < 1, "the smoothing must be in [0, 1)");
  require(s.patience >= 0 && s.patience <= 1'000'000, "the patience must be in [0, 1000000] steps");
  require(s.minImprovement >= 0 && s.minImprovement <= 10, "the least improvement must be in [0, 10] nats");
}

Autopilot::Autopilot(AutopilotSettings settings, AutopilotState state)
    : m_settings(settings), m_state(std::move(state)) {
  checkAutopilotSettings(m_settings);
}

void Autopilot::observe(double loss, double gradNorm) {
  if (!std::isfinite(loss) || !std::isfinite(gradNorm)) return;  // the divergence guard's business
  m_state.loss = smooth(m_state.loss, loss, m_settings.smoothing);
  m_state.gradNorm = smooth(m_state.gradNorm, gradNorm, m_settings.smoothing);
  if (m_settings.patience == 0) return;
  AutopilotState& s = m_state;
  ++s.filling.steps;
  s.filling.sum += loss;
  s.filling.squares += loss * loss;
  if (s.filling.steps < m_settings.patience) return;
  s.beforeLast = s.last;
  s.last = s.filling;
  s.filling = {};
}

std::string Autopilot::trainedOut() const {
  const AutopilotState& s = m_state;
  if (m_settings.patience == 0 || s.lastEventStep < 0 || s.beforeLast.steps == 0) return {};
  const double improvement = s.beforeLast.mean() - s.last.mean();
  const double noise = kPlateauStandardErrors * std::sqrt(s.beforeLast.variance() / s.beforeLast.steps +
                                                          s.last.variance() / s.last.steps);
  if (improvement + noise >= m_settings.minImprovement) return {};
  char text[240];
  std::snprintf(text, sizeof text,
                "the mean loss of the last %lld steps, %.4f, is %.4f below that of the %lld before (%.4f), "
                "less than %.3g even with twice its noise (%.4f)",
                static_cast<long long>(s.last.steps), s.last.mean(), improvement,
                static_cast<long long>(s.beforeLast.steps), s.beforeLast.mean(), m_settings.minImprovement,
                noise);
  return text;
}

int64_t Autopilot::minGap() const {
  return std::min(m_settings.maxGap, m_settings.minGap << std::min(m_state.retries, 16));
}

int64_t Autopilot::earliest(int64_t step) const {
  if (m_state.lastEventStep < 0) return step;
  return std::max(step, m_state.lastEventStep + minGap());
}

AutopilotDecision Autopilot::decide(int64_t step, const std::vector<ScheduleEvent>& pending,
                                    int64_t lastStep) const {
  if (pending.empty()) return {};
  const AutopilotState& s = m_state;
  if (s.lastEventStep < 0) {  // the preset's warm-up before the first removal
    if (step < pending.front().step) return {};
    return {1, "the first removal, at its planned step"};
  }
  const int64_t since = step - s.lastEventStep;
  // A person with a deadline does not spend it on one recovery: the steps left after the last removal,
  // shared equally among the pending ones (at most the maximum gap each; below the minimum gap when the
  // budget is that short, so the removals spread over it instead of waiting for its last step together).
  const auto waiting = static_cast<int64_t>(pending.size());
  const bool budgeted = lastStep != std::numeric_limits<int64_t>::max();
  const int64_t share = budgeted ? std::max<int64_t>(1, (lastStep - s.lastEventStep) / waiting) : 0;
  if (since < minGap() && !(budgeted && since >= share)) return {};
  const bool gradBack = s.gradNorm <= s.gradNormBefore * m_settings.gradFactor;
  if (recovered()) {
    int fire = 1;
    while (fire < s.group && fire < static_cast<int>(pending.size()) && sameKind(pending[fire], pending[0]))
      ++fire;
    return {fire, format("loss %.3f back within %.3g of %.3f after %lld steps", s.loss, m_settings.tolerance,
                         s.lossBefore, since)};
  }
  const std::string notBack = format("loss %.3f still %.3f above %.3f after %lld steps", s.loss,
                                     s.loss - s.lossBefore, s.lossBefore, since) +
                              (gradBack ? "" : ", gradient norm not back");
  if (since >= m_settings.maxGap) return {1, "the maximum gap: " + notBack};
  if (budgeted && since >= share)
    return {1, "the step budget: " + std::to_string(lastStep - s.lastEventStep) + " steps to step " +
                   std::to_string(lastStep) + " for " + std::to_string(waiting) + " removals; " + notBack};
  return {0, notBack};
}

void Autopilot::fired(int64_t step, int count) {
  if (count <= 0) return;
  AutopilotState& s = m_state;
  if (s.lastEventStep >= 0) {
    const int64_t took = step - s.lastEventStep;
    // Recovered at the first chance: the next may take one site more (not after a removal the budget
    // forced before the loss was back); slow (half the maximum gap or more): one site fewer.
    if (took <= minGap() && recovered())
      s.group = std::min(m_settings.maxGroup, s.group + 1);
    else if (2 * took >= m_settings.maxGap)
      s.group = std::max(1, s.group - 1);
  }
  s.lastEventStep = step;
  s.lossBefore = s.loss;
  s.gradNormBefore = s.gradNorm;
  restartPlateau();  // the plateau is measured from the last removal
}

bool Autopilot::recovered() const {
  return m_state.loss <= m_state.lossBefore + m_settings.tolerance &&
         m_state.gradNorm <= m_state.gradNormBefore * m_settings.gradFactor;
}

void Autopilot::restartPlateau() { m_state.filling = m_state.last = m_state.beforeLast = {}; }

void Autopilot::rolledBack() {
  ++m_state.retries;
  m_state.group = 1;
}

}  // namespace nf
