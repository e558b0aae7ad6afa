// GPT-2 forward pass against the independent Python reference, for every normalization kind.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>

#include "fixtures.h"
#include "model/attention.h"
#include "model/cpu_threads.h"
#include "model/gelu.h"
#include "util/blas_threads.h"

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

// The CPU's per-head attention against the definition softmax(q·kᵀ/√dh + causal mask)·v written here with
// explicit loops over positions, in float64: values and the gradients of q, k and v, for heads laid out as
// the families pass them — strided views of one fused projection (GPT-2), contiguous [B, H, T, dh] (grouped
// keys repeated for LLaMA) — and heads whose dh stride is not 1.
TEST_CASE(attention_by_head_matches_the_definition_with_gradients) {
  torch::manual_seed(7);
  enum Layout { FusedProjection, Contiguous, StridedDh };
  for (const Layout layout : {FusedProjection, Contiguous, StridedDh})
    for (const int64_t T : {1, 2, 9}) {
      const int64_t B = 2, H = 3, dh = 4, D = H * dh;
      const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
      const torch::Tensor source =
          torch::randn({B, T, layout == StridedDh ? 6 * D : 3 * D}, opts).requires_grad_();
      const torch::Tensor qkv = layout == StridedDh ? source.slice(-1, 0, 6 * D, 2) : source;
      const auto parts = qkv.split(D, -1);
      auto heads = [&](const torch::Tensor& t) {
        const torch::Tensor h = t.unflatten(-1, {H, dh}).transpose(1, 2);
        return layout == Contiguous ? h.contiguous() : h;
      };
      const torch::Tensor q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);

      std::vector<torch::Tensor> rows;  // reference z[b, h, t] = Σ_{s ≤ t} softmax_s(q_t·k_s/√dh) v_s
      for (int64_t t = 0; t < T; ++t) {
        const torch::Tensor qt = q.select(2, t).unsqueeze(2), seen = k.narrow(2, 0, t + 1);
        const torch::Tensor weights =
            ((qt * seen).sum(-1) / std::sqrt(double(dh))).softmax(-1);  // [B, H, t+1]
        rows.push_back((weights.unsqueeze(-1) * v.narrow(2, 0, t + 1)).sum(2));
      }
      const torch::Tensor reference = torch::stack(rows, 2);
      const torch::Tensor ours = causalAttentionByHead(q, k, v);
      const std::string where = "layout " + std::to_string(layout) + ", T " + std::to_string(T);
      REQUIRE(ours.sizes() == reference.sizes());
      REQUIRE_MSG(maxAbsDiff(ours, reference) < 1e-12, where << ": " << maxAbsDiff(ours, reference));
      REQUIRE_MSG(ours.transpose(1, 2).is_contiguous(), "heads merge back without a copy");

      const torch::Tensor weights = torch::randn(reference.sizes(), opts);
      const torch::Tensor gradOurs = torch::autograd::grad({(ours * weights).sum()}, {source})[0];
      const torch::Tensor gradReference = torch::autograd::grad({(reference * weights).sum()}, {source})[0];
      REQUIRE_MSG(maxAbsDiff(gradOurs, gradReference) < 1e-12,
                  where << ": gradient " << maxAbsDiff(gradOurs, gradReference));
      // Not vacuous: v always gets a gradient; q and k too once a query sees more than one key.
      const auto grads = (layout == StridedDh ? gradOurs.slice(-1, 0, 6 * D, 2) : gradOurs).split(D, -1);
      REQUIRE_MSG(grads[2].abs().max().item<double>() > 1e-3, where);
      for (int i : {0, 1}) REQUIRE_MSG((grads[i].abs().max().item<double>() > 1e-3) == (T > 1), where);
    }
  // float32, the training dtype, within its rounding against the same definition in float64.
  const torch::Tensor q = torch::randn({2, 4, 33, 8}), k = torch::randn({2, 4, 33, 8}),
                      v = torch::randn({2, 4, 33, 8});
  const torch::Tensor inDouble =
      causalPattern(q.to(torch::kFloat64), k.to(torch::kFloat64)).matmul(v.to(torch::kFloat64));
  REQUIRE(maxAbsDiff(causalAttentionByHead(q, k, v), inDouble) < 1e-5);
  // A second derivative is refused by name rather than deep inside a product, and so are mixed dtypes.
  const torch::Tensor qg = q.clone().requires_grad_();
  REQUIRE_THROWS_WITH(
      torch::autograd::grad({causalAttentionByHead(qg, k, v).sum()}, {qg}, {}, /*retain_graph=*/true,
                            /*create_graph=*/true),
      "no double backward");
  REQUIRE_THROWS_WITH(causalAttentionByHead(q, k.to(torch::kFloat64), v), "one floating dtype");
}

