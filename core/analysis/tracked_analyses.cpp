#include "analysis/tracked_analyses.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace nf {

const std::vector<TrackedAnalysis>& trackedAnalyses() {
  static const std::vector<TrackedAnalysis> all{
      {"nmae", "overall NMAE of DLA against the direct effect, % (per layer: its heads' mean)", false},
      {"sinks", "attention sink rate, share of (head, sequence) pairs (per layer: its heads' mean)", false},
      {"pos0-ratio",
       "residual norm at position 0 over the other positions', the largest over layers (per layer: each "
       "resid_pre, then the final residual)",
       false},
      {"ioi", "IOI logit difference, logit(correct) − logit(wrong), nats, mean over the prompts", true},
      {"patching-error",
       "attribution patching's error against activation patching over the (layer, head) grid, % (per "
       "layer: its heads)",
       true},
      {"confidence",
       "change of mean output entropy when the 10 best confidence neurons are mean-ablated, nats", false},
      {"val-ce", "cross-entropy on the tracking sequences, nats", false}};
  return all;
}

std::string trackedAnalysisNames() {
  std::string names;
  for (const TrackedAnalysis& a : trackedAnalyses()) names += (names.empty() ? "" : ", ") + a.name;
  return names;
}

bool needsIoiPrompts(const std::vector<std::string>& names) {
  return std::any_of(trackedAnalyses().begin(), trackedAnalyses().end(), [&](const TrackedAnalysis& a) {
    return a.needsTokenizer && std::count(names.begin(), names.end(), a.name) > 0;
  });
}

void checkTrackedAnalyses(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    const bool known = std::any_of(trackedAnalyses().begin(), trackedAnalyses().end(),
                                   [&](const TrackedAnalysis& a) { return a.name == name; });
    if (!known)
      throw std::invalid_argument("no tracked analysis \"" + name + "\" (known: " + trackedAnalysisNames() +
                                  ")");
    if (!seen.insert(name).second)
      throw std::invalid_argument("the tracked analysis \"" + name + "\" is named twice");
  }
}

std::vector<std::string> parseTrackedAnalyses(const std::string& commaList) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= commaList.size()) {
    const std::size_t comma = std::min(commaList.find(',', start), commaList.size());
    std::string name = commaList.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) names.push_back(name);
    start = comma + 1;
  }
  checkTrackedAnalyses(names);
  return names;
}

}  // namespace nf
