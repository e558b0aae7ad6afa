// The training loss: the mean next-token cross-entropy, and on the CPU a fused way to compute it.
// Engine-internal (torch).
#pragma once
#include <torch/torch.h>

#include <optional>

#include "model/causal_lm.h"
#include "train/cross_entropy_choice.h"

namespace nf {

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
