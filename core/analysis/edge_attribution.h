// Circuits as graphs: edge attribution patching (EAP, EAP-IG) on an IOI prompt set, and the faithfulness of
// a circuit measured by patching every edge outside it (docs/ANALYSES.md, `circuit`).
//
// The graph: upstream nodes write to the residual stream — `embed` (the residual before block 0), each head
// `LlHh` (its head_out) and each `MLP l` (its mlp.out); downstream nodes read it — each head's query, key
// and value input (`LlHh.q`, with grouped-query attention `LlKVg.k` / `.v` per key/value head), each
// `MLP l` input and the `logits` (the input of LN_f). An edge u → v exists when u writes before v reads;
// attention biases are constants of both runs and no node. With M the mean logit difference of the clean
// prompts and a_u an upstream node's output,
//   EAP(u → v)    = (a_u^clean − a_u^corrupted) · ∂M/∂x_v on the clean prompts, summed over tokens
//   EAP-IG(u → v) = the same with ∂M/∂x_v averaged over `steps` runs whose embeddings go from the
//                   corrupted to the clean ones (k/steps of the way, k = 1 … steps)
// where x_v is the residual v reads (before its norm). Both estimate M(clean) − M(that edge corrupted).
// Patching an edge feeds v the corrupted a_u in place of the current one; a circuit's faithfulness is
//   (M(everything outside the circuit patched) − M(corrupted)) / (M(clean) − M(corrupted)),
// computed by forward passes: 1 for the whole graph, 0 for the empty one, by construction. The top edges'
// scores are also checked against patching each edge alone, the question the paper leaves open: are
// attribution scores closer to the effects without LayerNorm?
#pragma once
#include <cmath>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_header.h"
#include "data/ioi.h"
#include "util/progress.h"

namespace nf {

struct CircuitEdge {
  int from = 0, to = 0;  // indices into CircuitResult::upstream / downstream
  double score = 0;
  double measured = std::nan("");  // M(clean) − M(this edge alone patched), for the checked edges
};

struct FaithfulnessPoint {
  int64_t edges = 0;
  double faithfulness = 0;
};

struct CircuitOptions {
  std::string method = "eap";  // "eap" or "eap-ig"
  int steps = 5;               // eap-ig: interpolation steps
  int64_t edges = 0;           // the circuit: the top `edges` by |score| (0: the fewest that keep `keep`)
  double keep = 0.8;           // the faithfulness a circuit found by `keep` reaches
  int64_t checked = 32;        // the top edges whose score is checked by patching each alone
};

struct CircuitResult {
  AnalysisHeader header;
  std::string method;
  int steps = 0;
  int64_t prompts = 0;
  double cleanLogitDiff = 0, corruptedLogitDiff = 0;
  std::vector<std::string> upstream, downstream;  // node names, in forward order
  std::vector<CircuitEdge> edges;                 // every edge, by |score|, largest first
  int64_t circuitEdges = 0;                       // the circuit: edges[0, circuitEdges)
  double faithfulness = 0;                        // the circuit's, measured
  std::vector<FaithfulnessPoint> curve;           // measured faithfulness of the top-k edges for some k
  // How far the scores are from the effects they estimate, over the checked edges:
  // mean |score − measured| / mean |measured|, percent (as DLA's NMAE); NaN (null in JSON) when none was.
  double scoreError = 0;
};

// std::runtime_error when the clean and corrupted logit differences are equal (nothing to patch: no
// faithfulness can be measured), as ioiPatching.
CircuitResult edgeAttribution(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                              const CircuitOptions& options = {}, const ProgressFn& progress = {});
// M with each edge (u → v) corrupted by weight[v][u] ∈ [0, 1] (1: v reads the corrupted a_u, 0: the
// current one; fractions interpolate), the mean logit difference over the prompts. Exposed for tests.
double edgePatchedLogitDifference(const ModelSnapshot& snapshot, const IoiPromptSet& set,
                                  const std::vector<std::vector<double>>& weight);
// The graph's node names for this model (as CircuitResult's) and whether u → v is an edge.
struct CircuitGraph {
  std::vector<std::string> upstream, downstream;
  std::vector<int> upstreamLayer, downstreamLayer;  // the block a node writes after / reads before
  std::vector<std::vector<bool>> edge;              // [downstream][upstream]
};
CircuitGraph circuitGraph(const ModelShape& shape);

nlohmann::json toJson(const CircuitResult& result);
// Every edge as CSV: from,to,score,measured (empty where not checked),in_circuit (1 or 0).
std::string edgesCsv(const CircuitResult& result);
CircuitResult circuitResultFromJson(const nlohmann::json& j);  // as analysisHeaderFromJson

}  // namespace nf
