#include "model/norm.h"

#include <cmath>

namespace nf {
namespace {

double depthFactor(const SiteNorm& norm, const NormInputs& in) {
  return norm.kind == NormKind::LayerNormScaling ? 1.0 / std::sqrt(static_cast<double>(std::max(1, in.depth)))
                                                 : 1.0;
}

// A fake norm's divisor [B, T]: s everywhere, s_0 where a special treatment applies.
torch::Tensor fakeDivisor(const SiteNorm& n, const NormInputs& in) {
  const auto B = in.x.size(0), T = in.x.size(1);
  auto opts = in.x.options();
  if (!n.pos0Treatment && !n.eotTreatment) return torch::full({B, T}, n.scale, opts);
  auto special = torch::zeros({B, T}, opts.dtype(torch::kBool));
  if (n.pos0Treatment) special.select(1, 0).fill_(true);
  if (n.eotTreatment && in.tokens) special = special | in.tokens->eq(in.eotTokenId);
  return torch::where(special, torch::full({}, n.scalePos0, opts), torch::full({}, n.scale, opts));
}

}  // namespace

torch::Tensor tokenScale(const torch::Tensor& x, bool centred, double eps) {
  return ((centred ? x.var(-1, /*unbiased=*/false) : x.pow(2).mean(-1)) + eps).sqrt();
}

torch::Tensor normDivisor(const SiteNorm& norm, const NormInputs& in) {
  const torch::Tensor& x = in.x;
  switch (norm.kind) {
    case NormKind::Identity:
      return torch::ones({x.size(0), x.size(1)}, x.options());
    case NormKind::FakeLN:
    case NormKind::FakeRMSNorm:
      if (norm.realMix > 0)
        return norm.realMix * tokenScale(x, centresInput(norm.kind), in.eps) +
               (1 - norm.realMix) * fakeDivisor(norm, in);
      return fakeDivisor(norm, in);
    case NormKind::RMSNorm:
    case NormKind::LayerNorm:
    case NormKind::LayerNormScaling:
      return tokenScale(x, centresInput(norm.kind), in.eps);
  }
  return {};
}

torch::Tensor normalizeBy(const SiteNorm& norm, const NormInputs& in, const torch::Tensor& divisor) {
  if (norm.kind == NormKind::Identity) return in.x;
  const torch::Tensor numerator = centresInput(norm.kind) ? in.x - in.x.mean(-1, true) : in.x;
  torch::Tensor y = numerator / divisor.unsqueeze(-1) * in.gamma;
  if (in.beta.defined()) y = y + in.beta;
  const double factor = depthFactor(norm, in);
  return factor == 1.0 ? y : y * factor;
}

torch::Tensor applyNorm(const SiteNorm& norm, const NormInputs& in) {
  if ((norm.kind == NormKind::LayerNorm || norm.kind == NormKind::LayerNormScaling) && in.beta.defined()) {
    auto y = torch::layer_norm(in.x, {in.x.size(-1)}, in.gamma, in.beta, in.eps);
    const double factor = depthFactor(norm, in);
    return factor == 1.0 ? y : y * factor;
  }
  return normalizeBy(norm, in, normDivisor(norm, in));
}

}  // namespace nf
