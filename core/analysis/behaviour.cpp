#include "analysis/behaviour.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "eval/evaluate.h"
#include "eval/generate.h"

namespace nf {

ModelBehaviour modelBehaviour(const ModelSnapshot& snapshot, const TokenSequences& data,
                              const std::vector<std::vector<int32_t>>& prompts,
                              const BehaviourOptions& options, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  ModelBehaviour b;
  b.header = makeHeader("behaviour", snapshot, data.source, data.count, data.length);
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

}  // namespace nf