// float32 heads of the sizes GPT-2, Pythia and LLaMA use run a kernel of their own (model/attention_kernel.h)
// with T padded to its blocks: values and gradients against the definition in float64, within float32
// rounding, for lengths on and off the blocks.
TEST_CASE(attention_kernel_matches_the_definition_in_float32) {
  torch::manual_seed(11);
  for (const int64_t dh : {16, 32, 64, 80, 128})
    for (const int64_t T : {1, 5, 16, 17, 33}) {
      const int64_t B = 2, H = 3, D = H * dh;
      const torch::Tensor source = torch::randn({B, T, 3 * D}).requires_grad_();  // a fused projection
      const torch::Tensor source64 = source.detach().to(torch::kFloat64).requires_grad_();
      auto heads = [&](const torch::Tensor& qkv, int part) {
        return qkv.split(D, -1)[part].unflatten(-1, {H, dh}).transpose(1, 2);
      };
      const torch::Tensor ours = causalAttentionByHead(heads(source, 0), heads(source, 1), heads(source, 2));
      const torch::Tensor reference =
          causalPattern(heads(source64, 0), heads(source64, 1)).matmul(heads(source64, 2));
      const std::string where = "dh " + std::to_string(dh) + ", T " + std::to_string(T);
      REQUIRE_MSG(maxAbsDiff(ours, reference) < 2e-6, where << ": " << maxAbsDiff(ours, reference));
      const torch::Tensor weights = torch::randn(reference.sizes(), torch::kFloat64);
      const torch::Tensor grad =
          torch::autograd::grad({(ours * weights.to(torch::kFloat)).sum()}, {source})[0];
      const torch::Tensor gradReference = torch::autograd::grad({(reference * weights).sum()}, {source64})[0];
      const double gradError = maxAbsDiff(grad, gradReference) / gradReference.abs().max().item<double>();
      REQUIRE_MSG(gradError < 2e-6, where << ": gradient " << gradError);
      // Each head is computed alone: the same bits on a second call, however the heads were spread.
      REQUIRE(
          torch::equal(ours, causalAttentionByHead(heads(source, 0), heads(source, 1), heads(source, 2))));
    }
}

// A run blowing up makes scores of ~1e10, far apart: each query's attention is all on its largest score
// (the definition in float64 is one-hot there). The kernel had subtracted scale·max from a scale·score
// contracted into one multiply-add, whose rounding error at this size passed exp's range and flattened the
// rows — where 1/√dh is not a power of two (dh 32, 80, 128) and on CPUs with FMA.
TEST_CASE(attention_kernel_keeps_its_largest_score_when_scores_are_huge) {
  torch::manual_seed(5);
  for (const int64_t dh : {16, 32, 64, 80, 128}) {
    const int64_t B = 2, H = 2, T = 40;
    const torch::Tensor q = torch::randn({B, H, T, dh}) * 3e5, k = torch::randn({B, H, T, dh}) * 3e5,
                        v = torch::randn({B, H, T, dh});
    const torch::Tensor reference =
        causalPattern(q.to(torch::kFloat64), k.to(torch::kFloat64)).matmul(v.to(torch::kFloat64));
    const double error = maxAbsDiff(causalAttentionByHead(q, k, v), reference);
    REQUIRE_MSG(error < 1e-5, "dh " << dh << ": " << error);
  }
}

// forEachPart: disjoint ranges that cover everything, exceptions reach the caller, nested calls run serially.
TEST_CASE(cpu_parts_cover_every_item_once_and_report_failures) {
  for (const int64_t n : {0, 1, 7, 1000}) {
    std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
    forEachPart(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++visits[static_cast<std::size_t>(i)];
      forEachPart(3, 1, [&](int64_t b, int64_t e) { REQUIRE(b == 0 && e == 3); });  // nested: one range
    });
    for (const auto& v : visits) REQUIRE(v == 1);
  }
  REQUIRE_THROWS_WITH(forEachPart(1000, 1, [](int64_t, int64_t) { throw std::runtime_error("part failed"); }),
                      "part failed");
}

