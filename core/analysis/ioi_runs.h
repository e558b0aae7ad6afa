// An IOI prompt set on the model's device and its metric, the mean logit difference logit(correct) −
// logit(wrong) at the last position: what patching and edge attribution share. Torch-level, internal to
// the analyses.
#pragma once
#include <torch/torch.h>

#include <algorithm>

#include "data/ioi.h"
#include "model/causal_lm.h"

namespace nf {

class IoiRuns {
 public:
  IoiRuns(CausalLMImpl& model, const IoiPromptSet& set) : m_model(model), m_end(set.endPosition) {
    if (set.prompts.empty()) throw std::invalid_argument("the IOI prompt set has no prompts");
    const int64_t N = static_cast<int64_t>(set.prompts.size()), T = set.length;
    std::vector<int64_t> clean, corrupted, correct, wrong;
    for (const IoiPrompt& p : set.prompts) {
      clean.insert(clean.end(), p.clean.begin(), p.clean.end());
      corrupted.insert(corrupted.end(), p.corrupted.begin(), p.corrupted.end());
      correct.push_back(p.correctId);
      wrong.push_back(p.wrongId);
    }
    const torch::Device device = model.device();
    cleanTokens = torch::tensor(clean).view({N, T}).to(device);
    corruptedTokens = torch::tensor(corrupted).view({N, T}).to(device);
    m_correct = torch::tensor(correct).to(device);
    m_wrong = torch::tensor(wrong).to(device);
  }

  // Mean logit difference of each replica of the prompt set in `tokens` ([C·N, T]) → [C].
  torch::Tensor logitDifference(const torch::Tensor& tokens, HookSet* hooks = nullptr) const {
    const int64_t N = m_correct.size(0), C = tokens.size(0) / N;
    const torch::Tensor last = m_model.forward(tokens, hooks, m_end).view({C, N, -1});
    const torch::Tensor index = m_correct.expand({C, N}).unsqueeze(-1),
                        wrongIndex = m_wrong.expand({C, N}).unsqueeze(-1);
    return (last.gather(-1, index) - last.gather(-1, wrongIndex)).squeeze(-1).to(torch::kFloat64).mean(1);
  }

  // Activation patching of C cells at once: masks [C, ...] (the activation's shape without batch and the
  // last dimension) say which entries of cell c come from the clean activation [N, ..., D].
  torch::Tensor patched(const HookPoint& point, const torch::Tensor& clean, const torch::Tensor& masks,
                        int64_t maxBatchTokens) const {
    torch::NoGradGuard noGrad;
    const int64_t N = cleanTokens.size(0), T = cleanTokens.size(1), C = masks.size(0);
    const int64_t perPass = std::max<int64_t>(1, maxBatchTokens / (N * T));
    std::vector<torch::Tensor> parts;
    for (int64_t first = 0; first < C; first += perPass) {
      const int64_t c = std::min(perPass, C - first);
      const torch::Tensor mask =
          masks.slice(0, first, first + c).unsqueeze(1).unsqueeze(-1).to(clean.device());
      HookSet hooks;
      hooks.edit(point, [&](const torch::Tensor& value, const HookPoint&) {
        std::vector<int64_t> shape{c, N};
        for (int64_t d = 1; d < value.dim(); ++d) shape.push_back(value.size(d));
        return torch::where(mask, clean.unsqueeze(0), value.reshape(shape)).reshape(value.sizes());
      });
      parts.push_back(logitDifference(corruptedTokens.repeat({c, 1}), &hooks));
    }
    return torch::cat(parts);
  }

  torch::Tensor cleanTokens, corruptedTokens;

 private:
  CausalLMImpl& m_model;
  int64_t m_end;
  torch::Tensor m_correct, m_wrong;
};

}  // namespace nf
