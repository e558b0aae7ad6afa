#include "train/checkpoint.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <exception>
#include <filesystem>
#include <limits>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"
#include "model/hf_checkpoint.h"
#include "model/model_folder.h"
#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "train/optimizer.h"
#include "train/settings.h"
#include "util/bytes.h"
#include "util/random.h"
#include "util/whole_number.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {
namespace {

json toJson(const TrainingState& s) {
  std::vector<std::string> sampler;  // as strings: JSON readers may not keep 64-bit integers exact
  for (uint64_t word : s.samplerState) sampler.push_back(std::to_string(word));
  json j = formatHeader(kCheckpointStateFormat);
  j["steps_done"] = s.stepsDone;
  j["sampler_state"] = sampler;
  j["trackers"] = s.trackers;
  j["schedule"] = toJson(s.schedule);
  j["applied_events"] = s.appliedEvents;
  j["edits"] = s.edits;
  j["metrics_bytes"] = s.metricsBytes;
  j["world_size"] = s.worldSize;
  if (!s.id.empty()) j["checkpoint_id"] = s.id;
  if (!s.settings.is_null()) j["settings"] = s.settings;
  if (!s.autopilot.is_null()) j["autopilot"] = s.autopilot;
  if (!s.data.is_null()) j["data"] = s.data;
  if (!s.divergence.is_null()) j["divergence"] = s.divergence;
  return j;
}

// The one writer of checkpoints/latest: it names the newest complete checkpoint folder.
void pointLatestAt(const std::string& runDir, const std::string& name) {
  writeFileAtomic(run::latestPointerPath(runDir), name + "\n");
}

}  // namespace

void rewindCheckpoints(const std::string& runDir, int64_t target) {
  const std::string name = run::checkpointName(target);
  pointLatestAt(runDir, name);
  std::error_code ignored;
  std::vector<fs::path> newer;
  for (const auto& entry : fs::directory_iterator(run::checkpointsPath(runDir), ignored)) {
    const std::string n = entry.path().filename().string();
    if (run::isCheckpointName(n) && n > name) newer.push_back(entry.path());
  }
  for (const fs::path& path : newer) fs::remove_all(path, ignored);
}

int clearDeadWriters(const std::string& runDir, bool ownIsGone) {
  int cleared = 0;
  // A model folder's files (source/ and final/ of older versions) were written one by one, each by a
  // temporary.
  for (const std::string& dir :
       {runDir, run::checkpointsPath(runDir), run::sourceModelPath(runDir), run::finalModelPath(runDir)}) {
    std::error_code error;
    std::vector<fs::path> entries;  // listed first: the loop renames and removes
    for (const auto& entry : fs::directory_iterator(dir, error)) entries.push_back(entry.path());
    for (const fs::path& path : entries) {
      const std::string name = path.filename().string();
      // A checkpoint (".step-N.old-PID"), final/ or source/ ("final.old-PID", replaceFolder) moved aside for
      // its successor comes back when the successor never arrived; a temporary ("*.tmp-PID") goes.
      const bool hidden = run::isUnfinishedCheckpointName(name);
      const bool movedAside =
          (hidden || name.rfind("final.old-", 0) == 0 || name.rfind("source.old-", 0) == 0) &&
          deadWriterOf(name, ".old", ownIsGone) != 0;
      if (!movedAside && deadWriterOf(name, ".tmp", ownIsGone) == 0) continue;  // not ours, or at work
      const std::size_t dash = name.rfind('-');
      const fs::path original = path.parent_path() / name.substr(hidden ? 1 : 0, dash - 4 - (hidden ? 1 : 0));
      std::error_code failed;  // a leftover that cannot be removed now is tried again next time
      if (movedAside && !fs::exists(original, failed)) {
        fs::rename(path, original, failed);  // its replacement never arrived: it is the newest again
      } else {
        fs::remove_all(path, failed);
      }
      cleared += failed ? 0 : 1;
    }
  }
  return cleared;
}

void clearDeadTrainersLeftovers(const std::string& runDir) {
  clearDeadWriters(runDir);
  std::error_code ignored;
  fs::remove(run::servePath(runDir), ignored);
}

