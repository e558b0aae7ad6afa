// The interpretability engine (PROTOCOL §7) against hand computations and the independent Python reference.
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "analysis/analysis_request.h"
#include "analysis/attention_sinks.h"
#include "analysis/behaviour.h"
#include "analysis/confidence_neurons.h"
#include "analysis/logit_attribution.h"
#include "analysis/logit_lens.h"
#include "analysis/patching.h"
#include "analysis/residual_norms.h"
#include "fixtures.h"
#include "model/family.h"
#include "train/export.h"

using namespace nf;
using namespace nf::test;

namespace {

TokenSequences sequencesOf(const torch::Tensor& tokens) {
  TokenSequences s;
  s.count = tokens.size(0);
  s.length = tokens.size(1);
  for (int64_t i = 0; i < tokens.numel(); ++i)
    s.tokens.push_back(static_cast<int32_t>(tokens.view(-1)[i].item<int64_t>()));
  s.source = "random tokens";
  return s;
}

void setAll(CausalLMImpl& model, NormKind kind) {
  double s = 0.9;
  for (const SiteId& site : model.norms().sites()) {
    SiteNorm n;
    n.kind = kind;
    n.scale = (s += 0.31);
    model.norms().at(site) = n;
  }
}

AttributionResult attribution(CausalLMImpl& model, const TokenSequences& data, int bootstrap = 200) {
  AttributionOptions options;
  options.bootstrapSamples = bootstrap;
  options.traceLayer = 1;
  options.traceHead = 2;
  options.traceSequence = 1;
  return logitAttribution(*ModelSnapshot::copyOf(model, 7, "test"), data, options);
}

// Zero query/key weights: every head attends uniformly to the positions it can see.
void uniformAttention(CausalLMImpl& model) {
  torch::NoGradGuard noGrad;
  const int64_t D = model.config().nEmbd;
  for (int l = 0; l < model.config().nLayer; ++l) {
    auto& attn = *gpt2Of(model).blockAt(l)->attn;
    attn.c_attn->weight.slice(1, 0, 2 * D).zero_();
    attn.c_attn->bias.slice(0, 0, 2 * D).zero_();
  }
}

// Mean next-token CE with the given last-layer MLP neurons mean-ablated by editing the weights instead of
// the activations: the neuron's output row is zeroed and its mean contribution moved into the bias.
double weightAblatedLoss(CausalLMImpl& source, const torch::Tensor& tokens, const std::vector<int>& neurons) {
  CausalLM model = copyModel(source);
  torch::NoGradGuard noGrad;
  const int layer = model->config().nLayer - 1;
  HookSet hooks;
  hooks.cache(HookPoint::mlpPost(layer));
  model->forward(tokens, &hooks);
  const torch::Tensor mean = hooks.at(HookPoint::mlpPost(layer)).mean(std::vector<int64_t>{0, 1});
  auto& proj = *gpt2Of(model).blockAt(layer)->mlp->c_proj;
  for (int i : neurons) {
    proj.bias.add_(mean[i] * proj.weight[i]);
    proj.weight[i].zero_();
  }
  const torch::Tensor logits = model->forward(tokens).slice(1, 0, -1);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              tokens.slice(1, 1).reshape(-1))
      .item<double>();
}

// toJson(fromJson(toJson(r))) == toJson(r), from the JSON itself and from its text as a server sends it
// (whole numbers come back unsigned), there with the keys runAnalysis adds.
template <class Result, class Read>
void requireReadBack(const Result& r, Read fromJson,
                     const std::function<void(nlohmann::json&)>& addKeys = {}) {
  const nlohmann::json j = toJson(r);
  REQUIRE(toJson(fromJson(j)) == j);
  nlohmann::json sent = nlohmann::json::parse(j.dump());
  if (addKeys) addKeys(sent);
  REQUIRE(toJson(fromJson(sent)) == j);
}

// `fromJson(j)` throws std::invalid_argument whose message holds `part`.
template <class Read>
void requireRefused(Read fromJson, const nlohmann::json& j, const std::string& part) {
  try {
    fromJson(j);
  } catch (const std::invalid_argument& e) {
    REQUIRE_MSG(std::string(e.what()).find(part) != std::string::npos,
                "message '" << e.what() << "' lacks '" << part << "'");
    return;
  }
  REQUIRE_MSG(false, "not refused: " << part);
}

}  // namespace

// What every analysis's header says of the model: a site whose interpolation ramp still mixes in its real
// norm divides per token, so a checkpoint mid-ramp is not LN-free (it was called so, beside an NMAE of 5 %).
TEST_CASE(the_header_counts_a_site_still_ramping_as_not_fake) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 3);
  setAll(*model, NormKind::FakeLN);
  const int sites = static_cast<int>(model->norms().sites().size());
  REQUIRE_EQ(ModelSnapshot::copyOf(*model, 4, "m")->normSummary(),
             "LN-free (FakeLN at all " + std::to_string(sites) + " sites)");
  model->norms().at({SiteKind::Final, -1}).realMix = 0.25;
  REQUIRE_EQ(ModelSnapshot::copyOf(*model, 4, "m")->normSummary(),
             std::to_string(sites - 1) + " of " + std::to_string(sites) + " sites FakeLN, 1 ramping");
  // Other mixes name each kind (a GPT-2 whose LN_f was edited to RMSNorm had read "0 of 13 sites
  // FakeRMSNorm").
  setAll(*model, NormKind::LayerNorm);
  model->norms().at({SiteKind::Final, -1}).kind = NormKind::RMSNorm;
  REQUIRE_EQ(ModelSnapshot::copyOf(*model, 4, "m")->normSummary(),
             std::to_string(sites - 1) + " LayerNorm, 1 RMSNorm");
  SiteNorm& ramping = model->norms().at({SiteKind::Mlp, 0});  // a site still ramping counts once, as such
  ramping.kind = NormKind::FakeLN;
  ramping.realMix = 0.5;
  REQUIRE_EQ(ModelSnapshot::copyOf(*model, 4, "m")->normSummary(),
             std::to_string(sites - 2) + " LayerNorm, 1 RMSNorm, 1 ramping");
}

