// The trainer of all three modes (pretrain, finetune, remove): the training loop with the LayerNorm-removal
// protocol (PROTOCOL §2–4), live schedule edits from other threads, metrics to metrics.jsonl and to
// in-process listeners, checkpoints and bit-exact resume on CPU. Its parts have rooms of their own: the
// site tracking (removal_tracker.h), the optimizer (optimizer.h), checkpoints (checkpoint.h), the edit rules
// (schedule/editable_schedule.h), the metrics log (run/metrics_log.h). Plain C++ header (no torch).
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "distributed/worker_environment.h"
#include "run/metrics_log.h"
#include "run/snapshot.h"
#include "schedule/editable_schedule.h"
#include "train/settings.h"
#include "util/progress.h"

namespace nf {

class CausalLMImpl;

// A run that diverged and stopped (RunConfig::divergence, train/divergence.h): what() says at which step,
// why, and which checkpoint — the last sane one, newest again — to resume with a lower learning rate.
class Diverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A multi-worker run (`workers` given: every worker calls start() or resume() with the same arguments)
// is the same run as one process would make with the same settings: each worker trains on its share of
// every micro-batch, and gradients, σ statistics, losses and evaluations are summed over the workers.
// Worker 0 alone writes the run directory and takes schedule edits; the others read config, model, data
// and checkpoints at the same paths (a shared file system across machines). A worker that dies or hangs
// makes the others throw WorkerLost (distributed/worker_group.h), naming it; the last checkpoint is intact.
class Trainer {
 public:
  // A new run in runDir (created; it must not hold a run already): writes config.json and schedule.json.
  static std::unique_ptr<Trainer> start(const std::string& runDir, const RunConfig& config,
                                        const std::optional<WorkerEnvironment>& workers = std::nullopt);
  // The run in runDir, continued from its newest checkpoint, with any number of workers.
  static std::unique_ptr<Trainer> resume(const std::string& runDir,
                                         const std::optional<WorkerEnvironment>& workers = std::nullopt,
                                         const ResumeOverrides& overrides = {});
  ~Trainer();

  // Trains until the last step (then saves final/ and returns true) or until requestStop() (then writes
  // a checkpoint and returns false). progress: steps done of max steps, detail = loss and next event.
  bool run(const ProgressFn& progress = {});
  void requestStop();  // thread-safe; the step in progress completes first
  // The same, async-signal-safe (a signal handler may not lock or notify): noticed within a second.
  void requestStopFromSignal() { m_stopRequested = true; }
  bool stopRequested() const { return m_stopRequested.load(); }
  // Pause: run() holds between two steps — nothing trains; edits, snapshots, a checkpoint and stop still
  // work — until requestContinue() or requestStop(). Thread-safe; a "pause" and a "continue" record mark
  // it in metrics.jsonl. In a multi-worker run only worker 0 takes these, and all workers hold together.
  // A pause asked for during the last step (of the budget, or before the autopilot's end) holds the run
  // before it writes its end; once it has begun to, there is nothing left to hold: false, nothing changes.
  bool requestPause();
  void requestContinue();
  bool pauseRequested() const { return m_pauseRequested.load(); }
  bool paused() const { return m_paused.load(); }  // run() is holding now
  // A checkpoint after the step in progress, or at once while paused (none when the newest checkpoint is
  // of this step already). Thread-safe.
  void requestCheckpoint();

  // The autopilot (schedule/autopilot.h; remove mode): on, it times the pending removals from the next
  // step; off, they fire at the steps the schedule shows then. Thread-safe; takes effect before the next
  // step, recorded ("autopilot" record) and kept in config.json for a resume. False in other modes.
  bool setAutopilot(bool on);
  // The same, refused (false) once run()'s steps are over — while it writes the run's end, or after it
  // returned — where a switch would wait for a next run(): a served run's process ends with its run().
  bool setAutopilotBeforeTheEnd(bool on);
  bool autopilotOn() const;

  // Live schedule edits, thread-safe. Refused with a reason when a step they touch has started (or an
  // event is already applied), the id is unknown, the schedule would not validate, or schedule.json cannot
  // be written, and on every worker but worker 0. A new event never gets an id used before in this process.
  // `request`: the client's id and text of an edit it sends again when the answer is lost (the steering
  // endpoint's); an accepted one is kept in the edit's record, so the run answers it after a restart too.
  struct ClientRequest {
    std::string id, text;
  };
  EditResult addEvent(ScheduleEvent event, const ClientRequest& request = {});
  EditResult moveEvent(int64_t id, int64_t step);
  // Several moves as one edit: all are accepted or none (one schedule write, one "edit" record listing the
  // moves).
  EditResult moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep,
                        const ClientRequest& request = {});
  EditResult deleteEvent(int64_t id, const ClientRequest& request = {});
  // The client requests of the accepted edits this run recorded, oldest first, with their answers: those
  // before a resume too (they are in its checkpoint and metrics.jsonl, as the edits themselves are).
  std::vector<std::pair<ClientRequest, EditResult>> answeredRequests() const;
  // What addEvent(event) would answer now, changing nothing (schedule.json is not written). Thread-safe.
  EditResult checkEvent(const ScheduleEvent& event) const;
  Schedule schedule() const;
  int layers() const;  // the model's depth, which the schedule's sites are checked against

  int64_t stepsDone() const { return m_stepsDone.load(); }
  // The settings the run started with, unchanged while it trains (safe to read from any thread).
  const RunConfig& config() const { return m_config; }
  // config() as config.json has it now: the learning rates lowered by the rollbacks so far, and the
  // autopilot's switch as applied.
  RunConfig settingsNow() const;
  const std::string& runDir() const { return m_dir; }
  int worldSize() const;      // 1 in a one-process run
  bool isMainWorker() const;  // worker 0, the one that writes the run directory (true in one process)
  CausalLMImpl& model();
  // A copy of the model between two optimizer steps, labelled with the steps done. Thread-safe: waits for
  // the step in progress to finish and holds training back only while copying.
  SnapshotPtr snapshot();
  // Worker 0 only: the others write no metrics. With `replay`, the records this trainer wrote before
  // (its start or resume, and their warnings) come first.
  std::shared_ptr<MetricsQueue> subscribe(bool replay = false);

 private:
  struct Impl;
  explicit Trainer(std::string runDir);
  bool runSteps(const ProgressFn& progress);
  std::string m_dir;
  RunConfig m_config;
  std::atomic<int64_t> m_stepsDone{0};
  std::atomic<bool> m_stopRequested{false};
  std::atomic<bool> m_pauseRequested{false}, m_paused{false}, m_checkpointRequested{false};
  std::unique_ptr<Impl> m_impl;
};

}  // namespace nf
