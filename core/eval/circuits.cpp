#include "eval/circuits.h"

#include <torch/torch.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "util/random.h"

namespace nf {
namespace {

torch::Tensor batchOf(const std::vector<std::vector<int32_t>>& rows) {
  auto t = torch::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.front().size())},
                        torch::kLong);
  auto a = t.accessor<int64_t, 2>();
  for (std::size_t b = 0; b < rows.size(); ++b)
    for (std::size_t i = 0; i < rows[b].size(); ++i) a[b][i] = rows[b][i];
  return t;
}

}  // namespace

IoiScore ioiLogitDifference(CausalLMImpl& model, const IoiPromptSet& set) {
  torch::NoGradGuard noGrad;
  std::vector<std::vector<int32_t>> clean, corrupted;
  std::vector<int64_t> correct, wrong;
  for (const auto& p : set.prompts) {
    clean.push_back(p.clean);
    corrupted.push_back(p.corrupted);
    correct.push_back(p.correctId);
    wrong.push_back(p.wrongId);
  }
  const auto device = model.device();
  const torch::Tensor c = torch::tensor(correct).to(device).unsqueeze(1),
                      w = torch::tensor(wrong).to(device).unsqueeze(1);
  auto difference = [&](const std::vector<std::vector<int32_t>>& rows) {
    const torch::Tensor last = model.forward(batchOf(rows).to(device)).select(1, set.endPosition);
    return (last.gather(1, c) - last.gather(1, w)).squeeze(1).to(torch::kCPU, torch::kFloat64);
  };
  const torch::Tensor cleanDiff = difference(clean), corruptedDiff = difference(corrupted);
  IoiScore s;
  s.prompts = static_cast<int64_t>(set.prompts.size());
  s.meanCleanLogitDiff = cleanDiff.mean().item<double>();
  s.meanCorruptedLogitDiff = corruptedDiff.mean().item<double>();
  s.cleanAccuracy = (cleanDiff > 0).to(torch::kFloat64).mean().item<double>();
  return s;
}

InductionScore inductionLosses(CausalLMImpl& model, int64_t spanLength, int64_t sequences, uint64_t seed,
                               const std::vector<bool>* allowed, int64_t perForward, int32_t start) {
  const ModelShape& c = model.config();
  // The losses are on r_2…r_L of each copy: a span of one token has none.
  if (spanLength < 2)
    throw std::invalid_argument("an induction span needs at least 2 tokens, got " +
                                std::to_string(spanLength));
  if (sequences < 1) throw std::invalid_argument("induction needs at least one sequence");
  if (2 * spanLength + 1 > c.nPositions)
    throw std::invalid_argument("two copies of a " + std::to_string(spanLength) +
                                "-token span do not fit in " + std::to_string(c.nPositions) + " positions");
  if (start < 0) start = c.eotTokenId;
  if (start >= c.vocabSize)
    throw std::invalid_argument("the start token " + std::to_string(start) +
                                " is outside the vocabulary of " + std::to_string(c.vocabSize));
  std::vector<int32_t> pool;
  for (int32_t id = 0; id < c.vocabSize; ++id)
    if (id != c.eotTokenId && id != start &&
        (!allowed || (id < static_cast<int32_t>(allowed->size()) && (*allowed)[id])))
      pool.push_back(id);
  if (pool.empty()) throw std::invalid_argument("no tokens to draw random spans from");
  Random random(seed);
  std::vector<std::vector<int32_t>> rows;
  for (int64_t b = 0; b < sequences; ++b) {
    std::vector<int32_t> span;
    while (static_cast<int64_t>(span.size()) < spanLength) span.push_back(random.pick(pool));
    std::vector<int32_t> row{start};
    row.insert(row.end(), span.begin(), span.end());
    row.insert(row.end(), span.begin(), span.end());
    rows.push_back(row);
  }
  // A few sequences per pass: the logits of all at once, [N, 2L + 1, vocab], need not fit in memory.
  const int64_t perPass =
      perForward > 0
          ? perForward
          : std::max<int64_t>(1, (int64_t{1} << 25) / ((2 * spanLength + 1) * int64_t{c.vocabSize}));
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> losses, hits;
  for (int64_t first = 0; first < sequences; first += perPass) {
    const std::vector<std::vector<int32_t>> part(
        rows.begin() + static_cast<std::ptrdiff_t>(first),
        rows.begin() + static_cast<std::ptrdiff_t>(std::min(sequences, first + perPass)));
    const torch::Tensor tokens = batchOf(part).to(model.device());
    const torch::Tensor logp = torch::log_softmax(model.forward(tokens), -1);
    // Loss at position t predicts token t + 1.
    losses.push_back(-logp.slice(1, 0, -1).gather(2, tokens.slice(1, 1).unsqueeze(2)).squeeze(2));
    hits.push_back(logp.slice(1, 0, -1).argmax(2) == tokens.slice(1, 1));
  }
  const torch::Tensor loss = torch::cat(losses), hit = torch::cat(hits);
  InductionScore s;
  s.sequences = sequences;
  s.spanLength = spanLength;
  // First copy: predicting r_2…r_L (positions 1…L−1); second copy: predicting the same tokens (L+1…2L−1).
  const torch::Tensor first = loss.slice(1, 1, spanLength),
                      second = loss.slice(1, spanLength + 1, 2 * spanLength);
  s.firstCopyLoss = first.mean().item<double>();
  s.secondCopyLoss = second.mean().item<double>();
  // numpy's median (the mean of the two middle values of an even count), as eval's: torch's is the lower.
  auto median = [](const torch::Tensor& t) {
    const torch::Tensor sorted = std::get<0>(t.flatten().to(torch::kFloat64).sort());
    const int64_t n = sorted.numel();
    return n % 2 == 1 ? sorted[n / 2].item<double>()
                      : (sorted[n / 2 - 1].item<double>() + sorted[n / 2].item<double>()) / 2;
  };
  s.firstCopyMedianLoss = median(first);
  s.secondCopyMedianLoss = median(second);
  s.firstCopyAccuracy = hit.slice(1, 1, spanLength).to(torch::kFloat64).mean().item<double>();
  s.secondCopyAccuracy =
      hit.slice(1, spanLength + 1, 2 * spanLength).to(torch::kFloat64).mean().item<double>();
  return s;
}

nlohmann::json toJson(const IoiScore& s) {
  return {{"prompts", s.prompts},
          {"mean_clean_logit_diff", s.meanCleanLogitDiff},
          {"mean_corrupted_logit_diff", s.meanCorruptedLogitDiff},
          {"clean_accuracy", s.cleanAccuracy}};
}

nlohmann::json toJson(const InductionScore& s) {
  return {{"sequences", s.sequences},
          {"span_length", s.spanLength},
          {"first_copy_loss", s.firstCopyLoss},
          {"second_copy_loss", s.secondCopyLoss},
          {"first_copy_median_loss", s.firstCopyMedianLoss},
          {"second_copy_median_loss", s.secondCopyMedianLoss},
          {"first_copy_accuracy", s.firstCopyAccuracy},
          {"second_copy_accuracy", s.secondCopyAccuracy}};
}

}  // namespace nf