TEST_CASE(dla_equals_direct_effect_on_ln_free_models) {
  const ModelShape c = smallConfig();
  CausalLM fake = randomModel(c, 3);
  setAll(*fake, NormKind::FakeLN);
  // A frozen scale float32 cannot hold: DLA divides by it in double, as DE does (it had read the forward's
  // float32 copy, 2e-6 % off on every component).
  fake->norms().at({SiteKind::Final, -1}).scale = 13.799661008;
  CausalLM folded = foldLayerNorms(*fake);
  const TokenSequences data = sequencesOf(randomTokens(c, 6, 16));
  for (CausalLMImpl* model : {fake.get(), folded.get()}) {
    const AttributionResult r = attribution(*model, data);
    for (const auto* list : {&r.headAttributions, &r.others})
      for (const ComponentAttribution& a : *list) {
        REQUIRE_MSG(a.nmae <= 1e-9, a.name << ": NMAE " << a.nmae << " %");
        REQUIRE(a.meanAbsDe > 0);
      }
    REQUIRE(r.overallNmae <= 1e-3);
    // The components decompose the residual: Σ DLA + β·u is the logit.
    REQUIRE_MSG(r.decompositionError < 1e-4, "decomposition error " << r.decompositionError);
    REQUIRE_EQ(r.trace.dla.size(), size_t{15});
    for (size_t i = 0; i < r.trace.dla.size(); ++i) REQUIRE(std::abs(r.trace.dla[i] - r.trace.de[i]) < 1e-6);
  }
}

TEST_CASE(dla_equals_direct_effect_on_the_ln_free_model_of_every_family) {
  for (const auto& [label, c] : familyShapes()) {
    CausalLM fake = randomModel(c, 3);
    setAll(*fake, fakeNormOf(familyNamed(c.family).norm));
    const AttributionResult r = attribution(*fake, sequencesOf(randomTokens(c, 4, 12)));
    for (const auto* list : {&r.headAttributions, &r.others})
      for (const ComponentAttribution& a : *list)
        REQUIRE_MSG(a.nmae <= 1e-3, label << ", " << a.name << ": NMAE " << a.nmae << " %");
    REQUIRE_MSG(r.decompositionError < 1e-4, label << ": decomposition error " << r.decompositionError);
    // With the family's own (per-token) norm, DLA is only an approximation.
    CausalLM real = randomModel(c, 3);
    REQUIRE_MSG(attribution(*real, sequencesOf(randomTokens(c, 4, 12))).overallNmae > 1e-2, label);
  }
}

TEST_CASE(dla_and_de_differ_with_layernorm_as_the_reference_computes) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 5);
  TempDir dir;
  saveModel(*model, dir.path("model"));
  const torch::Tensor tokens = randomTokens(c, kMinIntervalSequences, 16, 3);
  const AttributionResult r = attribution(*model, sequencesOf(tokens));
  REQUIRE_MSG(r.overallNmae > 1.0, "overall NMAE " << r.overallNmae);
  REQUIRE(r.overallLow <= r.overallNmae && r.overallNmae <= r.overallHigh);
  REQUIRE(std::isnan(attribution(*model, sequencesOf(tokens), 0).overallLow));  // no resamples, no interval
  // Nor from fewer sequences: one resamples only to itself ([x, x] had read as an interval of zero width), a
  // few to about the range of their own NMAEs.
  AttributionOptions resampled;
  resampled.bootstrapSamples = 200;
  for (const int64_t few : {int64_t{1}, int64_t{3}, kMinIntervalSequences - 1})
    REQUIRE(std::isnan(logitAttribution(*ModelSnapshot::copyOf(*model, 7, "test"),
                                        sequencesOf(tokens.slice(0, 0, few)), resampled)
                           .overallHigh));
  REQUIRE(r.decompositionError < 1e-4);  // DLA with the cached scale is linear, LN or not

  const std::string out = dir.path("nmae.f64");
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR + "/dla_reference.py '" +
                          dir.path("model") + "' '" + tokensArg(tokens) + "' '" + out + "'";
  REQUIRE_MSG(runCommand(cmd) == 0, cmd);
  std::ifstream in(out, std::ios::binary);
  std::vector<double> reference(c.nLayer * c.nHead);
  in.read(reinterpret_cast<char*>(reference.data()), reference.size() * sizeof(double));
  REQUIRE(in.gcount() == static_cast<std::streamsize>(reference.size() * sizeof(double)));
  for (size_t i = 0; i < reference.size(); ++i)
    REQUIRE_MSG(
        std::abs(r.headAttributions[i].nmae - reference[i]) < 1e-4,
        r.headAttributions[i].name << ": " << r.headAttributions[i].nmae << " vs reference " << reference[i]);
}

