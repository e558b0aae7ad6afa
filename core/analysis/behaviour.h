// Calibration and samples (PROTOCOL §6): per-token loss statistics, entropy, expected calibration error
// with its reliability-diagram bins, and greedy and sampled continuations of fixed prompts — computed the
// same way for several models so they can be shown side by side (e.g. the original and the LN-free).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "analysis/analysis_header.h"
#include "eval/loss_summary.h"
#include "util/progress.h"

namespace nf {

struct BehaviourOptions {
  int64_t newTokens = 30;
  double temperature = 1.0;  // for the sampled continuation
  int64_t topK = 0;
  uint64_t seed = 0;
  int calibrationBins = 10;
};

struct Continuation {
  std::vector<int32_t> prompt, greedy, sampled;  // greedy and sampled hold only the new tokens
};

struct ModelBehaviour {
  AnalysisHeader header;
  LossSummary summary;
  std::vector<Continuation> continuations;
};

ModelBehaviour modelBehaviour(const ModelSnapshot& snapshot, const TokenSequences& data,
                              const std::vector<std::vector<int32_t>>& prompts,
                              const BehaviourOptions& options = {}, const ProgressFn& progress = {});
nlohmann::json toJson(const ModelBehaviour& behaviour);
// The inverse of toJson (as analysisHeaderFromJson): one entry of a calibration result's "models", whose
// "*_text" keys that runAnalysis adds are ignored.
ModelBehaviour modelBehaviourFromJson(const nlohmann::json& j);

}  // namespace nf
