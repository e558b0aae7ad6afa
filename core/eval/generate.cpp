#include "eval/generate.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/random.h"

namespace nf {

int32_t sampleToken(const torch::Tensor& logits, const GenerationOptions& options, Random& random) {
  const torch::Tensor cpu = logits.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  const double* l = cpu.data_ptr<double>();
  const auto vocab = static_cast<int32_t>(cpu.numel());
  if (options.temperature <= 0) return static_cast<int32_t>(std::max_element(l, l + vocab) - l);

  // Candidates by descending logit (ties: lower id first), cut to the top k.
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  const auto k = options.topK > 0 ? std::min<int64_t>(options.topK, vocab) : vocab;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  order.resize(k);
  std::vector<double> weights(k);
  for (int64_t i = 0; i < k; ++i) weights[i] = std::exp((l[order[i]] - l[order[0]]) / options.temperature);
  if (options.topP < 1) {  // the shortest head whose share of the weight reaches top p
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    double head = 0;
    for (int64_t i = 0; i < k; ++i)
      if ((head += weights[i]) >= options.topP * total) {
        weights.resize(i + 1);
        break;
      }
  }
  const auto kept = static_cast<int64_t>(weights.size());
  double u = random.uniform() * std::accumulate(weights.begin(), weights.end(), 0.0);
  for (int64_t i = 0; i < kept; ++i) {
    if (u < weights[i]) return order[i];
    u -= weights[i];
  }
  return order[kept - 1];  // rounding left u a hair above the total
}

std::vector<int32_t> generate(CausalLMImpl& model, const std::vector<int32_t>& prompt,
                              const GenerationOptions& options) {
  if (prompt.empty()) throw std::invalid_argument("the prompt has no tokens");
  const ModelShape& config = model.config();
  const torch::Device device = model.parameters().front().device();
  Random random(options.seed);
  std::vector<int64_t> context(prompt.begin(), prompt.end());
  std::vector<int32_t> generated;
  torch::NoGradGuard noGrad;
  for (int64_t step = 0; step < options.maxNewTokens; ++step) {
    const auto start =
        static_cast<int64_t>(context.size()) - std::min<int64_t>(context.size(), config.nPositions);
    const torch::Tensor tokens =
        torch::tensor(std::vector<int64_t>(context.begin() + start, context.end()), torch::kLong)
            .unsqueeze(0);
    const torch::Tensor logits = model.forward(tokens.to(device));
    const int32_t next = sampleToken(logits[0][logits.size(1) - 1], options, random);
    generated.push_back(next);
    context.push_back(next);
    if (options.stopAtEndOfText &&
        (next == config.eotTokenId || std::find(options.otherStopIds.begin(), options.otherStopIds.end(),
                                                next) != options.otherStopIds.end()))
      break;
  }
  return generated;
}

}  // namespace nf