TEST_CASE(patching_all_of_layer_zero_restores_clean_and_patching_nothing_changes_nothing) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 2);
  model->to(torch::kFloat64);  // exact comparisons: no float32 rounding in the residual stream
  const auto snapshot = ModelSnapshot::copyOf(*model, -1, "test");
  const IoiPromptSet set = promptSet(*model, 10, 4);
  std::vector<int64_t> all(10);
  for (int64_t i = 0; i < 10; ++i) all[i] = i;
  REQUIRE(std::abs(patchResidPre(*snapshot, set, 0, all) - 1.0) < 1e-9);
  REQUIRE(std::abs(patchResidPre(*snapshot, set, 0, {})) < 1e-12);

  // In the grid, layer 0 differs from the corrupted run only where the tokens differ.
  PatchingOptions options;
  options.maxBatchTokens = 200;  // several passes per layer: chunking must not change anything
  const PatchingResult r = ioiPatching(*snapshot, set, options);
  REQUIRE_EQ(r.residPre.rows, int64_t{c.nLayer});
  REQUIRE_EQ(r.heads.columns, int64_t{c.nHead});
  REQUIRE_EQ(r.headPositions.rows, int64_t{c.nLayer * c.nHead});
  for (int64_t p = 0; p < 10; ++p) REQUIRE(std::abs(r.residPre.activation[p] - (p == 4 ? 1.0 : 0.0)) < 1e-6);
  // Before the differing position nothing can change, in any grid.
  for (int64_t l = 0; l < c.nLayer; ++l)
    for (int64_t p = 0; p < 4; ++p) REQUIRE(std::abs(r.residPre.activation[l * 10 + p]) < 1e-6);
}

TEST_CASE(attribution_patching_equals_activation_patching_when_blocks_are_linear) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 4);
  setAll(*model, NormKind::Identity);
  uniformAttention(*model);
  {
    torch::NoGradGuard noGrad;  // GELU(0) = 0: every MLP writes its constant output bias
    for (int l = 0; l < c.nLayer; ++l) {
      auto& mlp = *gpt2Of(model).blockAt(l)->mlp;
      mlp.c_fc->weight.zero_();
      mlp.c_fc->bias.zero_();
    }
  }
  model->to(torch::kFloat64);
  const PatchingResult r =
      ioiPatching(*ModelSnapshot::copyOf(*model, -1, "linear"), promptSet(*model, 10, 4));
  double largest = 0;
  for (const PatchingGrid* grid : {&r.residPre, &r.heads, &r.headPositions}) {
    for (size_t i = 0; i < grid->activation.size(); ++i) {
      REQUIRE_MSG(
          std::abs(grid->attribution[i] - grid->activation[i]) < 1e-4,
          grid->name << " cell " << i << ": " << grid->attribution[i] << " vs " << grid->activation[i]);
      largest = std::max(largest, std::abs(grid->activation[i]));
    }
  }
  REQUIRE(largest > 0.1);  // the grids are not trivially zero
}

TEST_CASE(confidence_neuron_scores_match_a_hand_computation) {
  ModelShape c = smallConfig();
  c.nLayer = 1;
  c.nEmbd = 8;
  c.nHead = 2;
  c.vocabSize = 12;
  c.eotTokenId = 11;
  CausalLM model = randomModel(c, 6);
  {
    torch::NoGradGuard noGrad;  // outputs large enough that ablating three neurons moves the loss
    gpt2Of(model).blockAt(0)->mlp->c_fc->weight.mul_(30);
    gpt2Of(model).blockAt(0)->mlp->c_proj->weight.mul_(10);
  }
  const torch::Tensor W = gpt2Of(model).blockAt(0)->mlp->c_proj->weight.to(torch::kFloat64);  // [32, 8]
  const torch::Tensor U = gpt2Of(model).wte->weight.to(torch::kFloat64);                      // [12, 8]
  const torch::Tensor tokens = randomTokens(c, 4, 16);
  const ConfidenceNeuronsResult r =
      confidenceNeurons(*ModelSnapshot::copyOf(*model, -1, "test"), sequencesOf(tokens), 3);
  REQUIRE_EQ(r.neurons.size(), size_t{32});
  for (int i = 0; i < 32; ++i) {
    double norm = 0;
    for (int d = 0; d < 8; ++d) norm += std::pow(W[i][d].item<double>(), 2);
    norm = std::sqrt(norm);
    std::vector<double> cosines;
    for (int t = 0; t < 12; ++t) {
      double dot = 0, rowNorm = 0;
      for (int d = 0; d < 8; ++d) {
        dot += U[t][d].item<double>() * W[i][d].item<double>();
        rowNorm += std::pow(U[t][d].item<double>(), 2);
      }
      cosines.push_back(dot / (std::sqrt(rowNorm) * norm));
    }
    double mean = 0, var = 0;
    for (double x : cosines) mean += x / 12;
    for (double x : cosines) var += (x - mean) * (x - mean) / 11;  // unbiased
    REQUIRE(std::abs(r.neurons[i].outputNorm - norm) < 1e-9 * norm);
    REQUIRE(std::abs(r.neurons[i].logitVar - var) < 1e-9 * var);
    REQUIRE(std::abs(r.neurons[i].score - norm / var) < 1e-8 * norm / var);
  }
  for (size_t k = 1; k < r.ranking.size(); ++k)
    REQUIRE(r.neurons[r.ranking[k - 1]].score >= r.neurons[r.ranking[k]].score);
  // The right singular vectors are an orthonormal basis of model space: squared cosines sum to 1.
  REQUIRE_EQ(r.singularCosines.size(), size_t{3});
  for (const auto& cosines : r.singularCosines) {
    double sum = 0;
    for (double x : cosines) sum += x * x;
    REQUIRE(std::abs(sum - 1.0) < 1e-9);
  }
  for (size_t k = 1; k < r.singularValues.size(); ++k)
    REQUIRE(r.singularValues[k - 1] >= r.singularValues[k]);
  REQUIRE_EQ(r.ablations.size(), size_t{3});
  const double base = weightAblatedLoss(*model, tokens, {});
  REQUIRE(std::abs(r.baseLoss - base) < 1e-5);
  const std::vector<int> top{r.ranking[0], r.ranking[1], r.ranking[2]};
  for (int k = 0; k < 3; ++k) {
    REQUIRE_EQ(r.ablations[k].neuron, top[k]);
    const double alone = weightAblatedLoss(*model, tokens, {top[k]}) - base;
    const double together =
        weightAblatedLoss(*model, tokens, std::vector<int>(top.begin(), top.begin() + k + 1)) - base;
    REQUIRE_MSG(std::abs(r.ablations[k].deltaLoss - alone) < 1e-5,
                r.ablations[k].deltaLoss << " vs " << alone);
    REQUIRE(std::abs(r.ablations[k].cumulativeDeltaLoss - together) < 1e-5);
  }
  REQUIRE(std::abs(r.ablations[2].cumulativeDeltaLoss) > 1e-4);  // the comparison is not between zeros
}

