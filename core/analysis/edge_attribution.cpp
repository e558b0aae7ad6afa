#include "analysis/edge_attribution.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "analysis/ioi_runs.h"
#include "io/json_read.h"

namespace nf {
namespace {

// Where a node sits in the forward pass: writers at stage 0 (embeddings), 2l + 1 (block l's heads) and
// 2l + 2 (its MLP); a reader at stage r reads every write of stage ≤ r.
struct GraphLayout {
  int L = 0, H = 0, Hkv = 0;
  bool parallel = false;
  explicit GraphLayout(const ModelShape& s)
      : L(s.nLayer), H(s.nHead), Hkv(s.kvHeads()), parallel(s.parallelResidual) {}
  int upstreamCount() const { return 1 + L * (H + 1); }
  int headNode(int l, int h) const { return 1 + l * (H + 1) + h; }
  int mlpNode(int l) const { return 1 + l * (H + 1) + H; }
  int perBlock() const { return H + 2 * Hkv + 1; }
  int downstreamCount() const { return L * perBlock() + 1; }
  int queryInput(int l) const { return l * perBlock(); }  // then H queries, Hkv keys, Hkv values, the MLP
  int mlpInput(int l) const { return l * perBlock() + H + 2 * Hkv; }
  int logits() const { return L * perBlock(); }
};

void cacheWriters(HookSet& hooks, int L) {
  hooks.cache(HookPoint::residPre(0));
  for (int l = 0; l < L; ++l) hooks.cache(HookPoint::headOut(l)), hooks.cache(HookPoint::mlpOut(l));
}

// Every upstream node's write in a run, [n, T, U, D] in upstream order.
torch::Tensor writersOf(const HookSet& hooks, int L) {
  std::vector<torch::Tensor> parts{hooks.at(HookPoint::residPre(0)).unsqueeze(2)};
  for (int l = 0; l < L; ++l) {
    parts.push_back(hooks.at(HookPoint::headOut(l)));
    parts.push_back(hooks.at(HookPoint::mlpOut(l)).unsqueeze(2));
  }
  return torch::cat(parts, 2);
}

// ∂(weight · M)/∂x_v for every downstream node, [n, T, V, D], on the clean prompts with the embeddings
// moved to corrupted + alpha · (clean − corrupted).
torch::Tensor readerGradients(const GraphLayout& g, IoiRuns& runs, const torch::Tensor& cleanEmbed,
                              const torch::Tensor& corruptedEmbed, double alpha, double weight) {
  torch::AutoGradMode gradients(true);
  HookSet hooks;
  std::map<HookPoint, torch::Tensor> probes;
  auto probe = [&](const HookPoint& point) {
    hooks.edit(point, [&probes](const torch::Tensor& value, const HookPoint& p) {
      const torch::Tensor zero = torch::zeros(value.sizes(), value.options()).requires_grad_();
      probes[p] = zero;
      return value + zero;
    });
  };
  for (int l = 0; l < g.L; ++l)
    for (const HookPoint& p :
         {HookPoint::qInput(l), HookPoint::kInput(l), HookPoint::vInput(l), HookPoint::mlpInput(l)})
      probe(p);
  probe(HookPoint::residPost(g.L - 1));
  if (alpha < 1)
    hooks.edit(HookPoint::residPre(0), [&](const torch::Tensor&, const HookPoint&) {
      return corruptedEmbed + alpha * (cleanEmbed - corruptedEmbed);
    });
  const torch::Tensor metric = runs.logitDifference(runs.cleanTokens, &hooks).sum() * weight;
  std::vector<torch::Tensor> inputs;
  for (const auto& [point, zero] : probes) inputs.push_back(zero);
  const std::vector<torch::Tensor> grads =
      torch::autograd::grad({metric}, inputs, {}, c10::nullopt, false, /*allow_unused=*/true);
  std::map<HookPoint, torch::Tensor> byPoint;
  size_t i = 0;
  for (const auto& [point, zero] : probes) {  // a reader the metric does not depend on: gradient 0
    byPoint[point] = grads[i].defined() ? grads[i] : torch::zeros_like(zero);
    ++i;
  }
  std::vector<torch::Tensor> parts;
  for (int l = 0; l < g.L; ++l) {
    for (const HookPoint& p : {HookPoint::qInput(l), HookPoint::kInput(l), HookPoint::vInput(l)})
      parts.push_back(byPoint.at(p));
    parts.push_back(byPoint.at(HookPoint::mlpInput(l)).unsqueeze(2));
  }
  parts.push_back(byPoint.at(HookPoint::residPost(g.L - 1)).unsqueeze(2));
  return torch::cat(parts, 2).detach();
}

// weight · M with every reader's input corrected by Σ_u W[v, u] (current a_u − corrupted a_u): the writes
// so far are collected as the forward pass makes them, so a reader sees them corrected upstream too.
double patchedMetric(const GraphLayout& g, IoiRuns& runs, const torch::Tensor& corruptedWriters,
                     const torch::Tensor& W, double weight) {
  torch::NoGradGuard noGrad;
  HookSet hooks;
  std::vector<torch::Tensor> changes;  // current − corrupted, per writer so far: [n, T, k, D]
  hooks.edit(HookPoint::residPre(0), [&](const torch::Tensor& value, const HookPoint&) {
    changes.push_back((value - corruptedWriters.select(2, 0)).unsqueeze(2));
    return value;
  });
  for (int l = 0; l < g.L; ++l) {
    hooks.edit(HookPoint::headOut(l), [&, l](const torch::Tensor& value, const HookPoint&) {
      changes.push_back(value - corruptedWriters.narrow(2, g.headNode(l, 0), g.H));
      return value;
    });
    hooks.edit(HookPoint::mlpOut(l), [&, l](const torch::Tensor& value, const HookPoint&) {
      changes.push_back((value - corruptedWriters.select(2, g.mlpNode(l))).unsqueeze(2));
      return value;
    });
  }
  auto corrected = [&](int firstReader, int readers) {
    return [&, firstReader, readers](const torch::Tensor& value, const HookPoint&) {
      const torch::Tensor written = torch::cat(changes, 2);
      const torch::Tensor w = W.slice(0, firstReader, firstReader + readers).slice(1, 0, written.size(2));
      const torch::Tensor correction = torch::einsum("ntud,vu->ntvd", {written, w});
      return value - (value.dim() == 4 ? correction : correction.squeeze(2));
    };
  };
  for (int l = 0; l < g.L; ++l) {
    hooks.edit(HookPoint::qInput(l), corrected(g.queryInput(l), g.H));
    hooks.edit(HookPoint::kInput(l), corrected(g.queryInput(l) + g.H, g.Hkv));
    hooks.edit(HookPoint::vInput(l), corrected(g.queryInput(l) + g.H + g.Hkv, g.Hkv));
    hooks.edit(HookPoint::mlpInput(l), corrected(g.mlpInput(l), 1));
  }
  hooks.edit(HookPoint::residPost(g.L - 1), corrected(g.logits(), 1));
  return runs.logitDifference(runs.cleanTokens, &hooks).sum().item<double>() * weight;
}

// The prompt set in batches a pass can hold (the writes of both runs, [n, T, U or V, D], bound them), each
// with its corrupted run's writes, read once: what every patched pass compares with.
struct Batches {
  struct Batch {
    IoiRuns runs;
    double share;                // its prompts' share of the set: batch metrics add up to the set's mean
    torch::Tensor corrupted;     // the corrupted run's writes [n, T, U, D]
    double corruptedDifference;  // and its logit difference (the batch's, times share)
  };
  std::vector<Batch> batches;

