#include "train/checkpoint.h"

#include <fcntl.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {
namespace {

void fsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path, "cannot open to flush it to disk");
  const int result = ::fsync(fd);
  ::close(fd);
  if (result != 0) throw FileError(path, "could not be flushed to disk (disk full or I/O error?)");
}

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
  return j;
}

}  // namespace

std::string writeCheckpoint(const std::string& runDir, CausalLMImpl& model,
                            torch::optim::Optimizer& optimizer, const TrainingState& state, int keep) {
  const std::string dir = run::checkpointsPath(runDir);
  const std::string name = run::checkpointName(state.stepsDone);
  const std::string tmp = dir + "/" + run::unfinishedCheckpointName(state.stepsDone, ::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  saveModel(model, tmp);
  torch::save(optimizer, run::optimizerStatePath(tmp));
  fsyncPath(run::optimizerStatePath(tmp));
  writeFileAtomic(run::checkpointStatePath(tmp), toJson(state).dump(1) + "\n");
  fsyncPath(tmp);
  // The folder appears under its name only when complete; "latest" moves only after that. A checkpoint
  // of the same step (a finished run resumed) is moved aside first, never deleted before its successor.
  const std::string final = dir + "/" + name;
  const std::string aside = dir + "/" + run::replacedCheckpointName(state.stepsDone, ::getpid());
  if (fs::exists(final)) fs::rename(final, aside);
  fs::rename(tmp, final);
  fsyncPath(dir);
  writeFileAtomic(run::latestPointerPath(runDir), name + "\n");
  fs::remove_all(aside);
  // Keep the newest few; never the one "latest" names; clear what killed writers left behind.
  std::vector<std::string> older;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string n = entry.path().filename().string();
    if (!entry.is_directory()) continue;
    if (run::isCheckpointName(n) && n < name)
      older.push_back(n);
    else if (run::isUnfinishedCheckpointName(n))
      fs::remove_all(entry.path());
  }
  std::sort(older.begin(), older.end());
  const std::size_t keepOlder = static_cast<std::size_t>(std::max(1, keep) - 1);
  for (std::size_t i = 0; i + keepOlder < older.size(); ++i) fs::remove_all(dir + "/" + older[i]);
  return final;
}

TrainingState readTrainingState(const std::string& checkpointDir) {
  const json state = run::readCheckpointState(checkpointDir);
  TrainingState s;
  try {
    s.stepsDone = state.at("steps_done").get<int64_t>();
    const auto words = state.at("sampler_state").get<std::vector<std::string>>();
    for (std::size_t i = 0; i < s.samplerState.size(); ++i) s.samplerState[i] = std::stoull(words.at(i));
    s.trackers = state.at("trackers");
    s.appliedEvents = state.at("applied_events").get<std::vector<std::pair<int64_t, int64_t>>>();
    s.edits = state.at("edits");
    s.metricsBytes = state.value("metrics_bytes", int64_t{-1});
    s.worldSize = state.value("world_size", 1);
  } catch (const std::exception& e) {
    throw FileError(run::checkpointStatePath(checkpointDir),
                    std::string("malformed checkpoint state: ") + e.what());
  }
  return s;
}

void loadOptimizerState(torch::optim::Optimizer& optimizer, const std::string& checkpointDir) {
  torch::load(optimizer, run::optimizerStatePath(checkpointDir));
}

}  // namespace nf