TEST_CASE(sink_rate_of_hand_built_attention) {
  // Two sequences, two heads, three positions: position 0 gets (1 + a + b) / 3 of each head's attention.
  const torch::Tensor pattern = torch::tensor({1.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.2, 0.4, 0.4,   // mean 0.5667
                                               1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.5,   // 0.3333
                                               1.0, 0.0, 0.0, 0.1, 0.9, 0.0, 0.1, 0.1, 0.8,   // 0.4
                                               1.0, 0.0, 0.0, 0.9, 0.1, 0.0, 0.6, 0.2, 0.2})  // 0.8333
                                    .view({2, 2, 3, 3});
  const torch::Tensor zero = positionZeroAttention(pattern);
  const double expected[] = {1.7 / 3, 1.0 / 3, 1.2 / 3, 2.5 / 3};
  for (int i = 0; i < 4; ++i) REQUIRE(std::abs(zero.view(-1)[i].item<double>() - expected[i]) < 1e-6);

  // Uniform attention over 4 positions: position 0 gets (1 + 1/2 + 1/3 + 1/4) / 4 = 0.5208 in every head.
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 8);
  uniformAttention(*model);
  const auto snapshot = ModelSnapshot::copyOf(*model, -1, "uniform");
  const TokenSequences data = sequencesOf(randomTokens(c, 3, 4));
  const AttentionSinksResult below = attentionSinks(*snapshot, data, 0.52),
                             above = attentionSinks(*snapshot, data, 0.53);
  REQUIRE(below.sinkRate == 1.0);
  REQUIRE(above.sinkRate == 0.0);
  for (double m : below.meanPositionZero) REQUIRE(std::abs(m - 25.0 / 48.0) < 1e-6);

  // Per query (issue 39's definition): queries 1, 2, 3 give position 0 1/2, 1/3, 1/4 (query 0 left out).
  const double expectedShare[][2] = {{0.2, 1.0}, {0.3, 2.0 / 3}, {0.4, 1.0 / 3}, {0.6, 0.0}};
  for (const auto& [threshold, share] : expectedShare)
    REQUIRE_MSG(std::abs(attentionSinks(*snapshot, data, threshold).querySinkRate - share) < 1e-12,
                "threshold " << threshold);
  REQUIRE(std::isnan(attentionSinks(*snapshot, sequencesOf(randomTokens(c, 3, 1)), 0.3).querySinkRate));
}

TEST_CASE(residual_norms_at_layer_zero_are_the_embedding_norms) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 12);
  const torch::Tensor tokens = randomTokens(c, 4, 16, 5);
  const ResidualNormsResult r =
      residualNorms(*ModelSnapshot::copyOf(*model, 3, "test"), sequencesOf(tokens), 10);
  REQUIRE_EQ(r.rows.size(), static_cast<size_t>(c.nLayer + 1));
  REQUIRE_EQ(r.header.step, int64_t{3});
  double position0 = 0, rest = 0;
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t t = 0; t < 16; ++t) {
      const double n =
          (gpt2Of(model).wte->weight[tokens[b][t]] + gpt2Of(model).wpe->weight[t]).norm().item<double>();
      (t == 0 ? position0 : rest) += n;
    }
  REQUIRE(std::abs(r.rows[0].position0.mean - position0 / 4) < 1e-5);
  REQUIRE(std::abs(r.rows[0].rest.mean - rest / 60) < 1e-5);
  REQUIRE_EQ(r.scales.size(), static_cast<size_t>(3 * c.nLayer + 1));
  for (const ScaleHistogram& h : r.scales) {
    int64_t count = 0;
    for (int64_t n : h.counts) count += n;
    REQUIRE_EQ(count, int64_t{64});
    REQUIRE(h.rest.p10 <= h.rest.median && h.rest.median <= h.rest.p90);
  }
}

// Results computed on a server come back as toJson wrote them: each reads back to the same JSON.
TEST_CASE(residual_norms_read_back_from_their_json) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 12);
  requireReadBack(
      residualNorms(*ModelSnapshot::copyOf(*model, 3, "test"), sequencesOf(randomTokens(c, 2, 8)), 5),
      residualNormsResultFromJson);
}

TEST_CASE(attention_sinks_read_back_from_their_json) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 8);
  const AttentionSinksResult r =
      attentionSinks(*ModelSnapshot::copyOf(*model, -1, "test"), sequencesOf(randomTokens(c, 2, 8)));
  requireReadBack(r, attentionSinksResultFromJson);
  nlohmann::json older = toJson(r);  // a result of a build before the per-query rate
  older.erase("query_sink_rate");
  REQUIRE(std::isnan(attentionSinksResultFromJson(older).querySinkRate));
  REQUIRE(attentionSinksResultFromJson(older).sinkRate == r.sinkRate);
}