// OpenBLAS's workers restarted with a short spin: products stay right, and children see the environment as
// it was. A spin time the user chose is kept.
TEST_CASE(idle_blas_threads_setting_keeps_products_and_environment) {
  // The environment this test found, restored at its end (a CI machine may set the variable itself).
  const char* found = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  const std::optional<std::string> given = found ? std::optional<std::string>(found) : std::nullopt;
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  const bool applied = letIdleBlasThreadsSleep();
  REQUIRE(std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr);
  const torch::Tensor a = torch::randn({300, 200}, torch::kFloat64),
                      b = torch::randn({200, 100}, torch::kFloat64);
  const torch::Tensor product = a.to(torch::kFloat).mm(b.to(torch::kFloat));
  REQUIRE(maxAbsDiff(product, a.mm(b)) < 1e-4);
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1);
  REQUIRE(!letIdleBlasThreadsSleep());
  REQUIRE(std::string(std::getenv("OPENBLAS_THREAD_TIMEOUT")) == "20");
  if (given)
    setenv("OPENBLAS_THREAD_TIMEOUT", given->c_str(), 1);
  else
    unsetenv("OPENBLAS_THREAD_TIMEOUT");
  // Debian's LibTorch runs on OpenBLAS: where it does, the setting applies.
  if (dlsym(RTLD_DEFAULT, "openblas_read_env") != nullptr) REQUIRE(applied);
}

// GPT-2's activation against its definition, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in float64.
TEST_CASE(gelu_tanh_matches_its_definition_with_gradients) {
  torch::manual_seed(3);
  // Every range the kernel treats differently: near zero, the bulk, tails where σ saturates and clamps.
  const torch::Tensor x =
      torch::cat({torch::randn({4096}), torch::randn({4096}) * 6, torch::linspace(-100, 100, 1996),
                  torch::tensor({0.0f, -0.0f, 1e-30f, -1e-30f, 88.0f, -88.0f, 1e6f, -1e6f, 1e13f, -1e13f,
                                 3e19f, -3e19f})})
          .view({-1, 8})
          .t();  // not contiguous: the kernel takes a copy
  auto definition = [](const torch::Tensor& t) {
    return 0.5 * t * (1 + torch::tanh(std::sqrt(2 / M_PI) * (t + 0.044715 * t.pow(3))));
  };
  const torch::Tensor x64 = x.to(torch::kFloat64).requires_grad_();
  const torch::Tensor expected = definition(x64);
  const torch::Tensor xf = x.clone().requires_grad_();
  const torch::Tensor ours = geluTanh(xf);
  REQUIRE(ours.scalar_type() == torch::kFloat && ours.sizes() == x.sizes());
  // float32 rounding: a few ulp of the output's scale, the input's; a wrong constant is off by 1e-4 or more.
  const torch::Tensor scale = x64.detach().abs().clamp_min(1);
  const double valueError = ((ours.to(torch::kFloat64) - expected).abs() / scale).max().item<double>();
  REQUIRE_MSG(valueError < 5e-7, "value error " << valueError);

  const torch::Tensor upstream = torch::randn(x.sizes());
  const torch::Tensor gradOurs = torch::autograd::grad({ours}, {xf}, {upstream})[0];
  const torch::Tensor gradExpected =
      torch::autograd::grad({expected}, {x64}, {upstream.to(torch::kFloat64)}, /*retain_graph=*/true)[0];
  const double gradError =
      ((gradOurs.to(torch::kFloat64) - gradExpected).abs() / (upstream.to(torch::kFloat64).abs() + 1e-3))
          .max()
          .item<double>();
  REQUIRE_MSG(gradError < 1e-6, "gradient error " << gradError);
  // LibTorch's own CPU kernel, which the model ran before, agrees within the same rounding.
  const double againstLibTorch =
      ((ours - torch::gelu(x, "tanh")).to(torch::kFloat64).abs() / scale).max().item<double>();
  REQUIRE_MSG(againstLibTorch < 5e-7, "against torch::gelu " << againstLibTorch);

  // NaN stays NaN (divergence checks rely on it).
  REQUIRE(torch::isnan(geluTanh(torch::tensor({NAN}))).all().item<bool>());
  // The second derivative (create_graph) is LibTorch's, and float64 runs LibTorch's kernel outright.
  const torch::Tensor small = torch::randn({64}).requires_grad_();
  const torch::Tensor first = torch::autograd::grad({geluTanh(small).sum()}, {small}, {}, true, true)[0];
  const torch::Tensor second = torch::autograd::grad({first.sum()}, {small})[0];
  const torch::Tensor firstRef =
      torch::autograd::grad({torch::gelu(small, "tanh").sum()}, {small}, {}, true, true)[0];
  REQUIRE(maxAbsDiff(second, torch::autograd::grad({firstRef.sum()}, {small})[0]) < 1e-6);
  REQUIRE(maxAbsDiff(geluTanh(x64.detach()), expected) < 1e-12);
}

TEST_MAIN()