namespace {

// optimizer.pt's own entries beside LibTorch's (kOptimizerStateFormat).
constexpr const char* kOptimizerFormatKey = "normfree_format";
constexpr const char* kOptimizerVersionKey = "normfree_version";

// LibTorch's archive goes to disk through AtomicFile. Its writer callback must never throw: an exception
// through LibTorch's zip code, or its own error on a short write, ended the process (SIGABRT) when the disk
// filled. So the callback keeps the first error, takes the remaining bytes without writing them, and the
// error is thrown once LibTorch is done.
void saveOptimizerState(torch::optim::Optimizer& optimizer, const std::string& path, const std::string& id) {
  torch::serialize::OutputArchive archive;
  archive.write(kOptimizerFormatKey, c10::IValue(std::string(kOptimizerStateFormat.name)));
  archive.write(kOptimizerVersionKey, c10::IValue(int64_t{kOptimizerStateFormat.version}));
  archive.write(kCheckpointIdKey, c10::IValue(id));
  optimizer.save(archive);
  AtomicFile file(path);
  std::exception_ptr failure;
  try {
    archive.save_to([&](const void* data, std::size_t bytes) -> std::size_t {
      if (!failure) try {
          file.write(data, bytes);
        } catch (...) {
          failure = std::current_exception();
        }
      return bytes;
    });
  } catch (const c10::Error& e) {
    throw FileError(path, std::string("could not be serialized: ") + e.what_without_backtrace());
  }
  if (failure) std::rethrow_exception(failure);
  file.commit();
}

int64_t folderBytes(const std::string& folder) {
  int64_t bytes = 0;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(folder, error))
    if (entry.is_regular_file(error)) bytes += static_cast<int64_t>(entry.file_size(error));
  return bytes;
}

int64_t freeBytes(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return std::numeric_limits<int64_t>::max();  // unknown: try
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

// What the next checkpoint will take: the newest one's size, or before the first, the weights and
// AdamW's two moments in the parameters' dtype.
int64_t expectedCheckpointBytes(const std::string& runDir, CausalLMImpl& model) {
  const std::string newest = run::latestCheckpoint(runDir);
  if (!newest.empty()) return folderBytes(newest);
  int64_t bytes = 0;
  for (const auto& p : model.parameters()) bytes += 3 * p.numel() * static_cast<int64_t>(p.element_size());
  return bytes;
}

// The first weight file of a model folder whose checkpoint id (stamped by writeCheckpoint, and into the
// final model written with it) is not `id`, or "" when every one carries it.
std::string weightFileWithoutId(const std::string& folder, const std::string& id) {
  for (const auto& file : indexModelFolder(folder).files) {
    const auto found = file->metadata().find(kCheckpointIdKey);
    if (found == file->metadata().end() || found->second != id) return file->path();
  }
  return "";
}

// A file-system operation's error as our own, naming the path.
template <class Operation>
void onDisk(const std::string& path, Operation operation) {
  try {
    operation();
  } catch (const fs::filesystem_error& e) {
    throw FileError(path, e.code().message());
  }
}

}  // namespace

