// GPT-2's activation (gelu_new, GELU's tanh approximation), with a vectorized CPU kernel. Engine-internal
// (torch).
#pragma once
#include <torch/torch.h>

namespace nf {

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), what torch::gelu(x, "tanh") computes, differentiable (twice).
// On the CPU in float32 a vectorized kernel computes it, forward and backward, as x·σ(2u) with
// u = √(2/π)·(x + 0.044715·x³) — the same function, since 1 + tanh(u) = 2σ(2u) — and stays within float32
// rounding of it. LibTorch's CPU kernel spends most of its time in an exact tanh: there this one runs 4–6×
// faster, about a tenth of a small model's training step. Elsewhere (CUDA, other dtypes, double backward):
// LibTorch's.
torch::Tensor geluTanh(const torch::Tensor& x);

}  // namespace nf
