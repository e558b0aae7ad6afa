// Hook points: documented shapes, consistency between points, and patching that reproduces clean runs.
#include "fixtures.h"

using namespace nf;
using namespace nf::test;

namespace {
struct Fixture {
  ModelShape c = smallConfig();
  CausalLM model = randomModel(c);
  torch::Tensor tokens = randomTokens(c, 3, 10);
  torch::NoGradGuard noGrad;
};
}  // namespace

TEST_CASE(cached_activations_have_the_documented_shapes) {
  Fixture f;
  HookSet hooks;
  hooks.cacheAll(f.c.nLayer);
  f.model->forward(f.tokens, &hooks);
  const int64_t B = 3, T = 10, D = 32, H = 4, F = 128;
  auto shape = [&](const std::string& name) {
    return hooks.at(HookPoint::parse(name, f.c.nLayer)).sizes().vec();
  };
  using V = std::vector<int64_t>;
  REQUIRE(shape("embed.tok") == V({B, T, D}));
  REQUIRE(shape("embed.pos") == V({1, T, D}));
  for (int l = 0; l < f.c.nLayer; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    for (const char* n : {"resid_pre", "resid_mid", "resid_post", "attn.out", "mlp.input", "mlp.out"})
      REQUIRE_MSG(shape(p + n) == V({B, T, D}), n);
    REQUIRE(shape(p + "attn.pattern") == V({B, H, T, T}));
    REQUIRE(shape(p + "attn.head_out") == V({B, T, H, D}));
    REQUIRE(shape(p + "mlp.pre") == V({B, T, F}));
    REQUIRE(shape(p + "mlp.post") == V({B, T, F}));
    for (const char* n : {"ln_qk.scale", "ln_v.scale", "ln_mlp.scale"})
      REQUIRE_MSG(shape(p + n) == V({B, T}), n);
  }
  REQUIRE(shape("ln_f.scale") == V({B, T}));
  // Everything but the per-head attention inputs, which are opt-in (three per block).
  REQUIRE_EQ(hooks.activations().size(), allHookPoints(f.c.nLayer).size() - 3 * f.c.nLayer);
}

TEST_CASE(hook_point_names_round_trip) {
  for (const HookPoint& p : allHookPoints(3)) REQUIRE_MSG(HookPoint::parse(p.name(), 3) == p, p.name());
  REQUIRE_THROWS_WITH(HookPoint::parse("blocks.3.resid_pre", 3), "unknown hook point 'blocks.3.resid_pre'");
}

TEST_CASE(activations_are_consistent_with_each_other) {
  Fixture f;
  HookSet hooks;
  hooks.cacheAll(f.c.nLayer);
  f.model->forward(f.tokens, &hooks);
  auto at = [&](const std::string& n) { return hooks.at(HookPoint::parse(n, f.c.nLayer)); };
  REQUIRE(maxAbsDiff(at("blocks.0.resid_pre"), at("embed.tok") + at("embed.pos")) == 0);
  REQUIRE(torch::equal(at("blocks.0.resid_post"), at("blocks.1.resid_pre")));
  REQUIRE(maxAbsDiff(at("blocks.1.resid_mid"), at("blocks.1.resid_pre") + at("blocks.1.attn.out")) < 1e-6);
  REQUIRE(maxAbsDiff(at("blocks.1.resid_post"), at("blocks.1.resid_mid") + at("blocks.1.mlp.out")) < 1e-6);
  auto bo = gpt2Of(f.model).blockAt(1)->attn->c_proj->bias;
  REQUIRE(maxAbsDiff(at("blocks.1.attn.head_out").sum(2) + bo, at("blocks.1.attn.out")) < 1e-5);
  // Attention patterns are causal distributions.
  auto pattern = at("blocks.0.attn.pattern");
  REQUIRE(maxAbsDiff(pattern.sum(-1), torch::ones({3, 4, 10})) < 1e-5);
  REQUIRE(pattern.triu(1).abs().max().item<float>() == 0);
  // The LN scale hook is the token's standard deviation (biased variance, plus ε).
  auto x = at("blocks.1.resid_mid");
  auto sigma = (x.var(-1, /*unbiased=*/false) + f.c.layerNormEpsilon).sqrt();
  REQUIRE(maxAbsDiff(at("blocks.1.ln_mlp.scale"), sigma) < 1e-5);
}

