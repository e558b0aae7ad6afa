#include "train/optimizer.h"

#include <atomic>
#include <cmath>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>

#include "model/cpu_threads.h"
#include "train/adamw_kernel.h"

namespace nf {

namespace {

// The optimizer's key for a parameter's state: LibTorch 1.13 names it by the address as text, 2.x by the
// address itself.
template <typename StateMap>
typename StateMap::key_type stateKey(const StateMap&, const torch::Tensor& p) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << p.unsafeGetTensorImpl();
    return text.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

// A float32 CPU tensor the loop may read element by element alongside p (undefined: not yet made).
bool plainLike(const torch::Tensor& t, const torch::Tensor& p) {
  return !t.defined() || (t.is_cpu() && t.layout() == torch::kStrided && t.scalar_type() == torch::kFloat32 &&
                          t.is_contiguous() && t.sizes() == p.sizes());
}

// Whether the fused loop may update p: everything it touches is plain float32 memory on the CPU (state
// loaded from a checkpoint written on a GPU is not; LibTorch's step then names the mismatch).
template <typename StateMap>
bool fusable(const torch::Tensor& p, const torch::optim::AdamWOptions& options, const StateMap& states) {
  if (options.amsgrad() || !p.is_cpu() || p.scalar_type() != torch::kFloat32 || !p.is_contiguous() ||
      !plainLike(p.grad(), p))
    return false;
  const auto found = states.find(stateKey(states, p));
  if (found == states.end()) return true;
  const auto& s = static_cast<const torch::optim::AdamWParamState&>(*found->second);
  return s.exp_avg().defined() && s.exp_avg_sq().defined() && plainLike(s.exp_avg(), p) &&
         plainLike(s.exp_avg_sq(), p);
}

// LibTorch's AdamW update of one parameter, element by element (train/adamw_kernel.h), spread over the
// cores: equal to its step within rounding (its vectorized add_ may fuse a multiply-add; each element
// here is computed alone, so the result does not depend on how the elements are split).
void fusedUpdate(float* p, const float* g, float* m, float* v, int64_t n, double gradientScale,
                 const torch::optim::AdamWOptions& o, int64_t step) {
  const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
  AdamWCoefficients c;
  c.gradientScale = static_cast<float>(gradientScale);
  c.decay = static_cast<float>(1 - o.lr() * o.weight_decay());
  c.beta1 = static_cast<float>(beta1);
  c.beta2 = static_cast<float>(beta2);
  c.oneMinusBeta1 = static_cast<float>(1 - beta1);
  c.oneMinusBeta2 = static_cast<float>(1 - beta2);
  c.sqrtBiasCorrection2 = static_cast<float>(std::sqrt(1 - std::pow(beta2, static_cast<double>(step))));
  c.eps = static_cast<float>(o.eps());
  c.stepSize = static_cast<float>(-o.lr() / (1 - std::pow(beta1, static_cast<double>(step))));
  forEachPart(n, int64_t{1} << 16,
              [&](int64_t begin, int64_t end) { adamWUpdate(p, g, m, v, begin, end, c); });
}

// Whether the multi-tensor step may update every parameter that has a gradient: no amsgrad, each state
// already made shaped, typed and placed like its parameter, and one step count for all (the trainer steps
// them together). Anything else takes LibTorch's step, which names a mismatch.
template <typename StateMap>
bool foreachable(std::vector<torch::optim::OptimizerParamGroup>& groups, const StateMap& states) {
  std::optional<int64_t> step;
  for (auto& group : groups) {
    if (static_cast<torch::optim::AdamWOptions&>(group.options()).amsgrad()) return false;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (p.grad().is_sparse() || p.grad().device() != p.device() || p.grad().dtype() != p.dtype())
        return false;
      const auto found = states.find(stateKey(states, p));
      if (found == states.end()) {
        if (step.value_or(0) != 0) return false;
        step = 0;
        continue;
      }
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(*found->second);
      if (step.value_or(s.step()) != s.step()) return false;
      step = s.step();
      for (const torch::Tensor& t : {s.exp_avg(), s.exp_avg_sq()})
        if (!t.defined() || t.device() != p.device() || t.dtype() != p.dtype() || t.sizes() != p.sizes())
          return false;
    }
  }
  return true;
}

std::atomic<int64_t> fusedSteps{0}, foreachSteps{0}, libtorchSteps{0};

}  // namespace

AdamWStepCounts adamWStepCounts() { return {fusedSteps.load(), foreachSteps.load(), libtorchSteps.load()}; }

torch::optim::AdamWParamState& FusedAdamW::stateOf(const torch::Tensor& p) {
  auto& states = state();
  auto key = stateKey(states, p);
  auto found = states.find(key);
  if (found == states.end()) {
    auto fresh = std::make_unique<torch::optim::AdamWParamState>();
    fresh->step(0);
    fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    found = states.emplace(std::move(key), std::move(fresh)).first;
  }
  return static_cast<torch::optim::AdamWParamState&>(*found->second);
}