WrittenCheckpoint writeCheckpoint(const std::string& runDir, CausalLMImpl& model,
                                  torch::optim::Optimizer& optimizer, const TrainingState& state, int keep,
                                  const std::string& protect) {
  const std::string dir = run::checkpointsPath(runDir);
  const std::string name = run::checkpointName(state.stepsDone);
  const std::string tmp = dir + "/" + run::unfinishedCheckpointName(state.stepsDone, ::getpid());
  const int64_t expected = expectedCheckpointBytes(runDir, model);
  const int64_t available = freeBytes(dir);
  if (available < expected)
    throw FileError(dir, "has " + formatBytes(available) + " free, but a checkpoint needs about " +
                             formatBytes(expected));
  TrainingState stamped = state;
  try {
    onDisk(tmp, [&] {
      fs::remove_all(tmp);
      fs::create_directories(tmp);
    });
    stamped.id = kernelRandomHex(16, "a checkpoint's id");  // 128 bits
    SaveOptions save;
    save.checkpointId = stamped.id;
    saveModel(model, tmp, save);
    // A checkpoint is a model folder too (analyze, export, generate read it): with the source's token ids.
    if (fs::exists(run::sourceModelPath(runDir) + "/config.json"))
      keepTokenIds(run::sourceModelPath(runDir), tmp);
    saveOptimizerState(optimizer, run::optimizerStatePath(tmp), stamped.id);
    writeFileAtomic(run::checkpointStatePath(tmp), toJson(stamped).dump(1) + "\n");
    fsyncPath(tmp);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);  // nothing of a failed checkpoint stays on the full disk
    throw;
  }
  // The folder appears under its name only when complete; "latest" moves only after that. A checkpoint
  // of the same step (a finished run resumed) is moved aside first, never deleted before its successor.
  const std::string final = dir + "/" + name;
  const std::string aside = dir + "/" + run::replacedCheckpointName(state.stepsDone, ::getpid());
  onDisk(final, [&] {
    if (fs::exists(final)) fs::rename(final, aside);
    try {
      fs::rename(tmp, final);
    } catch (...) {
      std::error_code ignored;
      if (fs::exists(aside, ignored)) fs::rename(aside, final, ignored);
      fs::remove_all(tmp, ignored);
      throw;
    }
  });
  fsyncPath(dir);
  pointLatestAt(runDir, name);
  // Keep the newest few, the protected one, and never the one "latest" names; clear dead writers' leftovers.
  onDisk(dir, [&] {
    fs::remove_all(aside);
    std::vector<std::string> older;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string n = entry.path().filename().string();
      if (entry.is_directory() && run::isCheckpointName(n) && n < name) older.push_back(n);
    }
    std::sort(older.begin(), older.end());
    // The protected one counts among the newest `keep` when it is one of them; older, it is kept beside them.
    const std::size_t keepOlder = keep == 0 ? older.size() : static_cast<std::size_t>(std::max(1, keep) - 1);
    for (std::size_t i = 0; i + keepOlder < older.size(); ++i)
      if (older[i] != protect) fs::remove_all(dir + "/" + older[i]);
  });
  clearDeadWriters(runDir, /*ownIsGone=*/false);  // a live edit of ours may be writing schedule.json
  return {final, folderBytes(final), freeBytes(dir), stamped.id};
}

TrainingState readTrainingState(const std::string& checkpointDir) {
  const json state = run::readCheckpointState(checkpointDir);
  TrainingState s;
  s.stepsDone = run::checkpointStep(checkpointDir);
  try {
    // Every number read exactly (JsonIn): "12abc" or "-1" had read as a sampler word, 12.7 as a count.
    readJson(state, "checkpoint state", [&](const JsonIn& in) {
      in.requireKnown({"format", "version", "steps_done", "sampler_state", "trackers", "schedule",
                       "applied_events", "edits", "metrics_bytes", "world_size", "checkpoint_id", "settings",
                       "autopilot", "data", "divergence"});
      const std::vector<std::string> words =
          in["sampler_state"].list([](const JsonIn& w) { return w.text(); });
      in["sampler_state"].requireSize(static_cast<int64_t>(s.samplerState.size()), "the sampler's words");
      for (std::size_t i = 0; i < s.samplerState.size(); ++i) {
        const std::optional<uint64_t> word = wholeNumber<uint64_t>(words[i]);
        if (!word)
          throw std::invalid_argument("sampler_state[" + std::to_string(i) + "] \"" + words[i] +
                                      "\" is not a 64-bit word in decimal");
        s.samplerState[i] = *word;
      }
      s.appliedEvents = in["applied_events"].list([](const JsonIn& pair) {
        const std::vector<int64_t> idAndStep = pair.wholes<int64_t>();
        pair.requireSize(2, "an event id and its step");
        return std::pair{idAndStep[0], idAndStep[1]};
      });
      s.metricsBytes = -1;  // checkpoints from before it was kept
      in["metrics_bytes"].readIfGiven(s.metricsBytes);
      in["world_size"].readIfGiven(s.worldSize);
      if (s.metricsBytes < -1 || s.worldSize < 1)
        throw std::invalid_argument("metrics_bytes must be ≥ 0 and world_size ≥ 1");
      in["checkpoint_id"].readIfGiven(s.id);
      return 0;
    });
    s.trackers = state.at("trackers");
    s.edits = state.at("edits");
    if (state.contains("settings")) s.settings = state.at("settings");
    if (state.contains("schedule"))
      s.schedule = scheduleFromJson(state.at("schedule"), run::checkpointStatePath(checkpointDir));
    if (state.contains("autopilot")) s.autopilot = state.at("autopilot");
    if (state.contains("data")) s.data = state.at("data");
    if (state.contains("divergence")) s.divergence = state.at("divergence");
  } catch (const std::exception& e) {
    throw FileError(run::checkpointStatePath(checkpointDir),
                    std::string("malformed checkpoint state: ") + e.what());
  }
  // A run's checkpoint lies in the folder of its step: a state edited or copied in from elsewhere would
  // retrain steps on weights that already saw them.
  const std::string folder = fs::path(checkpointDir).filename().string();
  if (run::isCheckpointName(folder) && folder != run::checkpointName(s.stepsDone))
    throw FileError(run::checkpointStatePath(checkpointDir),
                    "says steps_done " + std::to_string(s.stepsDone) + ", but it lies in " + folder +
                        ": edited or copied from another checkpoint");
  // Its weights are the ones written with it (every file of a sharded model).
  if (!s.id.empty())
    if (const std::string other = weightFileWithoutId(checkpointDir, s.id); !other.empty())
      throw FileError(other, "is not the weight file written with " +
                                 run::checkpointStatePath(checkpointDir) +
                                 ": copied in from another checkpoint or run");
  return s;
}

void loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& checkpointDir,
                        const TrainingState& state) {
  const std::string path = run::optimizerStatePath(checkpointDir);
  requireRegularFile(path);
  std::string id;
  try {
    torch::serialize::InputArchive archive;
    // onto the parameters' device: a state saved by another worker (cuda:0) or on another device would
    // otherwise come back where it was written
    archive.load_from(path, optimizer.param_groups().at(0).params().at(0).device());
    c10::IValue stored;
    // Written without a format before it had one: version 1. (A newer layout, of a fused optimizer's
    // state, is refused by name before LibTorch fails on it.)
    json format = json::object();
    if (archive.try_read(kOptimizerFormatKey, stored))
      format["format"] = stored.isString() ? json(stored.toStringRef()) : json(stored.tagKind());
    if (archive.try_read(kOptimizerVersionKey, stored))
      format["version"] = stored.isInt() ? json(stored.toInt()) : json(stored.tagKind());
    checkFileFormat(format, kOptimizerStateFormat, path, WhenUnmarked::IsVersion1);
    if (archive.try_read(kCheckpointIdKey, stored) && stored.isString()) id = stored.toStringRef();
    // LibTorch's load replaces only the states the archive holds: a rollback to a checkpoint of step 0
    // (none yet) had kept the diverged moments.
    optimizer.state().clear();
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw FileError(path, std::string("is not a readable optimizer state: ") + e.what_without_backtrace());
  }
  if (!state.id.empty() && id != state.id)
    throw FileError(path, "is not the optimizer state written with " +
                              run::checkpointStatePath(checkpointDir) +
                              ": copied in from another checkpoint or run");
  if (const std::string problem = loadedStateProblem(optimizer); !problem.empty())
    throw FileError(path, "cannot be trained on: " + problem);
}

void retireFinalModel(const std::string& runDir, const TrainingState& resumedFrom) {
  const std::string final = run::finalModelPath(runDir);
  if (!fs::exists(final + "/config.json")) return;
  bool sameWeights = false;
  try {
    sameWeights = !resumedFrom.id.empty() && weightFileWithoutId(final, resumedFrom.id).empty();
  } catch (const std::exception&) {
    // unreadable: not provably the checkpoint's copy
  }
  if (!sameWeights)
    throw FileError(final, "is not the model of the checkpoint this run resumes from (step " +
                               std::to_string(resumedFrom.stepsDone) +
                               "), and training on would leave it out of date: move it elsewhere to keep "
                               "it, then resume");
  removeFolder(final);  // renamed first: a crash never leaves a final/ without its weights
}

void requireRunFolder(const std::string& runDir) {
  if (fs::exists(run::configPath(runDir))) return;
  throw FileError(runDir, !fs::exists(runDir) ? "does not exist"
                                              : "holds no config.json, so no run to resume: start the run "
                                                "again, in place");
}

