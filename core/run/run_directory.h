// The run directory: the contract between engine, CLI and GUI (and, served over the network, remote
// clients). Every path and name inside a run is spelled here and nowhere else.
//   config.json      everything needed to rerun (RunConfig, train/settings.h)
//   schedule.json    the current schedule, live edits included (schedule/schedule.h)
//   metrics.jsonl    one JSON record per line (run/metrics_log.h)
//   checkpoints/     step-NNNNNNN/ (model folder + optimizer.pt + state.json) and "latest" naming the
//                    newest complete one; a checkpoint folder appears only once complete (rename)
//   final/           the trained model as a Hugging Face folder (with the tokenizer files, if any)
//   trainer.lock     held by the run's one trainer while it runs (run/run_lock.h)
//   source/          what the run keeps of the model it started from (run/source_model.h)
// Plain C++ (no torch): the GUI follows a run through these files.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace nf {
class Tokenizer;
}

namespace nf::run {

std::string configPath(const std::string& dir);
std::string schedulePath(const std::string& dir);
std::string metricsPath(const std::string& dir);
std::string checkpointsPath(const std::string& dir);
std::string finalModelPath(const std::string& dir);
std::string servePath(const std::string& dir);  // serve.json: a served run's address and token (owner-only)
std::string lockPath(const std::string& dir);   // trainer.lock: the one trainer's lock (run/run_lock.h)
std::string sourceModelPath(const std::string& dir);  // source/: of the model it started from
// Whether `dir` holds a run (its config.json), as opposed to a model folder.
bool isRunDirectory(const std::string& dir);
// A new run may start in `dir` when it is new or empty, or holds a run that stopped before its first
// checkpoint. Throws FileError for a folder holding a trained run, one whose metrics.jsonl records
// checkpoints that are gone (its log would be erased), or a config.json not a run's (a model folder's,
// which the run's would replace).
void requireStartable(const std::string& dir);

// The folder of the checkpoint written after `step` optimizer steps: checkpoints/step-NNNNNNN.
std::string checkpointName(int64_t step);
std::string checkpointPath(const std::string& dir, int64_t step);
// The newest complete checkpoint's folder: the one `latest` names, or — without a pointer, or one naming a
// folder that is gone — the newest step folder holding its state.json; "" if there is none. A pointer
// naming anything but a step folder of this run (a path to another run's checkpoint) is a FileError.
std::string latestCheckpoint(const std::string& dir);
// The run's model as it is now: its final model once written, else its newest checkpoint; "" if neither.
std::string currentModelPath(const std::string& dir);
// checkpoints/latest, the pointer to the newest complete checkpoint (written after the folder is complete).
std::string latestPointerPath(const std::string& dir);
// Whether a name in checkpoints/ is a complete checkpoint, or what a killed writer left behind.
bool isCheckpointName(const std::string& name);
bool isUnfinishedCheckpointName(const std::string& name);
// The temporary name a checkpoint is written under by process `pid`, and the name an older checkpoint of
// the same step is moved aside to while it is replaced.
std::string unfinishedCheckpointName(int64_t step, long pid);
std::string replacedCheckpointName(int64_t step, long pid);

// A checkpoint folder's state.json and optimizer.pt.
std::string checkpointStatePath(const std::string& checkpointDir);
std::string optimizerStatePath(const std::string& checkpointDir);
// A checkpoint's state.json, its format and version checked (FileError naming the file otherwise).
nlohmann::json readCheckpointState(const std::string& checkpointDir);
// The steps of a run's complete checkpoints, oldest first, as "12, 15" ("" for none): for messages.
std::string checkpointStepsText(const std::string& dir);
// The optimizer steps a checkpoint folder was written after, or -1 when `folder` is not a checkpoint.
int64_t checkpointStep(const std::string& folder);

// The model a path stands for: a run directory its final model, anything else itself (a model folder or
// a checkpoint folder). A run without a final model yet (training, stopped, or resumed to train on):
// FileError naming the run and the steps of its checkpoints, to pick one (analyze --step N).
std::string modelFolder(const std::string& runOrModel);
// Where the tokenizer files (text/tokenizer.h) of a model folder, run or checkpoint are: the folder itself,
// a run's final model, or the model the run started from; "" when none has one.
std::string tokenizerFolder(const std::string& runOrModel);
// That tokenizer, or null when there is none or it cannot be read: for checks and notes that may do
// without one (a command that uses a tokenizer reads it itself and names what is wrong with it).
std::shared_ptr<const Tokenizer> tokenizerIfAny(const std::string& runOrModel);

}  // namespace nf::run
