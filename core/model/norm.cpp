#include "model/norm.h"

#include <cmath>

namespace nf {
namespace {

// Per-token FakeLN divisor [B, T, 1]: s everywhere, s_0 where a special treatment applies.
torch::Tensor fakeScale(const SiteNorm& n, const NormInputs& in) {
  const auto B = in.x.size(0), T = in.x.size(1);
  auto opts = in.x.options();
  if (!n.pos0Treatment && !n.eotTreatment) return torch::full({1, 1, 1}, n.scale, opts).expand({B, T, 1});
  auto special = torch::zeros({B, T}, opts.dtype(torch::kBool));
  if (n.pos0Treatment) special.select(1, 0).fill_(true);
  if (n.eotTreatment && in.tokens) special = special | in.tokens->eq(in.eotTokenId);
  return torch::where(special, torch::full({}, n.scalePos0, opts), torch::full({}, n.scale, opts)).unsqueeze(-1);
}

}  // namespace

torch::Tensor applyNorm(const SiteNorm& norm, const NormInputs& in, torch::Tensor* scaleOut) {
  const torch::Tensor& x = in.x;
  switch (norm.kind) {
    case NormKind::Identity:
      if (scaleOut) *scaleOut = torch::ones({x.size(0), x.size(1)}, x.options());
      return x;
    case NormKind::RMSNorm: {
      auto rms = (x.pow(2).mean(-1, true) + in.eps).sqrt();
      if (scaleOut) *scaleOut = rms.squeeze(-1);
      return x / rms * in.gamma + in.beta;
    }
    case NormKind::FakeLN: {
      auto s = fakeScale(norm, in);
      if (scaleOut) *scaleOut = s.squeeze(-1);
      return (x - x.mean(-1, true)) / s * in.gamma + in.beta;
    }
    case NormKind::LayerNorm:
    case NormKind::LayerNormScaling: {
      torch::Tensor y;
      if (scaleOut) {
        auto centered = x - x.mean(-1, true);
        auto sigma = (centered.pow(2).mean(-1, true) + in.eps).sqrt();
        *scaleOut = sigma.squeeze(-1);
        y = centered / sigma * in.gamma + in.beta;
      } else {
        y = torch::layer_norm(x, {x.size(-1)}, in.gamma, in.beta, in.eps);  // fused kernel when nobody looks
      }
      if (norm.kind == NormKind::LayerNormScaling) y = y * (1.0 / std::sqrt(static_cast<double>(std::max(1, in.depth))));
      return y;
    }
  }
  return x;
}

}  // namespace nf
