// Applies one site's normalization (LayerNorm, FakeLN, RMSNorm, LayerNorm Scaling, identity) to a tensor.
#pragma once
#include <torch/types.h>

#include "model/norm_state.h"

namespace nf {

struct NormInputs {
  const torch::Tensor& x;       // [B, T, D]
  const torch::Tensor& gamma;   // [D]
  const torch::Tensor& beta;    // [D]
  double eps;
  int depth;                    // 1-based depth for LayerNorm Scaling
  const torch::Tensor* tokens;  // [B, T] token ids, for the end-of-text treatment; may be null
  int eotTokenId;
};

// Normalizes inputs.x as `norm` says. When scaleOut is non-null it receives the per-token divisor
// actually applied, [B, T] (σ for LayerNorm, s / s_0 for FakeLN, rms for RMSNorm, 1 for identity).
torch::Tensor applyNorm(const SiteNorm& norm, const NormInputs& inputs, torch::Tensor* scaleOut = nullptr);

}  // namespace nf
