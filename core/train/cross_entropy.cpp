#include "train/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cpu_threads.h"
#include "util/vector_math.h"

#ifdef NF_CUDA_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "train/cross_entropy_cuda.h"
#endif

namespace nf {

namespace {

// For float32 rows [begin, end) of z [·, V]: losses[r] = log Σ_v exp(z[r, v]) − z[r, target[r]], and, where
// `gradient`, z[r] replaced by softmax(z[r]) − onehot(target[r]), the loss's gradient — three vectorized
// passes over each row (its maximum; exponentials and their sum; the scaling) where LibTorch's operations
// took six.
NF_VECTOR_CLONES void softmaxCrossEntropyRows(float* z, int64_t V, const int64_t* targets, bool gradient,
                                              int64_t begin, int64_t end, double* losses) {
  constexpr int kLanes = 16;
  const int64_t whole = V / kLanes * kLanes;
  for (int64_t r = begin; r < end; ++r) {
    float* row = z + r * V;
    float lanes[kLanes];
    std::fill(lanes, lanes + kLanes, -std::numeric_limits<float>::infinity());
    for (int64_t v = 0; v < whole; v += kLanes)
      for (int l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], row[v + l]);
    float largest = *std::max_element(lanes, lanes + kLanes);
    for (int64_t v = whole; v < V; ++v) largest = std::max(largest, row[v]);
    const float targetLogit = row[targets[r]];
    std::fill(lanes, lanes + kLanes, 0.0f);
    for (int64_t v = 0; v < whole; v += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float e = exponential(row[v + l] - largest);
        row[v + l] = e;
        lanes[l] += e;
      }
    double sum = 0;
    for (float e : lanes) sum += e;
    for (int64_t v = whole; v < V; ++v) sum += row[v] = exponential(row[v] - largest);
    losses[r] = std::log(sum) - (static_cast<double>(targetLogit) - largest);
    if (!gradient) continue;
    const float inverse = static_cast<float>(1.0 / sum);
    for (int64_t v = 0; v < V; ++v) row[v] *= inverse;
    row[targets[r]] -= 1.0f;
  }
}

#ifdef NF_CUDA_KERNELS
// blockLoss through the row kernel of cross_entropy_cuda.cu, in z's own type.
torch::Tensor kernelBlockLoss(torch::Tensor& z, const torch::Tensor& targets, bool gradient) {
  TORCH_CHECK(z.scalar_type() == torch::kFloat || z.scalar_type() == torch::kBFloat16 ||
                  z.scalar_type() == torch::kHalf,
              "the cross-entropy kernel takes float32, bf16 or float16 logits, not ", z.scalar_type());
  const cuda::LogitType type = z.scalar_type() == torch::kBFloat16 ? cuda::LogitType::BFloat16
                               : z.scalar_type() == torch::kHalf   ? cuda::LogitType::Float16
                                                                   : cuda::LogitType::Float32;
  TORCH_CHECK(z.is_contiguous() && targets.is_contiguous() && targets.scalar_type() == torch::kLong &&
                  targets.device() == z.device(),
              "the cross-entropy kernel takes contiguous logits and int64 targets on one device");
  const c10::cuda::CUDAGuard onDevice(z.device());
  const torch::Tensor losses = torch::empty({z.size(0)}, z.options().dtype(torch::kFloat));
  cuda::softmaxCrossEntropyRows(z.data_ptr(), type, z.size(0), z.size(1), targets.data_ptr<int64_t>(),
                                gradient, losses.data_ptr<float>(),
                                c10::cuda::getCurrentCUDAStream(z.device().index()).stream());
  return losses.sum();
}
#endif

// The summed loss of a block's logits z [n, V] (the products' type) against targets [n], the softmax in
// float32 at least, and, where `gradient`, z replaced by the loss's gradient softmax(z) − onehot(targets), in
// place.
torch::Tensor blockLoss(torch::Tensor& z, const torch::Tensor& targets, bool gradient) {
#ifdef NF_CUDA_KERNELS
  if (z.is_cuda() && z.scalar_type() != torch::kDouble && cudaCrossEntropy() == CudaCrossEntropy::Kernel)
    return kernelBlockLoss(z, targets, gradient);
#endif
  const torch::ScalarType softmaxType = at::promote_types(z.scalar_type(), torch::kFloat);
  if (z.scalar_type() != softmaxType) {
    torch::Tensor zSoftmax = z.to(softmaxType);
    torch::Tensor loss = blockLoss(zSoftmax, targets, gradient);
    if (gradient) z.copy_(zSoftmax);  // the gradient, back in the products' type
    return loss;
  }
  if (z.is_cpu() && z.scalar_type() == torch::kFloat) {
    std::vector<double> losses(z.size(0));
    forEachPart(z.size(0), 16, [&](int64_t begin, int64_t end) {
      softmaxCrossEntropyRows(z.data_ptr<float>(), z.size(1), targets.data_ptr<int64_t>(), gradient, begin,
                              end, losses.data());
    });
    double sum = 0;
    for (double loss : losses) sum += loss;  // in row order: the same bits on any number of cores
    return torch::tensor(sum, z.options());
  }
  // Other dtypes: softmax in place, no temporary of the block's size: z − max, its exponential, the row
  // sums; the loss is log(sum) − (z_target − max). (torch::logsumexp would allocate z − max again.)
  const torch::Tensor t = targets.unsqueeze(1);
  z.sub_(z.amax(1, /*keepdim=*/true));
  const torch::Tensor targetLogit = z.gather(1, t);
  const torch::Tensor sum = z.exp_().sum(1, /*keepdim=*/true);
  if (gradient) z.div_(sum).scatter_add_(1, t, torch::full({z.size(0), 1}, -1.0, z.options()));
  return (sum.log() - targetLogit).sum();
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct UnembeddedCrossEntropy : torch::autograd::Function<UnembeddedCrossEntropy> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& hidden,
                               const torch::Tensor& unembedding, const torch::Tensor& targets,
                               torch::ScalarType productType) {
    const int64_t N = hidden.size(0), V = unembedding.size(0), rows = lossRowsPerBlock(N, V, hidden.is_cpu());
    const bool hiddenGradient = hidden.requires_grad(), unembeddingGradient = unembedding.requires_grad();
    const bool gradient = hiddenGradient || unembeddingGradient;
    const double perRow = 1.0 / static_cast<double>(N);
    // The products in productType, the softmax in float32 at least: as autocast computes the logits and
    // cross_entropy. Nothing here is autocast again (explicit types, whoever calls).
    c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    const torch::ScalarType softmaxType = at::promote_types(productType, torch::kFloat);
    const bool castLogits = productType != softmaxType;
    torch::Tensor gradHidden, gradUnembedding;
    if (hiddenGradient) gradHidden = torch::empty_like(hidden, torch::MemoryFormat::Contiguous);
    // The unembedding's gradient is summed transposed, [D, V]: BLAS runs hᵀ·z 3–13 % faster than zᵀ·h at
    // the shapes measured (docs/BENCHMARKS.md), and one transposing copy at the end costs less than that.
    if (unembeddingGradient) gradUnembedding = torch::zeros({unembedding.size(1), V}, unembedding.options());
    const torch::Tensor targetIds = targets.to(torch::kLong).contiguous();
    // On a GPU this check would wait for the device in every micro-batch; there the ids were checked on
    // the host already (CausalLMImpl::checkTokens, token files' own range check).
    TORCH_CHECK(N == 0 || !targetIds.is_cpu() ||
                    (targetIds.min().item<int64_t>() >= 0 && targetIds.max().item<int64_t>() < V),
                "unembeddedCrossEntropy: a target token id is outside the vocabulary [0, ", V, ")");
    const torch::Tensor productUnembedding = unembedding.to(productType);
    const torch::Tensor unembeddingT = productUnembedding.t();
    torch::Tensor logits = torch::empty({rows, V}, hidden.options().dtype(productType));  // one per block
    torch::Tensor lossSum = torch::zeros({}, hidden.options().dtype(softmaxType));
    for (int64_t start = 0; start < N; start += rows) {
      const int64_t n = std::min(rows, N - start);
      const torch::Tensor h = hidden.narrow(0, start, n).to(productType);
      torch::Tensor z = logits.narrow(0, 0, n);
      torch::mm_out(z, h, unembeddingT);
      lossSum += blockLoss(z, targetIds.narrow(0, start, n), gradient);  // z: now the gradient, if wanted
      if (hiddenGradient) {
        torch::Tensor rowsOfGradHidden = gradHidden.narrow(0, start, n);
        if (castLogits)
          rowsOfGradHidden.copy_(torch::mm(z, productUnembedding));
        else
          torch::mm_out(rowsOfGradHidden, z, productUnembedding);
      }
      if (unembeddingGradient) {
        if (castLogits)
          gradUnembedding.add_(torch::mm(h.t(), z), perRow);
        else
          gradUnembedding.addmm_(h.t(), z, /*beta=*/1, /*alpha=*/perRow);
      }
    }
    if (unembeddingGradient) gradUnembedding = gradUnembedding.t().contiguous();
    if (hiddenGradient) gradHidden.mul_(perRow);
    ctx->saved_data["grad_hidden"] = gradHidden;
    ctx->saved_data["grad_unembedding"] = gradUnembedding;
    return lossSum * perRow;
  }