  Batches(CausalLMImpl& model, const GraphLayout& g, const IoiPromptSet& set) {
    const int64_t perPrompt =
        set.length * std::max(g.upstreamCount(), g.downstreamCount()) * model.config().nEmbd;
    const size_t perBatch =
        static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 25) / std::max<int64_t>(perPrompt, 1)));
    const double N = static_cast<double>(set.prompts.size());
    torch::NoGradGuard noGrad;
    for (size_t first = 0; first < set.prompts.size(); first += perBatch) {
      IoiPromptSet part = set;
      part.prompts.assign(
          set.prompts.begin() + static_cast<long>(first),
          set.prompts.begin() + static_cast<long>(std::min(set.prompts.size(), first + perBatch)));
      const double share = static_cast<double>(part.prompts.size()) / N;
      IoiRuns runs(model, part);
      HookSet hooks;
      cacheWriters(hooks, g.L);
      const double difference =
          runs.logitDifference(runs.corruptedTokens, &hooks).sum().item<double>() * share;
      batches.push_back({std::move(runs), share, writersOf(hooks, g.L), difference});
    }
  }

  // M with the edges patched by weight W [V, U] (on the model's device and dtype), over the whole set.
  double patched(const GraphLayout& g, const torch::Tensor& W) {
    double metric = 0;
    for (Batch& b : batches) metric += patchedMetric(g, b.runs, b.corrupted, W, b.share);
    return metric;
  }
};

