// The run directory: the contract between engine, CLI and GUI.
//   config.json      everything needed to rerun (RunConfig)
//   schedule.json    the current schedule, live edits included
//   metrics.jsonl    one JSON record per line: "step" (every optimizer step), "event", "edit", "eval",
//                    "checkpoint", "start"/"resume"/"stop"/"finish"; appended with one write per record
//   checkpoints/     step-NNNNNNN/ (model folder + optimizer.pt + state.json) and "latest" naming the
//                    newest complete one; a checkpoint directory appears only once complete (rename)
//   final/           the trained model as a Hugging Face folder (with the tokenizer files, if any)
// Plain C++: the GUI follows a run through these files.
#pragma once
#include <cstdint>
#include <string>

namespace nf::run {

inline std::string configPath(const std::string& dir) { return dir + "/config.json"; }
inline std::string schedulePath(const std::string& dir) { return dir + "/schedule.json"; }
inline std::string metricsPath(const std::string& dir) { return dir + "/metrics.jsonl"; }
inline std::string checkpointsPath(const std::string& dir) { return dir + "/checkpoints"; }
inline std::string finalModelPath(const std::string& dir) { return dir + "/final"; }

// The newest complete checkpoint's folder, or "" if there is none.
std::string latestCheckpoint(const std::string& dir);
// The folder of the checkpoint written after `step` optimizer steps: checkpoints/step-NNNNNNN.
std::string checkpointName(int64_t step);
inline std::string checkpointPath(const std::string& dir, int64_t step) {
  return checkpointsPath(dir) + "/" + checkpointName(step);
}
// A run directory stands for its final model; anything else is taken as a model folder.
std::string modelFolder(const std::string& runOrModel);

}  // namespace nf::run