  static variable_list backward(AutogradContext* ctx, variable_list outputGrads) {
    // The gradients were computed in forward, outside any graph: there is nothing to differentiate again.
    TORCH_CHECK(
        !torch::GradMode::is_enabled(),
        "unembeddedCrossEntropy has no double backward (create_graph): use cross_entropy over the logits");
    const torch::Tensor& scale = outputGrads[0];  // 1 when the loss is what backward() starts from
    auto scaled = [&](const char* name) {
      // Taken out of the context, so autograd can adopt the tensor as the parameter's gradient instead of
      // copying it (a second [V, D] for an untied unembedding). Backward runs once: no retained graph.
      torch::Tensor g = ctx->saved_data[name].toTensor();
      ctx->saved_data.erase(name);
      if (!g.defined() || (scale.is_cpu() && scale.item<double>() == 1.0)) return g;
      return g.mul_(scale);  // in place: no second [V, D] per micro-batch (on a GPU, where scale is not read)
    };
    return {scaled("grad_hidden"), scaled("grad_unembedding"), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor unembeddedCrossEntropy(const torch::Tensor& hidden, const torch::Tensor& unembedding,
                                     const torch::Tensor& targets,
                                     std::optional<torch::ScalarType> productType) {
  TORCH_CHECK(hidden.dim() == 2 && unembedding.dim() == 2 && hidden.size(1) == unembedding.size(1) &&
                  targets.dim() == 1 && targets.size(0) == hidden.size(0) && unembedding.size(0) > 0,
              "unembeddedCrossEntropy: hidden [N, D], unembedding [V > 0, D] and targets [N] expected");
  TORCH_CHECK(hidden.scalar_type() == unembedding.scalar_type(),
              "unembeddedCrossEntropy: hidden and unembedding differ in dtype (name a productType instead)");
  const torch::ScalarType products = productType.value_or(hidden.scalar_type());
  // Inside the Function grad mode is off, but parameters still say they require gradients: decide here.
  if (!torch::GradMode::is_enabled())
    return UnembeddedCrossEntropy::apply(hidden.detach(), unembedding.detach(), targets, products);
  return UnembeddedCrossEntropy::apply(hidden, unembedding, targets, products);
}

bool ownCudaKernelsBuiltIn() {
#ifdef NF_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

// On the CPU about 4 Mi logits per block (16 MiB in float32: within the L3 cache of the CPUs measured), and
// at least 256 rows so the unembedding's gradient product keeps an inner dimension BLAS runs well (that
// minimum wins from a vocabulary of 16,384: GPT-2's blocks hold 12.9 Mi logits). On a GPU 256 Mi logits
// (1 GiB in float32; GPT-2: 5,341 rows), large enough that each block's products fill the device.
int64_t lossRowsPerBlock(int64_t rows, int64_t vocab, bool cpu) {
  const int64_t logits = cpu ? int64_t{4} << 20 : int64_t{256} << 20;
  return std::min(rows, std::max<int64_t>(256, logits / vocab));
}

CudaCrossEntropy cudaCrossEntropy() {
  const char* choice = std::getenv("NF_CUDA_CROSS_ENTROPY");
  const std::string how = choice == nullptr ? "" : choice;
  if (how.empty()) return ownCudaKernelsBuiltIn() ? CudaCrossEntropy::Kernel : CudaCrossEntropy::Logits;
  if (how == "logits") return CudaCrossEntropy::Logits;
  if (how == "blocks") return CudaCrossEntropy::Blocks;
  if (how == "kernel") {
    if (ownCudaKernelsBuiltIn()) return CudaCrossEntropy::Kernel;
    throw std::invalid_argument(
        "NF_CUDA_CROSS_ENTROPY=kernel: this build has no CUDA kernels of its own (CMake found no "
        "CUDA compiler beside a CUDA LibTorch); use \"blocks\" or \"logits\"");
  }
  throw std::invalid_argument("NF_CUDA_CROSS_ENTROPY=" + how + ": not one of logits, blocks, kernel");
}

const char* cudaCrossEntropyName(CudaCrossEntropy how) {
  switch (how) {
    case CudaCrossEntropy::Blocks:
      return "blocks";
    case CudaCrossEntropy::Kernel:
      return "kernel";
    case CudaCrossEntropy::Logits:
      break;
  }
  return "logits";
}

torch::Tensor nextTokenCrossEntropy(CausalLMImpl& model, const torch::Tensor& inputs,
                                    const torch::Tensor& targets) {
  const bool cpu = model.device().is_cpu();
  if (!cpu && cudaCrossEntropy() == CudaCrossEntropy::Logits) {
    const torch::Tensor logits = model.forward(inputs);
    return torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets.reshape({-1}));
  }
  torch::Tensor hidden = model.finalHidden(inputs);
  hidden = hidden.reshape({-1, hidden.size(-1)});
  const torch::Tensor unembedding = model.unembedding();
  // Under bf16 autocast forward() multiplies by the unembedding in bf16: so do the blocks.
  const bool bf16 = !cpu && model.cudaBf16Autocast();
  return unembeddedCrossEntropy(bf16 ? hidden.to(unembedding.scalar_type()) : hidden, unembedding,
                                targets.reshape({-1}), bf16 ? std::optional(torch::kBFloat16) : std::nullopt);
}

}  // namespace nf
