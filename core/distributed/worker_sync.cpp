#include "distributed/worker_sync.h"

#include <torch/torch.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/causal_lm.h"
#include "util/fnv1a.h"

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

uint64_t sampledFilesFingerprint(const std::vector<std::string>& paths) {
  constexpr std::streamoff kSample = 1 << 20;
  Fnv1a fnv;  // the same on every worker, whatever its build
  std::vector<char> buffer(static_cast<std::size_t>(kSample));
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    fnv.add({reinterpret_cast<const char*>(&size), sizeof size});
    for (const std::streamoff at : {std::streamoff{0}, std::max<std::streamoff>(0, size - kSample)}) {
      if (size <= 0) break;
      in.seekg(at);
      in.read(buffer.data(), std::min(kSample, size - at));
      fnv.add({buffer.data(), static_cast<std::size_t>(in.gcount())});
    }
  }
  return fnv.hash;
}

void requireWorkersAgree(WorkerGroup* group, CausalLMImpl& model, const std::array<uint64_t, 4>& dataPosition,
                         uint64_t dataFiles, int64_t step, bool atStart) {
  if (!group) return;
  torch::NoGradGuard noGrad;
  const auto named = model.named_parameters();
  const torch::Device device = named.size() > 0 ? named[0].value().device() : torch::Device(torch::kCPU);
  if (atStart) {  // the models' parameters by name and shape first: lists of other lengths cannot be gathered
    std::string layout;
    for (const auto& item : named) layout += item.key() + " " + c10::str(item.value().sizes()) + "\n";
    Fnv1a fnv;
    fnv.add(layout);
    const uint64_t print = fnv.hash;
    const torch::Tensor mine =
        torch::tensor({static_cast<double>(named.size()), static_cast<double>(print >> 32),
                       static_cast<double>(print & 0xffffffffU)},
                      torch::TensorOptions().dtype(torch::kFloat64).device(device));
    const torch::Tensor all = group->gather(mine, "the workers' check of their models").to(torch::kCPU);
    for (int r = 1; r < group->size(); ++r)
      if (!all[r].equal(all[0]))
        throw std::runtime_error(
            "worker " + std::to_string(r) + " does not start as worker 0 does (its model has " +
            std::to_string(all[r][0].item<int64_t>()) +
            " parameters named and shaped otherwise "
            "than worker 0's " +
            std::to_string(named.size()) + "): every worker must read the same model or checkpoint");
  }
  std::vector<torch::Tensor> prints;
  for (const auto& item : named) {
    const torch::Tensor p = item.value().detach().to(torch::kFloat64);
    prints.push_back(p.sum());
    prints.push_back(p.pow(2).sum());
  }
  std::vector<uint64_t> words(dataPosition.begin(), dataPosition.end());
  words.push_back(dataFiles);
  for (uint64_t word : words)  // in 32-bit halves, which float64 holds exactly
    for (uint64_t half : std::array<uint64_t, 2>{word >> 32, word & 0xffffffffU})
      prints.push_back(torch::full({}, static_cast<double>(half), torch::kFloat64).to(device));
  const std::string during = atStart ? std::string("the workers' agreement check at the start")
                                     : "the workers' agreement check at step " + std::to_string(step);
  const torch::Tensor all = group->gather(torch::stack(prints), during).to(torch::kCPU);
  for (int r = 1; r < group->size(); ++r) {
    const torch::Tensor differs = all[r].ne(all[0]).nonzero();
    if (differs.size(0) == 0) continue;
    const int64_t first = differs[0][0].item<int64_t>(), parameters = 2 * static_cast<int64_t>(named.size());
    const std::string what = first < parameters           ? "parameter " + named[first / 2].key()
                             : first < parameters + 2 * 4 ? std::string("data position (sampler state)")
                                                          : std::string(
                                                                "training or evaluation data files "
                                                                "(their contents)");
    const std::string worker = "worker " + std::to_string(r);
    if (atStart)
      throw std::runtime_error(worker + " does not start as worker 0 does (its " + what +
                               " differs): every worker must read the same model or checkpoint and the same "
                               "data (a shared file system, or identical copies at the same paths)");
    throw std::runtime_error("step " + std::to_string(step) + ": " + worker +
                             " no longer agrees with worker 0 (its " + what +
                             " differs): the workers diverged, so this step is not checkpointed. Resume "
                             "from the last checkpoint; if it happens again, report it.");
  }
}

}  // namespace nf
