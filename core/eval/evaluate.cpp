#include "eval/evaluate.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "data/batches.h"
#include "io/atomic_file.h"

namespace nf {

void TokenValues::append(const torch::Tensor& logits, const torch::Tensor& targets) {
  torch::NoGradGuard noGrad;
  const torch::Tensor flatLogits = logits.reshape({-1, logits.size(-1)});
  const torch::Tensor flatTargets = targets.reshape({-1}).to(logits.device(), torch::kLong);
  // A few thousand rows at a time: log-probabilities of a whole GPT-2 batch would be gigabytes.
  constexpr int64_t kRows = 2048;
  for (int64_t start = 0; start < flatLogits.size(0); start += kRows) {
    const int64_t rows = std::min(kRows, flatLogits.size(0) - start);
    const torch::Tensor logp = torch::log_softmax(flatLogits.narrow(0, start, rows).to(torch::kFloat32), -1);
    const torch::Tensor target = flatTargets.narrow(0, start, rows);
    const torch::Tensor tokenLoss = -logp.gather(1, target.unsqueeze(1)).squeeze(1);
    const torch::Tensor tokenEntropy = -(logp.exp() * logp).sum(-1);
    const auto [maxLogp, argmax] = logp.max(-1);
    auto copy = [](const torch::Tensor& t, auto& out) {
      using T = typename std::decay_t<decltype(out)>::value_type;
      const torch::Tensor cpu = t.to(torch::kCPU).contiguous();
      const auto* p = cpu.data_ptr<T>();
      out.insert(out.end(), p, p + cpu.numel());
    };
    const std::size_t before = loss.size();
    copy(tokenLoss, loss);
    copy(tokenEntropy, entropy);
    copy(maxLogp.exp(), confidence);
    copy((argmax == target).to(torch::kUInt8), correct);
    // A NaN or infinite logit would make a NaN mean and an undefined calibration bin: said, not summarized.
    for (std::size_t i = before; i < loss.size(); ++i)
      if (!std::isfinite(loss[i]) || !std::isfinite(entropy[i]))
        throw std::runtime_error(
            "the model's log-probabilities are not finite (a NaN or infinite logit, at token " +
            std::to_string(i) + " evaluated): its activations overflow, or its weights are not sane");
  }
}

double quantile(std::vector<float> values, double q) {
  if (values.empty()) return std::nan("");
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  std::nth_element(values.begin(), values.begin() + below, values.end());
  const double low = values[below];
  // The next order statistic is the smallest of what nth_element left above `below`.
  const double high = above == below ? low : *std::min_element(values.begin() + below + 1, values.end());
  return low + (position - static_cast<double>(below)) * (high - low);
}

LossSummary summarize(const TokenValues& values, int calibrationBins) {
  LossSummary s;
  s.tokens = static_cast<int64_t>(values.size());
  if (s.tokens == 0) return s;
  double lossSum = 0, entropySum = 0;
  int64_t correctCount = 0;
  s.bins.resize(calibrationBins);
  for (int b = 0; b < calibrationBins; ++b) {
    s.bins[b].lower = static_cast<double>(b) / calibrationBins;
    s.bins[b].upper = static_cast<double>(b + 1) / calibrationBins;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    lossSum += values.loss[i];
    entropySum += values.entropy[i];
    correctCount += values.correct[i];
    const int b = std::min(calibrationBins - 1, static_cast<int>(values.confidence[i] * calibrationBins));
    s.bins[b].count += 1;
    s.bins[b].meanConfidence += values.confidence[i];
    s.bins[b].accuracy += values.correct[i];
  }
  const auto n = static_cast<double>(s.tokens);
  s.meanLoss = lossSum / n;
  s.meanEntropy = entropySum / n;
  s.accuracy = static_cast<double>(correctCount) / n;
  for (auto& bin : s.bins) {
    if (bin.count == 0) continue;
    bin.meanConfidence /= static_cast<double>(bin.count);
    bin.accuracy /= static_cast<double>(bin.count);
    s.ece += static_cast<double>(bin.count) / n * std::abs(bin.accuracy - bin.meanConfidence);
  }
  s.medianLoss = quantile(values.loss, 0.5);
  s.range95 = {quantile(values.loss, 0.025), quantile(values.loss, 0.975)};
  s.range999 = {quantile(values.loss, 0.0005), quantile(values.loss, 0.9995)};
  return s;
}

EvalResult evaluate(CausalLMImpl& model, const TokenFile& file, const EvalOptions& options,
                    const ProgressFn& progress) {
  TokenValues values;
  EvalResult result = evaluateTokens(model, file, options, values, progress);
  requireEvaluatedTokens(values, result);
  result.summary = summarize(values, options.calibrationBins);
  return result;
}

void requireEvaluatedTokens(const TokenValues& values, const EvalResult& result) {
  if (values.size() > 0) return;
  // A loss "over zero tokens" would read as a perfect 0.0.
  // (A file shorter than one chunk is refused when it is cut into chunks: here only a filter is left.)
  throw FileError(result.file, "no token was evaluated: the token filter excluded all " +
                                   std::to_string(result.chunksSkipped) + " chunks of " +
                                   std::to_string(result.context) + " tokens");
}

EvalResult evaluateTokens(CausalLMImpl& model, const TokenFile& file, const EvalOptions& options,
                          TokenValues& values, const ProgressFn& progress) {
  const ModelShape& config = model.config();
  const int64_t context = options.context > 0 ? options.context : config.nPositions;
  if (context > config.nPositions)
    throw std::invalid_argument("context " + std::to_string(context) + " exceeds the model's " +
                                std::to_string(config.nPositions) + " positions");
  EvalChunks chunks(file, context, config.vocabSize, options.maxTokens);
  // Bound the logits of one forward pass to ~1 GB of float32.
  const int64_t batch =
      std::max<int64_t>(1, std::min(options.batchSize, (int64_t{1} << 28) / (context * config.vocabSize)));
  const torch::Device device = model.parameters().front().device();

  EvalResult result;
  result.file = file.path();
  result.context = context;
  torch::NoGradGuard noGrad;
  const int64_t begin = chunks.count() * options.shard / options.shards;
  const int64_t end = chunks.count() * (options.shard + 1) / options.shards;
  for (int64_t first = begin; first < end; first += batch) {
    const int64_t n = std::min(batch, end - first);
    Batch b = chunks.chunks(first, n);
    if (options.allowedTokens) {
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < n; ++i) {
        const auto* in = b.inputs[i].data_ptr<int64_t>();
        bool allowed = (*options.allowedTokens)[b.targets[i][context - 1].item<int64_t>()];
        for (int64_t t = 0; t < context && allowed; ++t) allowed = (*options.allowedTokens)[in[t]];
        if (allowed) keep.push_back(i);
      }
      result.chunksSkipped += n - static_cast<int64_t>(keep.size());
      const torch::Tensor index = torch::tensor(keep, torch::kLong);
      b.inputs = b.inputs.index_select(0, index);
      b.targets = b.targets.index_select(0, index);
    }
    if (b.inputs.size(0) > 0) {
      values.append(model.forward(b.inputs.to(device)), b.targets);
      result.chunks += b.inputs.size(0);
    }
    if (progress) progress({"evaluate", first + n - begin, end - begin, "chunks", first + n == end});
  }
  return result;
}

