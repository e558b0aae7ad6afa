// Trainer::Impl: the state of a run in training, grouped by what guards it, and the trainer's work, one
// room per concept. Engine-internal (torch): included only by the trainer's own files, which define the
// functions declared here:
//   trainer.cpp        start, resume and the training loop
//   training_step.cpp  one optimizer step's passes: micro-batches, aux loss, gradient averaging, clipping,
//                      the one host copy (→ StepResult), and its "step" record
//   run_controls.cpp   pause / continue / checkpoint / stop requests and the snapshot gate
//   live_schedule.cpp  schedule edits and their records, the events due at a step, sharing with workers
//   periodic_eval.cpp  evaluations, sharded over the workers
//   input_checks.cpp   data of another tokenizer, a source model changed: warned of at a start or resume;
//                      a model to pretrain whose config names other norms than its family's: refused
//   rollback.cpp       divergence: the sane checkpoint, `diverged`, `rollBackTo`
//   checkpointing.cpp  writing the run's checkpoints (a failed one is a warning until one is required)
//   autopilot.cpp      the autopilot steering the live schedule between steps
//   tracking.cpp       the tracked analyses, measured between steps
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/tracked_analyses.h"
#include "data/batches.h"
#include "distributed/worker_group.h"
#include "eval/evaluate.h"
#include "model/causal_lm.h"
#include "run/metrics_log.h"
#include "run/run_lock.h"
#include "schedule/autopilot.h"
#include "train/divergence.h"
#include "train/optimizer.h"
#include "train/removal_tracker.h"
#include "train/trainer.h"

namespace nf {

struct TrainingState;  // train/checkpoint.h

struct Trainer::Impl {
  explicit Impl(Trainer& owner) : owner(owner) {}
  Trainer& owner;

  // --- the training thread's own (set up by start/resume, then touched by run() alone) -----------------
  torch::Device device{torch::kCPU};
  CausalLM model{nullptr};  // its weights and norm state change only under modelMutex
  std::unique_ptr<FusedAdamW> optimizer;
  std::vector<torch::Tensor> parameters;
  std::unique_ptr<BatchSampler> sampler;
  std::unique_ptr<BatchPrefetcher> prefetcher;  // owns the sampler while run() trains
  std::vector<TokenFile> evalFiles;
  int64_t lastEvaluated = -1;  // the step evaluateAll last measured (the finish does not measure it twice)
  std::unique_ptr<RemovalTracker> tracker;
  std::unique_ptr<RunLock> runLock;        // worker 0's: the run's one writer, for the trainer's life
  std::unique_ptr<MetricsWriter> metrics;  // worker 0's only; thread-safe
  bool observing = false;                  // the tracker is the model's norm observer (remove mode, in run())
  // A multi-worker run: this worker and the group of all of them (null in one process).
  WorkerEnvironment worker;
  std::unique_ptr<WorkerGroup> group;

  // --- the schedule, under scheduleMutex (edits come from other threads) --------------------------------
  // Events at steps before schedule->lockedBefore() have been applied (or were never going to be).
  mutable std::mutex scheduleMutex;
  std::unique_ptr<EditableSchedule> schedule;
  std::vector<std::pair<int64_t, int64_t>> applied;  // (event id, step)
  nlohmann::json edits = nlohmann::json::array();
  // Worker 0 counts its accepted edits (scheduleVersion); sharedVersion is the count whose schedule all
  // workers hold. The training thread alone reads sharedVersion and eventsFiredThrough.
  int64_t scheduleVersion = 0, sharedVersion = 0;
  int64_t eventsFiredThrough = -1;  // the last step whose events have fired

  // --- the autopilot (schedule/autopilot.h; null when off), worker 0's: its measures are the training
  // thread's, its pinned events (state().pinned) and the reasons of the events it fires are under
  // scheduleMutex.
  std::unique_ptr<Autopilot> autopilot;  // every removal has one; it steers while autopilotOn
  std::atomic<bool> autopilotOn{false};
  std::atomic<int> autopilotSwitch{-1};  // asked from another thread: 1 on, 0 off, −1 nothing
  std::mutex switchMutex;                // orders a switch asked for with the end of run()'s steps (endSteps)
  bool stepsOver = false;  // under switchMutex: run()'s steps are over, a switch waits for its next run()
  std::map<int64_t, std::string> autopilotReasons;  // event id → why the autopilot fires it now

