#include "eval/benchmark.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "io/atomic_file.h"
#include "util/scope_exit.h"

namespace nf {
namespace {

// The harness's _encode_pair: trailing whitespace of the context goes to the continuation; the context is
// encoded alone, the continuation is the whole pair's encoding after the context's own token count (so a
// merge across the boundary counts as continuation, and the model reads the context as encoded alone). An
// empty context (never in these tasks) is the harness's prefix token: the BOS where the
// tokenizer has one, whether or not its encodings start with it, else end-of-text.
std::pair<std::vector<int32_t>, std::vector<int32_t>> encodePair(const Tokenizer& tokenizer,
                                                                 const LoglikelihoodRequest& request) {
  const int32_t prefix = tokenizer.bosId() >= 0 ? tokenizer.bosId() : tokenizer.eotId();
  if (request.context.empty()) return {{prefix}, tokenizer.encode(request.continuation)};
  const std::string context = pythonRstrip(request.context);  // every Unicode space, as Python's
  const std::string continuation = request.context.substr(context.size()) + request.continuation;
  // Hugging Face's encode, with the BOS where its tokenizer adds one (tokenizer_config.json's add_bos_token).
  auto hfEncode = [&](const std::string& text) {
    std::vector<int32_t> ids;
    if (tokenizer.huggingFaceAddsBos()) ids.push_back(tokenizer.bosId());
    tokenizer.encodeAppend(text, ids);
    return ids;
  };
  const std::vector<int32_t> whole = hfEncode(context + continuation), contextPart = hfEncode(context);
  if (contextPart.empty())  // the harness refuses it too: no token would predict the continuation's first
    throw std::invalid_argument("the request \"" + request.context + "\" → \"" + request.continuation +
                                "\" has a context that encodes to no token (whitespace only?): nothing "
                                "predicts the continuation's start");
  std::vector<int32_t> continuationPart(
      whole.begin() + static_cast<std::ptrdiff_t>(std::min(contextPart.size(), whole.size())), whole.end());
  return {contextPart, continuationPart};
}

// What the model reads for one request, and which of its positions predict the continuation.
struct Encoded {
  std::vector<int32_t> input, targets;  // input: (context + continuation)[-(max + 1):][:-1]
  bool truncated = false;
};

Encoded encode(const Tokenizer& tokenizer, const LoglikelihoodRequest& request, int64_t maxLength) {
  auto [context, continuation] = encodePair(tokenizer, request);
  std::vector<int32_t> all = context;
  all.insert(all.end(), continuation.begin(), continuation.end());
  if (all.size() < 2)
    throw std::invalid_argument("the request \"" + request.context + "\" → \"" + request.continuation +
                                "\" encodes to fewer than 2 tokens: nothing to predict");
  Encoded e;
  if (static_cast<int64_t>(all.size()) > maxLength + 1) {
    all.erase(all.begin(), all.end() - (maxLength + 1));
    e.truncated = true;
  }
  e.input.assign(all.begin(), all.end() - 1);
  const std::size_t scored = std::min(continuation.size(), e.input.size());
  e.targets.assign(all.end() - static_cast<std::ptrdiff_t>(scored), all.end());
  return e;
}

// A forward-pass row and the requests read from it: a request whose input is a prefix of another's in the
// same item (BoolQ's one-token "no"/"yes" share the whole input) is read from the longer row.
struct Row {
  std::vector<int32_t> tokens;
  std::vector<std::pair<std::size_t, std::size_t>> reads;  // (item, choice)
};

bool isPrefix(const std::vector<int32_t>& prefix, const std::vector<int32_t>& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

int argmax(const std::vector<double>& values) {
  return static_cast<int>(std::max_element(values.begin(), values.end()) - values.begin());
}

}  // namespace

std::vector<uint8_t> BenchmarkScore::correct(bool norm) const {
  std::vector<uint8_t> out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    out[i] = task == BenchmarkTask::Lambada ? items[i].greedy
                                            : (norm ? items[i].predictedNorm : items[i].predicted) == gold[i];
  return out;
}

// One item has no spread to estimate: NaN (null in the JSON, n/a in the table, as the harness's N/A), not a
// standard error of 0 that reads as certainty.
double binomialStderr(double p, int64_t n) {
  return n > 1 ? std::sqrt(p * (1 - p) / static_cast<double>(n - 1)) : std::nan("");
}

BenchmarkScore scoreBenchmark(CausalLMImpl& model, const Tokenizer& tokenizer, const BenchmarkData& data,
                              const BenchmarkOptions& options, const ProgressFn& progress) {
  const int64_t context = model.config().nPositions;
  const int64_t maxLength = options.maxLength > 0 ? std::min(options.maxLength, context) : context;
  const std::string task = std::string("score ") + benchmarkTaskName(data.task);

  std::vector<std::vector<Encoded>> encoded(data.items.size());
  std::vector<Row> rows;
  int64_t requests = 0, truncated = 0;
  for (std::size_t i = 0; i < data.items.size(); ++i) {
    const auto& item = data.items[i];
    for (const auto& request : item.requests) {
      try {
        encoded[i].push_back(encode(tokenizer, request, maxLength));
      } catch (const std::invalid_argument& e) {
        throw FileError(data.file, "line " + std::to_string(item.line) + ": " + e.what());
      }
      truncated += encoded[i].back().truncated;
      ++requests;
    }
    std::vector<std::size_t> order(item.requests.size());
    for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return encoded[i][a].input.size() > encoded[i][b].input.size();
    });
    const std::size_t firstRow = rows.size();
    for (std::size_t c : order) {
      auto row = std::find_if(rows.begin() + static_cast<std::ptrdiff_t>(firstRow), rows.end(),
                              [&](const Row& r) { return isPrefix(encoded[i][c].input, r.tokens); });
      if (row == rows.end()) row = rows.insert(rows.end(), Row{encoded[i][c].input, {}});
      row->reads.emplace_back(i, c);
    }
  }
  // Longest first, as the harness orders them: similar lengths share a batch.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.tokens.size() > b.tokens.size(); });

