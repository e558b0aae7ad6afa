#include "train/divergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

namespace nf {
namespace {

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

}  // namespace

std::optional<std::string> DivergenceGuard::checkStep(double loss) {
  if (!std::isfinite(loss)) return "the loss is " + number(loss);
  if (m_factor > 0 && !m_recent.empty()) {
    std::vector<double> sorted(m_recent.begin(), m_recent.end());
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double median = sorted[sorted.size() / 2];
    if (loss > m_factor * median)
      return "the loss " + number(loss) + " is above " + number(m_factor) + " × " + number(median) +
             ", the median of the last " + std::to_string(m_recent.size()) + " steps";
  }
  m_recent.push_back(loss);
  if (m_recent.size() > m_window) m_recent.pop_front();
  return std::nullopt;
}

std::optional<std::string> DivergenceGuard::checkEvaluation(const std::string& file, double loss) {
  if (!std::isfinite(loss)) return "the evaluation loss on " + file + " is " + number(loss);
  const auto lowest = m_lowest.find(file);
  if (m_factor > 0 && lowest != m_lowest.end() && loss > m_factor * lowest->second)
    return "the evaluation loss " + number(loss) + " on " + file + " is above " + number(m_factor) + " × " +
           number(lowest->second) + ", its lowest in this run";
  if (lowest == m_lowest.end() || loss < lowest->second) m_lowest[file] = loss;
  return std::nullopt;
}

nlohmann::json DivergenceGuard::toJson() const {
  return {{"recent_losses", m_recent}, {"lowest_evaluations", m_lowest}};
}

void DivergenceGuard::restore(const nlohmann::json& memory) {
  auto recent = memory.at("recent_losses").get<std::deque<double>>();
  while (recent.size() > m_window) recent.pop_front();
  m_lowest = memory.at("lowest_evaluations").get<std::map<std::string, double>>();
  m_recent = std::move(recent);
}

}  // namespace nf
