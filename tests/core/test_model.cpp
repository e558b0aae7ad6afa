// GPT-2 forward pass against the independent Python reference, for every normalization kind.
#include "fixtures.h"

using namespace nf;
using namespace nf::test;

namespace {

constexpr double kTolerance = 1e-5;  // max abs logit difference allowed against the float64 reference

void checkAgainstReference(CausalLM& model, const torch::Tensor& tokens) {
  TempDir dir;
  saveModel(*model, dir.path());
  torch::NoGradGuard noGrad;
  auto ours = model->forward(tokens);
  auto reference = referenceLogits(dir.path(), tokens, model->config().vocabSize);
  const double diff = maxAbsDiff(ours, reference);
  REQUIRE_MSG(diff <= kTolerance, "max abs difference " << diff);
  // Not a vacuous comparison: the logits vary.
  REQUIRE(ours.std().item<double>() > 1e-3);
}

}  // namespace

TEST_CASE(layernorm_logits_match_reference) {
  auto c = smallConfig();
  auto model = randomModel(c);
  checkAgainstReference(model, randomTokens(c, 3, c.nPositions));
}

TEST_CASE(fakeln_logits_match_reference) {
  auto c = smallConfig();
  auto model = randomModel(c, 2);
  double s = 0.5;
  for (SiteId site : model->norms().sites()) {
    SiteNorm& n = model->norms().at(site);
    n.kind = NormKind::FakeLN;
    n.scale = (s += 0.13);
  }
  checkAgainstReference(model, randomTokens(c, 2, 9));
}

TEST_CASE(fakeln_special_treatments_match_reference) {
  auto c = smallConfig();
  auto model = randomModel(c, 3);
  for (SiteId site : model->norms().sites()) {
    SiteNorm& n = model->norms().at(site);
    n.kind = NormKind::FakeLN;
    n.scale = 0.7;
    n.scalePos0 = 3.5;
    n.pos0Treatment = true;
    n.eotTreatment = site.kind == SiteKind::V;
  }
  auto tokens = randomTokens(c, 2, 12);
  tokens[0][4] = c.eotTokenId;
  tokens[1][0] = c.eotTokenId;
  checkAgainstReference(model, tokens);
}

TEST_CASE(mixed_norm_kinds_match_reference) {
  auto c = smallConfig();
  auto model = randomModel(c, 4);
  const NormKind kinds[] = {NormKind::RMSNorm, NormKind::LayerNormScaling, NormKind::Identity,
                            NormKind::FakeLN, NormKind::LayerNorm};
  int i = 0;
  for (SiteId site : model->norms().sites()) {
    SiteNorm& n = model->norms().at(site);
    n.kind = kinds[i++ % 5];
    n.scale = 1.9;
  }
  checkAgainstReference(model, randomTokens(c, 2, 16));
}

TEST_CASE(split_qk_and_v_paths_match_reference) {
  // Only the value path is fake: the two ln_1 paths must then be computed separately.
  auto c = smallConfig();
  auto model = randomModel(c, 5);
  model->norms().at({SiteKind::V, 1}).kind = NormKind::FakeLN;
  model->norms().at({SiteKind::V, 1}).scale = 2.5;
  model->norms().at({SiteKind::Qk, 0}).kind = NormKind::FakeLN;
  model->norms().at({SiteKind::Qk, 0}).scale = 0.4;
  checkAgainstReference(model, randomTokens(c, 2, 10));
}

TEST_CASE(fakeln_equals_layernorm_when_scale_is_the_tokens_sigma) {
  // PROTOCOL §2: with s equal to the token's σ the fake LN is the real one.
  auto c = smallConfig();
  auto model = randomModel(c, 6);
  auto tokens = randomTokens(c, 1, 1);  // a single token: one σ per site
  HookSet hooks;
  for (SiteId s : model->norms().sites()) hooks.cache(HookPoint::normScale(s));
  torch::NoGradGuard noGrad;
  auto real = model->forward(tokens, &hooks);
  for (SiteId s : model->norms().sites()) {
    model->norms().at(s).kind = NormKind::FakeLN;
    model->norms().at(s).scale = hooks.at(HookPoint::normScale(s)).item<double>();
  }
  auto fake = model->forward(tokens);
  REQUIRE_MSG(maxAbsDiff(real, fake) < 1e-5, maxAbsDiff(real, fake));
}

TEST_CASE(out_of_range_token_is_rejected_with_its_position) {
  auto c = smallConfig();
  CausalLM model = makeModel(c);
  auto tokens = randomTokens(c, 2, 5);
  tokens[1][3] = c.vocabSize;
  REQUIRE_THROWS_WITH(model->forward(tokens), "token id 101", "[1, 3]", "outside the vocabulary");
  tokens[1][3] = -1;
  REQUIRE_THROWS_WITH(model->forward(tokens), "token id -1");
}

