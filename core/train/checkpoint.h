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

struct RunConfig;  // train/settings.h
struct ResumeOverrides;

// Everything besides weights and optimizer that exact resume needs (state.json).
struct TrainingState {
  int64_t stepsDone = 0;
  Random::State samplerState{};
  nlohmann::json trackers = nlohmann::json::object();      // RemovalTracker::toJson()
  Schedule schedule;                                       // as it was at the checkpoint (informational)
  std::vector<std::pair<int64_t, int64_t>> appliedEvents;  // (event id, step)
  nlohmann::json edits = nlohmann::json::array();          // the live edits' log records
  int64_t metricsBytes = 0;  // metrics.jsonl's length at the checkpoint (informational: a resume appends)
  // The workers that trained up to it (informational: the sampler state is the whole run's, the same on
  // every worker, so a resume may use any number of workers).
  int worldSize = 1;
  // A random id written into the checkpoint's weight files and optimizer.pt as well: the three belong
  // together. Empty in checkpoints from before it was kept (then nothing is compared).
  std::string id;
  // The run's settings it was trained with (toJson(RunConfig)): a resume names what config.json changed
  // since. Null in checkpoints from before it was kept.
  nlohmann::json settings;
  // The autopilot's state (schedule/autopilot.h) when it steers the run; null otherwise.
  nlohmann::json autopilot;
  // The token files it trained on and evaluated, by path: {"tokens", "tokenizer_fingerprint" where known}.
  // A resume says which changed since (made again in place). Null in checkpoints from before it was kept.
  nlohmann::json data;
  // The divergence guard's memory and the newest sane checkpoint (trainer_state.h): {"recent_losses",
  // "lowest_evaluations", "sane_checkpoint"}. Null in checkpoints from before it was kept (then a resume
  // starts a fresh guard).
  nlohmann::json divergence;
};

struct WrittenCheckpoint {
  std::string folder;
  int64_t bytes = 0;      // its size on disk
  int64_t freeBytes = 0;  // what the file system has left after it
  std::string id;         // TrainingState::id, stamped into its files
  // Whether the next checkpoint may not fit (less free than two of this size): worth a warning while there
  // is still time to free space.
  bool lowOnSpace() const { return freeBytes < 2 * bytes; }
};

// Writes checkpoints/step-N of runDir (N = state.stepsDone) and points "latest" at it; keeps the newest
// `keep` checkpoints, every one when `keep` is 0 (and `protect`, a checkpoint folder name, whatever its age)
// and removes what dead writers left behind. First checks the free space against the checkpoint's expected
// size (the newest one's, else an estimate from the model). Any failure — a full disk, an I/O error, also
// inside LibTorch's serializer — throws FileError naming the file and the problem, after removing the
// unfinished folder: "latest" still names the previous checkpoint, which is untouched.
WrittenCheckpoint writeCheckpoint(const std::string& runDir, CausalLMImpl& model,
                                  torch::optim::Optimizer& optimizer, const TrainingState& state, int keep,
                                  const std::string& protect = "");

// After a divergence: "latest" names the checkpoint of `target` steps again and every newer checkpoint (they
// hold weights that led to the divergence) is removed, so neither a resume nor a rollback starts from them.
void rewindCheckpoints(const std::string& runDir, int64_t target);

// Removes what writers that died (killed, or out of space) left in runDir, its checkpoints/, source/ and
// final/: unfinished checkpoint folders and temporaries; a checkpoint or final/ moved aside while being
// replaced is put back when its replacement never arrived. Leftovers named with this process's id count as
// dead with `ownIsGone` (before a run starts: an earlier process with our id), not while it trains. Returns
// how many entries it cleared or restored.
int clearDeadWriters(const std::string& runDir, bool ownIsGone = true);
// A run taken over by a trainer (its lock held: a start in place, a resume): clearDeadWriters, and the
// address of whoever served it before goes (it would mislead `steer` and the workbench; --serve writes anew).
void clearDeadTrainersLeftovers(const std::string& runDir);

// The state of a checkpoint folder; FileError naming state.json when it is malformed or of a newer version,
// or does not belong to its folder: a step other than the folder's, weight files of another checkpoint.
TrainingState readTrainingState(const std::string& checkpointDir);

// Before a finished run trains on: removes its final/ model, which analyze, export and eval would read in
// place of the checkpoints that follow, when it holds the weights of the checkpoint resumed from (the same
// id), so nothing is lost; throws FileError naming final/ when it holds anything else.
void retireFinalModel(const std::string& runDir, const TrainingState& resumedFrom);

// A folder that holds a run's config.json, as a resume needs; else FileError saying what it is instead: no
// folder at all, or one a start left before writing its config.json (to start again, in place).
void requireRunFolder(const std::string& runDir);
// A resumed run's settings (config.json, perhaps edited since, with the resume's overrides) against the
// checkpoint it resumes from and this machine: a budget below the steps trained (std::invalid_argument
// when given to resume), or FileError naming config.json for that, another mode than the checkpoint's, a
// context longer than the model's positions, bf16 off CUDA, or a CUDA device where there is none.
void requireResumable(const std::string& runDir, const RunConfig& config, const ResumeOverrides& overrides,
                      const std::string& checkpoint, const TrainingState& state);
// Loads the checkpoint's optimizer.pt into `optimizer`; FileError when it is not the optimizer state of
// the checkpoint `state` describes (another run's of the same shapes, say).
void loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& checkpointDir,
                        const TrainingState& state);

}  // namespace nf