TEST_CASE(logit_attribution_reads_back_from_its_json) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 5);
  requireReadBack(attribution(*model, sequencesOf(randomTokens(c, 2, 8))), attributionResultFromJson,
                  [](nlohmann::json& j) { j["trace"]["token_texts"] = std::vector<std::string>(8, "x"); });
}

TEST_CASE(patching_reads_back_from_its_json_with_and_without_the_head_position_grid) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 2);
  const auto snapshot = ModelSnapshot::copyOf(*model, -1, "test");
  const IoiPromptSet set = promptSet(*model, 6, 3);
  for (bool headPositions : {true, false}) {
    PatchingOptions options;
    options.headPositions = headPositions;
    requireReadBack(ioiPatching(*snapshot, set, options), patchingResultFromJson, [](nlohmann::json& j) {
      j["example_clean_texts"] = j["example_corrupted_texts"] = std::vector<std::string>(6, "x");
    });
  }
}

TEST_CASE(confidence_neurons_leave_zero_vectors_out_of_their_scores) {
  ModelShape c = smallConfig();
  c.nLayer = 1;
  c.vocabSize = 12;
  c.eotTokenId = 11;
  CausalLM model = randomModel(c, 7);
  {
    torch::NoGradGuard noGrad;  // a neuron that writes nothing and a vocabulary row never trained
    gpt2Of(model).blockAt(0)->mlp->c_proj->weight[5].zero_();
    gpt2Of(model).wte->weight[3].zero_();
  }
  const torch::Tensor W = gpt2Of(model).blockAt(0)->mlp->c_proj->weight.to(torch::kFloat64);  // [F, D]
  const torch::Tensor U = gpt2Of(model).wte->weight.to(torch::kFloat64);                      // [V, D]
  const int F = static_cast<int>(W.size(0));
  const ConfidenceNeuronsResult r =
      confidenceNeurons(*ModelSnapshot::copyOf(*model, -1, "test"), sequencesOf(randomTokens(c, 2, 8)), F);
  REQUIRE_EQ(r.neurons[5].score, 0.0);
  REQUIRE_EQ(r.ranking.back(), 5);  // the others' scores are positive
  for (const double x : r.singularCosines.back()) REQUIRE_EQ(x, 0.0);
  // Every other neuron: the definition's variance over the 11 rows that have a direction.
  std::vector<int64_t> kept;
  for (int64_t t = 0; t < 12; ++t)
    if (t != 3) kept.push_back(t);
  const torch::Tensor Uk = U.index_select(0, torch::tensor(kept));
  for (int i = 0; i < F; ++i) {
    if (i == 5) continue;
    const torch::Tensor cosines = Uk.matmul(W[i]) / (Uk.norm(2, 1) * W[i].norm());
    const double var = cosines.var(0, /*unbiased=*/true).item<double>();
    REQUIRE_MSG(std::isfinite(r.neurons[i].score), "neuron " << i);
    REQUIRE(std::abs(r.neurons[i].logitVar - var) < 1e-9 * var);
  }
  requireReadBack(r, confidenceNeuronsResultFromJson);
  {
    torch::NoGradGuard noGrad;  // one row left: no variance to divide by
    gpt2Of(model).wte->weight.slice(0, 1).zero_();
  }
  REQUIRE_THROWS_WITH(
      confidenceNeurons(*ModelSnapshot::copyOf(*model, -1, "test"), sequencesOf(randomTokens(c, 2, 8)), 2),
      "the unembedding has 1 non-zero rows", "at least two");
}

// The confidence neurons' variances, a chunk of neurons at a time (the whole [V, F] matrix of cosines had
// taken 4–6 GB for Qwen2's vocabulary): the same as the definition's, whatever the chunk, zero vectors 0.
TEST_CASE(cosine_variances_are_the_same_in_chunks) {
  torch::manual_seed(3);
  const torch::Tensor rows = torch::randn({13, 5}, torch::kFloat64);
  torch::Tensor vectors = torch::randn({32, 5}, torch::kFloat64);
  vectors[7].zero_();
  const torch::Tensor whole = cosineVariances(rows, vectors);
  for (int64_t maxCosines : {int64_t{1}, int64_t{13 * 3}, int64_t{13 * 31}, int64_t{13 * 32}}) {
    const torch::Tensor chunked = cosineVariances(rows, vectors, maxCosines);
    REQUIRE_MSG(chunked.size(0) == 32 && torch::allclose(chunked, whole, 1e-12, 0), maxCosines);
  }
  REQUIRE_EQ(whole[7].item<double>(), 0.0);
  for (int f : {0, 31}) {
    const torch::Tensor cosines = rows.matmul(vectors[f]) / (rows.norm(2, 1) * vectors[f].norm());
    REQUIRE(std::abs(whole[f].item<double>() - cosines.var(0, true).item<double>()) <
            1e-12 * whole[f].item<double>());
  }
}

TEST_CASE(confidence_neurons_read_back_from_their_json) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 6);
  const ConfidenceNeuronsResult r =
      confidenceNeurons(*ModelSnapshot::copyOf(*model, -1, "test"), sequencesOf(randomTokens(c, 2, 8)), 2);
  requireReadBack(r, confidenceNeuronsResultFromJson);
  // The window names a ranked neuron per cosine row and draws each row against the singular values.
  nlohmann::json moreRows = toJson(r), shortRow = toJson(r);
  moreRows["ranking"] = nlohmann::json::array({0});
  requireRefused(confidenceNeuronsResultFromJson, moreRows, "more than the 1 ranked neurons");
  shortRow["top_singular_cosines"][0].erase(0);
  requireRefused(confidenceNeuronsResultFromJson, shortRow, "the singular values");
}

