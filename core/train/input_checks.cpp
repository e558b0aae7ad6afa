// What a run reads that may not be what it seems (trainer_state.h): data files made by another tokenizer
// than the model's, checked at a start and a resume; at a resume also data files and the model it started
// from changed since its checkpoint. Said as "warning" records: the run goes on.
#include <algorithm>
#include <set>

#include "model/config.h"
#include "model/family.h"
#include "run/metrics_log.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "run/source_model.h"
#include "text/tokenizer.h"
#include "train/checkpoint.h"
#include "train/trainer_state.h"
#include "util/bytes.h"

namespace nf {

// Tokens of another tokenizer read as valid ids: the run would train (or evaluate) on what the model reads
// as noise, unsaid. Each file the run reads is checked against the model's tokenizer where its folder has
// one (data/token_file.h's otherTokenizerProblem), else by its end-of-text id.
void Trainer::Impl::warnOfOtherTokenizers() {
  // The run's own (the copy kept in source/, which final/ ships), not the folder it started from, which
  // may have changed since.
  const std::shared_ptr<const Tokenizer> tokenizer = run::tokenizerIfAny(owner.m_dir);
  std::set<std::string> files{config().trainData};
  files.insert(config().evalData.begin(), config().evalData.end());
  if (!config().tracking.analyses.empty() && !config().tracking.data.empty())
    files.insert(config().tracking.data);
  for (const std::string& path : files) {
    const std::string problem =
        otherTokenizerProblem(TokenFile::open(path), model->config().eotTokenId, tokenizer.get());
    if (!problem.empty())
      warn("other_tokenizer", problem + ": if another tokenizer made it, the run reads it as noise");
  }
  // A removal's masks (the auxiliary loss's, the σ trackers' and the end-of-text treatment's) leave out the
  // model's end-of-text id: data whose documents end with another has its separators counted as text.
  const int64_t separator = sampler->file().meta().eotTokenId, modelEnd = model->config().eotTokenId;
  if (removing() && separator >= 0 && separator != modelEnd)
    warn(warning_code::kEndOfTextDiffers,
         config().trainData + " ends its documents with id " + std::to_string(separator) +
             ", but the model's end-of-text (config.json's eos_token_id) is " + std::to_string(modelEnd) +
             ": the auxiliary loss, the scale trackers and the end-of-text treatment leave out id " +
             std::to_string(modelEnd) + ", not the data's separators");
}

nlohmann::json Trainer::Impl::dataIdentity() const {
  nlohmann::json files = nlohmann::json::object();
  auto add = [&files](const TokenFile& file) {
    nlohmann::json entry{{"tokens", file.size()}};
    if (!file.meta().tokenizerFingerprint.empty())
      entry["tokenizer_fingerprint"] = file.meta().tokenizerFingerprint;
    files[file.path()] = entry;
  };
  add(sampler->file());
  for (const TokenFile& file : evalFiles) add(file);
  return files;
}

// A resumed run reads its data files again (made again since, perhaps: the batches after the checkpoint
// then come from other text) and ships the tokenizer kept from the model it started from, which may have
// changed in place.
void Trainer::Impl::warnOfChangedInputs(const TrainingState& state, const nlohmann::json& edited) {
  warnOfOtherTokenizers();
  if (state.data.is_object()) {
    const nlohmann::json now = dataIdentity();
    for (const auto& [path, then] : state.data.items())
      if (now.contains(path) && now[path] != then)
        warn("data_changed", path + " is not the file the checkpoint of step " +
                                 std::to_string(state.stepsDone) + " read (" + then.dump() + " then, " +
                                 now[path].dump() +
                                 " now: made again since?): the run goes on over it as it is now");
  }
  // Records cut from the log, or the log deleted, since the checkpoint: its history misses them for good.
  if (metrics && metrics->bytesFound() < state.metricsBytes)
    warn(warning_code::kMetricsLost,
         run::metricsPath(owner.m_dir) + " holds " + formatBytes(metrics->bytesFound()) + ", but held " +
             formatBytes(state.metricsBytes) + " when the checkpoint of step " +
             std::to_string(state.stepsDone) +
             " was written: records were cut or deleted since, and the run's history (plots, comparisons) "
             "misses them; the run goes on");
  if (!edited.empty()) {
    std::string names;
    for (const auto& [name, change] : edited.items())
      names += (names.empty() ? "" : ", ") + name + " " + change["from"].dump() + " → " + change["to"].dump();
    warn("config_edited",
         "config.json changed since the checkpoint it resumes from, and is used as it is now: " + names);
  }
  const std::string sourceChange = run::sourceModelChange(owner.m_dir);
  if (!sourceChange.empty())
    warn("source_changed",
         "the model this run started from is not what it was: " + sourceChange +
             " (the run goes on from its checkpoint; its final/ ships the tokenizer kept in " +
             run::sourceModelPath(owner.m_dir) + ")");
}

ModelShape Trainer::Impl::shapeToPretrain(const std::string& folder) {
  const std::string path = folder + "/config.json";
  const ModelConfig config = loadConfigFile(path);
  const NormKind own = familyNamed(config.shape.family).norm;
  const std::vector<SiteId> sites = config.norms.sites();
  if (config.folded ||
      std::any_of(sites.begin(), sites.end(), [&](SiteId s) { return config.norms.at(s).kind != own; }))
    throw FileError(path, "its norms are " + normSummary(config) +
                              ", but pretrain trains a model from scratch with its family's own; start "
                              "from a config with those (init), or fine-tune this model (finetune)");
  return config.shape;
}

}  // namespace nf
