// Tracked analyses (RunConfig::tracking, analysis/tracked_analyses.h): worker 0 measures them on a copy
// of its model between two steps — every N steps, at each removal event, at the first and the last step, and
// at the step a resume or rollback goes on from —
// and writes each measurement as one "track" record. They run on the training thread: on the CPU training
// already uses every core, so a second thread would only share them, and the record order stays the step
// order.
#include "analysis/tracked_analyses.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "text/tokenizer.h"
#include "train/trainer_state.h"

namespace nf {

using json = nlohmann::json;

void Trainer::Impl::setUpTracking() {
  const TrackingSettings& t = config().tracking;
  tracking.reset();
  if (t.analyses.empty() || !isMain()) return;
  const RunConfig& c = config();
  const std::string& file = trackingDataFile(c);
  auto data = std::make_unique<TrackingData>();
  data->sequences = readSequences(file, t.sequences, std::min<int64_t>(t.length, model->config().nPositions),
                                  -1, model->config().vocabSize);
  if (needsIoiPrompts(t.analyses)) {
    std::string folder = run::tokenizerFolder(owner.m_dir);
    if (folder.empty()) folder = run::tokenizerFolder(c.model);
    if (folder.empty())
      throw std::invalid_argument(
          "the tracked IOI analyses make their prompts with the model's tokenizer: " + c.model + " has none");
    IoiOptions options;
    options.count = 32;
    data->prompts = std::make_shared<const IoiPromptSet>(makeIoiPromptSet(*loadTokenizer(folder), options));
  }
  tracking = std::move(data);
}

bool Trainer::Impl::trackingDue(int64_t step, bool eventsFiredOrLast) const {
  if (!tracking || step == lastTracked) return false;
  // Nothing measured since this start, resume or rollback: readers drop the measurements at and after the
  // step it went on from (run/metrics_log.h), so that step is measured again, on the cadence or not.
  return eventsFiredOrLast || lastTracked < 0 ||
         step % config().tracking.interval(config().optimizer.maxSteps) == 0;
}

void Trainer::Impl::track(int64_t step, bool atEvent) {
  lastTracked = step;
  const SnapshotPtr snapshot = ModelSnapshot::copyOf(*model, step, owner.m_dir);
  json r{{record::kType, record::kTrack}, {"step", step}, {"event", atEvent}};
  // What each analysis measures on, so that runs compared say when their curves are of other data.
  const TokenSequences& tokens = tracking->sequences;
  const std::string sequences = trackingDataFile(config()) + ": " + std::to_string(tokens.count) +
                                " sequences of " + std::to_string(tokens.length) + " tokens";
  for (const std::string& name : config().tracking.analyses)
    r["data"][name] = needsIoiPrompts({name}) ? std::to_string(tracking->prompts->prompts.size()) +
                                                    " IOI prompts made with the model's tokenizer"
                                              : sequences;
  try {
    for (const auto& [name, v] : measureTracked(config().tracking.analyses, *snapshot, *tracking)) {
      r["values"][name] = v.value;
      if (!v.perLayer.empty()) r["per_layer"][name] = v.perLayer;
      r["seconds"][name] = v.seconds;
    }
  } catch (const std::exception& e) {  // the run goes on: a curve with a gap says less than a stopped run
    warn(warning_code::kTrackingFailed,
         "the tracked analyses at step " + std::to_string(step) + " could not be measured: " + e.what());
    return;
  }
  record(std::move(r));
}

}  // namespace nf
