// Catching a run that diverges while it still can be saved: a loss far above what training had kept it at
// is caught before that step's update, so the weights get no worse, and the run stops or rolls back to its
// last sane checkpoint with a lower learning rate (train/settings.h, DivergenceSettings). Plain C++.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace nf {

// Watches the losses of one run (after a rollback, a fresh guard). Diverged: a step's loss that is not
// finite, or above `factor` × the median of the previous `window` steps' losses; an evaluation's loss above
// `factor` × the lowest that evaluation file had under this guard. Each check returns why it diverged, or
// nothing (and then remembers the loss).
class DivergenceGuard {
 public:
  explicit DivergenceGuard(double factor, std::size_t window = 50) : m_factor(factor), m_window(window) {}

  std::optional<std::string> checkStep(double loss);
  std::optional<std::string> checkEvaluation(const std::string& file, double loss);

  // What it remembers, for a checkpoint: a resumed run is watched as it would have been without the stop.
  // restore throws std::exception for a malformed memory.
  nlohmann::json toJson() const;
  void restore(const nlohmann::json& memory);

 private:
  double m_factor;  // 0: only non-finite losses diverge
  std::size_t m_window;
  std::deque<double> m_recent;             // the last `window` step losses
  std::map<std::string, double> m_lowest;  // per evaluation file
};

// Which checkpoint a rollback may go back to: one is sane once a step trained from its weights kept a sane
// loss. The newest checkpoint is unconfirmed until the first step after it passes the guard; a rollback, or
// the checkpoints rewound after a divergence, leave none unconfirmed.
class SaneCheckpoints {
 public:
  void restore(int64_t sane) { m_sane = sane; }         // a resumed run's, from its checkpoint
  void written(int64_t step) { m_unconfirmed = step; }  // a checkpoint of `step` steps (or resumed from)
  // Step `step` (0-based: it starts from the weights after `step` steps) passed the guard.
  void stepPassed(int64_t step) {
    if (m_unconfirmed == step) m_sane = step;
  }
  void forgetUnconfirmed() { m_unconfirmed = -1; }
  int64_t sane() const { return m_sane; }  // the newest sane checkpoint's steps; -1: none yet

 private:
  int64_t m_sane = -1, m_unconfirmed = -1;
};

}  // namespace nf
