#include "analysis/analysis_kernels.h"

#include <torch/torch.h>

namespace nf {

torch::Tensor sequenceBatch(const TokenSequences& s, int64_t first, int64_t n, torch::Device device) {
  std::vector<int64_t> ids(s.row(first), s.row(first) + n * s.length);
  return torch::tensor(ids, torch::kLong).view({n, s.length}).to(device);
}

void forEachBatch(const TokenSequences& s, int64_t batchSize, torch::Device device,
                  const std::function<void(const torch::Tensor&, int64_t)>& visit, const ProgressFn& progress,
                  const std::string& task) {
  torch::NoGradGuard noGrad;
  for (int64_t first = 0; first < s.count; first += batchSize) {
    const int64_t n = std::min(batchSize, s.count - first);
    visit(sequenceBatch(s, first, n, device), first);
    if (progress) progress({task, first + n, s.count, "sequences", first + n == s.count});
  }
}

torch::Tensor positionZeroAttention(const torch::Tensor& pattern) { return pattern.select(-1, 0).mean(-1); }

std::vector<float> toVector(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

std::vector<double> toDoubles(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace nf