TEST_CASE(too_long_sequence_is_rejected) {
  auto c = smallConfig();
  CausalLM model = makeModel(c);
  REQUIRE_THROWS_WITH(model->forward(randomTokens(c, 1, c.nPositions + 1)),
                      "longer than the model's 16 positions");
}

TEST_CASE(parameters_are_registered_with_hugging_face_names_and_shapes) {
  auto c = smallConfig();
  c.tiedUnembedding = false;
  CausalLM model = makeModel(c);
  auto params = model->named_parameters();
  auto expected = parameterShapes(c);
  REQUIRE_EQ(params.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    REQUIRE_EQ(params[i].key(), expected[i].name);
    REQUIRE(params[i].value().sizes().vec() == expected[i].shape);
  }
  int64_t count = 0;
  for (auto& p : params) count += p.value().numel();
  REQUIRE_EQ(count, c.parameterCount());
}

TEST_CASE(gpt2_small_parameter_count_is_124m) {
  ModelShape c;  // defaults are GPT-2 Small
  REQUIRE_EQ(c.parameterCount(), 124439808);
}

TEST_CASE(init_is_deterministic_per_seed) {
  auto c = smallConfig();
  CausalLM a = makeModel(c), b = makeModel(c), d = makeModel(c);
  a->initWeights(11);
  b->initWeights(11);
  d->initWeights(12);
  REQUIRE(
      torch::equal(gpt2Of(a).blockAt(0)->attn->c_attn->weight, gpt2Of(b).blockAt(0)->attn->c_attn->weight));
  REQUIRE(!torch::equal(gpt2Of(a).wte->weight, gpt2Of(d).wte->weight));
  // Residual projections use the smaller, depth-scaled standard deviation.
  auto proj = gpt2Of(a).blockAt(1)->mlp->c_proj->weight.std().item<double>();
  REQUIRE_MSG(std::abs(proj - 0.02 / std::sqrt(2.0 * c.nLayer)) < 0.002, proj);
}

TEST_CASE(batch_rows_are_independent) {
  auto c = smallConfig();
  auto model = randomModel(c);
  auto tokens = randomTokens(c, 3, 8);
  torch::NoGradGuard noGrad;
  auto batched = model->forward(tokens);
  auto single = model->forward(tokens.slice(0, 1, 2));
  REQUIRE(maxAbsDiff(batched.slice(0, 1, 2), single) < 1e-5);
}

// Checkpointed blocks recompute in the backward pass what they did not keep: the same gradients, with
// LayerNorm, FakeLN (with a treatment) and split LN_qk/LN_v sites, and σ reported once per forward pass.
TEST_CASE(activation_checkpointing_gives_the_same_gradients) {
  struct CountingObserver : NormObserver {
    int sigmas = 0;
    void sigma(SiteId, const torch::Tensor&) override { ++sigmas; }
    void finalInput(const torch::Tensor&) override {}
  };
  const ModelShape c = smallConfig();
  const torch::Tensor tokens = randomTokens(c, 3, 16);
  std::vector<std::vector<torch::Tensor>> grads;
  std::vector<int> reported;
  for (const bool checkpointing : {false, true}) {
    CausalLM model = randomModel(c);
    model->norms().at({SiteKind::Mlp, 0}) = SiteNorm{NormKind::FakeLN, 2.5, 4.0, /*pos0Treatment=*/true};
    model->norms().at({SiteKind::V, 1}) = SiteNorm{NormKind::FakeLN, 1.5};
    model->setActivationCheckpointing(checkpointing);
    CountingObserver observer;
    model->setNormObserver(&observer);
    const torch::Tensor logits = model->forward(tokens);
    torch::nn::functional::cross_entropy(logits.view({-1, c.vocabSize}), tokens.roll(-1, 1).view({-1}))
        .backward();
    reported.push_back(observer.sigmas);
    grads.emplace_back();
    for (const auto& p : model->parameters()) grads.back().push_back(p.grad().clone());
  }
  REQUIRE_MSG(reported[0] == reported[1], reported[0] << " vs " << reported[1]);
  for (std::size_t i = 0; i < grads[0].size(); ++i) {
    const double scale = grads[0][i].abs().max().item<double>() + 1e-12;
    REQUIRE_MSG(maxAbsDiff(grads[0][i], grads[1][i]) <= 1e-6 * scale, "parameter " << i);
  }
}

TEST_CASE(logits_at_one_position_are_that_slice_of_all_logits) {
  CausalLM model = randomModel(smallConfig());
  model->norms().at({SiteKind::Final, -1}) = SiteNorm{NormKind::FakeLN, 1.7, 3.1, /*pos0Treatment=*/true};
  const torch::Tensor tokens = randomTokens(smallConfig(), 3, 12);
  torch::NoGradGuard noGrad;
  const torch::Tensor all = model->forward(tokens);
  for (int64_t p : {0, 5, 11})  // the same numbers up to BLAS blocking of a smaller matmul
    REQUIRE(maxAbsDiff(model->forward(tokens, nullptr, p), all.slice(1, p, p + 1)) < 1e-5);
}

TEST_MAIN()
