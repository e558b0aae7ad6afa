// The training loop for all three modes (pretrain, finetune, remove) with the LayerNorm-removal protocol
// (PROTOCOL §2–4): per-site EMA of the LN scale, FakeLN events on a schedule, the auxiliary loss, live
// schedule edits from other threads, metrics to metrics.jsonl and to in-process listeners, atomic
// checkpoints and bit-exact resume on CPU.
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "analysis/snapshot.h"
#include "train/settings.h"
#include "util/progress.h"

namespace nf {

class GPT2Impl;

// Metric records (one JSON object per string, as in metrics.jsonl) for a listener on another thread.
// The trainer only appends under a short lock; the listener drains whenever it likes.
class MetricsQueue {
 public:
  void push(std::string record);
  std::vector<std::string> drain();

 private:
  std::mutex m_mutex;
  std::deque<std::string> m_records;
};

struct EditResult {
  bool accepted = false;
  std::string reason;   // why it was refused
  int64_t eventId = 0;  // the event's id (new for addEvent)
};

class Trainer {
 public:
  // A new run in runDir (created; it must not hold a run already): writes config.json and schedule.json.
  static std::unique_ptr<Trainer> start(const std::string& runDir, const RunConfig& config);
  // The run in runDir, continued from its newest checkpoint.
  static std::unique_ptr<Trainer> resume(const std::string& runDir);
  ~Trainer();

  // Trains until the last step (then saves final/ and returns true) or until requestStop() (then writes
  // a checkpoint and returns false). progress: steps done of max steps, detail = loss and next event.
  bool run(const ProgressFn& progress = {});
  void requestStop();  // thread-safe; the step in progress completes first

  // Live schedule edits, thread-safe. Refused with a reason when a step they touch has started (or an
  // event is already applied), the id is unknown, the schedule would not validate, or schedule.json cannot
  // be written. A new event never gets an id used before in this process.
  EditResult addEvent(ScheduleEvent event);
  EditResult moveEvent(int64_t id, int64_t step);
  // Several moves as one edit: all are accepted or none (one schedule write, an "edit" record per event).
  EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep);
  EditResult deleteEvent(int64_t id);
  Schedule schedule() const;

  int64_t stepsDone() const { return m_stepsDone.load(); }
  const RunConfig& config() const { return m_config; }
  const std::string& runDir() const { return m_dir; }
  GPT2Impl& model();
  // A copy of the model between two optimizer steps, labelled with the steps done. Thread-safe: waits for
  // the step in progress to finish and holds training back only while copying.
  SnapshotPtr snapshot();
  std::shared_ptr<MetricsQueue> subscribe();

 private:
  struct Impl;
  explicit Trainer(std::string runDir);
  std::string m_dir;
  RunConfig m_config;
  std::atomic<int64_t> m_stepsDone{0};
  std::atomic<bool> m_stopRequested{false};
  std::unique_ptr<Impl> m_impl;
};

// The learning rate at optimizer step `step` (0-based): linear warmup over warmupSteps to lr, then
// cosine decay to minLr at maxSteps.
double learningRate(const OptimizerSettings& settings, int64_t step);

}  // namespace nf
