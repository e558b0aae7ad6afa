// The optimizer of every training mode: AdamW with weight decay on 2-D weight matrices only, and the
// learning-rate schedule (linear warmup, then cosine decay). Engine-internal (torch).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "model/causal_lm.h"
#include "train/settings.h"

namespace nf {

// LibTorch's AdamW — the same update within rounding, the same state, the same optimizer.pt — with one pass
// over each parameter instead of LibTorch's seven tensor operations (each a pass over the parameter's memory,
// one of them allocating), for float32 CPU parameters. The gradient scale (clipping's coefficient)
// multiplies every gradient inside that pass, so clipping costs no pass of its own either. Other
// parameters (a GPU's) take LibTorch's operations over all of a group's parameters at once (at::_foreach_*:
// on a GPU a few multi-tensor kernels instead of seven per parameter), or, where their states differ in
// step count, device or dtype, LibTorch's own step.
class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
  // Multiplies every gradient by `scale` in the next step only (then it is 1 again).
  void scaleGradientsInNextStep(double scale) { m_gradientScale = scale; }

 private:
  torch::optim::AdamWParamState& stateOf(const torch::Tensor& p);  // made (at step 0) if missing
  void foreachStep(double gradientScale);
  double m_gradientScale = 1.0;
};

// Why the state just loaded into `optimizer` cannot be trained on, or "" when it can: a parameter whose
// state is empty or whose moments have another shape than it (LibTorch's load pairs saved states with
// parameters by their order and checks nothing: optimizer.pt of another model, or LibTorch 2.x reading
// 1.13's keys, would crash or fail mid-step instead).
std::string loadedStateProblem(torch::optim::Optimizer& optimizer);

// Which update the FusedAdamW steps of this process took, counted (benchmarks name the path they timed:
// a parameter whose state differs from the others' sends every step to LibTorch's own, unannounced).
struct AdamWStepCounts {
  int64_t fused = 0, foreach = 0, libtorch = 0;
};
AdamWStepCounts adamWStepCounts();

// AdamW's parameter groups for `model`: weight decay on 2-D weight matrices, none on the rest, every
// parameter in the order of model->parameters() (which optimizer.pt relies on).
std::vector<torch::optim::OptimizerParamGroup> adamWParameterGroups(CausalLMImpl& model,
                                                                    const OptimizerSettings& settings);
// AdamW over those groups.
std::unique_ptr<FusedAdamW> makeOptimizer(CausalLMImpl& model, const OptimizerSettings& settings);
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

// The learning rate at optimizer step `step` (0-based): linear warmup over warmupSteps to lr, then
// cosine decay to minLr at maxSteps.
double learningRate(const OptimizerSettings& settings, int64_t step);

}  // namespace nf
