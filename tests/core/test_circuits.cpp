// Circuits as graphs (analysis/edge_attribution.h): the graph's edges follow the forward pass, EAP's scores
// are the derivative of patching one edge (finite differences of forward passes), and faithfulness is 1 for
// the whole graph and 0 for none, in every family; on the bundled tiny GPT-2 the IOI circuit is small,
// faithful and holds the name movers RESULTS.md names. Also what the circuit analyses are given: IOI prompt
// sets from a file checked against what the generator guarantees, and the induction check in batches.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/edge_attribution.h"
#include "eval/circuits.h"
#include "fixtures.h"
#include "run/snapshot.h"
#include "text/tokenizer.h"

using namespace nf;
using namespace nf::test;

namespace {

// A weight for every (downstream, upstream) pair: `value` on the graph's edges, 0 elsewhere.
std::vector<std::vector<double>> allEdges(const CircuitGraph& g, double value) {
  std::vector<std::vector<double>> w(g.downstream.size(), std::vector<double>(g.upstream.size(), 0.0));
  for (size_t v = 0; v < w.size(); ++v)
    for (size_t u = 0; u < w[v].size(); ++u) w[v][u] = g.edge[v][u] ? value : 0.0;
  return w;
}

int indexOf(const std::vector<std::string>& names, const std::string& name) {
  return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
}

// A random model of a family in float64 (exact comparisons), an IOI-style prompt set for it, its graph and
// its EAP circuit of one edge.
struct RandomCircuit {
  SnapshotPtr snapshot;
  IoiPromptSet set;
  CircuitGraph g;
  CircuitResult r;
  RandomCircuit(const ModelShape& shape, uint64_t seed) : g(circuitGraph(shape)) {
    CausalLM model = randomModel(shape, seed);
    model->to(torch::kFloat64);
    snapshot = ModelSnapshot::copyOf(*model, -1, "test");
    set = promptSet(*model, 8, 3);
    r = edgeAttribution(*snapshot, set, oneEdge());
  }
  static CircuitOptions oneEdge() {
    CircuitOptions options;
    options.edges = 1;
    return options;
  }
};

}  // namespace

TEST_CASE(the_graph_has_an_edge_wherever_a_writer_comes_before_a_reader) {
  for (const auto& [label, shape] : familyShapes()) {
    const CircuitGraph g = circuitGraph(shape);
    const int L = shape.nLayer, H = shape.nHead, Hkv = shape.kvHeads();
    REQUIRE_EQ(g.upstream.size(), size_t(1 + L * (H + 1)));
    REQUIRE_EQ(g.downstream.size(), size_t(L * (H + 2 * Hkv + 1) + 1));
    auto edge = [&](const std::string& from, const std::string& to) {
      const int u = indexOf(g.upstream, from), v = indexOf(g.downstream, to);
      REQUIRE_MSG(u < int(g.upstream.size()) && v < int(g.downstream.size()),
                  label << ": " << from << " → " << to);
      return bool(g.edge[v][u]);
    };
    const std::string key1 = Hkv == H ? "L1H0.k" : "L1KV0.k";
    REQUIRE(edge("embed", "L0H0.q") && edge("embed", "logits") && edge("MLP 1", "logits"));
    REQUIRE(edge("L0H1", "L1H0.q") && edge("MLP 0", key1));
    REQUIRE(!edge("L0H1", "L0H2.q") && !edge("MLP 0", "MLP 0") && !edge("L1H0", "L0H0.q"));
    // A block's MLP reads its heads' writes unless the residual is parallel.
    REQUIRE_MSG(edge("L0H1", "MLP 0") == !shape.parallelResidual, label);
  }
}

TEST_CASE(faithfulness_is_one_for_the_whole_graph_and_zero_for_none_in_every_family) {
  for (const auto& [label, shape] : familyShapes()) {
    const RandomCircuit c(shape, 31);
    const auto& [snapshot, set, g, r] = c;
    REQUIRE_MSG(std::abs(r.cleanLogitDiff - r.corruptedLogitDiff) > 1e-3, label);
    const double whole = edgePatchedLogitDifference(*snapshot, set, allEdges(g, 0.0));
    const double none = edgePatchedLogitDifference(*snapshot, set, allEdges(g, 1.0));
    REQUIRE_MSG(std::abs(whole - r.cleanLogitDiff) < 1e-9,
                label << ": " << whole << " vs " << r.cleanLogitDiff);
    REQUIRE_MSG(std::abs(none - r.corruptedLogitDiff) < 1e-9,
                label << ": " << none << " vs " << r.corruptedLogitDiff);
    // The measured curve: every edge kept is the clean model.
    REQUIRE(r.curve.back().edges == int64_t(r.edges.size()) &&
            std::abs(r.curve.back().faithfulness - 1) < 1e-9);
  }
}

