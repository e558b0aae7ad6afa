// Quick behavioural checks that a model has the circuits the analyses look for: indirect-object
// identification (name moving) and induction (copying a repeated span).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "data/ioi.h"
#include "model/causal_lm.h"

namespace nf {

struct IoiScore {
  int64_t prompts = 0;
  double meanCleanLogitDiff = 0;      // logit(correct) − logit(wrong) at the last position, clean prompts
  double meanCorruptedLogitDiff = 0;  // the same logits on the corrupted prompts
  double cleanAccuracy = 0;           // share of clean prompts with a positive difference
};
IoiScore ioiLogitDifference(CausalLMImpl& model, const IoiPromptSet& set);

struct InductionScore {
  int64_t sequences = 0, spanLength = 0;
  double firstCopyLoss = 0;   // mean CE predicting tokens 2…L of the first copy of a random span
  double secondCopyLoss = 0;  // the same tokens in the second copy: low when induction heads copy
  double firstCopyMedianLoss = 0, secondCopyMedianLoss = 0;  // robust to a few confidently wrong tokens
  double firstCopyAccuracy = 0, secondCopyAccuracy = 0;      // share of tokens predicted exactly (top 1)
};
// Sequences [start, r_1…r_L, r_1…r_L] (L ≥ 2) of uniformly random tokens, end-of-text and `start` excluded,
// drawn from `allowed` when given (e.g. the tokens that occur in the training data: a token the model never
// saw has an untrained embedding, which says nothing about its induction heads). `start` is what a document
// starts with for the model (Tokenizer::documentStartId: LLaMA's <s>); -1: its end-of-text, as GPT-2's. The
// model reads `perForward` sequences at a time (0: as many as keep a pass's logits within 32 Mi values), so
// memory stays bounded however many are asked for; the figures are the same whatever it is (up to rounding).
InductionScore inductionLosses(CausalLMImpl& model, int64_t spanLength, int64_t sequences, uint64_t seed,
                               const std::vector<bool>* allowed = nullptr, int64_t perForward = 0,
                               int32_t start = -1);

nlohmann::json toJson(const IoiScore& score);
nlohmann::json toJson(const InductionScore& score);

}  // namespace nf
