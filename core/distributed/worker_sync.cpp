#include "distributed/worker_sync.h"

#include <torch/torch.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/causal_lm.h"

namespace nf {

std::string onWorker0(WorkerGroup* group, const std::string& during,
                      const std::function<std::string()>& work) {
  if (!group) return work();
  const bool main = group->isMain();
  nlohmann::json outcome{{"during", during}};
  std::exception_ptr failure;
  if (main) {
    try {
      outcome["text"] = work();
    } catch (const std::exception& e) {
      failure = std::current_exception();
      outcome["error"] = e.what();
    }
  }
  outcome = nlohmann::json::parse(group->broadcastText(main ? outcome.dump() : "", during));
  if (failure) std::rethrow_exception(failure);
  // Paired by order alone, a worker joining a new run while worker 0 resumes one would read a checkpoint's
  // path as the run's settings.
  if (outcome["during"] != during)
    throw std::runtime_error("worker 0 is at " + outcome["during"].get<std::string>() + ", this worker at " +
                             during +
                             ": start every worker with the same command (resume with resume, a new "
                             "run with its own command or join)");
  if (outcome.contains("error"))
    throw std::runtime_error("worker 0 stopped the run during " + during + ": " +
                             outcome["error"].get<std::string>());
  return outcome["text"];
}

void broadcastWeights(WorkerGroup* group, const std::vector<torch::Tensor>& parameters) {
  if (!group) return;
  torch::NoGradGuard noGrad;
  for (torch::Tensor p : parameters) group->broadcast(p, "the initial weights");
}

void requireWorkersAgree(WorkerGroup* group, CausalLMImpl& model, const std::array<uint64_t, 4>& dataPosition,
                         int64_t step) {
  if (!group) return;
  torch::NoGradGuard noGrad;
  const auto named = model.named_parameters();
  const torch::Device device = named.size() > 0 ? named[0].value().device() : torch::Device(torch::kCPU);
  std::vector<torch::Tensor> prints;
  for (const auto& item : named) {
    const torch::Tensor p = item.value().detach().to(torch::kFloat64);
    prints.push_back(p.sum());
    prints.push_back(p.pow(2).sum());
  }
  for (uint64_t word : dataPosition)  // in 32-bit halves, which float64 holds exactly
    for (uint64_t half : std::array<uint64_t, 2>{word >> 32, word & 0xffffffffU})
      prints.push_back(torch::full({}, static_cast<double>(half), torch::kFloat64).to(device));
  const std::string during = "the workers' agreement check at step " + std::to_string(step);
  const torch::Tensor all = group->gather(torch::stack(prints), during).to(torch::kCPU);
  for (int r = 1; r < group->size(); ++r) {
    const torch::Tensor differs = all[r].ne(all[0]).nonzero();
    if (differs.size(0) == 0) continue;
    const int64_t first = differs[0][0].item<int64_t>();
    const std::string what = first < 2 * static_cast<int64_t>(named.size())
                                 ? "parameter " + named[first / 2].key()
                                 : std::string("data position (sampler state)");
    throw std::runtime_error("step " + std::to_string(step) + ": worker " + std::to_string(r) +
                             " no longer agrees with worker 0 (its " + what +
                             " differs): the workers diverged, so this step is not checkpointed. Resume "
                             "from the last checkpoint; if it happens again, report it.");
  }
}

}  // namespace nf