void requireResumable(const std::string& runDir, const RunConfig& config, const ResumeOverrides& overrides,
                      const std::string& checkpoint, const TrainingState& state) {
  const std::string file = run::configPath(runDir);
  const int64_t stepsDone = state.stepsDone;
  // A log of a newer build is refused (FileError) before anything is written.
  MetricsFollower(runDir).read(4096);
  // A checkpoint copied in from another run (a checkpoint id ties only the files of one folder together).
  const ModelShape shape = loadConfigFile(checkpoint + "/config.json").shape;
  if (const std::string source = run::sourceModelPath(runDir) + "/config.json"; fs::exists(source)) {
    const ModelShape started = loadConfigFile(source).shape;
    if (!(shape == started))
      throw FileError(checkpoint, "is a " + shape.family + " model of " + std::to_string(shape.nLayer) +
                                      " layers × " + std::to_string(shape.nEmbd) +
                                      ", but the run started from a " + started.family + " model of " +
                                      std::to_string(started.nLayer) + " layers × " +
                                      std::to_string(started.nEmbd) + " (" + source +
                                      "): it was not written by this run");
  }
  // What a resumed run cannot change: its mode is what the run is (its loss, its schedule, the checks of its
  // checkpoints); it trains its checkpoint (not the folder it started from) and draws its data where the
  // checkpoint left off (not from the seed). An edit of these would be reported as used, unused.
  if (state.settings.is_object()) {
    const std::string mode = trainingModeName(config.mode);
    const nlohmann::json& settings = state.settings;
    if (settings.contains("mode") && settings["mode"] != mode)
      throw FileError(file, "mode " + settings["mode"].dump() + " at the checkpoint is \"" + mode +
                                "\" now: a run keeps its mode (start a new run from the checkpoint)");
    const nlohmann::json seed = settings.contains("optimizer") && settings["optimizer"].is_object()
                                    ? settings["optimizer"].value("seed", nlohmann::json())
                                    : nlohmann::json();
    if (!seed.is_null() && seed != nlohmann::json(config.optimizer.seed))
      throw FileError(file,
                      "optimizer.seed " + seed.dump() + " at the checkpoint is " +
                          std::to_string(config.optimizer.seed) +
                          " now: a resumed run draws its data where its checkpoint left off (start a new "
                          "run for another seed)");
    if (state.settings.contains("schedule") && state.settings["schedule"] != toJson(config.schedule))
      throw FileError(file,
                      "\"schedule\" changed since the checkpoint, but it is the schedule the run started "
                      "with, kept for the record: the run follows " +
                          run::schedulePath(runDir) + " (edit that, or give resume --schedule FILE)");
    if (state.settings.value("model", config.model) != config.model)
      throw FileError(file, "model \"" + state.settings.value("model", config.model) +
                                "\" at the checkpoint is \"" + config.model +
                                "\" now: a resumed run trains its checkpoint, and \"model\" names "
                                "where it started (start a new run from another model)");
  }
  if (overrides.maxSteps && *overrides.maxSteps < stepsDone)
    throw std::invalid_argument("the steps given to resume (" + std::to_string(*overrides.maxSteps) +
                                ") are fewer than the run has trained (" + std::to_string(stepsDone) + ")");
  if (config.optimizer.maxSteps < stepsDone)
    throw FileError(file, "max_steps " + std::to_string(config.optimizer.maxSteps) +
                              " is fewer than the run has trained (" + std::to_string(stepsDone) + ")");
  // A run whose budget is spent trains no step: a rate or a patience given without more steps would be
  // recorded as used, and never used.
  if (stepsDone >= config.optimizer.maxSteps && !overrides.maxSteps)
    for (const auto& [given, option] :
         {std::pair{overrides.lr.has_value(), "--lr"}, std::pair{overrides.minLr.has_value(), "--min-lr"},
          std::pair{overrides.autopilotPatience.has_value(), "--autopilot-patience"}})
      if (given)
        throw std::invalid_argument("the run has trained all its " + std::to_string(stepsDone) +
                                    " steps, so " + option +
                                    " would change nothing: give --steps (more than " +
                                    std::to_string(stepsDone) + ") to train on with it");
  const int64_t positions = shape.nPositions;
  if (config.optimizer.context > positions)
    throw FileError(file, "context " + std::to_string(config.optimizer.context) +
                              " is longer than the model's " + std::to_string(positions) + " positions");
  const bool cuda = torch::Device(config.device).is_cuda();
  if (cuda && !torch::cuda::is_available())
    throw FileError(file, "device \"" + config.device +
                              "\": this LibTorch build has no CUDA or no GPU is visible (set \"device\": "
                              "\"cpu\" to resume here)");
  if (config.optimizer.bf16 && !cuda)
    throw FileError(file,
                    "\"bf16\": true on device \"" + config.device +
                        "\": bf16 autocast runs on CUDA only, the CPU computes in float32 (set \"bf16\": "
                        "false)");
}

}  // namespace nf
