#include "analysis/confidence_neurons.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <string>

#include "analysis/analysis_kernels.h"
#include "eval/evaluate.h"
#include "io/json_read.h"
#include "model/causal_lm.h"

namespace nf {
ConfidenceNeuronsResult confidenceNeurons(const ModelSnapshot& snapshot, const TokenSequences& data, int topK,
                                          const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  torch::NoGradGuard noGrad;
  const int layer = model.config().nLayer - 1;
  const torch::Tensor W_out = model.mlpOutputWeight(layer).to(torch::kFloat64);  // [F, D]
  const torch::Tensor W_U = model.unembedding().to(torch::kFloat64);             // [V, D]
  const int F = static_cast<int>(W_out.size(0));
  topK = std::clamp(topK, 0, F);

  // A zero vector has no direction: a vocabulary row that is all zeros (padding never trained) is left out
  // of the variance, and a neuron whose output weights are all zeros writes nothing and scores 0. Their
  // cosines, 0/0, had made every score NaN, and NaN scores broke the ranking's sort.
  const torch::Tensor outNorm = W_out.norm(2, 1);  // [F]
  const torch::Tensor rowNorm = W_U.norm(2, 1);    // [V]
  const torch::Tensor rows = rowNorm.gt(0).nonzero().squeeze(1);
  if (rows.size(0) < 2)
    throw std::invalid_argument("the unembedding has " + std::to_string(rows.size(0)) +
                                " non-zero rows: a neuron's logit variance needs at least two");
  const torch::Tensor writes = outNorm.gt(0);
  const torch::Tensor logitVar = cosineVariances(W_U.index_select(0, rows), W_out);
  const torch::Tensor score = torch::where(writes, outNorm / logitVar, torch::zeros_like(outNorm));

  ConfidenceNeuronsResult r;
  r.header = makeHeader("confidence_neurons", snapshot, data.source, data.count, data.length);
  r.layer = layer;
  const std::vector<double> norms = toDoubles(outNorm), vars = toDoubles(logitVar), scores = toDoubles(score);
  for (int i = 0; i < F; ++i) r.neurons.push_back({i, norms[i], vars[i], scores[i]});
  r.ranking.resize(F);
  std::iota(r.ranking.begin(), r.ranking.end(), 0);
  std::stable_sort(r.ranking.begin(), r.ranking.end(), [&](int a, int b) { return scores[a] > scores[b]; });

  const auto svd = at::linalg_svd(W_U, /*full_matrices=*/false);
  r.singularValues = toDoubles(std::get<1>(svd));
  // [min(V, D), D]: its rows are unit vectors in model space.
  const torch::Tensor rightVectors = std::get<2>(svd);
  for (int k = 0; k < topK; ++k) {
    const torch::Tensor w = W_out[r.ranking[k]];
    const double norm = w.norm().item<double>();
    r.singularCosines.push_back(toDoubles(norm > 0 ? rightVectors.matmul(w).abs() / norm
                                                   : torch::zeros({rightVectors.size(0)}, w.options())));
  }

  // Mean ablation: the dataset mean of each neuron's activation, then one pass per ablation.
  const HookPoint post = HookPoint::mlpPost(layer);
  torch::Tensor sum = torch::zeros({F}, torch::kFloat64);
  int64_t tokens = 0;
  forEachBatch(data, 8, model.device(), [&](const torch::Tensor& batch, int64_t) {
    HookSet hooks;
    hooks.cache(post);
    model.forward(batch, &hooks);
    sum += hooks.at(post).to(torch::kFloat64).sum(std::vector<int64_t>{0, 1}).cpu();
    tokens += batch.numel();
  });
  const torch::Tensor mean = (sum / static_cast<double>(tokens)).to(torch::kFloat32).to(model.device());

  // Mean CE of next-token prediction and mean entropy, with the given neurons replaced by their means.
  const int64_t passes = 1 + 2 * topK;
  int64_t passesDone = 0;
  auto measure = [&](const std::vector<int64_t>& neurons) {
    TokenValues values;
    const torch::Tensor index = torch::tensor(neurons, torch::kLong).to(model.device());
    forEachBatch(data, 8, model.device(), [&](const torch::Tensor& batch, int64_t) {
      HookSet hooks;
      if (!neurons.empty())
        hooks.edit(post, [&](const torch::Tensor& value, const HookPoint&) {
          return value.index_fill(-1, index, 0) +
                 torch::zeros_like(mean).index_copy(0, index, mean.index_select(0, index));
        });
      values.append(model.forward(batch, &hooks).slice(1, 0, -1), batch.slice(1, 1));
    });
    ++passesDone;
    if (progress) progress({"confidence neurons", passesDone, passes, "passes", passesDone == passes});
    const LossSummary summary = summarize(values);
    return std::make_pair(summary.meanLoss, summary.meanEntropy);
  };
  std::tie(r.baseLoss, r.baseEntropy) = measure({});
  std::vector<int64_t> cumulative;
  for (int k = 0; k < topK; ++k) {
    const int neuron = r.ranking[k];
    cumulative.push_back(neuron);
    const auto [alone, aloneEntropy] = measure({neuron});
    const auto [together, togetherEntropy] = measure(cumulative);
    r.ablations.push_back({neuron, alone - r.baseLoss, aloneEntropy - r.baseEntropy, together - r.baseLoss,
                           togetherEntropy - r.baseEntropy});
  }
  return r;
}

nlohmann::json toJson(const ConfidenceNeuronsResult& r) {
  nlohmann::json neurons = nlohmann::json::array(), ablations = nlohmann::json::array();
  for (const NeuronScore& n : r.neurons)
    neurons.push_back(
        {{"neuron", n.neuron}, {"output_norm", n.outputNorm}, {"logit_var", n.logitVar}, {"score", n.score}});
  for (const NeuronAblation& a : r.ablations)
    ablations.push_back({{"neuron", a.neuron},
                         {"delta_loss", a.deltaLoss},
                         {"delta_entropy", a.deltaEntropy},
                         {"cumulative_delta_loss", a.cumulativeDeltaLoss},
                         {"cumulative_delta_entropy", a.cumulativeDeltaEntropy}});
  return {{"header", toJson(r.header)},
          {"layer", r.layer},
          {"ranking", r.ranking},
          {"neurons", neurons},
          {"singular_values", r.singularValues},
          {"top_singular_cosines", r.singularCosines},
          {"base_loss", r.baseLoss},
          {"base_entropy", r.baseEntropy},
          {"ablations", ablations}};
}

ConfidenceNeuronsResult confidenceNeuronsResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    ConfidenceNeuronsResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.layer = j["layer"].whole<int>();
    r.neurons = j["neurons"].list([](const JsonIn& n) {
      return NeuronScore{n["neuron"].whole<int>(), n["output_norm"].real(), n["logit_var"].real(),
                         n["score"].real()};
    });
    const int64_t count = static_cast<int64_t>(r.neurons.size());
    r.ranking = j["ranking"].list([count](const JsonIn& k) {
      const int neuron = k.whole<int>();
      if (neuron < 0 || neuron >= count) k.fail("an index into \"neurons\"");
      return neuron;
    });
    r.singularValues = j["singular_values"].reals();
    const JsonIn cosines = j["top_singular_cosines"];
    const int64_t directions = static_cast<int64_t>(r.singularValues.size());
    // One row per top-ranked neuron, one value per singular direction: the window indexes by both.
    r.singularCosines = cosines.list([directions](const JsonIn& row) {
      row.requireSize(directions, "the singular values");
      return row.reals();
    });
    if (r.singularCosines.size() > r.ranking.size())
      throw std::invalid_argument("analysis result: top_singular_cosines has " +
                                  std::to_string(r.singularCosines.size()) + " rows, more than the " +
                                  std::to_string(r.ranking.size()) + " ranked neurons");
    r.baseLoss = j["base_loss"].real();
    r.baseEntropy = j["base_entropy"].real();
    r.ablations = j["ablations"].list([](const JsonIn& a) {
      return NeuronAblation{a["neuron"].whole<int>(), a["delta_loss"].real(), a["delta_entropy"].real(),
                            a["cumulative_delta_loss"].real(), a["cumulative_delta_entropy"].real()};
    });
    return r;
  });
}

}  // namespace nf
