// Activation and attribution patching on an IOI prompt set (PROTOCOL §7). The metric is the mean logit
// difference logit(correct) − logit(wrong) at the last position, normalized so that the corrupted run
// scores 0 and the clean run 1: (LD_patched − LD_corr) / (LD_clean − LD_corr).
//   Activation patching: run the corrupted prompts with one activation (cell) taken from the clean run.
//     Batched: all cells of one layer are replicas of the corrupted batch in one forward pass (split only
//     to bound memory), so a grid costs O(layers) forward passes.
//   Attribution patching: (a_clean − a_corr) · ∂metric/∂a at the corrupted run, every cell of every grid
//     from one clean forward and one corrupted forward + backward. Error = attribution − activation.
// Grids: resid_pre (layer × position), head outputs (layer × head, all positions), and head outputs by
// position ((layer, head) × position).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_header.h"
#include "data/ioi.h"
#include "util/progress.h"

namespace nf {

struct PatchingGrid {
  std::string name;  // "resid_pre", "heads", "head_positions"
  int64_t rows = 0, columns = 0;
  std::vector<std::string> rowLabels, columnLabels;
  std::vector<double> activation, attribution;  // rows × columns, row-major, normalized
  std::vector<double> error() const;            // attribution − activation
};

struct PatchingResult {
  AnalysisHeader header;
  std::string frame;
  int64_t prompts = 0, length = 0;
  int64_t firstNamePosition = 0, secondNamePosition = 0, subjectPosition = 0, endPosition = 0;
  std::vector<int32_t> exampleClean, exampleCorrupted;  // the first prompt
  double cleanLogitDiff = 0, corruptedLogitDiff = 0;
  PatchingGrid residPre, heads, headPositions;
};

struct PatchingOptions {
  bool headPositions = true;         // the (layer, head) × position grid, the most expensive one
  int64_t maxBatchTokens = 1 << 14;  // tokens per patched forward pass (GPT-2 small: ~0.6 GB of head outputs)
};

PatchingResult ioiPatching(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                           const PatchingOptions& options = {}, const ProgressFn& progress = {});

// The normalized metric with resid_pre at `layer` taken from the clean run at `positions` (every prompt).
double patchResidPre(const ModelSnapshot& snapshot, const IoiPromptSet& set, int layer,
                     const std::vector<int64_t>& positions);

nlohmann::json toJson(const PatchingResult& result);
// The inverse of toJson (as analysisHeaderFromJson; runAnalysis's "example_*_texts" and each grid's derived
// "error" are ignored). Grids are found by name: "resid_pre" and "heads" must be there, "head_positions" may
// be; a grid's labels and values must fit its rows × columns. Not written: a head_positions grid without
// rows (not computed), left default as ioiPatching leaves it.
PatchingResult patchingResultFromJson(const nlohmann::json& j);
// A grid as CSV: a header row of column labels, then one row per grid row, first cell its label.
std::string gridCsv(const PatchingGrid& grid, const std::vector<double>& values);

}  // namespace nf
