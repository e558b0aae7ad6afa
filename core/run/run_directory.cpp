#include "run/run_directory.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "run/metrics_log.h"
#include "run/metrics_records.h"
#include "text/tokenizer.h"
#include "util/whole_number.h"

namespace fs = std::filesystem;

namespace nf::run {

std::string configPath(const std::string& dir) { return dir + "/config.json"; }
std::string schedulePath(const std::string& dir) { return dir + "/schedule.json"; }
std::string metricsPath(const std::string& dir) { return dir + "/metrics.jsonl"; }
std::string servePath(const std::string& dir) { return dir + "/serve.json"; }
std::string lockPath(const std::string& dir) { return dir + "/trainer.lock"; }
std::string sourceModelPath(const std::string& dir) { return dir + "/source"; }
std::string checkpointsPath(const std::string& dir) { return dir + "/checkpoints"; }
std::string finalModelPath(const std::string& dir) { return dir + "/final"; }
std::string latestPointerPath(const std::string& dir) { return checkpointsPath(dir) + "/latest"; }
std::string checkpointStatePath(const std::string& checkpointDir) { return checkpointDir + "/state.json"; }
std::string optimizerStatePath(const std::string& checkpointDir) { return checkpointDir + "/optimizer.pt"; }

bool isRunDirectory(const std::string& dir) {
  // A model folder has a config.json too; only a run has a metrics log beside it.
  return fs::exists(configPath(dir)) && fs::exists(metricsPath(dir));
}

namespace {

// The step of the newest "checkpoint" or "finish" record in dir's metrics.jsonl, or −1 without one.
int64_t newestLoggedCheckpoint(const std::string& dir) {
  int64_t newest = -1;
  for (const std::string& line : MetricsFollower(dir).read().lines) {
    if (line.find("\"checkpoint\"") == std::string::npos && line.find("\"finish\"") == std::string::npos)
      continue;  // most lines are steps: skip the parse
    const nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
    if (!r.is_object() || !r.contains(record::kType) || !r.contains("step") || !r["step"].is_number_integer())
      continue;
    if (r[record::kType] == record::kCheckpoint || r[record::kType] == record::kFinish)
      newest = std::max(newest, r["step"].get<int64_t>());
  }
  return newest;
}

}  // namespace

void requireStartable(const std::string& dir) {
  if (!fs::exists(configPath(dir))) return;
  const nlohmann::json existing = readFormatFile(configPath(dir));
  if (!existing.is_object() || !existing.contains("format") || existing["format"] != kRunConfigFormat.name)
    throw FileError(configPath(dir),
                    "is not a run's config (a model folder?); give the run a folder of its own");
  if (!latestCheckpoint(dir).empty() || fs::exists(finalModelPath(dir)))
    throw FileError(dir,
                    "already holds a run (config.json and a checkpoint exist); resume it or choose "
                    "another folder");
  // A run that stopped before its first checkpoint starts again in place; one whose checkpoints were
  // deleted has its log as the only record of what it trained, which a new start would erase.
  if (const int64_t step = newestLoggedCheckpoint(dir); step >= 0)
    throw FileError(metricsPath(dir), "records a checkpoint at step " + std::to_string(step) +
                                          " that is gone from checkpoints/: the run cannot be resumed, and "
                                          "a new run here would erase its log; move metrics.jsonl away or "
                                          "choose another folder");
}

std::string checkpointName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%07lld", static_cast<long long>(step));
  return name;
}

std::string checkpointPath(const std::string& dir, int64_t step) {
  return checkpointsPath(dir) + "/" + checkpointName(step);
}

bool isCheckpointName(const std::string& name) { return name.rfind("step-", 0) == 0; }
bool isUnfinishedCheckpointName(const std::string& name) { return name.rfind(".step-", 0) == 0; }

std::string unfinishedCheckpointName(int64_t step, long pid) {
  return "." + checkpointName(step) + ".tmp-" + std::to_string(pid);
}

std::string replacedCheckpointName(int64_t step, long pid) {
  return "." + checkpointName(step) + ".old-" + std::to_string(pid);
}

namespace {

// The step a checkpoint folder's name says (step-0000040 → 40), or −1 for any other name.
int64_t stepOfName(const std::string& name) {
  if (!isCheckpointName(name) || name.find_first_not_of("0123456789", 5) != std::string::npos) return -1;
  return wholeNumber(std::string_view(name).substr(5)).value_or(-1);
}

// The step folders that hold their state.json (written last of a checkpoint's files): (step, folder),
// oldest first.
std::vector<std::pair<int64_t, std::string>> completeCheckpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> complete;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(checkpointsPath(dir), error))
    if (const int64_t step = stepOfName(entry.path().filename().string());
        step >= 0 && fs::exists(checkpointStatePath(entry.path().string())))
      complete.emplace_back(step, entry.path().string());
  std::sort(complete.begin(), complete.end());
  return complete;
}

