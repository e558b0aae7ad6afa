// Writing the run's checkpoints (trainer_state.h): the workers' agreement first, then the files
// (train/checkpoint.h); one that cannot be written is a warning while training can go on, and an error
// when it is the one a stop or the end of the run leaves. Also the final model.

#include <filesystem>

#include "distributed/worker_sync.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/checkpoint.h"
#include "train/trainer_state.h"
#include "util/bytes.h"

namespace nf {

void Trainer::Impl::warn(const std::string& code, const std::string& message) {
  record({{record::kType, record::kWarning},
          {"step", owner.m_stepsDone.load()},
          {"code", code},
          {"message", message}});
}

// Writes a checkpoint. One that cannot be written (a full disk, an I/O error) leaves the previous one
// newest and intact. When `required` — the checkpoint a stop or the end of the run leaves — that ends
// run() with the error; otherwise training goes on, since its state is safe in memory and stopping would
// lose the steps since the previous checkpoint, and the next checkpoint tries again (a warning says so).
// Returns whether it was written, and so need not be retried at a stop.
bool Trainer::Impl::checkpoint(bool required) {
  const int64_t step = owner.m_stepsDone.load();
  requireWorkersAgree(group.get(), *model, samplerState(), dataFilesPrint, step);
  bool written = !isMain() || writeCheckpointFiles(required);
  // Only worker 0 knows, and every worker must make the same checkpoint calls (they are collectives): all
  // take its word, so a checkpoint that failed is tried again at a stop or a request on every worker.
  if (group)
    written = group->broadcast(written ? 1 : 0, "the checkpoint of step " + std::to_string(step)) != 0;
  if (written && !isMain()) checkpoints.written(step);
  return written;
}

bool Trainer::Impl::writeCheckpointFiles(bool required) {
  TrainingState state;
  state.stepsDone = owner.m_stepsDone.load();
  state.samplerState = samplerState();
  state.trackers = tracker->toJson();
  state.metricsBytes = metrics->bytesWritten();
  state.worldSize = worker.worldSize;
  state.settings = toJson(settingsNow());
  state.data = dataIdentity();
  state.divergence = divergenceMemory();
  {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    state.schedule = schedule->schedule();
    state.appliedEvents = applied;
    state.edits = edits;
    if (autopilot) state.autopilot = toJson(autopilot->state());
  }
  WrittenCheckpoint written;
  try {
    written = writeCheckpoint(owner.m_dir, *model, *optimizer, state, config().keepCheckpoints,
                              checkpoints.sane() >= 0 ? run::checkpointName(checkpoints.sane()) : "");
  } catch (const FileError& e) {
    const std::string intact = run::latestCheckpoint(owner.m_dir);
    const std::string kept =
        intact.empty() ? "the run has no checkpoint yet" : "the newest intact checkpoint is " + intact;
    if (required)
      throw FileError(e.path(), e.problem() + ". The checkpoint of step " + std::to_string(state.stepsDone) +
                                    " was not written; " +
                                    (intact.empty() ? "the run has no checkpoint to resume from: start it "
                                                      "again once the problem is fixed"
                                                    : kept + " ('normfree-cli resume " + owner.m_dir +
                                                          "' continues from it once the problem is fixed)"));
    warn(warning_code::kCheckpointFailed, "the checkpoint of step " + std::to_string(state.stepsDone) +
                                              " could not be written: " + e.what() + ". " + kept +
                                              "; training goes on and the next checkpoint tries again");
    return false;
  }
  checkpoints.written(state.stepsDone);
  newestCheckpoint = {state.stepsDone, written.id};
  record({{record::kType, record::kCheckpoint},
          {"step", state.stepsDone},
          {"path", written.folder},
          {"bytes", written.bytes},
          {"free_bytes", written.freeBytes}});
  if (written.lowOnSpace())
    warn(warning_code::kLowDiskSpace, formatBytes(written.freeBytes) + " free on the disk of " +
                                          run::checkpointsPath(owner.m_dir) + ", and a checkpoint takes " +
                                          formatBytes(written.bytes) +
                                          ": free space now, or a coming checkpoint fails");
  return true;
}

// A finished run whose last checkpoint cannot be written (a full disk) still saves its model: final/ holds
// the weights without the optimizer's two moments, a third of a checkpoint, and the trained steps are kept.
// A resume from the older checkpoint then asks for final/ to be moved aside (retireFinalModel).
void Trainer::Impl::checkpointAtEnd(bool finished) {
  try {
    checkpoint(true);
  } catch (const FileError& e) {
    if (!finished || !isMain()) throw;
    try {
      saveFinal();
    } catch (const std::exception&) {
      throw e;  // what failed first, and what is kept
    }
    throw FileError(e.path(),
                    e.problem() +
                        ". The trained model was saved all the same: " + run::finalModelPath(owner.m_dir) +
                        " (a resume from the older checkpoint asks for it to be moved aside first)");
  }
}

void Trainer::Impl::saveFinal() {
  if (!isMain()) return;
  SaveOptions save;
  if (newestCheckpoint.first == owner.m_stepsDone) save.checkpointId = newestCheckpoint.second;
  // With the tokenizer the run trained with, kept at its start (a run from before that: the source folder's).
  const std::string kept = run::sourceModelPath(owner.m_dir), out = run::finalModelPath(owner.m_dir);
  const std::string tmp = saveModelBeside(
      *model, out, std::filesystem::exists(kept + "/config.json") ? kept : config().model, save);
  try {
    replaceFolder(tmp, out);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(tmp, ignored);
    throw;
  }
}

}  // namespace nf
