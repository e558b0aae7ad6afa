#include "analysis/attention_sinks.h"

#include <torch/torch.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "io/json_read.h"
#include "model/causal_lm.h"

namespace nf {

AttentionSinksResult attentionSinks(const ModelSnapshot& snapshot, const TokenSequences& data,
                                    double threshold, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  const int L = model.config().nLayer, H = model.config().nHead;
  torch::Tensor sinks = torch::zeros({L, H}, torch::kFloat64),
                attention = torch::zeros({L, H}, torch::kFloat64);
  double querySinks = 0;
  forEachBatch(
      data, 8, model.device(),
      [&](const torch::Tensor& tokens, int64_t) {
        HookSet hooks;
        for (int l = 0; l < L; ++l) hooks.cache(HookPoint::pattern(l));
        model.forward(tokens, &hooks);
        for (int l = 0; l < L; ++l) {
          const torch::Tensor& pattern = hooks.at(HookPoint::pattern(l));  // [B, H, query, key]
          const torch::Tensor zero = positionZeroAttention(pattern).to(torch::kCPU, torch::kFloat64);
          querySinks += (pattern.select(-1, 0).slice(-1, 1) >= threshold).sum().item<double>();
          sinks[l] += (zero >= threshold).to(torch::kFloat64).sum(0);  // [H]
          attention[l] += zero.sum(0);
        }
      },
      progress, "attention sinks");
  AttentionSinksResult r;
  r.header = makeHeader("attention_sinks", snapshot, data.source, data.count, data.length);
  r.threshold = threshold;
  r.layers = L;
  r.heads = H;
  sinks /= static_cast<double>(data.count);
  attention /= static_cast<double>(data.count);
  r.sinkShare = toDoubles(sinks.view(-1));
  r.meanPositionZero = toDoubles(attention.view(-1));
  r.sinkRate = sinks.mean().item<double>();
  r.querySinkRate = data.length > 1
                        ? querySinks / (static_cast<double>(L) * H * data.count * (data.length - 1))
                        : std::numeric_limits<double>::quiet_NaN();
  return r;
}

std::vector<double> attentionPattern(const ModelSnapshot& snapshot, const std::vector<int32_t>& tokens,
                                     int layer, int head) {
  CausalLMImpl& model = snapshot.model();
  if (layer < 0 || layer >= model.config().nLayer || head < 0 || head >= model.config().nHead)
    throw std::invalid_argument("no head L" + std::to_string(layer) + "H" + std::to_string(head) + " in a " +
                                std::to_string(model.config().nLayer) + "-layer, " +
                                std::to_string(model.config().nHead) + "-head model");
  TokenSequences one;
  one.count = 1;
  one.length = static_cast<int64_t>(tokens.size());
  one.tokens = tokens;
  torch::NoGradGuard noGrad;
  HookSet hooks;
  hooks.cache(HookPoint::pattern(layer));
  model.forward(sequenceBatch(one, 0, 1, model.device()), &hooks);
  return toDoubles(hooks.at(HookPoint::pattern(layer))[0][head].flatten());
}

nlohmann::json toJson(const AttentionSinksResult& r) {
  return {{"header", toJson(r.header)}, {"threshold", r.threshold},
          {"layers", r.layers},         {"heads", r.heads},
          {"sink_share", r.sinkShare},  {"mean_position0_attention", r.meanPositionZero},
          {"sink_rate", r.sinkRate},    {"query_sink_rate", r.querySinkRate}};
}

AttentionSinksResult attentionSinksResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    AttentionSinksResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.threshold = j["threshold"].real();
    r.layers = j["layers"].whole<int>();
    r.heads = j["heads"].whole<int>();
    r.sinkShare = j["sink_share"].reals();
    r.meanPositionZero = j["mean_position0_attention"].reals();
    r.sinkRate = j["sink_rate"].real();
    // Results written before the per-query rate existed read it as unknown.
    r.querySinkRate = j["query_sink_rate"].present() ? j["query_sink_rate"].real()
                                                     : std::numeric_limits<double>::quiet_NaN();
    for (const char* key : {"sink_share", "mean_position0_attention"})
      j[key].requireSize(int64_t{r.layers} * r.heads, "layers × heads");
    return r;
  });
}

}  // namespace nf
