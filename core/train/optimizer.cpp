#include "train/optimizer.h"

#include <cmath>

namespace nf {

std::unique_ptr<torch::optim::AdamW> makeOptimizer(CausalLMImpl& model, const OptimizerSettings& o) {
  std::vector<torch::Tensor> decay, noDecay;
  for (auto& p : model.parameters()) (p.dim() >= 2 ? decay : noDecay).push_back(p);
  auto options = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(o.weightDecay));
  groups.emplace_back(noDecay, options(0.0));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(o.lr));
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

double learningRate(const OptimizerSettings& s, int64_t step) {
  if (step < s.warmupSteps) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmupSteps);
  const double span = std::max<int64_t>(1, s.maxSteps - s.warmupSteps);
  const double progress = std::min(1.0, static_cast<double>(step - s.warmupSteps) / span);
  return s.minLr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (s.lr - s.minLr);
}

}  // namespace nf
