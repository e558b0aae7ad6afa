// Exporting an LN-free model: folded and standard GPT-2 (1e6/1e12) forms give the FakeLN model's logits.
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "io/atomic_file.h"
#include "model/family.h"
#include "model/model_folder.h"
#include "run/snapshot.h"
#include "train/export.h"

using namespace nf;
using namespace nf::test;

namespace {

// A random model whose every site is fake (FakeLN, or FakeRMSNorm in an RMSNorm family) with its own scale
// (LN_qk ≠ LN_v), as a removal run leaves it.
CausalLM fakeModel(const ModelShape& c) {
  CausalLM model = randomModel(c, 9);
  double s = 0.7;
  for (const SiteId& site : model->norms().sites()) {
    SiteNorm n;
    n.kind = fakeNormOf(familyNamed(c.family).norm);
    n.scale = (s += 0.37);
    model->norms().at(site) = n;
  }
  return model;
}

}  // namespace

TEST_CASE(folded_export_reproduces_fakeln_logits_with_no_normalization_left) {
  for (const bool tied : {true, false}) {
    ModelShape c = smallConfig();
    c.tiedUnembedding = tied;
    CausalLM fake = fakeModel(c);
    CausalLM folded = foldLayerNorms(*fake);
    const auto tokens = randomTokens(c, 3, 16);
    torch::NoGradGuard noGrad;
    const double diff = maxAbsDiff(fake->forward(tokens), folded->forward(tokens));
    REQUIRE_MSG(diff <= 1e-4, diff);
    for (int l = 0; l < c.nLayer; ++l)
      for (SiteKind k : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp})
        REQUIRE(folded->norms().at({k, l}).kind == NormKind::Identity);
    REQUIRE(folded->norms().isLayerNormFree());
    // The residual really is zero-mean: FakeLN's centring became the identity.
    HookSet hooks;
    hooks.cache(HookPoint::residPost(c.nLayer - 1));
    folded->forward(tokens, &hooks);
    REQUIRE(hooks.at(HookPoint::residPost(c.nLayer - 1)).mean(-1).abs().max().item<double>() < 1e-5);

    TempDir dir;
    SaveOptions options;
    options.folded = true;
    saveModel(*folded, dir.path("folded"), options);
    REQUIRE_EQ(nlohmann::json::parse(readTextFile(dir.path("folded/config.json")))["normfree"]["folded"],
               true);
    CausalLM loaded = loadModel(dir.path("folded"));
    REQUIRE(maxAbsDiff(loaded->forward(tokens), fake->forward(tokens)) <= 1e-4);
    // And an independent implementation reading the saved files agrees.
    REQUIRE(maxAbsDiff(referenceLogits(dir.path("folded"), tokens, c.vocabSize), fake->forward(tokens)) <=
            1e-4);
  }
}

TEST_CASE(standard_export_is_plain_gpt2_with_huge_epsilon) {
  const ModelShape c = smallConfig();
  CausalLM fake = fakeModel(c);
  CausalLM standard = standardFormatWithHugeEpsilon(*fake);
  REQUIRE_EQ(standard->config().layerNormEpsilon, 1e12);
  REQUIRE(standard->norms() == NormState(c.nLayer));  // every site an ordinary LayerNorm
  const auto tokens = randomTokens(c, 3, 16);
  torch::NoGradGuard noGrad;
  REQUIRE(maxAbsDiff(fake->forward(tokens), standard->forward(tokens)) <= 1e-4);

  // Saved without our "normfree" block, it is what any GPT-2 loader sees: config.json + safetensors.
  TempDir dir;
  saveModel(*standard, dir.path("std"));
  // What the analyses' headers say of it: LN-free, though its sites are LayerNorms (it had said
  // "LayerNorm", beside an NMAE of 1e-9 %); a model of ordinary ε is not.
  REQUIRE_EQ(ModelSnapshot::load(dir.path("std"))->normSummary(),
             "LN-free (standard form: LayerNorm with a huge ε)");
  saveModel(*randomModel(c), dir.path("plain"));
  REQUIRE_EQ(ModelSnapshot::load(dir.path("plain"))->normSummary(), "LayerNorm");
  // `info` says the same (it had said layernorm_free false of every standard export).
  REQUIRE(inspectModelFolder(dir.path("std")).layerNormFree);
  REQUIRE_EQ(inspectModelFolder(dir.path("std")).norms, "LN-free (standard form: LayerNorm with a huge ε)");
  REQUIRE(!inspectModelFolder(dir.path("plain")).layerNormFree);
  auto config = nlohmann::json::parse(readTextFile(dir.path("std/config.json")));
  REQUIRE_EQ(config["layer_norm_epsilon"].get<double>(), 1e12);
  config.erase("normfree");
  writeFileAtomic(dir.path("std/config.json"), config.dump());
  REQUIRE(maxAbsDiff(referenceLogits(dir.path("std"), tokens, c.vocabSize), fake->forward(tokens)) <= 1e-4);
  REQUIRE(largestNormWeight(*standard) > 65504);  // the weights overflow float16, as documented
}