// A [V, U] weight of edges on the model's device, in its dtype.
torch::Tensor onModel(const torch::Tensor& W, const CausalLMImpl& model) {
  return W.to(model.device(), model.tokenEmbedding().scalar_type());
}

}  // namespace

CircuitGraph circuitGraph(const ModelShape& shape) {
  const GraphLayout g(shape);
  CircuitGraph c;
  c.upstream.push_back("embed");
  c.upstreamLayer.push_back(0);
  for (int l = 0; l < g.L; ++l) {
    const std::string block = "L" + std::to_string(l);
    for (int h = 0; h < g.H; ++h) c.upstream.push_back(block + "H" + std::to_string(h));
    c.upstream.push_back("MLP " + std::to_string(l));
    c.upstreamLayer.insert(c.upstreamLayer.end(), g.H, 2 * l + 1);
    c.upstreamLayer.push_back(2 * l + 2);
    const bool grouped = g.Hkv != g.H;
    for (int h = 0; h < g.H; ++h) c.downstream.push_back(block + "H" + std::to_string(h) + ".q");
    for (const char* role : {".k", ".v"})
      for (int h = 0; h < g.Hkv; ++h)
        c.downstream.push_back(block + (grouped ? "KV" : "H") + std::to_string(h) + role);
    c.downstream.push_back("MLP " + std::to_string(l));
    c.downstreamLayer.insert(c.downstreamLayer.end(), g.H + 2 * g.Hkv, 2 * l);
    c.downstreamLayer.push_back(g.parallel ? 2 * l : 2 * l + 1);
  }
  c.downstream.push_back("logits");
  c.downstreamLayer.push_back(2 * g.L);
  for (size_t v = 0; v < c.downstream.size(); ++v) {
    c.edge.emplace_back();
    for (size_t u = 0; u < c.upstream.size(); ++u)
      c.edge.back().push_back(c.upstreamLayer[u] <= c.downstreamLayer[v]);
  }
  return c;
}

double edgePatchedLogitDifference(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                                  const std::vector<std::vector<double>>& weight) {
  CausalLMImpl& model = snapshot.model();
  const GraphLayout g(model.config());
  torch::Tensor W = torch::zeros({g.downstreamCount(), g.upstreamCount()}, torch::kFloat64);
  for (size_t v = 0; v < weight.size() && v < size_t(g.downstreamCount()); ++v)
    for (size_t u = 0; u < weight[v].size() && u < size_t(g.upstreamCount()); ++u)
      W[static_cast<int64_t>(v)][static_cast<int64_t>(u)] = weight[v][u];
  return Batches(model, g, set).patched(g, onModel(W, model));
}

