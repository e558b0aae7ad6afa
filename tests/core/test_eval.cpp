// Evaluation statistics against hand computation, evaluation end to end against the Python reference model,
// and generation.
#include <cmath>

#include "data/token_file.h"
#include "eval/circuits.h"
#include "eval/evaluate.h"
#include "eval/generate.h"
#include "fixtures.h"

using namespace nf;
using namespace nf::test;

namespace {

bool near(double a, double b, double tolerance = 1e-6) { return std::abs(a - b) <= tolerance; }

}  // namespace

TEST_CASE(summary_statistics_match_hand_computation) {
  // Five predictions over a vocabulary of 3, given as probabilities (logits = log p).
  const double p[5][3] = {
      {0.55, 0.30, 0.15}, {0.55, 0.30, 0.15}, {0.85, 0.10, 0.05}, {0.25, 0.12, 0.63}, {0.25, 0.12, 0.63}};

  auto logits = torch::empty({5, 3}, torch::kFloat64);
  for (int i = 0; i < 5; ++i)
    for (int v = 0; v < 3; ++v) logits[i][v] = std::log(p[i][v]);
  TokenValues values;
  values.append(logits, torch::tensor({0, 1, 0, 2, 1}, torch::kLong));
  const LossSummary s = summarize(values, 10);

  // By hand: losses −ln p[target]; sorted: −ln .85, −ln .63, −ln .55, −ln .30, −ln .12.
  const double loss[5] = {-std::log(0.55), -std::log(0.30), -std::log(0.85), -std::log(0.63),
                          -std::log(0.12)};
  const double sorted[5] = {loss[2], loss[3], loss[0], loss[1], loss[4]};
  double mean = 0, entropy = 0;
  for (int i = 0; i < 5; ++i) {
    mean += loss[i] / 5;
    for (int v = 0; v < 3; ++v) entropy -= p[i][v] * std::log(p[i][v]) / 5;
  }
  REQUIRE_EQ(s.tokens, 5);
  REQUIRE(near(s.meanLoss, mean));
  REQUIRE(near(s.medianLoss, sorted[2]));
  // Quantile q sits at q·(n − 1) between order statistics: 0.025 → 0.1, 0.975 → 3.9, 0.0005 → 0.002.
  REQUIRE(near(s.range95[0], sorted[0] + 0.1 * (sorted[1] - sorted[0])));
  REQUIRE(near(s.range95[1], sorted[3] + 0.9 * (sorted[4] - sorted[3])));
  REQUIRE(near(s.range999[0], sorted[0] + 0.002 * (sorted[1] - sorted[0])));
  REQUIRE(near(s.range999[1], sorted[3] + 0.998 * (sorted[4] - sorted[3])));
  REQUIRE(near(s.meanEntropy, entropy));
  REQUIRE(near(s.accuracy, 3.0 / 5));  // rows 0, 2, 3 have argmax = target
  // ECE: bin [.5,.6): 2 tokens, confidence .55, accuracy .5; bin [.8,.9): 1 token, .85 vs 1;
  // bin [.6,.7): 2 tokens, .63 vs .5.
  REQUIRE(near(s.ece, 2.0 / 5 * 0.05 + 1.0 / 5 * 0.15 + 2.0 / 5 * 0.13));
  REQUIRE_EQ(s.bins[5].count, 2);
  REQUIRE(near(s.bins[6].meanConfidence, 0.63));
  REQUIRE(near(s.bins[8].accuracy, 1.0));
  REQUIRE_EQ(s.bins[0].count, 0);
  const nlohmann::json empty = toJson(s)["calibration_bins"][0];  // no tokens: no accuracy, not 0 of them
  REQUIRE(empty["accuracy"].is_null() && empty["mean_confidence"].is_null());
  REQUIRE_EQ(toJson(s)["calibration_bins"][8]["accuracy"], 1.0);
}

TEST_CASE(quantile_interpolates_like_numpy) {
  REQUIRE(near(quantile({3, 1, 2, 4}, 0.5), 2.5));
  REQUIRE(near(quantile({3, 1, 2, 4}, 0.0), 1));
  REQUIRE(near(quantile({3, 1, 2, 4}, 1.0), 4));
  REQUIRE(near(quantile({10}, 0.3), 10));
  REQUIRE(near(quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95), 9.55));
}