TEST_CASE(every_family_exports_both_forms_with_the_fake_models_logits) {
  std::vector<NamedShape> shapes = familyShapes();
  // LayerNorm's β folds into its readers' biases: a GPT-NeoX without attention biases gains them (export
  // stopped with a LibTorch error).
  ModelShape noBias = shapes.at(1).shape;
  noBias.qkvBias = noBias.attentionOutputBias = false;
  shapes.push_back({"gpt_neox (attention_bias false)", noBias});
  for (const auto& [label, c] : shapes) {
    CausalLM fake = fakeModel(c);
    const bool rms = familyNamed(c.family).norm == NormKind::RMSNorm;
    const auto tokens = randomTokens(c, 3, 16);
    torch::NoGradGuard noGrad;
    const torch::Tensor logits = fake->forward(tokens);
    TempDir dir;

    CausalLM folded = foldLayerNorms(*fake);
    REQUIRE_MSG(maxAbsDiff(folded->forward(tokens), logits) <= 1e-4, label);
    for (int l = 0; l < c.nLayer; ++l)
      for (SiteKind k : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp})
        REQUIRE(folded->norms().at({k, l}).kind == NormKind::Identity);
    // FakeRMSNorm never centres, so an RMSNorm family's weights keep their means and their tying.
    REQUIRE_EQ(folded->config().tiedUnembedding, rms && c.tiedUnembedding);
    SaveOptions options;
    options.folded = true;
    saveModel(*folded, dir.path("folded"), options);
    REQUIRE_MSG(maxAbsDiff(referenceLogits(dir.path("folded"), tokens, c.vocabSize), logits) <= 1e-4, label);

    // The standard form is the family's own norm with a huge ε: what Hugging Face's class computes.
    CausalLM standard = standardFormatWithHugeEpsilon(*fake);
    REQUIRE(standard->norms() == nativeNorms(c));
    REQUIRE_MSG(maxAbsDiff(standard->forward(tokens), logits) <= 1e-4, label);
    saveModel(*standard, dir.path("std"));
    auto config = nlohmann::json::parse(readTextFile(dir.path("std/config.json")));
    REQUIRE_EQ(config[rms                  ? "rms_norm_eps"
                      : c.family == "gpt2" ? "layer_norm_epsilon"
                                           : "layer_norm_eps"]
                   .get<double>(),
               1e12);
    config.erase("normfree");
    writeFileAtomic(dir.path("std/config.json"), config.dump());
    REQUIRE_MSG(maxAbsDiff(referenceLogits(dir.path("std"), tokens, c.vocabSize), logits) <= 1e-4, label);
  }
}

TEST_CASE(export_refuses_models_that_are_not_layernorm_free) {
  CausalLM model = randomModel(smallConfig());
  REQUIRE_THROWS_WITH(foldLayerNorms(*model), "LN_qk.0 is layernorm");
  CausalLM fake = fakeModel(smallConfig());
  fake->norms().at({SiteKind::V, 1}).pos0Treatment = true;
  REQUIRE_THROWS_WITH(standardFormatWithHugeEpsilon(*fake), "LN_v.1", "special treatment");
}

// The export replaces <out>/folded and <out>/standard whole: exporting a model that lies in one of them
// would delete the LN-free original and its frozen scales.
TEST_CASE(export_refuses_to_replace_the_model_it_reads) {
  TempDir dir;
  CausalLM fake = fakeModel(smallConfig());
  saveModel(*fake, dir.path("out/folded"));
  const std::string weights = readTextFile(dir.path("out/folded/model.safetensors"), 1 << 30);
  REQUIRE_THROWS_WITH(exportLayerNormFree(dir.path("out/folded"), dir.path("out"), "", torch::kCPU),
                      "out/folded", "which the export replaces");
  REQUIRE_THROWS_WITH(exportLayerNormFree(dir.path("out/folded/"), dir.path("out/./"), "", torch::kCPU),
                      "which the export replaces");
  REQUIRE_EQ(readTextFile(dir.path("out/folded/model.safetensors"), 1 << 30), weights);
  // Elsewhere it exports, keeping the source's token ids (its config's, not the end-of-text id twice).
  auto config = nlohmann::json::parse(readTextFile(dir.path("out/folded/config.json")));
  config["bos_token_id"] = 5;
  config["eos_token_id"] = {99, 11};
  config["pad_token_id"] = 0;
  writeFileAtomic(dir.path("out/folded/config.json"), config.dump());
  const ExportedModel elsewhere =
      exportLayerNormFree(dir.path("out/folded"), dir.path("copy"), "", torch::kCPU);
  REQUIRE(elsewhere.foldedDifference <= 1e-4);
  for (const char* form : {"copy/folded", "copy/standard"}) {
    const auto exported = nlohmann::json::parse(readTextFile(dir.path(form) + "/config.json"));
    REQUIRE(exported["bos_token_id"] == 5 && exported["pad_token_id"] == 0);
    REQUIRE(endOfSequenceIds(dir.path(form) + "/config.json") == (std::vector<int32_t>{99, 11}));
  }
  // A source without a BOS id gives an export without one, not the end-of-text id in its place.
  config.erase("bos_token_id");
  writeFileAtomic(dir.path("out/folded/config.json"), config.dump());
  exportLayerNormFree(dir.path("out/folded"), dir.path("copy2"), "", torch::kCPU);
  for (const char* form : {"copy2/folded", "copy2/standard"})
    REQUIRE_MSG(
        !nlohmann::json::parse(readTextFile(dir.path(form) + "/config.json")).contains("bos_token_id"), form);
}

TEST_MAIN()
