// Attention sinks (PROTOCOL §7): a head is a sink on a sequence when position 0 receives at least
// `threshold` of its attention, averaged over all query positions (position 0's own row, which can only
// attend to itself, included); the sink rate is the share of (head, sequence) pairs that are sinks.
// The per-query sink rate counts each query instead: the share of (head, sequence, query position ≥ 1)
// whose own row gives position 0 at least `threshold` (position 0's row, always 1, left out).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

struct AttentionSinksResult {
  AnalysisHeader header;
  double threshold = 0.3;
  int layers = 0, heads = 0;
  std::vector<double> sinkShare;         // [layer · heads + head]: share of sequences where it is a sink
  std::vector<double> meanPositionZero;  // [layer · heads + head]: mean attention to position 0
  double sinkRate = 0;                   // over all (head, sequence) pairs
  double querySinkRate = 0;              // over all (head, sequence, query position ≥ 1) triples
};

AttentionSinksResult attentionSinks(const ModelSnapshot& snapshot, const TokenSequences& data,
                                    double threshold = 0.3, const ProgressFn& progress = {});
nlohmann::json toJson(const AttentionSinksResult& result);
// The inverse of toJson (as analysisHeaderFromJson; both lists must hold layers × heads values).
AttentionSinksResult attentionSinksResultFromJson(const nlohmann::json& j);

// One head's attention pattern on one token sequence: tokens.size()² weights, row = query position,
// row-major (what the GUI draws when a head is clicked).
std::vector<double> attentionPattern(const ModelSnapshot& snapshot, const std::vector<int32_t>& tokens,
                                     int layer, int head);

}  // namespace nf