CircuitResult edgeAttribution(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                              const CircuitOptions& options, const ProgressFn& progress) {
  if (options.method != "eap" && options.method != "eap-ig")
    throw std::invalid_argument("the circuit method must be eap or eap-ig, not \"" + options.method + "\"");
  if (set.prompts.empty()) throw std::invalid_argument("the IOI prompt set has no prompts");
  CausalLMImpl& model = snapshot.model();
  const GraphLayout g(model.config());
  const CircuitGraph graph = circuitGraph(model.config());
  const int steps = options.method == "eap" ? 1 : std::max(1, options.steps);
  const int64_t N = static_cast<int64_t>(set.prompts.size());
  Batches batches(model, g, set);

  CircuitResult r;
  r.method = options.method;
  r.steps = steps;
  r.prompts = N;
  r.upstream = graph.upstream;
  r.downstream = graph.downstream;
  torch::Tensor scores = torch::zeros({g.downstreamCount(), g.upstreamCount()}, torch::kFloat64);
  int64_t done = 0;
  const int64_t work = static_cast<int64_t>(batches.batches.size()) * steps;
  for (Batches::Batch& batch : batches.batches) {
    torch::Tensor clean;
    {
      torch::NoGradGuard noGrad;
      HookSet hooks;
      cacheWriters(hooks, g.L);
      r.cleanLogitDiff +=
          batch.runs.logitDifference(batch.runs.cleanTokens, &hooks).sum().item<double>() * batch.share;
      clean = writersOf(hooks, g.L);
    }
    r.corruptedLogitDiff += batch.corruptedDifference;
    const torch::Tensor change = clean - batch.corrupted;  // [n, T, U, D]
    for (int k = 1; k <= steps; ++k) {
      const double alpha = static_cast<double>(k) / steps;
      const torch::Tensor grads = readerGradients(g, batch.runs, clean.select(2, 0),
                                                  batch.corrupted.select(2, 0), alpha, batch.share);
      scores += torch::einsum("ntud,ntvd->vu", {change, grads}).to(torch::kCPU, torch::kFloat64) / steps;
      if (progress) progress({"edge attribution", ++done, work, "passes", false});
    }
  }
  const auto s = scores.accessor<double, 2>();
  for (int v = 0; v < g.downstreamCount(); ++v)
    for (int u = 0; u < g.upstreamCount(); ++u)
      if (graph.edge[v][u]) r.edges.push_back({u, v, s[v][u]});
  std::stable_sort(r.edges.begin(), r.edges.end(), [](const CircuitEdge& a, const CircuitEdge& b) {
    return std::abs(a.score) > std::abs(b.score);
  });

  // As patching refuses it: with no difference to keep, no circuit keeps a share of it.
  const double span = r.cleanLogitDiff - r.corruptedLogitDiff;
  if (!(std::abs(span) > 1e-9))
    throw std::runtime_error("the clean and corrupted logit differences are equal (" +
                             std::to_string(r.cleanLogitDiff) + "): nothing to patch");

  const int64_t E = static_cast<int64_t>(r.edges.size());
  // The top edges' scores against patching each alone.
  double errorSum = 0, effectSum = 0;
  const int64_t checked = std::min(options.checked, E);
  for (int64_t i = 0; i < checked; ++i) {
    CircuitEdge& e = r.edges[i];
    torch::Tensor W = torch::zeros({g.downstreamCount(), g.upstreamCount()}, torch::kFloat64);
    W[e.to][e.from] = 1.0;
    e.measured = r.cleanLogitDiff - batches.patched(g, onModel(W, model));
    errorSum += std::abs(e.score - e.measured);
    effectSum += std::abs(e.measured);
    if (progress) progress({"edge checks", i + 1, checked, "edges", i + 1 == checked});
  }
  // Nothing checked: no error to report (null in JSON), not a perfect 0. As DLA's NMAE: infinite when the
  // checked edges have no effect at all but scores that say they do.
  if (checked == 0)
    r.scoreError = std::nan("");
  else if (effectSum > 0)
    r.scoreError = 100 * errorSum / effectSum;
  else
    r.scoreError = errorSum > 0 ? std::numeric_limits<double>::infinity() : 0.0;

  // Faithfulness of the top k edges, by patching every other edge.
  std::map<int64_t, double> measured;
  const int64_t expected = 2 * static_cast<int64_t>(std::ceil(std::log2(std::max<int64_t>(E, 2)))) + 2;
  auto faithfulness = [&](int64_t k) {
    if (auto it = measured.find(k); it != measured.end()) return it->second;
    torch::Tensor W = torch::zeros({g.downstreamCount(), g.upstreamCount()}, torch::kFloat64);
    for (int64_t i = k; i < E; ++i) W[r.edges[i].to][r.edges[i].from] = 1.0;
    const double metric = batches.patched(g, onModel(W, model));
    const double f = (metric - r.corruptedLogitDiff) / span;
    if (progress)
      progress({"faithfulness", std::min<int64_t>(static_cast<int64_t>(measured.size()) + 1, expected),
                expected, "circuits", false});
    return measured[k] = f;
  };
  for (int64_t k = 1; k < E; k *= 2) faithfulness(k);
  faithfulness(E);
  if (options.edges > 0) {
    r.circuitEdges = std::min(options.edges, E);
  } else {  // the fewest top edges that keep `keep` (faithfulness grows with k, nearly monotonically)
    int64_t low = 0, high = E;
    while (high - low > 1) {
      const int64_t mid = (low + high) / 2;
      (faithfulness(mid) >= options.keep ? high : low) = mid;
    }
    r.circuitEdges = high;
  }
  r.faithfulness = faithfulness(r.circuitEdges);
  for (const auto& [k, f] : measured) r.curve.push_back({k, f});
  if (progress) progress({"faithfulness", expected, expected, "circuits", true});
  r.header = makeHeader("circuit", snapshot, "IOI prompts: " + set.frame, N, set.length);
  return r;
}