TEST_CASE(eap_scores_are_the_derivative_of_patching_each_edge_in_every_family) {
  for (const auto& [label, shape] : familyShapes()) {
    const RandomCircuit c(shape, 32);
    const auto& [snapshot, set, g, r] = c;
    // The largest edges and a few others: score = −dM/dw at w = 0 for that edge's patching weight w.
    std::vector<size_t> checked{0, 1, 2, r.edges.size() / 2, r.edges.size() - 1};
    for (size_t i : checked) {
      const CircuitEdge& e = r.edges[i];
      const double h = 1e-4;
      auto metricAt = [&](double w) {
        std::vector<std::vector<double>> weight = allEdges(g, 0.0);
        weight[e.to][e.from] = w;
        return edgePatchedLogitDifference(*snapshot, set, weight);
      };
      const double derivative = (metricAt(-h) - metricAt(h)) / (2 * h);
      REQUIRE_MSG(std::abs(derivative - e.score) < 1e-6 * (1 + std::abs(e.score)),
                  label << ", " << r.upstream[e.from] << " → " << r.downstream[e.to] << ": EAP " << e.score
                        << ", finite difference " << derivative);
    }
    // The checked edges' measured effect is the metric with that edge alone patched.
    std::vector<std::vector<double>> alone = allEdges(g, 0.0);
    alone[r.edges[0].to][r.edges[0].from] = 1.0;
    REQUIRE(std::abs(r.edges[0].measured -
                     (r.cleanLogitDiff - edgePatchedLogitDifference(*snapshot, set, alone))) < 1e-9);
    REQUIRE(r.scoreError > 0);
    // Integrated gradients with one step is EAP; with more, it differs on a model that is not linear.
    CircuitOptions options = RandomCircuit::oneEdge();
    options.method = "eap-ig";
    options.steps = 1;
    const CircuitResult one = edgeAttribution(*snapshot, set, options);
    REQUIRE(std::abs(one.edges[0].score - r.edges[0].score) < 1e-12);
    options.steps = 4;
    const CircuitResult four = edgeAttribution(*snapshot, set, options);
    REQUIRE_EQ(four.steps, 4);
    REQUIRE(toJson(circuitResultFromJson(toJson(four))) == toJson(four));
  }
}

TEST_CASE(no_checked_edge_gives_no_score_error_and_equal_logit_differences_are_refused) {
  CausalLM model = randomModel(smallConfig(), 33);
  model->to(torch::kFloat64);
  const SnapshotPtr snapshot = ModelSnapshot::copyOf(*model, -1, "test");
  const IoiPromptSet set = promptSet(*model, 8, 3);
  CircuitOptions options = RandomCircuit::oneEdge();
  options.checked = 0;
  const CircuitResult r = edgeAttribution(*snapshot, set, options);
  // Nothing checked: no error (null in the JSON, NaN read back), not a perfect 0.
  REQUIRE_MSG(std::isnan(r.scoreError), r.scoreError);
  REQUIRE(std::all_of(r.edges.begin(), r.edges.end(),
                      [](const CircuitEdge& e) { return std::isnan(e.measured); }));
  const nlohmann::json j = toJson(r);
  REQUIRE(nlohmann::json::parse(j.dump())["score_error_percent"].is_null());
  REQUIRE(std::isnan(circuitResultFromJson(j).scoreError));
  // Corrupted prompts that are the clean ones: no difference for a circuit to keep, refused as patching
  // refuses it rather than given a null faithfulness.
  IoiPromptSet same = set;
  for (IoiPrompt& p : same.prompts) p.corrupted = p.clean;
  REQUIRE_THROWS_WITH(edgeAttribution(*snapshot, same, options), "logit differences are equal",
                      "nothing to patch");
}

TEST_CASE(a_prompt_set_from_a_file_must_hold_what_the_generator_guarantees_of_every_prompt) {
  const std::string folder = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";
  const auto tokenizer = loadTokenizer(folder);
  IoiOptions ioi;
  ioi.count = 96;
  const IoiPromptSet set = ioiPromptSetFromJson(toJson(makeIoiPromptSet(*tokenizer, ioi)), "set.json");
  const int64_t vocab = tokenizer->vocabSize();
  checkIoiPromptSetFor(set, vocab, tokenizer.get());  // every prompt the generator makes passes
  // A corrupted prompt whose tokens are not its text (another tokenizer's): refused with the tokenizer.
  IoiPromptSet other = set;
  int32_t& token = other.prompts[5].corrupted.at(1);
  token = token == 1 ? 2 : 1;
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, vocab, tokenizer.get()), "set.json",
                      "prompt 5's corrupted_tokens are not its corrupted_text", "another tokenizer");
  checkIoiPromptSetFor(other, vocab, nullptr);  // ids alone cannot tell
  // A corrupted twin without the indirect object at the subject position, answers swapped, one name for
  // both: refused with a tokenizer or without.
  const std::string subject = "at the subject position " + std::to_string(set.subjectPosition);
  other = set;
  other.prompts[2].corrupted = other.prompts[2].clean;
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, vocab, nullptr), "set.json", "prompt 2 has", subject);
  other = set;
  std::swap(other.prompts[6].correctId, other.prompts[6].wrongId);
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, vocab, tokenizer.get()), "set.json", "prompt 6 has",
                      subject);
  other.prompts[6].correctId = other.prompts[6].wrongId;
  REQUIRE_THROWS_WITH(checkIoiPromptSetFor(other, vocab, nullptr), "set.json",
                      "prompt 6's correct_id and wrong_id are both");
}