nlohmann::json toJson(const LossSummary& s) {
  nlohmann::json bins = nlohmann::json::array();
  // An empty bin has no confidence or accuracy: null, not the 0 that reads as a bin always wrong.
  auto ofTokens = [](const CalibrationBin& b, double value) {
    return b.count > 0 ? nlohmann::json(value) : nullptr;
  };
  for (const auto& b : s.bins)
    bins.push_back({{"lower", b.lower},
                    {"upper", b.upper},
                    {"count", b.count},
                    {"mean_confidence", ofTokens(b, b.meanConfidence)},
                    {"accuracy", ofTokens(b, b.accuracy)}});
  return {{"tokens", s.tokens},
          {"mean_loss", s.meanLoss},
          {"median_loss", s.medianLoss},
          {"loss_range_95", s.range95},
          {"loss_range_99_9", s.range999},
          {"mean_entropy", s.meanEntropy},
          {"accuracy", s.accuracy},
          {"ece", s.ece},
          {"calibration_bins", bins}};
}

nlohmann::json toJson(const EvalResult& r) {
  nlohmann::json j = toJson(r.summary);
  j["file"] = r.file;
  j["context"] = r.context;
  j["chunks"] = r.chunks;
  j["chunks_skipped"] = r.chunksSkipped;
  return j;
}

}  // namespace nf
