// What an evaluation reports about per-token losses (PROTOCOL §6), as plain data for every front end.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace nf {

// Confidence bin [lower, upper) (the last bin includes 1).
struct CalibrationBin {
  double lower = 0, upper = 0;
  int64_t count = 0;
  double meanConfidence = 0, accuracy = 0;
};

struct LossSummary {
  int64_t tokens = 0;
  double meanLoss = 0, medianLoss = 0;
  std::array<double, 2> range95{}, range999{};  // 2.5–97.5 and 0.05–99.95 percentiles of per-token loss
  double meanEntropy = 0, accuracy = 0;
  double ece = 0;  // Σ_bins (count / tokens) · |accuracy − mean confidence|
  std::vector<CalibrationBin> bins;
};

// The q-quantile (0 ≤ q ≤ 1) with linear interpolation between order statistics (numpy's default).
double quantile(std::vector<float> values, double q);
nlohmann::json toJson(const LossSummary& summary);

}  // namespace nf
