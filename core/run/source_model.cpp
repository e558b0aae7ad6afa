#include "run/source_model.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"
#include "model/model_folder.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"

namespace fs = std::filesystem;

namespace nf::run {

namespace {
std::string recordPath(const std::string& runDir) { return sourceModelPath(runDir) + "/source.json"; }
}  // namespace

void keepSourceModel(const std::string& runDir, const std::string& modelFolder, bool weights) {
  // Written beside source/ and renamed in whole: a start killed midway never leaves a config.json without
  // the tokenizer that final/ is to ship.
  const auto fill = [&](const std::string& tmp) {
    writeFileAtomic(tmp + "/config.json", readTextFile(modelFolder + "/config.json"));
    copyTokenizerFiles(modelFolder, tmp);
    nlohmann::json record = formatHeader(kSourceFormat);
    record["model"] = fs::absolute(modelFolder).lexically_normal().string();  // a resume may start elsewhere
    if (weights) record["weights_fingerprint"] = weightsFingerprint(modelFolder);
    writeFileAtomic(tmp + "/source.json", record.dump(2) + "\n");
  };
  const std::string kept = sourceModelPath(runDir), tmp = writeFolderBeside(kept, fill);
  try {
    replaceFolder(tmp, kept);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    throw;
  }
}

std::string sourceModelChange(const std::string& runDir) {
  const std::string path = recordPath(runDir);
  if (!fs::exists(path)) return "";
  const nlohmann::json record = readFormatFile(path);
  checkFileFormat(record, kSourceFormat, path);
  if (!record.contains("model") || !record["model"].is_string() ||
      (record.contains("weights_fingerprint") && !record["weights_fingerprint"].is_string()))
    throw FileError(path, "needs the string \"model\" (and \"weights_fingerprint\" a string if present)");
  const std::string folder = record["model"].get<std::string>();
  if (!record.contains("weights_fingerprint")) return "";  // a pretraining run read only the shape
  if (!fs::exists(folder + "/config.json")) return folder + ": is gone (no config.json)";
  try {
    if (weightsFingerprint(folder) != record["weights_fingerprint"].get<std::string>())
      return folder + ": its weights changed since the run started";
  } catch (const FileError& e) {
    return std::string(e.what());
  }
  return "";
}

}  // namespace nf::run