TEST_CASE(model_behaviour_reads_back_from_its_json) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 4);
  BehaviourOptions options;
  options.newTokens = 3;
  const ModelBehaviour b = modelBehaviour(*ModelSnapshot::copyOf(*model, 9, "test"),
                                          sequencesOf(randomTokens(c, 2, 8)), {{1, 2, 3}, {4}}, options);
  REQUIRE_EQ(b.header.analysis, "calibration");  // the analysis's name, as the result's own header (not
                                                 // "behaviour", the struct's)
  requireReadBack(b, modelBehaviourFromJson, [](nlohmann::json& j) {
    for (auto& continuation : j["continuations"]) continuation["greedy_text"] = "x";
  });
}

TEST_CASE(a_result_json_missing_a_field_or_with_a_mistyped_one_is_refused_naming_it) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 12);
  const nlohmann::json j =
      toJson(residualNorms(*ModelSnapshot::copyOf(*model, 3, "test"), sequencesOf(randomTokens(c, 2, 8)), 5));
  nlohmann::json missing = j, mistyped = j, fraction = j, notANumber = j;
  missing["residual_norms"][2]["position0"].erase("mean");
  requireRefused(residualNormsResultFromJson, missing,
                 "analysis result: 'residual_norms[2].position0.mean' is missing or not a number");
  mistyped["sigma"][1]["counts"][0] = "7";
  requireRefused(residualNormsResultFromJson, mistyped,
                 "'sigma[1].counts[0]' is missing or not a whole number");
  fraction["header"]["step"] = 3.5;
  requireRefused(residualNormsResultFromJson, fraction, "'header.step'");
  requireRefused(residualNormsResultFromJson, nlohmann::json::array(), "the JSON is not an object");
  // nlohmann::json writes NaN and infinity as null: read back as NaN.
  notANumber["sigma"][0]["frozen_scale"] = nullptr;
  REQUIRE(std::isnan(residualNormsResultFromJson(notANumber).scales[0].frozenScale));

  // A grid whose values do not fit its rows × columns (error() and gridCsv would read past them).
  PatchingResult p;
  p.residPre = {"resid_pre", 1, 2, {"L0"}, {"p0", "p1"}, {0.5, 1.0}, {0.5, 0.75}};
  p.heads = {"heads", 1, 1, {"L0"}, {"H0"}, {1.0}, {1.0}};
  nlohmann::json grids = toJson(p), noHeads = grids;
  REQUIRE(toJson(patchingResultFromJson(grids)) == grids);
  grids["grids"][0]["attribution"].erase(1);
  requireRefused(patchingResultFromJson, grids,
                 "'grids[0].attribution' has length 1, not rows × columns = 2");
  noHeads["grids"].erase(1);
  requireRefused(patchingResultFromJson, noHeads,
                 "'grids' is missing or not a list holding the \"heads\" grid");
}

// The logit lens in float64 against tests/reference/logit_lens_reference.py, written from the definitions,
// for (layers + 1) points × 3 modes × (ce, kl, probability, median rank, top-1 share).
void requireLensMatchesReference(CausalLM& model, const std::string& label) {
  TempDir dir;
  saveModel(*model, dir.path("model"));
  model->to(torch::kFloat64);
  torch::Tensor tokens = randomTokens(model->config(), 4, 16, 11);
  tokens.index_put_({torch::indexing::Slice(), 5}, model->config().eotTokenId);  // excluded from the mean
  LogitLensOptions options;
  options.traceSequence = 2;
  options.logitBudget = 300;  // several chunks of rows per batch: chunking must not change anything
  const LogitLensResult r =
      logitLens(*ModelSnapshot::copyOf(*model, 3, "test"), sequencesOf(tokens), options);
  const std::string out = dir.path("lens.f64");
  const std::string cmd = std::string(NF_REFERENCE_PYTHON) + " " + NF_REFERENCE_DIR +
                          "/logit_lens_reference.py '" + dir.path("model") + "' '" + tokensArg(tokens) +
                          "' '" + out + "'";
  REQUIRE_MSG(runCommand(cmd) == 0, cmd);
  std::ifstream in(out, std::ios::binary);
  std::vector<double> reference(r.points.size() * kLensModes * 5);
  in.read(reinterpret_cast<char*>(reference.data()), reference.size() * sizeof(double));
  REQUIRE(in.gcount() == static_cast<std::streamsize>(reference.size() * sizeof(double)));
  size_t i = 0;
  for (const LensPoint& p : r.points)
    for (int m = 0; m < kLensModes; ++m) {
      const LensFigures& f = p.modes[m];
      for (double value : {f.ce, f.kl, f.probability, f.medianRank, f.top1}) {
        REQUIRE_MSG(std::abs(value - reference[i]) <= 1e-7 * (1 + std::abs(reference[i])),
                    label << ", " << p.point << ", " << lensModeName(LensMode(m)) << ", figure " << i % 5
                          << ": " << value << " vs reference " << reference[i]);
        ++i;
      }
    }
}

