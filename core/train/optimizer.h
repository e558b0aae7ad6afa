// The optimizer of every training mode: AdamW with weight decay on 2-D weight matrices only, and the
// learning-rate schedule (linear warmup, then cosine decay). Engine-internal (torch).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "model/causal_lm.h"
#include "train/settings.h"

namespace nf {

// AdamW over every parameter of `model` (the order of model->parameters(), which optimizer.pt relies on).
std::unique_ptr<torch::optim::AdamW> makeOptimizer(CausalLMImpl& model, const OptimizerSettings& settings);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

// The learning rate at optimizer step `step` (0-based): linear warmup over warmupSteps to lr, then
// cosine decay to minLr at maxSteps.
double learningRate(const OptimizerSettings& settings, int64_t step);

}  // namespace nf