void FusedAdamW::foreachStep(double gradientScale) {
  // Parameters go in runs of at most 256 Mi elements: the update's one temporary (the denominator) is
  // never more than 1 GiB in float32, however large the model.
  constexpr int64_t kRunElements = int64_t{256} << 20;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<torch::optim::AdamWOptions&>(group.options());
    std::vector<torch::Tensor> params, grads, averages, squares;
    int64_t step = 0, elements = 0;
    auto update = [&] {
      if (params.empty()) return;
      const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
      const double correction1 = 1 - std::pow(beta1, static_cast<double>(step));
      const double correction2 = 1 - std::pow(beta2, static_cast<double>(step));
      // LibTorch's AdamW::step, operation by operation, in its order.
      if (gradientScale != 1.0) at::_foreach_mul_(grads, c10::Scalar(gradientScale));
      if (o.weight_decay() != 0) at::_foreach_mul_(params, c10::Scalar(1 - o.lr() * o.weight_decay()));
      at::_foreach_mul_(averages, c10::Scalar(beta1));
      at::_foreach_add_(averages, grads, c10::Scalar(1 - beta1));
      at::_foreach_mul_(squares, c10::Scalar(beta2));
      at::_foreach_addcmul_(squares, grads, grads, c10::Scalar(1 - beta2));
      std::vector<torch::Tensor> denominators = at::_foreach_sqrt(squares);
      at::_foreach_div_(denominators, c10::Scalar(std::sqrt(correction2)));
      at::_foreach_add_(denominators, c10::Scalar(o.eps()));
      at::_foreach_addcdiv_(params, averages, denominators, c10::Scalar(-o.lr() / correction1));
      params.clear(), grads.clear(), averages.clear(), squares.clear();
      elements = 0;
    };
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& s = stateOf(p);
      s.step(s.step() + 1);
      step = s.step();
      params.push_back(p), grads.push_back(p.grad()), averages.push_back(s.exp_avg());
      squares.push_back(s.exp_avg_sq());
      elements += p.numel();
      if (elements >= kRunElements) update();
    }
    update();
  }
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  const double gradientScale = std::exchange(m_gradientScale, 1.0);
  bool allFusable = true;
  for (auto& group : param_groups())
    for (auto& p : group.params())
      if (p.grad().defined())
        allFusable =
            allFusable && fusable(p, static_cast<torch::optim::AdamWOptions&>(group.options()), state());
  if (!allFusable && !foreachable(param_groups(), state())) {
    if (gradientScale != 1.0) {
      torch::NoGradGuard noGrad;
      for (auto& group : param_groups())
        for (auto& p : group.params())
          if (p.grad().defined()) p.mutable_grad().mul_(gradientScale);
    }
    ++libtorchSteps;
    return torch::optim::AdamW::step(closure);
  }

  torch::NoGradGuard noGrad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode withGradients(true);
    loss = closure();
  }
  if (!allFusable) {
    ++foreachSteps;
    foreachStep(gradientScale);
    return loss;
  }
  ++fusedSteps;
  for (auto& group : param_groups()) {
    const auto& options = static_cast<torch::optim::AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& s = stateOf(p);
      s.step(s.step() + 1);
      fusedUpdate(p.data_ptr<float>(), p.grad().data_ptr<float>(), s.exp_avg().data_ptr<float>(),
                  s.exp_avg_sq().data_ptr<float>(), p.numel(), gradientScale, options, s.step());
      p.unsafeGetTensorImpl()->bump_version();  // as an in-place op would: a graph that saved p notices
    }
  }
  return loss;
}

std::string loadedStateProblem(torch::optim::Optimizer& optimizer) {
  auto& states = optimizer.state();
  int64_t index = 0;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      const auto found = states.find(stateKey(states, p));
      ++index;
      if (found == states.end()) continue;  // never stepped: its state is made at its first step
      std::ostringstream problem;
      problem << "parameter " << index << " of " << p.sizes();
      const auto* s = dynamic_cast<const torch::optim::AdamWParamState*>(found->second.get());
      if (!s || !s->exp_avg().defined() || !s->exp_avg_sq().defined()) {
        problem << " has no AdamW moments";
        return problem.str();
      }
      if (s->exp_avg().sizes() != p.sizes() || s->exp_avg_sq().sizes() != p.sizes()) {
        problem << " has moments of " << s->exp_avg().sizes() << ": they are another model's";
        return problem.str();
      }
    }
  return {};
}

std::vector<torch::optim::OptimizerParamGroup> adamWParameterGroups(CausalLMImpl& model,
                                                                    const OptimizerSettings& o) {
  std::vector<torch::Tensor> decay, noDecay;
  for (auto& p : model.parameters()) (p.dim() >= 2 ? decay : noDecay).push_back(p);
  auto options = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(o.weightDecay));
  groups.emplace_back(noDecay, options(0.0));
  return groups;
}

std::unique_ptr<FusedAdamW> makeOptimizer(CausalLMImpl& model, const OptimizerSettings& o) {
  return std::make_unique<FusedAdamW>(adamWParameterGroups(model, o), torch::optim::AdamWOptions(o.lr));
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
