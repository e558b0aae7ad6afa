#include "train/export.h"

#include <torch/torch.h>

#include <stdexcept>

#include "model/family.h"

namespace nf {
namespace {

void requireFakeEverywhere(const CausalLMImpl& model) {
  for (const SiteId& site : model.norms().sites()) {
    const SiteNorm& n = model.norms().at(site);
    if (!isFakeNorm(n.kind))
      throw std::invalid_argument(siteName(site) + " is " + normKindName(n.kind) +
                                  ": only a model whose every site is fake (FakeLN or FakeRMSNorm) can be "
                                  "exported LN-free");
    if (n.pos0Treatment || n.eotTreatment || n.realMix > 0)
      throw std::invalid_argument(
          siteName(site) + " still uses a special treatment or an interpolation ramp; switch them off first");
  }
}

// The family's norms subtract the mean (LayerNorm, FakeLN) rather than only divide (RMSNorm).
bool centring(const CausalLMImpl& model) { return centresInput(familyNamed(model.config().family).norm); }

}  // namespace

CausalLM foldLayerNorms(CausalLMImpl& fake) {
  requireFakeEverywhere(fake);
  ModelShape config = fake.config();
  // Centring rewrites the token embedding, which then only embeds: the unembedding keeps its own copy.
  if (centring(fake)) config.tiedUnembedding = false;
  CausalLM folded = copyModel(fake, config);
  torch::NoGradGuard noGrad;
  if (centring(fake))
    for (torch::Tensor w : folded->residualWriters()) w.copy_(w - w.mean(-1, true));
  for (int l = 0; l < config.nLayer; ++l) {
    // LN_qk and LN_v share γ and β: fold both before resetting them.
    for (SiteKind kind : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp}) {
      const SiteId site{kind, l};
      const auto params = folded->normWeights(site);
      const double s = fake.norms().at(site).scale;
      for (auto& reader : folded->readersOf(site)) {
        if (params.beta.defined())
          reader.bias.add_(torch::matmul(reader.weight, params.beta));  // before W changes
        reader.weight.mul_(params.gamma / s);
      }
    }
    for (SiteKind kind : {SiteKind::Qk, SiteKind::Mlp}) {
      const auto params = folded->normWeights({kind, l});
      params.gamma.fill_(1);
      if (params.beta.defined()) params.beta.zero_();
    }
    SiteNorm identity;
    identity.kind = NormKind::Identity;
    for (SiteKind kind : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp}) folded->norms().at({kind, l}) = identity;
  }
  return folded;
}

CausalLM standardFormatWithHugeEpsilon(CausalLMImpl& fake) {
  requireFakeEverywhere(fake);
  ModelShape config = fake.config();
  config.layerNormEpsilon = 1e12;
  CausalLM standard = copyModel(fake, config);
  const double root = 1e6;  // sqrt(ε)
  torch::NoGradGuard noGrad;
  for (int l = 0; l < config.nLayer; ++l) {
    const double sQk = fake.norms().at({SiteKind::Qk, l}).scale, sV = fake.norms().at({SiteKind::V, l}).scale;
    // V needs x̂/s_v·γ + β = r·(norm out − β) + β with r = s_qk/s_v: scale W_v by r, add (1−r)·W_v·β.
    const double r = sQk / sV;
    const auto attentionNorm = standard->normWeights({SiteKind::Qk, l});
    for (auto& reader : standard->readersOf({SiteKind::V, l})) {
      if (attentionNorm.beta.defined())
        reader.bias.add_((1 - r) * torch::matmul(reader.weight, attentionNorm.beta));
      reader.weight.mul_(r);
    }
    attentionNorm.gamma.mul_(root / sQk);
    standard->normWeights({SiteKind::Mlp, l}).gamma.mul_(root / fake.norms().at({SiteKind::Mlp, l}).scale);
  }
  standard->normWeights({SiteKind::Final, -1})
      .gamma.mul_(root / fake.norms().at({SiteKind::Final, -1}).scale);
  // Every site its family's own normalization again: the ε does the work.
  standard->norms() = nativeNorms(config);
  return standard;
}

double largestNormWeight(CausalLMImpl& model) {
  double largest = 0;
  for (const SiteId& site : model.norms().sites())
    largest = std::max(largest, model.normWeights(site).gamma.abs().max().item<double>());
  return largest;
}

}  // namespace nf
