// Catching a run that diverges while it still can be saved: a loss far above what training had kept it at
// is caught before that step's update, so the weights get no worse, and the run stops or rolls back to its
// last sane checkpoint with a lower learning rate (train/settings.h, DivergenceSettings). Plain C++.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
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

 private:
  double m_factor;  // 0: only non-finite losses diverge
  std::size_t m_window;
  std::deque<double> m_recent;             // the last `window` step losses
  std::map<std::string, double> m_lowest;  // per evaluation file
};

}  // namespace nf