nlohmann::json toJson(const CircuitResult& r) {
  nlohmann::json edges = nlohmann::json::array(), curve = nlohmann::json::array();
  for (const CircuitEdge& e : r.edges) {
    edges.push_back({{"from", r.upstream[e.from]}, {"to", r.downstream[e.to]}, {"score", e.score}});
    if (!std::isnan(e.measured)) edges.back()["measured"] = e.measured;
  }
  for (const FaithfulnessPoint& p : r.curve)
    curve.push_back({{"edges", p.edges}, {"faithfulness", p.faithfulness}});
  return {{"header", toJson(r.header)},
          {"method", r.method},
          {"steps", r.steps},
          {"prompts", r.prompts},
          {"clean_logit_diff", r.cleanLogitDiff},
          {"corrupted_logit_diff", r.corruptedLogitDiff},
          {"upstream", r.upstream},
          {"downstream", r.downstream},
          {"edges", edges},
          {"circuit", {{"edges", r.circuitEdges}, {"faithfulness", r.faithfulness}}},
          {"score_error_percent", r.scoreError},
          {"faithfulness_curve", curve}};
}

std::string edgesCsv(const CircuitResult& c) {
  std::ostringstream csv;
  csv << std::setprecision(9) << "from,to,score,measured,in_circuit\n";
  for (size_t i = 0; i < c.edges.size(); ++i) {
    const CircuitEdge& e = c.edges[i];
    csv << c.upstream[e.from] << ',' << c.downstream[e.to] << ',' << e.score << ',';
    if (!std::isnan(e.measured)) csv << e.measured;
    csv << ',' << (static_cast<int64_t>(i) < c.circuitEdges) << '\n';
  }
  return csv.str();
}

CircuitResult circuitResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    CircuitResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.method = j["method"].text();
    r.steps = j["steps"].whole<int>();
    r.prompts = j["prompts"].whole<int64_t>();
    r.cleanLogitDiff = j["clean_logit_diff"].real();
    r.corruptedLogitDiff = j["corrupted_logit_diff"].real();
    r.upstream = j["upstream"].list([](const JsonIn& x) { return x.text(); });
    r.downstream = j["downstream"].list([](const JsonIn& x) { return x.text(); });
    std::map<std::string, int> from, to;
    for (size_t i = 0; i < r.upstream.size(); ++i) from[r.upstream[i]] = static_cast<int>(i);
    for (size_t i = 0; i < r.downstream.size(); ++i) to[r.downstream[i]] = static_cast<int>(i);
    r.edges = j["edges"].list([&](const JsonIn& e) {
      const std::string a = e["from"].text(), b = e["to"].text();
      if (!from.count(a) || !to.count(b))
        throw std::invalid_argument("analysis result: an edge " + a + " → " + b +
                                    " between nodes it does not list");
      CircuitEdge edge{from.at(a), to.at(b), e["score"].real()};
      if (e["measured"].present()) edge.measured = e["measured"].real();
      return edge;
    });
    r.circuitEdges = j["circuit"]["edges"].whole<int64_t>();
    if (r.circuitEdges < 0 || r.circuitEdges > static_cast<int64_t>(r.edges.size()))
      throw std::invalid_argument(
          "analysis result: 'circuit.edges' is not between 0 and the number of edges");
    r.faithfulness = j["circuit"]["faithfulness"].real();
    r.scoreError = j["score_error_percent"].real();
    r.curve = j["faithfulness_curve"].list([](const JsonIn& p) {
      return FaithfulnessPoint{p["edges"].whole<int64_t>(), p["faithfulness"].real()};
    });
    return r;
  });
}

}  // namespace nf