  // --- the snapshot gate: a requester raises snapshotsWanted and takes modelMutex between two steps; the
  // training loop waits for snapshotTaken before its next step, so a snapshot never waits more than one.
  std::mutex modelMutex;
  std::condition_variable snapshotTaken;
  std::atomic<int> snapshotsWanted{0};

  // --- requests: pause, continue, checkpoint and stop (Trainer's atomics) wake a paused run through this.
  std::mutex controlMutex;
  std::condition_variable controlChanged;
  // The run decided to end before this step (budget or autopilot) with no pause asked: one asked for now is
  // refused, not answered and dropped. Set with the pause read under controlMutex.
  std::atomic<bool> finishing{false};

  // --- divergence (train/divergence.h), the training thread's: the guard over this stretch of the run;
  // the checkpoints a later step's loss vouched for (rollbacks go to the newest, retention keeps it); the
  // rollbacks made; the learning rate's factor after them; why worker 0's last evaluation diverged (empty:
  // it did not).
  std::unique_ptr<DivergenceGuard> guard;
  SaneCheckpoints checkpoints;
  // The step and id of the newest checkpoint written or resumed from: final/ carries the id when it holds
  // the same weights, so a resume that trains on can tell it may remove it (checkpointing.cpp).
  std::pair<int64_t, std::string> newestCheckpoint{-1, ""};
  int rollbacks = 0;
  std::atomic<double> lrScale{1};
  std::string divergedEvaluation;

  // --- tracked analyses (analysis/tracked_analyses.h), the training thread's: what they read (null: none
  // tracked, or not worker 0) and the step measured last.
  std::unique_ptr<TrackingData> tracking;
  uint64_t dataFilesPrint = 0;  // what the run's data files hold (sampledFilesFingerprint), with workers
  int64_t lastTracked = -1;

  const RunConfig& config() const { return owner.m_config; }
  // config() with its learning rates lowered by the rollbacks so far: what config.json and checkpoints say.
  RunConfig settingsNow() const;
  bool removing() const { return config().mode == TrainingMode::Remove; }
  bool isMain() const { return worker.isMain(); }
  void record(nlohmann::json r) {
    if (metrics) metrics->write(std::move(r));  // worker 0's only
  }
  // A warning for whoever watches the run: a "warning" record (the CLI prints it, the GUI shows it).
  void warn(const std::string& code, const std::string& message);
  // The data position after the last batch trained on (the prefetcher holds the sampler while training).
  const Random::State& samplerState() const { return prefetcher ? prefetcher->state() : sampler->state(); }
  // A sum over the workers for the tracker and the aux loss (empty in one process).
  std::function<void(torch::Tensor&)> sumOverWorkers(const std::string& during);

  // trainer.cpp
  void joinWorkers(const std::optional<WorkerEnvironment>& workers, const std::string& configDevice);
  // Runs `work`; an error of this worker's own (not another's loss) is left for the others to name.
  template <class Work>
  void tellingOthersOfFailure(Work&& work) {
    try {
      work();
    } catch (const WorkerLost&) {
      throw;
    } catch (const std::exception& e) {
      if (group) group->tellOthersOfFailure(e.what());
      throw;
    }
  }
  void setUp(CausalLM m);
  // Which training windows start at a document, and the marker they start with.
  DocumentWindows documentWindows(const TokenFile& train) const;

  // training_step.cpp
  struct Losses {
    double ce = 0, aux = 0;
  };
  struct StepResult {
    Losses losses;
    double gradNorm = 0;
    std::vector<double> workerSeconds;  // per worker: its forward and backward passes, before the exchange
  };
  void measureScales();
  StepResult forwardBackwardClip(int64_t step);
  torch::Tensor clipGradients();
  double clippingScale(double gradNorm) const;
  void dropGradients();
  void logStep(int64_t done, const StepResult& result, double lr, double tokensPerSecond);

