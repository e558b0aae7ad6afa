// The residual stream's size and the LayerNorm scale (PROTOCOL §7, first analysis): the L2 norm of
// resid_pre at every layer and of the final residual, position 0 against the rest (with LayerNorm,
// position 0 is ~10× larger in mid layers; LN-free models lose this), and per LN site the distribution
// over tokens of σ = sqrt(Var(x) + ε) of the site's input, the quantity FakeLN freezes.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

struct ResidualNormRow {
  std::string point;  // "blocks.3.resid_pre", or "final" for the input of ln_f
  Spread position0, rest;
};

struct ScaleHistogram {
  std::string site;           // "LN_v.2"
  std::string kind;           // the site's normalization now ("layernorm", "fakeln", ...)
  double frozenScale = 0;     // FakeLN's s (0 when the site is not FakeLN)
  std::vector<double> edges;  // bins + 1 edges, log-spaced between the smallest and largest σ
  std::vector<int64_t> counts;
  Spread position0, rest;
};

struct ResidualNormsResult {
  AnalysisHeader header;
  std::vector<ResidualNormRow> rows;   // n_layer rows of resid_pre, then the final residual
  std::vector<ScaleHistogram> scales;  // in NormState::sites() order
};

ResidualNormsResult residualNorms(const ModelSnapshot& snapshot, const TokenSequences& data,
                                  int histogramBins = 40, const ProgressFn& progress = {});
nlohmann::json toJson(const ResidualNormsResult& result);
// The inverse of toJson (as analysisHeaderFromJson; "sigma[2].edges" must hold counts + 1 values).
ResidualNormsResult residualNormsResultFromJson(const nlohmann::json& j);

}  // namespace nf
