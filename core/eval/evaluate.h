// Evaluation as the paper reports it (PROTOCOL §6): mean cross-entropy over non-overlapping chunks, plus
// the median and central ranges of per-token loss (a few tokens can dominate the mean), output entropy
// and expected calibration error. End-of-text targets are counted, in training and in evaluation alike.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "data/token_file.h"
#include "eval/loss_summary.h"
#include "model/causal_lm.h"
#include "util/progress.h"

namespace nf {

// What an evaluation keeps of every predicted token.
struct TokenValues {
  std::vector<float> loss;        // −log p(target), nats
  std::vector<float> entropy;     // of the predicted distribution, nats
  std::vector<float> confidence;  // max probability
  std::vector<uint8_t> correct;   // argmax == target

  // logits [N, vocab] (any float dtype, any device), targets [N].
  void append(const torch::Tensor& logits, const torch::Tensor& targets);
  std::size_t size() const { return loss.size(); }
};

LossSummary summarize(const TokenValues& values, int calibrationBins = 10);

struct EvalOptions {
  int64_t context = 0;    // 0: the model's n_positions
  int64_t batchSize = 8;  // chunks per forward pass (reduced automatically to bound logits memory)
  int64_t maxTokens = 0;  // 0: the whole file
  int calibrationBins = 10;
  // Pile-filtered style: chunks containing a token that is false here are skipped (nullptr: keep all).
  const std::vector<bool>* allowedTokens = nullptr;
  // A multi-worker evaluation: this worker's contiguous share of the chunks (shard of shards).
  int shard = 0, shards = 1;
};

struct EvalResult {
  std::string file;
  int64_t context = 0, chunks = 0, chunksSkipped = 0;
  LossSummary summary;
};

EvalResult evaluate(CausalLMImpl& model, const TokenFile& file, const EvalOptions& options,
                    const ProgressFn& progress = {});
// evaluate()'s per-token values instead of their summary (result.summary stays empty): the values of
// every shard, concatenated in shard order, summarize to the one-process result.
EvalResult evaluateTokens(CausalLMImpl& model, const TokenFile& file, const EvalOptions& options,
                          TokenValues& values, const ProgressFn& progress = {});
// Throws FileError naming the file when no token was evaluated (all chunks filtered out, or the file is
// shorter than one context): a summary of zero tokens would report a loss of 0.
void requireEvaluatedTokens(const TokenValues& values, const EvalResult& result);

nlohmann::json toJson(const EvalResult& result);

}  // namespace nf