  // run_controls.cpp
  struct Controls {
    bool stop = false, pause = false, checkpoint = false, finish = false;
  };
  enum class BeforeStep { Train, Stop, Finish };
  std::unique_lock<std::mutex> lockBetweenSteps();
  Controls controls(int64_t step);
  BeforeStep holdBeforeStep(int64_t step, int64_t& lastCheckpoint);
  void leaveLoop();  // the steps are over (stopped, finished or failed): the norms are no longer observed
  void controlRequested();

  // live_schedule.cpp
  void setSchedule(Schedule s, Treatments used = {});
  void requireScheduleFits(const Schedule& schedule) const;  // a new run's, against its starting model
  // A resumed run's: the override or schedule.json, checked against the checkpoint's applied events.
  // For the resume record: {"schedule": …} when resume was given one, {"schedule.json": …} when the run's
  // own differs from its checkpoint's (edited live, by the autopilot or by hand since): what it follows now.
  nlohmann::json resumeSchedule(const ResumeOverrides& overrides, const TrainingState& state);
  std::string notARemoval() const;  // why a run of another mode takes no schedule events
  void warnOfWhatScheduleLeaves();  // sites a removal's schedule never makes fake or treatments it leaves on
  void shareSchedule(int64_t step);
  int applyEvents(int64_t step);  // the number of events applied (the ramps advance after, in the loop)
  std::string nextEventText() const;
  EditResult edit(const std::function<EditResult(EditableSchedule&)>& apply,
                  const ClientRequest& request = {});
  // The schedule's last changes as "edit" records (caller holds scheduleMutex); `by` and `reason` say who
  // made them and why when it was not a person; `request` the client's request that asked for them.
  void recordChanges(const std::string& by = std::string(), const std::string& reason = std::string(),
                     const nlohmann::json& request = nullptr);
  // A resume's edit log: the checkpoint's, and the edits made after it (a run killed before its next one).
  void takeBackEdits(const TrainingState& state, bool scheduleReplaced);

  // autopilot.cpp
  void steerByAutopilot(int64_t step);      // before applyEvents(step): the pending events moved as decided
  void applyAutopilotSwitch(int64_t step);  // one asked for from another thread, made and recorded
  bool takeSwitch(bool on, bool refusedOnceOver);  // a switch asked for; false once the steps are over, if so
  void beginSteps();                               // run() trains: a switch is made before its next step
  void endSteps(int64_t step);  // its steps are over: the switch asked for until now is made
  void restoreAutopilot(const nlohmann::json& state, const std::string& source);  // from a checkpoint
  // Worker 0's: why the run may end before `step` though steps are left (the autopilot's plateau), or "".
  std::string trainedOut(int64_t step) const;

  // tracking.cpp
  void setUpTracking();  // after setUp: the tracking data read and the IOI prompts made, on worker 0
  bool trackingDue(int64_t step, bool eventsFiredOrLast) const;
  void track(int64_t step, bool atEvent);

  // input_checks.cpp
  void warnOfOtherTokenizers();  // data files likely made by another tokenizer, said at a start
  // At a resume from `state`: the same, data files made again since the checkpoint, a source model changed,
  // and config.json's settings `edited` by hand since (settingsChanged's).
  void warnOfChangedInputs(const TrainingState& state, const nlohmann::json& edited);
  nlohmann::json dataIdentity() const;  // what a checkpoint records of the token files (TrainingState::data)
  // The shape a pretraining run builds afresh from `folder`'s config.json; throws FileError naming it when
  // its sites are not the family's own norms (they would be trained as the family's, unsaid).
  static ModelShape shapeToPretrain(const std::string& folder);

  // periodic_eval.cpp
  void evaluateAll(int64_t step);
  TokenValues gatherTokenValues(const TokenValues& own, const std::string& during);

  // rollback.cpp
  bool evaluateAndCheck(int64_t step);
  void diverged(int64_t step, const std::string& why);
  void rollBackTo(int64_t target, int64_t fromStep);
  nlohmann::json divergenceMemory() const;  // TrainingState::divergence
  void restoreDivergence(const nlohmann::json& memory, const std::string& source, int64_t stepsDone);

  // checkpointing.cpp
  bool checkpoint(bool required = false);
  bool writeCheckpointFiles(bool required);  // worker 0's part of checkpoint()
  void checkpointAtEnd(bool finished);  // run()'s last, required; a finished run's model is saved if it fails
  void saveFinal();
};

}  // namespace nf
