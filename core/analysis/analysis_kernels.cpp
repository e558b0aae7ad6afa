#include "analysis/analysis_kernels.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

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

torch::Tensor cosineVariances(const torch::Tensor& rows, const torch::Tensor& vectors, int64_t maxCosines) {
  const torch::Tensor unitRows = rows / rows.norm(2, 1, /*keepdim=*/true);
  const torch::Tensor norms = vectors.norm(2, 1, /*keepdim=*/true);
  const torch::Tensor unitVectors = vectors / torch::where(norms.gt(0), norms, torch::ones_like(norms));
  const int64_t F = vectors.size(0);
  const int64_t chunk = std::max<int64_t>(1, maxCosines / std::max<int64_t>(1, rows.size(0)));
  std::vector<torch::Tensor> parts;
  for (int64_t first = 0; first < F; first += chunk)
    parts.push_back(unitRows.matmul(unitVectors.slice(0, first, std::min(F, first + chunk)).t())
                        .var(0, /*unbiased=*/true));
  return torch::cat(parts);
}

std::vector<double> toDoubles(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace nf
