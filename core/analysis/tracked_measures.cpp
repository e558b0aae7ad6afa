// The tracked analyses' measurements (tracked_analyses.h); their names and checks are plain, in
// tracked_analyses.cpp.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <stdexcept>

#include "analysis/analysis_kernels.h"
#include "analysis/attention_sinks.h"
#include "analysis/confidence_neurons.h"
#include "analysis/ioi_runs.h"
#include "analysis/logit_attribution.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "analysis/tracked_analyses.h"
#include "model/causal_lm.h"

namespace nf {
namespace {

// Per-layer means of a [layer · heads + head] list.
std::vector<double> layerMeans(const std::vector<double>& perHead, int layers, int heads) {
  std::vector<double> means(static_cast<std::size_t>(layers), 0.0);
  for (int l = 0; l < layers; ++l) {
    for (int h = 0; h < heads; ++h) means[l] += perHead[static_cast<std::size_t>(l * heads + h)];
    means[l] /= heads;
  }
  return means;
}

TrackedValue nmae(const ModelSnapshot& snapshot, const TrackingData& data) {
  AttributionOptions options;
  options.bootstrapSamples = 0;  // the interval is for a figure; a curve needs the value
  const AttributionResult a = logitAttribution(snapshot, data.sequences, options);
  std::vector<double> perHead;
  for (const ComponentAttribution& c : a.headAttributions) perHead.push_back(c.nmae);
  return {a.overallNmae, layerMeans(perHead, a.layers, a.heads)};
}

TrackedValue sinks(const ModelSnapshot& snapshot, const TrackingData& data) {
  const AttentionSinksResult s = attentionSinks(snapshot, data.sequences);
  return {s.sinkRate, layerMeans(s.sinkShare, s.layers, s.heads)};
}

// Mean residual norm at position 0 over the mean at the other positions, per resid_pre and the final
// residual; the number is the largest (with LayerNorm, ~10× in the middle layers; PROTOCOL §7).
TrackedValue positionZeroRatio(const ModelSnapshot& snapshot, const TrackingData& data) {
  const ResidualNormsResult r = residualNorms(snapshot, data.sequences, 1);
  TrackedValue v;
  for (const ResidualNormRow& row : r.rows) v.perLayer.push_back(row.position0.mean / row.rest.mean);
  v.value = *std::max_element(v.perLayer.begin(), v.perLayer.end());
  return v;
}

// The mean logit difference logit(correct) − logit(wrong) on the clean IOI prompts.
TrackedValue ioiLogitDifference(const ModelSnapshot& snapshot, const TrackingData& data) {
  torch::NoGradGuard noGrad;
  const IoiRuns runs(snapshot.model(), *data.prompts);
  return {runs.logitDifference(runs.cleanTokens).item<double>(), {}};
}

// How far attribution patching is from activation patching over the (layer, head) grid: mean |error| /
// mean |activation| · 100 — as NMAE for DLA, the linear approximation's error in percent.
TrackedValue patchingError(const ModelSnapshot& snapshot, const TrackingData& data) {
  PatchingOptions options;
  options.headPositions = false;
  const PatchingResult p = ioiPatching(snapshot, *data.prompts, options);
  const PatchingGrid& g = p.heads;
  const std::vector<double> error = g.error();
  // No effect to patch at all: the error relative to it is undefined, not a perfect 0 % (written as null).
  constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();
  double errorSum = 0, activationSum = 0;
  std::vector<double> perLayer;
  for (int64_t l = 0; l < g.rows; ++l) {
    double rowError = 0, rowActivation = 0;
    for (int64_t h = 0; h < g.columns; ++h) {
      rowError += std::abs(error[l * g.columns + h]);
      rowActivation += std::abs(g.activation[l * g.columns + h]);
    }
    perLayer.push_back(rowActivation > 0 ? 100 * rowError / rowActivation : kUndefined);
    errorSum += rowError;
    activationSum += rowActivation;
  }
  return {activationSum > 0 ? 100 * errorSum / activationSum : kUndefined, perLayer};
}

// The change in mean output entropy when the 10 best confidence neurons of the last MLP are mean-ablated
// together: what they do to the model's confidence (LN-free models lose it, Appendix G).
TrackedValue confidenceEffect(const ModelSnapshot& snapshot, const TrackingData& data) {
  const ConfidenceNeuronsResult c = confidenceNeurons(snapshot, data.sequences, 10);
  return {c.ablations.empty() ? 0 : c.ablations.back().cumulativeDeltaEntropy, {}};
}

// Mean next-token cross-entropy over the tracking sequences.
TrackedValue validationLoss(const ModelSnapshot& snapshot, const TrackingData& data) {
  CausalLMImpl& model = snapshot.model();
  double sum = 0;
  int64_t count = 0;
  forEachBatch(data.sequences, 8, model.device(), [&](const torch::Tensor& tokens, int64_t) {
    const torch::Tensor logits = model.forward(tokens).to(torch::kFloat32);
    const int64_t T = tokens.size(1);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(
        logits.narrow(1, 0, T - 1).reshape({-1, logits.size(-1)}), tokens.narrow(1, 1, T - 1).reshape(-1),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    sum += loss.item<double>();
    count += tokens.size(0) * (T - 1);
  });
  return {sum / static_cast<double>(count), {}};
}

using Measure = std::function<TrackedValue(const ModelSnapshot&, const TrackingData&)>;

const std::map<std::string, Measure>& measures() {
  static const std::map<std::string, Measure> all{{"nmae", nmae},
                                                  {"sinks", sinks},
                                                  {"pos0-ratio", positionZeroRatio},
                                                  {"ioi", ioiLogitDifference},
                                                  {"patching-error", patchingError},
                                                  {"confidence", confidenceEffect},
                                                  {"val-ce", validationLoss}};
  return all;
}

}  // namespace

std::map<std::string, TrackedValue> measureTracked(const std::vector<std::string>& names,
                                                   const ModelSnapshot& snapshot, const TrackingData& data) {
  checkTrackedAnalyses(names);
  if (!data.prompts && needsIoiPrompts(names))
    throw std::invalid_argument(
        "the tracked IOI analyses need IOI prompts, made with the model's tokenizer: it has none");
  std::map<std::string, TrackedValue> values;
  for (const std::string& name : names) {
    const auto started = std::chrono::steady_clock::now();
    TrackedValue v = measures().at(name)(snapshot, data);
    v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    values[name] = v;
  }
  return values;
}

}  // namespace nf
