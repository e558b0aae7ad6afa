#include "train/export.h"

#include <torch/torch.h>

#include <stdexcept>

#include "model/gpt2.h"

namespace nf {
namespace {

// The export arithmetic below is GPT-2's (Conv1D layout, fused q/k/v); other families bring their own.
GPT2Impl& gpt2(CausalLMImpl& model) {
  auto* family = dynamic_cast<GPT2Impl*>(&model);
  if (!family) throw std::invalid_argument("LN-free export is implemented for GPT-2 models only");
  return *family;
}

void requireFakeEverywhere(const CausalLMImpl& model) {
  for (const SiteId& site : model.norms().sites()) {
    const SiteNorm& n = model.norms().at(site);
    if (n.kind != NormKind::FakeLN)
      throw std::invalid_argument(siteName(site) + " is " + normKindName(n.kind) +
                                  ": only a model whose every site is FakeLN can be exported LN-free");
    if (n.pos0Treatment || n.eotTreatment || n.realMix > 0)
      throw std::invalid_argument(
          siteName(site) + " still uses a special treatment or an interpolation ramp; switch them off first");
  }
}

torch::Tensor centredRows(const torch::Tensor& w) { return w - w.mean(-1, true); }

}  // namespace

CausalLM foldLayerNorms(CausalLMImpl& fake) {
  requireFakeEverywhere(fake);
  ModelShape config = fake.config();
  config.tiedUnembedding = false;
  CausalLM foldedModel = copyModel(gpt2(fake), config);
  GPT2Impl* folded = &gpt2(*foldedModel);
  const int64_t D = config.nEmbd;
  torch::NoGradGuard noGrad;
  folded->wte->weight.copy_(centredRows(folded->wte->weight));
  folded->wpe->weight.copy_(centredRows(folded->wpe->weight));
  for (int l = 0; l < config.nLayer; ++l) {
    auto& block = *folded->blockAt(l);
    const torch::Tensor gamma = block.ln_1->weight, beta = block.ln_1->bias;
    const double sQk = fake.norms().at({SiteKind::Qk, l}).scale, sV = fake.norms().at({SiteKind::V, l}).scale;
    torch::Tensor W = block.attn->c_attn->weight, b = block.attn->c_attn->bias;  // [D, 3D], [3D]
    b.add_(torch::matmul(beta, W));                                              // β·W, before W changes
    W.slice(1, 0, 2 * D).mul_((gamma / sQk).unsqueeze(1));
    W.slice(1, 2 * D).mul_((gamma / sV).unsqueeze(1));
    const double sMlp = fake.norms().at({SiteKind::Mlp, l}).scale;
    torch::Tensor Wfc = block.mlp->c_fc->weight, bfc = block.mlp->c_fc->bias;
    bfc.add_(torch::matmul(block.ln_2->bias, Wfc));
    Wfc.mul_((block.ln_2->weight / sMlp).unsqueeze(1));
    // Writers to the residual: centred output rows.
    for (auto* proj : {&block.attn->c_proj, &block.mlp->c_proj}) {
      (*proj)->weight.copy_(centredRows((*proj)->weight));
      (*proj)->bias.copy_((*proj)->bias - (*proj)->bias.mean());
    }
    block.ln_1->weight.fill_(1), block.ln_1->bias.zero_(), block.ln_2->weight.fill_(1),
        block.ln_2->bias.zero_();
    for (SiteKind kind : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp}) {
      SiteNorm identity;
      identity.kind = NormKind::Identity;
      folded->norms().at({kind, l}) = identity;
    }
  }
  return foldedModel;
}

CausalLM standardFormatWithHugeEpsilon(CausalLMImpl& fake) {
  requireFakeEverywhere(fake);
  ModelShape config = fake.config();
  config.layerNormEpsilon = 1e12;
  CausalLM standardModel = copyModel(gpt2(fake), config);
  GPT2Impl* standard = &gpt2(*standardModel);
  const int64_t D = config.nEmbd;
  const double root = 1e6;  // sqrt(ε)
  torch::NoGradGuard noGrad;
  for (int l = 0; l < config.nLayer; ++l) {
    auto& block = *standard->blockAt(l);
    const double sQk = fake.norms().at({SiteKind::Qk, l}).scale, sV = fake.norms().at({SiteKind::V, l}).scale;
    // V needs (x−μ)/s_v·γ + β = r·(ln_1 out − β) + β with r = s_qk/s_v: scale W_v by r, add (1−r)·β·W_v.
    const double r = sQk / sV;
    torch::Tensor Wv = block.attn->c_attn->weight.slice(1, 2 * D),
                  bv = block.attn->c_attn->bias.slice(0, 2 * D);
    bv.add_((1 - r) * torch::matmul(block.ln_1->bias, Wv));
    Wv.mul_(r);
    block.ln_1->weight.mul_(root / sQk);
    block.ln_2->weight.mul_(root / fake.norms().at({SiteKind::Mlp, l}).scale);
  }
  standard->ln_f->weight.mul_(root / fake.norms().at({SiteKind::Final, -1}).scale);
  SiteNorm layerNorm;  // every site an ordinary LayerNorm again: the ε does the work
  standard->norms().setAll(layerNorm);
  return standardModel;
}

double largestNormWeight(CausalLMImpl& model) {
  GPT2Impl& family = gpt2(model);
  double largest = family.ln_f->weight.abs().max().item<double>();
  for (int l = 0; l < model.config().nLayer; ++l) {
    auto& block = *family.blockAt(l);
    largest = std::max({largest, block.ln_1->weight.abs().max().item<double>(),
                        block.ln_2->weight.abs().max().item<double>()});
  }
  return largest;
}

}  // namespace nf