TEST_CASE(evaluation_matches_reference_model_cross_entropy) {
  TempDir dir;
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 3);
  saveModel(*model, dir.path("m"));
  // 4 chunks of 16 plus one spare token; the chunk after them is incomplete and ignored.
  auto tokens = randomTokens(c, 1, 4 * 16 + 1 + 7, 5).flatten();
  std::vector<int32_t> ids(tokens.data_ptr<int64_t>(), tokens.data_ptr<int64_t>() + tokens.numel());
  writeTokens(dir.path("d.bin"), ids, c.vocabSize);

  EvalOptions options;
  options.batchSize = 3;  // uneven batches
  const EvalResult r = evaluate(*model, TokenFile::open(dir.path("d.bin")), options);
  REQUIRE_EQ(r.chunks, 4);
  REQUIRE_EQ(r.summary.tokens, 64);

  const auto inputs = tokens.slice(0, 0, 64).view({4, 16});
  const auto targets = tokens.slice(0, 1, 65).view({4, 16});
  const auto reference = referenceLogits(dir.path("m"), inputs, c.vocabSize).to(torch::kFloat64);
  const auto logp = torch::log_softmax(reference, -1);
  const double expected = -logp.gather(2, targets.unsqueeze(2)).mean().item<double>();
  REQUIRE_MSG(near(r.summary.meanLoss, expected, 1e-5), r.summary.meanLoss << " vs " << expected);
  const double entropy = -(logp.exp() * logp).sum(-1).mean().item<double>();
  REQUIRE(near(r.summary.meanEntropy, entropy, 1e-5));

  // Finite weights whose logits overflow float32: an error, not a NaN mean loss (nor a calibration bin
  // indexed by NaN, which crashed).
  {
    torch::NoGradGuard noGrad;
    model->named_parameters()["ln_f.weight"].fill_(3e38);
  }
  REQUIRE_THROWS_WITH(evaluate(*model, TokenFile::open(dir.path("d.bin")), options),
                      "log-probabilities are not finite");
}

TEST_CASE(filtering_skips_chunks_with_unseen_tokens) {
  TempDir dir;
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 3);
  std::vector<int32_t> ids;
  for (int chunk = 0; chunk < 6; ++chunk)
    for (int t = 0; t < 16; ++t) ids.push_back((chunk == 1 || chunk == 4) && t == 9 ? 77 : t);
  ids.push_back(0);
  writeTokens(dir.path("d.bin"), ids, c.vocabSize);
  writeTokens(dir.path("seen.bin"), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, c.vocabSize);
  const std::vector<bool> allowed = TokenFile::open(dir.path("seen.bin")).occurringTokens(c.vocabSize);
  EvalOptions options;
  options.allowedTokens = &allowed;
  const EvalResult r = evaluate(*model, TokenFile::open(dir.path("d.bin")), options);
  REQUIRE_EQ(r.chunksSkipped, 2);
  REQUIRE_EQ(r.chunks, 4);
  REQUIRE_EQ(r.summary.tokens, 64);
}

TEST_CASE(greedy_generation_follows_the_argmax) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 4);
  GenerationOptions options;
  options.temperature = 0;
  options.maxNewTokens = 20;  // runs past the context of 16: the prompt is cropped from the left
  options.stopAtEndOfText = false;
  const std::vector<int32_t> prompt = {5, 6, 7};
  const auto generated = generate(*model, prompt, options);
  REQUIRE_EQ(generated.size(), 20u);
  std::vector<int64_t> context(prompt.begin(), prompt.end());
  torch::NoGradGuard noGrad;
  for (int32_t token : generated) {
    const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(context.size()) - c.nPositions);
    auto input = torch::tensor(std::vector<int64_t>(context.begin() + start, context.end())).unsqueeze(0);
    const int64_t expected = model->forward(input)[0][-1].argmax().item<int64_t>();
    REQUIRE_EQ(token, expected);
    context.push_back(token);
  }
  // Any end-of-sequence id config.json lists stops it, as at the end-of-text id (LLaMA 3 lists several).
  options.stopAtEndOfText = true;
  options.otherStopIds = {generated[3]};
  const auto stopped = generate(*model, prompt, options);
  const auto at = std::find_if(generated.begin(), generated.end(),
                               [&](int32_t t) { return t == c.eotTokenId || t == generated[3]; });
  REQUIRE(stopped == std::vector<int32_t>(generated.begin(), at + 1));
}