// The newest complete step folder, or "".
std::string newestCompleteCheckpoint(const std::string& dir) {
  const auto complete = completeCheckpoints(dir);
  return complete.empty() ? "" : complete.back().second;
}

}  // namespace

std::string currentModelPath(const std::string& dir) {
  const std::string final = finalModelPath(dir);
  return fs::exists(final + "/config.json") ? final : latestCheckpoint(dir);
}

std::string latestCheckpoint(const std::string& dir) {
  const std::string pointer = latestPointerPath(dir);
  if (fs::exists(pointer)) {
    std::string name = readTextFile(pointer);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    // Only a name in this run's checkpoints folder: a path could resume this run from another's checkpoint.
    if (stepOfName(name) < 0)
      throw FileError(pointer,
                      "names '" + name + "', not a checkpoint of this run (a step-NNNNNNN folder beside it)");
    const std::string path = checkpointsPath(dir) + "/" + name;
    if (fs::is_directory(path)) return path;
  }
  // No pointer, or one naming a folder that is gone (a crash or a hand edit): the newest complete one.
  return newestCompleteCheckpoint(dir);
}

nlohmann::json readCheckpointState(const std::string& checkpointDir) {
  const std::string path = checkpointStatePath(checkpointDir);
  const nlohmann::json state = readFormatFile(path);
  checkFileFormat(state, kCheckpointStateFormat, path);
  return state;
}

int64_t checkpointStep(const std::string& folder) {
  if (!fs::exists(checkpointStatePath(folder))) return -1;
  const nlohmann::json state = readCheckpointState(folder);
  // Unsigned only: a negative count (or one past int64) would send resume and retention to a step that
  // never ran.
  if (!state.contains("steps_done") || !state["steps_done"].is_number_unsigned() ||
      state["steps_done"].get<uint64_t>() > uint64_t(INT64_MAX))
    throw FileError(checkpointStatePath(folder), "has no non-negative whole-number \"steps_done\"");
  return state["steps_done"].get<int64_t>();
}

std::string checkpointStepsText(const std::string& dir) {
  std::string list;
  for (const auto& [step, folder] : completeCheckpoints(dir))
    list += (list.empty() ? "" : ", ") + std::to_string(step);
  return list;
}

std::string modelFolder(const std::string& runOrModel) {
  if (fs::exists(finalModelPath(runOrModel) + "/config.json")) return finalModelPath(runOrModel);
  if (!fs::exists(metricsPath(runOrModel))) return runOrModel;  // a model or checkpoint folder
  const std::string list = checkpointStepsText(runOrModel), newest = newestCompleteCheckpoint(runOrModel);
  throw FileError(runOrModel, "is a run with no final model yet (it has not finished): " +
                                  (list.empty() ? std::string("it has no checkpoint either")
                                                : "give one of its checkpoint folders, such as " + newest +
                                                      " (steps " + list +
                                                      "), or --step where the command "
                                                      "takes it"));
}

std::string tokenizerFolder(const std::string& runOrModel) {
  // The model a run started from, as its config.json names it.
  auto startModel = [](const std::string& runDir) -> std::string {
    if (!fs::exists(configPath(runDir))) return "";
    const nlohmann::json config = nlohmann::json::parse(readTextFile(configPath(runDir)), nullptr, false);
    if (config.is_object() && config.contains("model") && config["model"].is_string())
      return config["model"].get<std::string>();
    return "";
  };
  const fs::path path(runOrModel);
  const bool isCheckpoint = path.parent_path().filename() == "checkpoints";
  const std::string runDir = isCheckpoint ? path.parent_path().parent_path().string() : runOrModel;
  for (const std::string& candidate :
       {runOrModel, finalModelPath(runOrModel), sourceModelPath(runDir), startModel(runDir)})
    if (!candidate.empty() && hasTokenizer(candidate)) return candidate;
  return "";
}

std::shared_ptr<const Tokenizer> tokenizerIfAny(const std::string& runOrModel) {
  try {
    const std::string folder = tokenizerFolder(runOrModel);
    return folder.empty() ? nullptr : std::shared_ptr<const Tokenizer>(loadTokenizer(folder));
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace nf::run
