// A training checkpoint in a run directory: the model (a Hugging Face folder), the optimizer state
// (optimizer.pt) and state.json (TrainingState). Written under a temporary name and renamed, so a checkpoint
// folder is complete or absent; "latest" moves only after that; older ones beyond `keep` are removed.
// Engine-internal (torch).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/causal_lm.h"
#include "schedule/schedule.h"
#include "util/random.h"

namespace torch::optim {
class Optimizer;
}

namespace nf {

// Everything besides weights and optimizer that exact resume needs (state.json).
struct TrainingState {
  int64_t stepsDone = 0;
  Random::State samplerState{};
  nlohmann::json trackers = nlohmann::json::object();      // RemovalTracker::toJson()
  Schedule schedule;                                       // as it was at the checkpoint (informational)
  std::vector<std::pair<int64_t, int64_t>> appliedEvents;  // (event id, step)
  nlohmann::json edits = nlohmann::json::array();          // the live edits' log records
  int64_t metricsBytes = 0;  // metrics.jsonl's length at the checkpoint; a resume cuts it there
  // The workers that trained up to it (informational: the sampler state is the whole run's, the same on
  // every worker, so a resume may use any number of workers).
  int worldSize = 1;
};

// Writes checkpoints/step-N of runDir (N = state.stepsDone) and points "latest" at it; keeps the newest
// `keep` checkpoints and removes what killed writers left behind. Returns the checkpoint's folder.
std::string writeCheckpoint(const std::string& runDir, CausalLMImpl& model,
                            torch::optim::Optimizer& optimizer, const TrainingState& state, int keep);

// The state of a checkpoint folder; FileError naming state.json when it is malformed or of a newer version.
TrainingState readTrainingState(const std::string& checkpointDir);
void loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& checkpointDir);

}  // namespace nf