TEST_CASE(an_empty_hook_set_changes_nothing) {
  Fixture f;
  HookSet hooks;
  REQUIRE(torch::equal(f.model->forward(f.tokens), f.model->forward(f.tokens, &hooks)));
  REQUIRE(hooks.activations().empty());
}

TEST_CASE(caching_does_not_change_the_logits) {
  Fixture f;
  HookSet hooks;
  hooks.cacheAll(f.c.nLayer);
  REQUIRE(maxAbsDiff(f.model->forward(f.tokens), f.model->forward(f.tokens, &hooks)) < 1e-5);
}

TEST_CASE(patching_cached_activations_back_reproduces_clean_logits_exactly) {
  Fixture f;
  auto corrupted = randomTokens(f.c, 3, 10, /*seed=*/99);
  for (const HookPoint& point : allHookPoints(f.c.nLayer)) {
    if (point.kind == HookKind::EmbedPos) continue;  // identical in both runs
    HookSet clean;
    clean.cache(point);
    auto cleanLogits = f.model->forward(f.tokens, &clean);
    // Same tokens: putting the cached value back must change nothing, bit for bit.
    HookSet same;
    same.patch(point, clean.at(point));
    REQUIRE_MSG(torch::equal(f.model->forward(f.tokens, &same), cleanLogits), point.name());
  }
  // Different tokens: patching the whole residual stream at block 0 makes the corrupted run the clean one.
  HookSet clean;
  clean.cache(HookPoint::residPre(0));
  auto cleanLogits = f.model->forward(f.tokens, &clean);
  HookSet patched;
  patched.patch(HookPoint::residPre(0), clean.at(HookPoint::residPre(0)));
  REQUIRE(torch::equal(f.model->forward(corrupted, &patched), cleanLogits));
}

TEST_CASE(edits_can_target_single_heads_and_positions) {
  Fixture f;
  // Zero-ablating every head equals replacing the attention output with b_O.
  HookSet allHeads;
  allHeads.zeroAblate(HookPoint::headOut(1));
  auto ablated = f.model->forward(f.tokens, &allHeads);
  auto bo = gpt2Of(f.model).blockAt(1)->attn->c_proj->bias;
  HookSet biasOnly;
  biasOnly.edit(HookPoint::attnOut(1),
                [&](const torch::Tensor& v, const HookPoint&) { return torch::zeros_like(v) + bo; });
  REQUIRE(maxAbsDiff(ablated, f.model->forward(f.tokens, &biasOnly)) < 1e-5);
  REQUIRE(maxAbsDiff(ablated, f.model->forward(f.tokens)) > 1e-3);
  // Ablating one head at one position leaves earlier positions untouched (causality).
  HookSet one;
  one.edit(HookPoint::headOut(0), [](const torch::Tensor& v, const HookPoint&) {
    auto out = v.clone();
    out.select(1, 6).select(1, 2).zero_();
    return out;
  });
  auto edited = f.model->forward(f.tokens, &one);
  auto plain = f.model->forward(f.tokens);
  REQUIRE(maxAbsDiff(edited.slice(1, 0, 6), plain.slice(1, 0, 6)) < 1e-5);
  REQUIRE(maxAbsDiff(edited.slice(1, 6), plain.slice(1, 6)) > 1e-4);
}

TEST_CASE(replacing_an_ln_scale_changes_the_division) {
  // Replacing the real σ of LN_f by a constant equals switching LN_f to FakeLN with that constant.
  Fixture f;
  HookSet hooks;
  hooks.edit(HookPoint::normScale({SiteKind::Final, -1}),
             [](const torch::Tensor& v, const HookPoint&) { return torch::full_like(v, 2.5); });
  auto edited = f.model->forward(f.tokens, &hooks);
  f.model->norms().at({SiteKind::Final, -1}) = {NormKind::FakeLN, 2.5};
  REQUIRE(maxAbsDiff(edited, f.model->forward(f.tokens)) < 1e-5);
}

TEST_CASE(a_patch_of_the_wrong_shape_is_refused) {
  Fixture f;
  HookSet hooks;
  hooks.patch(HookPoint::residPre(1), torch::zeros({1, 2, 3}));
  REQUIRE_THROWS_WITH(f.model->forward(f.tokens, &hooks), "blocks.1.resid_pre", "shape");
}

TEST_MAIN()
