// Scoring a benchmark's requests (eval/benchmark_tasks.h) as lm-evaluation-harness's Hugging Face model
// does (`lm_eval/models/huggingface.py`): context and continuation encoded together and split at the
// context's token count (the context's trailing spaces, Python's, move into the continuation; an empty
// context is the harness's prefix token, the BOS or else end-of-text), the input cut from the left to the
// model's context, log-softmax in float32, the continuation's log-probabilities summed; greedy when every
// continuation token is the argmax. Then acc, acc_norm and their standard errors as the harness reports
// them, and paired differences between models.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "eval/benchmark_tasks.h"
#include "model/causal_lm.h"
#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {

struct ItemScore {
  std::vector<double> logLikelihoods;  // one per choice
  bool greedy = false;                 // LAMBADA: every target token was the argmax
  int predicted = 0;                   // argmax of the sums (the first on a tie, as numpy's)
  int predictedNorm = 0;               // argmax of the sums per character of the choice
};

struct BenchmarkScore {
  BenchmarkTask task = BenchmarkTask::HellaSwag;
  std::string file;
  int64_t n = 0;
  double acc = 0, accStderr = 0;
  double accNorm = 0, accNormStderr = 0;  // where reportsAccNorm(task)
  double perplexity = 0;                  // LAMBADA: exp(−mean log-likelihood of the target)
  int64_t truncated = 0;                  // requests cut from the left to fit the model's context
  std::vector<int> gold;
  std::vector<ItemScore> items;

  // Per item: whether acc (or acc_norm) counted it correct.
  std::vector<uint8_t> correct(bool norm = false) const;
};

struct BenchmarkOptions {
  int64_t maxLength = 0;          // tokens a request may use; 0: the model's context
  int64_t logitBudget = 1 << 27;  // float logits per forward pass (rows are batched up to it)
};

BenchmarkScore scoreBenchmark(CausalLMImpl& model, const Tokenizer& tokenizer, const BenchmarkData& data,
                              const BenchmarkOptions& options = {}, const ProgressFn& progress = {});

// The harness's standard error of a mean of 0/1 scores: sqrt(p (1 − p) / (n − 1)).
double binomialStderr(double p, int64_t n);

// b's accuracy minus a's on the same items, with a 95% paired-bootstrap interval (items resampled with
// replacement, `resamples` times, a fixed seed: the same interval every run).
struct PairedDifference {
  double difference = 0, low = 0, high = 0;
};
PairedDifference pairedDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                  int resamples = 2000, uint64_t seed = 0);

// {"task", "file", "n", "acc", "acc_stderr", ["acc_norm", "acc_norm_stderr"], ["perplexity"], "truncated",
//  ["items": [{"line", "gold", "loglikelihoods", "predicted", ["predicted_norm"], ["greedy"]}]]}
nlohmann::json toJson(const BenchmarkScore& score, const BenchmarkData& data, bool perItem);

}  // namespace nf