TEST_CASE(logit_lens_matches_the_reference_in_every_mode_for_gpt2_and_llama) {
  for (const NamedShape& shape : familyShapes()) {
    if (shape.shape.family == "gpt_neox") continue;  // the reference reads GPT-2's and LLaMA's layouts
    CausalLM real = randomModel(shape.shape, 21);
    requireLensMatchesReference(real, shape.label);
    CausalLM fake = randomModel(shape.shape, 22);
    setAll(*fake, fakeNormOf(familyNamed(shape.shape.family).norm));
    fake->norms().at({SiteKind::Final, -1}).pos0Treatment = true;  // s_0 at position 0
    fake->norms().at({SiteKind::Final, -1}).scalePos0 = 4.5;
    requireLensMatchesReference(fake, shape.label + ", LN-free");
  }
}

TEST_CASE(logit_lens_modes_agree_exactly_on_ln_free_models_and_differ_with_a_norm) {
  for (const NamedShape& shape : familyShapes()) {
    const TokenSequences data = sequencesOf(randomTokens(shape.shape, 3, 12, 5));
    LogitLensOptions options;
    options.traceSequence = 1;
    options.top = 3;
    CausalLM model = randomModel(shape.shape, 9);
    setAll(*model, fakeNormOf(familyNamed(shape.shape.family).norm));
    const LogitLensResult free = logitLens(*ModelSnapshot::copyOf(*model, 1, "free"), data, options);
    REQUIRE_EQ(free.linearDivisor, 0.0);  // LN_f keeps its own frozen s
    for (size_t p = 0; p < free.points.size(); ++p)
      for (int m = 1; m < kLensModes; ++m) {
        const LensFigures &a = free.points[p].modes[0], &b = free.points[p].modes[m];
        REQUIRE_MSG(a.ce == b.ce && a.kl == b.kl && a.probability == b.probability &&
                        a.medianRank == b.medianRank && a.top1 == b.top1,
                    shape.label << ", " << free.points[p].point << ": " << lensModeName(LensMode(m)));
        REQUIRE(free.trace.points[p][m].topIds == free.trace.points[p][0].topIds);
        REQUIRE(free.trace.points[p][m].targetRank == free.trace.points[p][0].targetRank);
      }

    // With the family's own norm the modes differ before the last layer; at the final residual the
    // recomputed and frozen modes are the model itself.
    CausalLM real = randomModel(shape.shape, 9);
    const LogitLensResult withNorm = logitLens(*ModelSnapshot::copyOf(*real, 1, "real"), data, options);
    REQUIRE(withNorm.linearDivisor > 0);
    const LensPoint& final = withNorm.points.back();
    REQUIRE_EQ(final.point, std::string("final"));
    for (int m : {0, 1})
      REQUIRE_MSG(std::abs(final.modes[m].kl) < 1e-5, shape.label << ": " << final.modes[m].kl);
    REQUIRE_MSG(final.modes[2].kl > 1e-7, shape.label << ": linear KL " << final.modes[2].kl);
    REQUIRE(std::abs(withNorm.points[0].modes[0].ce - withNorm.points[0].modes[1].ce) > 1e-4);
    // The trace: every traced position has `top` tokens, best first, and a target rank where it has a next
    // token; the JSON reads back to the same result.
    const LensGrid& grid = withNorm.trace.points[1][0];
    REQUIRE_EQ(grid.topIds.size(), size_t(12 * 3));
    REQUIRE_EQ(grid.targetRank.size(), size_t(11));
    REQUIRE(grid.topProbabilities[0] >= grid.topProbabilities[1]);
    REQUIRE(toJson(logitLensResultFromJson(toJson(withNorm))) == toJson(withNorm));
    // One whose trace does not fit its shapes (a served result of another build) is refused: the window
    // indexes the grid by position and rank.
    nlohmann::json shorter = toJson(withNorm), fewer = toJson(withNorm);
    shorter["trace"]["points"][1]["frozen"]["top_ids"].erase(0);
    shorter["trace"]["points"][1]["frozen"]["top_probabilities"].erase(0);
    requireRefused(logitLensResultFromJson, shorter, "does not fit its 12 positions");
    fewer["trace"]["tokens"] = nlohmann::json::array({1, 2});
    requireRefused(logitLensResultFromJson, fewer, "does not fit");
  }
}