  BenchmarkScore score;
  score.task = data.task;
  score.file = data.file;
  score.n = static_cast<int64_t>(data.items.size());
  score.truncated = truncated;
  score.items.resize(data.items.size());
  for (std::size_t i = 0; i < data.items.size(); ++i) {
    score.items[i].logLikelihoods.assign(data.items[i].requests.size(), 0.0);
    score.gold.push_back(data.items[i].gold);
  }

  torch::NoGradGuard noGrad;
  const bool wasTraining = model.is_training();
  const ScopeExit restoreMode([&] {  // also when a log-likelihood is refused
    if (wasTraining) model.train();
  });
  model.eval();
  const torch::Device device = model.parameters().front().device();
  const int64_t vocab = model.config().vocabSize;
  int64_t done = 0;
  for (std::size_t first = 0; first < rows.size();) {
    const int64_t length = static_cast<int64_t>(rows[first].tokens.size());
    const int64_t batch = std::max<int64_t>(1, options.logitBudget / std::max<int64_t>(1, length * vocab));
    const std::size_t last = std::min(rows.size(), first + static_cast<std::size_t>(batch));
    torch::Tensor tokens = torch::zeros({static_cast<int64_t>(last - first), length}, torch::kLong);
    for (std::size_t r = first; r < last; ++r)
      for (std::size_t t = 0; t < rows[r].tokens.size(); ++t)
        tokens[static_cast<int64_t>(r - first)][static_cast<int64_t>(t)] = rows[r].tokens[t];
    const torch::Tensor logits = model.forward(tokens.to(device)).to(torch::kFloat);
    for (std::size_t r = first; r < last; ++r) {
      for (const auto& [i, c] : rows[r].reads) {
        const Encoded& e = encoded[i][c];
        const int64_t end = static_cast<int64_t>(e.input.size()),
                      count = static_cast<int64_t>(e.targets.size());
        const torch::Tensor logProbs =
            logits[static_cast<int64_t>(r - first)].slice(0, end - count, end).log_softmax(-1);
        const torch::Tensor targets =
            torch::tensor(std::vector<int64_t>(e.targets.begin(), e.targets.end()), torch::kLong).to(device);
        const float logLikelihood =
            logProbs.gather(1, targets.unsqueeze(1)).sum().item<float>();  // float32, as the harness's
        // A NaN never wins an argmax (choice 0 would be predicted, right by chance): said, not scored.
        if (!std::isfinite(logLikelihood))
          throw FileError(data.file, "line " + std::to_string(data.items[i].line) + ": the model's " +
                                         benchmarkTaskName(data.task) +
                                         " log-likelihood is not finite (a NaN or infinite logit): its "
                                         "activations overflow, or its weights are not sane");
        score.items[i].logLikelihoods[c] = logLikelihood;
        if (data.task == BenchmarkTask::Lambada) score.items[i].greedy = logProbs.argmax(-1).equal(targets);
        ++done;
      }
    }
    first = last;
    if (progress) progress({task, done, requests, "requests", done == requests});
  }

