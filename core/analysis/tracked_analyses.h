// The analyses a run can track while it removes (RunConfig::tracking, `--track`): each is one of the
// analyses of this folder reduced to a number — and to one number per layer where it has them — measured
// on a snapshot between two optimizer steps, every N steps and at each removal event. The trainer writes
// them as "track" records (docs/FORMATS.md); the training view plots them against the step. Plain C++.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/ioi.h"
#include "data/token_sequences.h"
#include "run/snapshot.h"

namespace nf {

struct TrackedAnalysis {
  std::string name;         // "nmae", as --track takes it
  std::string description;  // what the number is, with its unit
  bool needsTokenizer = false;
};
// nmae, sinks, pos0-ratio, ioi, patching-error, confidence, val-ce.
const std::vector<TrackedAnalysis>& trackedAnalyses();
std::string trackedAnalysisNames();  // "nmae, sinks, …", for help texts and errors
// Whether any of `names` needs an IOI prompt set (made with the model's tokenizer).
bool needsIoiPrompts(const std::vector<std::string>& names);
// "nmae,sinks" → {"nmae", "sinks"}: known names, each once. std::invalid_argument names an unknown one and
// lists the known.
std::vector<std::string> parseTrackedAnalyses(const std::string& commaList);
void checkTrackedAnalyses(const std::vector<std::string>& names);

struct TrackedValue {
  double value = 0;
  std::vector<double> perLayer;  // empty where the analysis has no per-layer figure
  double seconds = 0;            // what measuring it took (wall clock)
};

// What the tracked analyses read, prepared once per run: the first `sequences` chunks of the tracking
// token file and, for the IOI analyses, a prompt set made with the run's tokenizer.
struct TrackingData {
  TokenSequences sequences;
  std::shared_ptr<const IoiPromptSet> prompts;  // null when no tracked analysis needs one
};

// Measures each named analysis on the snapshot, in the order given.
std::map<std::string, TrackedValue> measureTracked(const std::vector<std::string>& names,
                                                   const ModelSnapshot& snapshot, const TrackingData& data);

}  // namespace nf