TEST_CASE(the_token_view_is_one_whole_sequence_with_a_heads_dla_and_de_and_each_pattern_asked_for) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 5);
  TempDir dir;
  const torch::Tensor tokens = randomTokens(c, 3, c.nPositions, 4);  // 3 sequences of the whole context
  const TokenSequences data = sequencesOf(tokens);
  writeTokens(dir.path("t.bin"), data.tokens, c.vocabSize);
  const SnapshotPtr snapshot = ModelSnapshot::copyOf(*model, 3, "test");
  AnalysisRequest r;
  r.kind = "tokens";
  r.sequences = 3;
  r.traceSequence = 2;
  r.traceLayer = 1;
  r.traceHead = 2;
  r.heads = {{0, 1}, {1, 2}, {1, 3}};
  const AnalysisOutput out = runAnalysis(r, *snapshot, {dir.path("t.bin"), nullptr, nullptr});
  const nlohmann::json& j = out.result;
  REQUIRE(j["length"] == c.nPositions);                // the whole context, not a stretch of it
  const std::string& csv = out.csvGrids.at("tokens");  // a header, then a row per predicted token
  REQUIRE(std::count(csv.begin(), csv.end(), '\n') == c.nPositions);
  const std::vector<int32_t> third(data.row(2), data.row(2) + data.length);
  REQUIRE(j["tokens"].get<std::vector<int32_t>>() == third);
  REQUIRE(j["patterns"].size() == 3);
  for (const nlohmann::json& p : j["patterns"]) {
    const std::vector<double> pattern = p["pattern"].get<std::vector<double>>();
    REQUIRE(pattern.size() == static_cast<std::size_t>(c.nPositions * c.nPositions));
    REQUIRE(pattern == attentionPattern(*snapshot, third, p["layer"], p["head"]));
  }
  // The head's DLA and DE per position: the dla analysis's trace of the same head on the same sequence.
  AttributionOptions options;
  options.traceLayer = 1;
  options.traceHead = 2;
  options.traceSequence = 2;
  options.bootstrapSamples = 0;
  const AttributionResult a = logitAttribution(*snapshot, data, options);
  const std::vector<double> dla = j["dla"].get<std::vector<double>>(),
                            de = j["de"].get<std::vector<double>>();
  REQUIRE(dla.size() == static_cast<std::size_t>(c.nPositions - 1) && de.size() == dla.size());
  for (std::size_t i = 0; i < dla.size(); ++i)
    REQUIRE_MSG(std::abs(dla[i] - a.trace.dla[i]) < 1e-9 && std::abs(de[i] - a.trace.de[i]) < 1e-9,
                "position " << i);

  // Bounds: a sequence the data does not hold, too many heads, a malformed head.
  r.sequences = 5;
  r.traceSequence = 4;
  REQUIRE_THROWS_WITH(runAnalysis(r, *snapshot, {dir.path("t.bin"), nullptr, nullptr}), "no sequence 4");
  nlohmann::json request = toJson(r);
  REQUIRE(analysisRequestFromJson(request).heads == r.heads);
  request["heads"] = nlohmann::json::array();
  for (int h = 0; h < 17; ++h) request["heads"].push_back({0, 0});
  REQUIRE_THROWS_WITH(analysisRequestFromJson(request), "≤ 16");
  request["heads"] = {{0}};
  REQUIRE_THROWS_WITH(analysisRequestFromJson(request), "[layer, head] pairs");
  // A setting of another analysis is refused by name: it was taken and changed nothing. A request written
  // for a server holds its own kind's settings alone.
  REQUIRE(!toJson(r).contains("threshold") && toJson(r).contains("heads"));
  request = toJson(r);
  request["threshold"] = 0.5;
  REQUIRE_THROWS_WITH(analysisRequestFromJson(request),
                      "\"threshold\" is not a setting of the tokens analysis", "heads");
}

// A setting left out means what the CLI's option does when it is left out: the endpoint's logit lens had
// traced 10 tokens where `analyze logit-lens` and the window trace 5.
TEST_CASE(a_request_without_a_setting_takes_the_clis_default) {
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "logit-lens"}}).top, 5);
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "logit-lens"}, {"top", 7}}).top, 7);
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "neurons"}}).top, 10);
}

// A setting that does nothing beside the others is refused by the endpoint as by the CLI (`analyze circuit
// --steps` without eap-ig, --keep with --edges, `analyze dla --seed` with --bootstrap 0; an empty calibration
// prompt, continued from nothing), and a request written for the server
// leaves it out, so that the GUI's own requests still pass.
TEST_CASE(a_request_setting_that_would_do_nothing_is_refused_as_the_cli_refuses_it) {
  REQUIRE_THROWS_WITH(analysisRequestFromJson({{"analysis", "circuit"}, {"method", "eap"}, {"steps", 8}}),
                      "\"steps\" applies to method \"eap-ig\" only");
  REQUIRE_THROWS_WITH(analysisRequestFromJson({{"analysis", "circuit"}, {"steps", 8}}), "\"steps\"");
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "circuit"}, {"method", "eap-ig"}, {"steps", 8}}).steps, 8);
  // A default sent along, as workbenches before this check sent every setting, is no request of its own.
  REQUIRE_EQ(analysisRequestFromJson(
                 {{"analysis", "circuit"}, {"method", "eap"}, {"steps", 5}, {"edges", 9}, {"keep", 0.8}})
                 .edges,
             9);
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "dla"}, {"bootstrap", 0}, {"seed", 0}}).bootstrap, 0);
  REQUIRE_THROWS_WITH(analysisRequestFromJson({{"analysis", "dla"}, {"bootstrap", 0}, {"seed", 3}}),
                      "\"seed\" draws the bootstrap's resamples");
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "dla"}, {"bootstrap", 100}, {"seed", 3}}).seed, 3u);
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "patching"}, {"seed", 3}}).seed, 3u);  // the prompts' seed
  REQUIRE_THROWS_WITH(analysisRequestFromJson({{"analysis", "circuit"}, {"edges", 10}, {"keep", 0.5}}),
                      "\"keep\" chooses how many edges when \"edges\" is 0");
  REQUIRE_EQ(analysisRequestFromJson({{"analysis", "circuit"}, {"edges", 0}, {"keep", 0.5}}).keep, 0.5);
  REQUIRE_THROWS_WITH(analysisRequestFromJson({{"analysis", "calibration"}, {"prompts", {"Once", ""}}}),
                      "each of \"prompts\" needs text");
  AnalysisRequest eap;
  eap.kind = "circuit";
  eap.steps = 8;
  eap.edges = 12;
  REQUIRE(!toJson(eap).contains("steps") && !toJson(eap).contains("keep") && toJson(eap).contains("edges"));
  requireReadBack(eap, analysisRequestFromJson);
  AnalysisRequest dla;
  dla.kind = "dla";
  dla.bootstrap = 0;
  dla.seed = 3;
  REQUIRE(!toJson(dla).contains("seed") && toJson(dla).contains("bootstrap"));
  requireReadBack(dla, analysisRequestFromJson);
}

TEST_MAIN()
