#include "analysis/behaviour.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "eval/evaluate.h"
#include "eval/generate.h"
#include "io/json_read.h"

namespace nf {
namespace {

// toJson(LossSummary) read back (eval/ has no reader of its own: only results computed elsewhere need one).
LossSummary lossSummaryFromJson(const JsonIn& j) {
  LossSummary s;
  s.tokens = j["tokens"].whole<int64_t>();
  s.meanLoss = j["mean_loss"].real();
  s.medianLoss = j["median_loss"].real();
  s.range95 = j["loss_range_95"].realArray<2>();
  s.range999 = j["loss_range_99_9"].realArray<2>();
  s.meanEntropy = j["mean_entropy"].real();
  s.accuracy = j["accuracy"].real();
  s.ece = j["ece"].real();
  s.bins = j["calibration_bins"].list([](const JsonIn& b) {
    return CalibrationBin{b["lower"].real(), b["upper"].real(), b["count"].whole<int64_t>(),
                          b["mean_confidence"].real(), b["accuracy"].real()};
  });
  return s;
}

}  // namespace

ModelBehaviour modelBehaviour(const ModelSnapshot& snapshot, const TokenSequences& data,
                              const std::vector<std::vector<int32_t>>& prompts,
                              const BehaviourOptions& options, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  ModelBehaviour b;
  b.header = makeHeader("calibration", snapshot, data.source, data.count, data.length);
  const int64_t total = data.count + static_cast<int64_t>(prompts.size());
  TokenValues values;
  forEachBatch(data, 8, model.device(), [&](const torch::Tensor& tokens, int64_t first) {
    values.append(model.forward(tokens).slice(1, 0, -1), tokens.slice(1, 1));
    if (progress) progress({"calibration and samples", first + tokens.size(0), total, "items", false});
  });
  b.summary = summarize(values, options.calibrationBins);
  GenerationOptions greedy;
  greedy.maxNewTokens = options.newTokens;
  greedy.temperature = 0;
  GenerationOptions sampled = greedy;
  sampled.temperature = options.temperature;
  sampled.topK = options.topK;
  for (size_t i = 0; i < prompts.size(); ++i) {
    sampled.seed = options.seed + i;
    b.continuations.push_back(
        {prompts[i], generate(model, prompts[i], greedy), generate(model, prompts[i], sampled)});
    if (progress)
      progress({"calibration and samples", data.count + static_cast<int64_t>(i) + 1, total, "items",
                i + 1 == prompts.size()});
  }
  return b;
}

nlohmann::json toJson(const ModelBehaviour& b) {
  nlohmann::json continuations = nlohmann::json::array();
  for (const Continuation& c : b.continuations)
    continuations.push_back({{"prompt", c.prompt}, {"greedy", c.greedy}, {"sampled", c.sampled}});
  return {{"header", toJson(b.header)}, {"summary", toJson(b.summary)}, {"continuations", continuations}};
}

ModelBehaviour modelBehaviourFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    ModelBehaviour b;
    b.header = analysisHeaderFromJson(j["header"]);
    b.summary = lossSummaryFromJson(j["summary"]);
    b.continuations = j["continuations"].list([](const JsonIn& c) {
      return Continuation{c["prompt"].wholes<int32_t>(), c["greedy"].wholes<int32_t>(),
                          c["sampled"].wholes<int32_t>()};
    });
    return b;
  });
}

}  // namespace nf
