// Direct logit attribution against the direct effect (PROTOCOL §7). For a component c writing to the final
// residual r (a head, an MLP layer, the embeddings, an attention output bias) and the correct next token t
// at every position, with u = W_U[t]:
//   DLA(c) = ((c − μ(c)) / s_f(r)) ⊙ γ_f · u     s_f cached from the real forward pass
//   DE(c)  = LN_f(r)·u − LN_f(r − c)·u           the final norm recomputed without c
// (for any norm kind: DLA is the site's output for c divided by the cached divisor, without β). On an
// LN-free model the two are equal; with LayerNorm they differ by the normalized mean absolute error
//   NMAE_c = mean_i |DLA − DE| / mean_i |DE| · 100 %, over all (sequence, position) pairs i.
// The components decompose r exactly, so Σ DLA + β_f·u is the logit of t on every model.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

struct ComponentAttribution {
  std::string name;  // "L3H7", "MLP 3", "embed", "attn bias 3"
  int layer = -1, head = -1;
  double meanAbsDla = 0, meanAbsDe = 0, meanAbsError = 0;
  double nmae = 0;  // percent
};

// One head's per-position values on one sequence (position i predicts tokens[i + 1]).
struct HeadTrace {
  int layer = 0, head = 0;
  int64_t sequence = 0;
  std::vector<int32_t> tokens;  // the whole sequence
  std::vector<double> dla, de;  // length − 1 values
};

struct AttributionOptions {
  int traceLayer = 0, traceHead = 0;  // the head whose per-position values are returned
  int64_t traceSequence = 0;
  int bootstrapSamples = 1000;  // resamples of sequences for the interval of the overall NMAE
  uint64_t seed = 0;
  int64_t batchSize = 4;
};

// Fewer sequences give no interval (NaN: null in the JSON): a percentile bootstrap over so few resampling
// units spans about the range of their own NMAEs, not a 95 % interval (with 2 or 3, exactly that range).
inline constexpr int64_t kMinIntervalSequences = 10;

struct AttributionResult {
  AnalysisHeader header;
  int layers = 0, heads = 0;
  std::vector<ComponentAttribution> headAttributions;  // [layer · heads + head]
  std::vector<ComponentAttribution> others;            // embed, then per layer attn bias and MLP
  double overallNmae = 0;                              // mean over heads, percent
  double overallLow = 0, overallHigh = 0;              // 95 % bootstrap interval over sequences, or NaN
  // max |Σ_c DLA(c) + β_f·u − logit_t| over all positions: the decomposition's check (≈ 0 always).
  double decompositionError = 0;
  HeadTrace trace;
};

AttributionResult logitAttribution(const ModelSnapshot& snapshot, const TokenSequences& data,
                                   const AttributionOptions& options = {}, const ProgressFn& progress = {});
nlohmann::json toJson(const AttributionResult& result);
// The inverse of toJson (as analysisHeaderFromJson; the trace's "token_texts" that runAnalysis adds is
// ignored). "head_attributions" must hold layers × heads entries, the trace as many "de" as "dla" values.
AttributionResult attributionResultFromJson(const nlohmann::json& j);

}  // namespace nf
