// Applies one site's normalization (LayerNorm, FakeLN, RMSNorm, FakeRMSNorm, LayerNorm Scaling, identity) to
// a tensor. Every kind is "(x − μ) / divisor ⊙ γ + β" with its own divisor (RMSNorm and FakeRMSNorm do not
// centre, identity does nothing, LayerNorm Scaling multiplies by 1/sqrt(depth)), which is what lets hooks
// read and replace it.
#pragma once
#include <torch/types.h>

#include "model/norm_state.h"

namespace nf {

struct NormInputs {
  const torch::Tensor& x;      // [B, T, D]
  const torch::Tensor& gamma;  // [D]
  const torch::Tensor& beta;   // [D], or undefined for a family whose norms have no bias
  double eps;
  int depth;                    // 1-based depth for LayerNorm Scaling
  const torch::Tensor* tokens;  // [B, T] token ids, for the end-of-text treatment; may be null
  int eotTokenId;
};

// The per-token statistic a real norm divides by, [B, T] for x [B, T, D]: σ = sqrt(Var(x) + ε) when it
// centres (LayerNorm), the root mean square sqrt(mean(x²) + ε) when it does not (RMSNorm).
torch::Tensor tokenScale(const torch::Tensor& x, bool centred, double eps);

// The per-token divisor the site applies, [B, T]: σ for LayerNorm, s (or s_0) for FakeLN and FakeRMSNorm,
// rms for RMSNorm, 1 for identity.
torch::Tensor normDivisor(const SiteNorm& norm, const NormInputs& inputs);

// The site's output when dividing by `divisor` ([B, T]) instead of its own.
torch::Tensor normalizeBy(const SiteNorm& norm, const NormInputs& inputs, const torch::Tensor& divisor);

// The site's output; uses the fused LayerNorm kernel where it can.
torch::Tensor applyNorm(const SiteNorm& norm, const NormInputs& inputs);

}  // namespace nf
