// The logit lens: each block's resid_pre and the final residual r read through the final norm and the
// unembedding, logits = LN_f(r) · W_Uᵀ, in three modes that differ only in what LN_f divides by
// (docs/ANALYSES.md):
//   recomputed  LN_f's own divisor computed on r (a real norm's σ of this residual; a FakeLN's s)
//   frozen      the divisor LN_f applied to the final residual of the same token, reused for every layer
//   linear      one divisor for every token: the mean over the analysed tokens (position 0 and end-of-text
//               excluded) of the final residual's divisor, what a FakeLN would freeze; a fake or identity
//               LN_f keeps its own divisor
// On an LN-free model the three are the same computation. The figures per layer are the next-token
// cross-entropy, KL(model ‖ lens), the target's probability and rank, over every (sequence, position).
#pragma once
#include <array>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

enum class LensMode { Recomputed, Frozen, Linear };
constexpr int kLensModes = 3;
const char* lensModeName(LensMode mode);  // "recomputed", "frozen", "linear"

// One (layer, mode)'s figures over every position that has a next token.
struct LensFigures {
  double ce = 0;           // mean −log p_lens(target), nats
  double kl = 0;           // mean KL(p_model ‖ p_lens), nats
  double probability = 0;  // mean p_lens(target)
  double medianRank = 0;   // of the target among the vocabulary, 1 = the lens's top token
  double top1 = 0;         // share of positions whose target is the lens's top token
};

struct LensPoint {
  std::string point;  // "blocks.3.resid_pre", or "final" for the input of LN_f
  std::array<LensFigures, kLensModes> modes;
};

// One mode's top tokens at one point, for each traced position.
struct LensGrid {
  std::vector<int32_t> topIds;            // positions × top, best first
  std::vector<double> topProbabilities;   // the same layout
  std::vector<double> targetProbability;  // per position with a next token (positions − 1 or all)
  std::vector<int64_t> targetRank;        // the same
};

// The top tokens at every point of one sequence (its first `positions` tokens).
struct LensTrace {
  int64_t sequence = 0, positions = 0;
  int top = 0;
  std::vector<int32_t> tokens;                           // the traced positions' tokens, and the next one
  std::vector<std::array<LensGrid, kLensModes>> points;  // as LogitLensResult::points
  std::map<int32_t, std::string> texts;  // id → text of the tokens above (filled by a caller)
};

struct LogitLensResult {
  AnalysisHeader header;
  std::string finalNorm;          // LN_f's kind now ("layernorm", "fakeln", ...)
  double linearDivisor = 0;       // the linear mode's one divisor; 0 when LN_f keeps its own (fake, identity)
  std::vector<LensPoint> points;  // n_layer resid_pre, then the final residual
  LensTrace trace;
};

struct LogitLensOptions {
  int64_t traceSequence = 0;
  int top = 5;                   // tokens per (point, position) of the trace
  int64_t tracePositions = 256;  // the trace covers at most this many first positions
  int64_t logitBudget =
      int64_t{1} << 24;  // logits held at once (values): bounds the memory a vocabulary needs
};

LogitLensResult logitLens(const ModelSnapshot& snapshot, const TokenSequences& data,
                          const LogitLensOptions& options = {}, const ProgressFn& progress = {});
nlohmann::json toJson(const LogitLensResult& result);
// The inverse of toJson (as analysisHeaderFromJson; the trace's "token_texts" and "texts" are read when
// present).
LogitLensResult logitLensResultFromJson(const nlohmann::json& j);

}  // namespace nf
