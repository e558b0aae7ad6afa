// Causal self-attention: the pattern hooks read, and the attention every family's blocks run.
// Engine-internal (torch).
#pragma once
#include <torch/torch.h>

namespace nf {

// The causal attention pattern softmax(q·kᵀ/√dh + causal mask), [B, H, T, T], for q, k [B, H, T, dh]:
// what hooks read and replace, and the definition causalAttention computes without hooks.
torch::Tensor causalPattern(const torch::Tensor& q, const torch::Tensor& k);

// Causal self-attention of q, k, v ([B, H, T, dh]): causalPattern(q, k)·v, [B, H, T, dh], differentiable.
// - LibTorch 2.x: scaled_dot_product_attention, a fused kernel that never materializes the T×T pattern where
//   one applies.
// - LibTorch 1.13 on the CPU: causalAttentionByHead.
// - Otherwise the math path, causalPattern(q, k)·v.
torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// causalPattern(q, k)·v within rounding, values and gradients, for q, k, v [B, H, T, dh] on the CPU, as a
// transposed view of a contiguous [B, T, H, dh] result (so merging the heads back is free). Each head's
// products run on its [T, dh] slices where they lie — the heads of a fused projection need no copy into
// [B·H, T, dh] — with the 1/√dh scale folded into them; the mask and both softmax passes run once over all
// heads, in place. LibTorch 1.13's batched product copies its operands and calls BLAS per matrix anyway.
// Slices whose dh stride is not 1 are still right, but BLAS gets a copy of each. No double backward.
torch::Tensor causalAttentionByHead(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

}  // namespace nf