TEST_CASE(induction_losses_read_in_batches_are_those_of_one_forward_pass) {
  CausalLM model = randomModel(smallConfig(), 34);
  model->to(torch::kFloat64);  // rounding far below the differences a wrong batch would make
  const InductionScore whole = inductionLosses(*model, 7, 20, 3, nullptr, 20);
  for (int64_t perForward : {1, 3, 8, 0}) {  // 3 and 8: a shorter last batch; 0: the default size
    const InductionScore s = inductionLosses(*model, 7, 20, 3, nullptr, perForward);
    REQUIRE_EQ(s.sequences, 20);
    const double pairs[][2] = {{s.firstCopyLoss, whole.firstCopyLoss},
                               {s.secondCopyLoss, whole.secondCopyLoss},
                               {s.firstCopyMedianLoss, whole.firstCopyMedianLoss},
                               {s.secondCopyMedianLoss, whole.secondCopyMedianLoss},
                               {s.firstCopyAccuracy, whole.firstCopyAccuracy},
                               {s.secondCopyAccuracy, whole.secondCopyAccuracy}};
    for (const auto& [batched, once] : pairs)
      REQUIRE_MSG(std::abs(batched - once) < 1e-12, perForward << " per pass: " << batched << " vs " << once);
  }
  // Each sequence counts: losses of the first 8 alone are not those of all 20.
  REQUIRE(std::abs(inductionLosses(*model, 7, 8, 3, nullptr, 8).firstCopyLoss - whole.firstCopyLoss) > 1e-6);
  REQUIRE_THROWS_WITH(inductionLosses(*model, 1, 4, 0), "at least 2 tokens");
  // The median of an even count is the mean of its two middle values (numpy's, as eval's): of two losses,
  // their mean. It was the lower of them.
  const InductionScore two = inductionLosses(*model, 3, 1, 5);
  REQUIRE(std::abs(two.firstCopyMedianLoss - two.firstCopyLoss) < 1e-12);
  REQUIRE(std::abs(two.secondCopyMedianLoss - two.secondCopyLoss) < 1e-12);
  // A model whose documents start with a begin-of-sequence token of their own (LLaMA's <s>) reads the spans
  // after it: the sequences had started with end-of-text whatever the model.
  const int32_t eot = smallConfig().eotTokenId;
  REQUIRE(std::abs(inductionLosses(*model, 7, 20, 3, nullptr, 20, eot).firstCopyLoss - whole.firstCopyLoss) <
          1e-12);
  REQUIRE(std::abs(inductionLosses(*model, 7, 20, 3, nullptr, 20, 5).firstCopyLoss - whole.firstCopyLoss) >
          1e-6);
  REQUIRE_THROWS_WITH(inductionLosses(*model, 7, 2, 3, nullptr, 0, 101), "outside the vocabulary of 101");
}

TEST_CASE(the_tiny_gpt2_ioi_circuit_is_small_faithful_and_holds_the_name_movers) {
  const std::string folder = std::string(NF_REFERENCE_DIR) + "/../../resources/tiny-gpt2";
  const auto snapshot = ModelSnapshot::load(folder, "cpu");
  const auto tokenizer = loadTokenizer(folder);
  IoiOptions ioi;
  ioi.count = 96;
  const IoiPromptSet set = makeIoiPromptSet(*tokenizer, ioi);
  CircuitOptions options;
  options.keep = 0.8;
  const CircuitResult r = edgeAttribution(*snapshot, set, options);
  REQUIRE_MSG(r.cleanLogitDiff > r.corruptedLogitDiff + 1,
              r.cleanLogitDiff << " vs " << r.corruptedLogitDiff);
  REQUIRE_MSG(r.faithfulness >= 0.8, "faithfulness " << r.faithfulness);
  const double share = double(r.circuitEdges) / double(r.edges.size());
  REQUIRE_MSG(share <= 0.2, r.circuitEdges << " of " << r.edges.size() << " edges");
  std::set<std::string> nodes;
  for (int64_t i = 0; i < r.circuitEdges; ++i) nodes.insert(r.upstream[r.edges[i].from]);
  for (const char* head : {"L1H2", "L2H3"}) REQUIRE_MSG(nodes.count(head), head << " is not in the circuit");
}

TEST_MAIN()