TEST_CASE(sampling_is_deterministic_for_a_seed_and_has_the_right_distribution) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 4);
  GenerationOptions options;
  options.maxNewTokens = 12;
  options.stopAtEndOfText = false;
  options.seed = 1;
  const auto a = generate(*model, {1, 2}, options);
  REQUIRE(a == generate(*model, {1, 2}, options));
  options.seed = 2;
  REQUIRE(a != generate(*model, {1, 2}, options));
  options.topK = 1;
  GenerationOptions greedy = options;
  greedy.temperature = 0;
  REQUIRE(generate(*model, {1, 2}, options) == generate(*model, {1, 2}, greedy));

  // p = (0.25, 0.75, 0) at temperature 1; at temperature 0.5 the odds square: (0.1, 0.9).
  const auto logits = torch::tensor({std::log(1.0), std::log(3.0), -1e9});
  Random random(3);
  GenerationOptions sampling;
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += sampleToken(logits, sampling, random) == 1;
  REQUIRE_MSG(std::abs(ones / double(n) - 0.75) < 0.015, ones);
  sampling.temperature = 0.5;
  ones = 0;
  for (int i = 0; i < n; ++i) ones += sampleToken(logits, sampling, random) == 1;
  REQUIRE_MSG(std::abs(ones / double(n) - 0.9) < 0.01, ones);

  // Nucleus sampling (transformers' TopPLogitsWarper): p = (0.5, 0.3, 0.15, 0.05) keeps the most likely
  // tokens whose probabilities first sum to at least top p, renormalised.
  const auto four = torch::tensor({0.15, 0.5, 0.05, 0.3}).log();  // ids by probability: 1, 3, 0, 2
  GenerationOptions nucleus;
  auto frequencies = [&](double topP) {
    nucleus.topP = topP;
    std::vector<double> seen(4, 0.0);
    for (int i = 0; i < n; ++i) seen[sampleToken(four, nucleus, random)] += 1.0 / n;
    return seen;
  };
  std::vector<double> f = frequencies(0.79);  // 0.5 + 0.3 reaches 0.79: ids 1 and 3, as 5 : 3
  REQUIRE_MSG(f[0] == 0 && f[2] == 0 && std::abs(f[1] - 0.625) < 0.015, f[0] << " " << f[1] << " " << f[2]);
  f = frequencies(0.81);  // one more: 0.5 : 0.3 : 0.15 of 0.95
  REQUIRE_MSG(f[2] == 0 && std::abs(f[0] - 0.15 / 0.95) < 0.015, f[0] << " " << f[2]);
  f = frequencies(0.3);  // the most likely alone
  REQUIRE(f[1] > 0.9999);
  nucleus.topK = 3;  // top k first: 0.5, 0.3, 0.15 of 0.95; their top 0.9 is all three
  f = frequencies(0.9);
  REQUIRE_MSG(f[2] == 0 && f[0] > 0.1, f[0] << " " << f[2]);
}

TEST_CASE(circuit_checks_match_a_direct_computation) {
  const ModelShape c = smallConfig();
  CausalLM model = randomModel(c, 6);
  torch::NoGradGuard noGrad;
  // IOI: the logit difference at the set's end position, clean and corrupted.
  IoiPromptSet set;
  set.length = 5;
  set.endPosition = 4;
  set.prompts.push_back({"ABBA", "a", "b", "p", "o", "", "", {100, 1, 2, 3, 4}, {100, 1, 2, 1, 4}, 7, 9});
  set.prompts.push_back({"BABA", "a", "b", "p", "o", "", "", {100, 5, 6, 7, 8}, {100, 5, 6, 5, 8}, 11, 12});
  const IoiScore score = ioiLogitDifference(*model, set);
  auto diff = [&](std::vector<int64_t> ids, int64_t correct, int64_t wrong) {
    const auto last = model->forward(torch::tensor(ids).unsqueeze(0))[0][4];
    return (last[correct] - last[wrong]).item<double>();
  };
  const double d0 = diff({100, 1, 2, 3, 4}, 7, 9), d1 = diff({100, 5, 6, 7, 8}, 11, 12);
  REQUIRE(near(score.meanCleanLogitDiff, (d0 + d1) / 2, 1e-5));
  REQUIRE(near(score.meanCorruptedLogitDiff,
               (diff({100, 1, 2, 1, 4}, 7, 9) + diff({100, 5, 6, 5, 8}, 11, 12)) / 2, 1e-5));
  REQUIRE(near(score.cleanAccuracy, ((d0 > 0) + (d1 > 0)) / 2.0));

  // Induction: [eot, r, r]; loss on r_2…r_L in each copy.
  const InductionScore ind = inductionLosses(*model, 7, 3, 2);
  REQUIRE_EQ(ind.sequences, 3);
  REQUIRE(ind.firstCopyLoss > 0 && ind.secondCopyLoss > 0);
  REQUIRE_THROWS_WITH(inductionLosses(*model, 8, 1, 0), "do not fit in 16 positions");
}

TEST_MAIN()
