// Confidence (entropy) neurons of the last MLP layer (PROTOCOL §7). For neuron i with output weight w_i
// (row i of the last c_proj, d_model values) and the unembedding W_U [vocab, d_model]:
//   LogitVar(w_i) = Var_t( (W_U w_i)_t / (‖W_U[t]‖ · ‖w_i‖) )   (unbiased variance over the vocabulary)
//   CN(i) = ‖w_i‖ / LogitVar(w_i)
// A high score: a large output that hardly changes which token wins — it moves the residual's norm, which a
// LayerNorm turns into confidence. Also the SVD of W_U with each top neuron's |cosine| to the right
// singular vectors (they live in the near-null space), and mean ablation of the top-k neurons, one at a
// time and cumulatively, with the change of CE and entropy.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

struct NeuronScore {
  int neuron = 0;
  double outputNorm = 0, logitVar = 0, score = 0;
};

struct NeuronAblation {
  int neuron = 0;
  double deltaLoss = 0, deltaEntropy = 0;                      // this neuron alone
  double cumulativeDeltaLoss = 0, cumulativeDeltaEntropy = 0;  // it and every better-ranked one
};

struct ConfidenceNeuronsResult {
  AnalysisHeader header;
  int layer = 0;
  std::vector<NeuronScore> neurons;    // every neuron of the layer, by index
  std::vector<int> ranking;            // neuron indices, highest CN score first
  std::vector<double> singularValues;  // of W_U, descending
  // For each of the top-k neurons: |cos(w_i, v_j)| for every right singular vector v_j (same order).
  std::vector<std::vector<double>> singularCosines;
  double baseLoss = 0, baseEntropy = 0;
  std::vector<NeuronAblation> ablations;  // the top-k neurons in rank order
};

ConfidenceNeuronsResult confidenceNeurons(const ModelSnapshot& snapshot, const TokenSequences& data,
                                          int topK = 10, const ProgressFn& progress = {});
nlohmann::json toJson(const ConfidenceNeuronsResult& result);
// The inverse of toJson (as analysisHeaderFromJson; every "ranking" entry must index "neurons").
ConfidenceNeuronsResult confidenceNeuronsResultFromJson(const nlohmann::json& j);

}  // namespace nf
