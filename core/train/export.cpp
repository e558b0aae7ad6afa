#include "train/export.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "data/batches.h"
#include "io/atomic_file.h"
#include "model/family.h"
#include "model/hf_checkpoint.h"

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

// β folds into the biases of the norms' readers: a LayerNorm family without them (GPT-NeoX with
// attention_bias false) gains them, at zero (Hugging Face's GPT-NeoX has one switch for the attention's).
ModelShape withBiasesForBeta(const CausalLMImpl& model, ModelShape shape) {
  if (!centring(model)) return shape;  // RMSNorm has no β
  if (!shape.qkvBias) shape.qkvBias = shape.attentionOutputBias = true;
  shape.mlpBias = true;
  return shape;
}

}  // namespace

CausalLM foldLayerNorms(CausalLMImpl& fake) {
  requireFakeEverywhere(fake);
  ModelShape config = withBiasesForBeta(fake, fake.config());
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
  ModelShape config = withBiasesForBeta(fake, fake.config());
  config.layerNormEpsilon = kLayerNormFreeEpsilon;
  CausalLM standard = copyModel(fake, config);
  const double root = std::sqrt(kLayerNormFreeEpsilon);
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

namespace {

double maxLogitDifference(CausalLMImpl& a, CausalLMImpl& b, const torch::Tensor& tokens) {
  torch::NoGradGuard noGrad;
  return (a.forward(tokens).to(torch::kFloat64) - b.forward(tokens).to(torch::kFloat64))
      .abs()
      .max()
      .item<double>();
}

}  // namespace

ExportedModel exportLayerNormFree(const std::string& folder, const std::string& out,
                                  const std::string& tokenFile, const torch::Device& device) {
  // The export replaces both folders whole: the model read must not lie in either.
  namespace fs = std::filesystem;
  const auto absolute = [](const fs::path& p) {
    const fs::path a = fs::weakly_canonical(p);
    return a.has_filename() ? a : a.parent_path();  // "dir/" as "dir"
  };
  const fs::path source = absolute(folder);
  for (const char* form : {"folded", "standard"}) {
    const fs::path target = absolute(fs::path(out) / form);
    const auto [end, inside] = std::mismatch(target.begin(), target.end(), source.begin(), source.end());
    if (end == target.end())
      throw FileError(folder,
                      "lies in " + target.string() + ", which the export replaces: choose another --out");
  }
  CausalLM fake = loadModel(folder, device);
  CausalLM folded{nullptr}, standard{nullptr};
  try {
    folded = foldLayerNorms(*fake);
    standard = standardFormatWithHugeEpsilon(*fake);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(folder + ": " + e.what());
  }
  const ModelShape& c = fake->config();
  // Compared on kComparedSequences of up to 128 tokens: the file's first chunks, else random tokens.
  const int64_t T = std::min<int64_t>(c.nPositions, 128);
  torch::Tensor tokens;
  if (tokenFile.empty()) {
    auto generator = at::detail::createCPUGenerator(0);
    tokens = torch::randint(0, c.vocabSize, {kComparedSequences, T}, generator, torch::kLong);
  } else {
    const EvalChunks chunks(TokenFile::open(tokenFile), T, c.vocabSize);
    tokens = chunks.chunks(0, std::min(chunks.count(), kComparedSequences)).inputs;
  }
  tokens = tokens.to(device);
  ExportedModel exported;
  exported.foldedDifference = maxLogitDifference(*fake, *folded, tokens);
  exported.standardDifference = maxLogitDifference(*fake, *standard, tokens);
  exported.comparedTokens = tokens.numel();
  exported.largestStandardNormWeight = largestNormWeight(*standard);
  exported.folded = out + "/folded";
  exported.standard = out + "/standard";
  std::filesystem::create_directories(out);
  removeDeadWritersLeftovers(out, {"folded", "standard"});  // an export killed before: a model copy each
  SaveOptions foldedOptions;
  foldedOptions.folded = true;
  const std::string foldedTmp = saveModelBeside(*folded, exported.folded, folder, foldedOptions);
  std::string standardTmp;
  try {
    standardTmp = saveModelBeside(*standard, exported.standard, folder);
    // Both in at once: an export replaced with --overwrite never shows a new folded/ beside an old standard/.
    replaceFolders({{foldedTmp, exported.folded}, {standardTmp, exported.standard}});
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(foldedTmp, ignored);
    if (!standardTmp.empty()) std::filesystem::remove_all(standardTmp, ignored);
    throw;
  }
  return exported;
}

}  // namespace nf
