// The training loss: the mean next-token cross-entropy, and on the CPU a fused way to compute it.
// Engine-internal (torch).
#pragma once
#include <torch/torch.h>

#include <optional>

#include "model/causal_lm.h"

namespace nf {

// How CUDA computes the training loss, chosen by NF_CUDA_CROSS_ENTROPY (issue 42's A/B; the memory
// planner, train/memory_plan.h, counts the whole logits, so it errs high for the other two):
//   "logits": cross_entropy over forward()'s logits, the whole micro-batch's at once (unset: the default
//             in a build without the engine's CUDA kernels);
//   "blocks": unembeddedCrossEntropy, its products in bf16 under autocast, the softmax by LibTorch's
//             operations in float32;
//   "kernel": the same blocks with the softmax by the engine's own row kernel (train/cross_entropy_cuda.h),
//             in the logits' type: only in a build with the engine's CUDA kernels (NF_CUDA_KERNELS), where
//             it is the default (measured on an H200 against "logits": GPT-2 Small's removal step 1.11×
//             as fast in 42 % of the memory; docs/BENCHMARKS.md).
// Any other value, or "kernel" in a build without them, is refused (std::invalid_argument naming it).
enum class CudaCrossEntropy { Logits, Blocks, Kernel };
CudaCrossEntropy cudaCrossEntropy();
const char* cudaCrossEntropyName(CudaCrossEntropy how);
bool ownCudaKernelsBuiltIn();  // whether this build has the engine's CUDA kernels (NF_CUDA_KERNELS)

// The mean cross-entropy of the model's next-token predictions for `inputs` ([B, T] ids) against `targets`
// ([B, T] ids on the model's device), differentiable. On the CPU through unembeddedCrossEntropy; on CUDA as
// cudaCrossEntropy() says.
torch::Tensor nextTokenCrossEntropy(CausalLMImpl& model, const torch::Tensor& inputs,
                                    const torch::Tensor& targets);

// mean over i of CE(hidden_i · unembeddingᵀ, targets_i) for hidden [N, D], unembedding [V, D], targets [N]:
// cross_entropy(hidden.mm(unembedding.t()), targets) within float32 rounding, values and gradients, without
// ever holding the [N, V] logits. It runs over blocks of rows whose logits fit the CPU's cache (on a GPU,
// 1 GiB of them): each block's product, log-sum-exp, softmax and both gradient products are done while the
// block is hot. Where a gradient is wanted, it is computed here, in the forward pass (the loss ends the
// graph; backward only scales it), so the logits are made once instead of kept for the backward pass. On
// the CPU in float32 each block's rows run through one vectorized kernel spread over the cores.
// productType (default: hidden's) is the dtype of the three products — bf16 as under autocast — with the
// softmax in float32 at least. Targets outside [0, V) are refused (on the CPU; a GPU's are not read back).
torch::Tensor unembeddedCrossEntropy(const torch::Tensor& hidden, const torch::Tensor& unembedding,
                                     const torch::Tensor& targets,
                                     std::optional<torch::ScalarType> productType = std::nullopt);

}  // namespace nf