  int64_t right = 0, rightNorm = 0;
  double logLikelihood = 0;
  for (std::size_t i = 0; i < data.items.size(); ++i) {
    ItemScore& s = score.items[i];
    std::vector<double> perCharacter(s.logLikelihoods.size());
    for (std::size_t c = 0; c < perCharacter.size(); ++c)
      perCharacter[c] = s.logLikelihoods[c] / static_cast<double>(data.items[i].choiceLengths[c]);
    s.predicted = argmax(s.logLikelihoods);
    s.predictedNorm = argmax(perCharacter);
    logLikelihood += s.logLikelihoods.front();
  }
  for (const uint8_t ok : score.correct(false)) right += ok;
  for (const uint8_t ok : score.correct(true)) rightNorm += ok;
  score.acc = static_cast<double>(right) / static_cast<double>(score.n);
  score.accStderr = binomialStderr(score.acc, score.n);
  if (reportsAccNorm(data.task)) {
    score.accNorm = static_cast<double>(rightNorm) / static_cast<double>(score.n);
    score.accNormStderr = binomialStderr(score.accNorm, score.n);
  }
  if (data.task == BenchmarkTask::Lambada)
    score.perplexity = std::exp(-logLikelihood / static_cast<double>(score.n));
  return score;
}

PairedDifference pairedDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int resamples,
                                  uint64_t seed) {
  if (a.size() != b.size() || a.empty())
    throw std::invalid_argument("a paired difference needs the same items scored by both models");
  const std::size_t n = a.size();
  auto difference = [&](const std::vector<std::size_t>& pick) {
    double sum = 0;
    for (std::size_t i : pick) sum += static_cast<double>(b[i]) - static_cast<double>(a[i]);
    return sum / static_cast<double>(pick.size());
  };
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  PairedDifference out;
  out.difference = difference(all);
  if (n == 1) {  // one item resamples to itself: no interval, not one of zero width
    out.low = out.high = std::nan("");
    return out;
  }
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> pickItem(0, n - 1);
  std::vector<double> differences(static_cast<std::size_t>(resamples));
  std::vector<std::size_t> pick(n);
  for (auto& d : differences) {
    for (auto& p : pick) p = pickItem(random);
    d = difference(pick);
  }
  std::sort(differences.begin(), differences.end());
  out.low = differences[static_cast<std::size_t>(0.025 * (resamples - 1))];
  out.high = differences[static_cast<std::size_t>(0.975 * (resamples - 1))];
  return out;
}

nlohmann::json toJson(const BenchmarkScore& score, const BenchmarkData& data, bool perItem) {
  nlohmann::json j = {{"task", benchmarkTaskName(score.task)},
                      {"file", score.file},
                      {"n", score.n},
                      {"acc", score.acc},
                      {"acc_stderr", score.accStderr},
                      {"truncated", score.truncated}};
  if (reportsAccNorm(score.task)) {
    j["acc_norm"] = score.accNorm;
    j["acc_norm_stderr"] = score.accNormStderr;
  }
  if (score.task == BenchmarkTask::Lambada) j["perplexity"] = score.perplexity;
  if (perItem) {
    nlohmann::json items = nlohmann::json::array();
    for (std::size_t i = 0; i < score.items.size(); ++i) {
      const ItemScore& s = score.items[i];
      nlohmann::json item = {{"line", data.items[i].line},
                             {"gold", score.gold[i]},
                             {"loglikelihoods", s.logLikelihoods},
                             {"predicted", s.predicted}};
      if (reportsAccNorm(score.task)) item["predicted_norm"] = s.predictedNorm;
      if (score.task == BenchmarkTask::Lambada) item["greedy"] = s.greedy;
      items.push_back(std::move(item));
    }
    j["items"] = std::move(items);
  }
  return j;
}

}  // namespace nf
