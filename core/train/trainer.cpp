// The trainer: start, resume and the training loop. The loop's parts live in rooms of their own, listed
// with the state they share in trainer_state.h.
#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "distributed/worker_sync.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "run/source_model.h"
#include "train/checkpoint.h"
#include "train/cross_entropy.h"
#include "train/trainer_state.h"
#include "util/scope_exit.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {

void Trainer::Impl::joinWorkers(const std::optional<WorkerEnvironment>& workers,
                                const std::string& configDevice) {
  if (!workers) return;
  worker = *workers;
  device = torch::Device(workerDevice(configDevice, worker));
  group = std::make_unique<WorkerGroup>(worker, device);
}

std::function<void(torch::Tensor&)> Trainer::Impl::sumOverWorkers(const std::string& during) {
  if (!group) return {};
  return [this, during](torch::Tensor& t) { group->sum(t, during); };
}

void Trainer::Impl::setUp(CausalLM m) {
  model = std::move(m);
  const RunConfig& c = config();
  model->setCudaBf16Autocast(c.optimizer.bf16);
  model->setActivationCheckpointing(c.optimizer.activationCheckpointing);
  optimizer = makeOptimizer(*model, c.optimizer);
  parameters = model->parameters();
  const TokenFile train = TokenFile::open(c.trainData);
  sampler = std::make_unique<BatchSampler>(
      train, c.optimizer.microBatch, c.optimizer.context, c.optimizer.seed, model->config().vocabSize,
      batchShare(c.optimizer.microBatch, worker), documentWindows(train));
  evalFiles.clear();
  for (const auto& path : c.evalData) evalFiles.push_back(TokenFile::open(path));
  std::vector<std::string> read{c.trainData};
  read.insert(read.end(), c.evalData.begin(), c.evalData.end());
  dataFilesPrint = group ? sampledFilesFingerprint(read) : 0;
  tracker = std::make_unique<RemovalTracker>(*model, c.removal);
  guard = std::make_unique<DivergenceGuard>(c.divergence.factor);
  setUpTracking();
}

DocumentWindows Trainer::Impl::documentWindows(const TokenFile& train) const {
  return {documentMarker(train, model->config().eotTokenId), config().optimizer.documentWindows};
}

Trainer::Trainer(std::string runDir) : m_dir(std::move(runDir)), m_impl(std::make_unique<Impl>(*this)) {}
Trainer::~Trainer() = default;

CausalLMImpl& Trainer::model() { return *m_impl->model; }
std::shared_ptr<MetricsQueue> Trainer::subscribe(bool replay) { return m_impl->metrics->subscribe(replay); }
int Trainer::worldSize() const { return m_impl->group ? m_impl->group->size() : 1; }
bool Trainer::isMainWorker() const { return m_impl->isMain(); }

std::unique_ptr<Trainer> Trainer::start(const std::string& runDir, const RunConfig& config,
                                        const std::optional<WorkerEnvironment>& workers) {
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  d.device = torch::Device(config.device);
  d.joinWorkers(workers, config.device);
  d.tellingOthersOfFailure([&] {
    // Worker 0 checks the folder and the settings; every worker then trains with worker 0's settings.
    const std::string settings = onWorker0(d.group.get(), "the start of the run", [&] {
      run::requireStartable(runDir);
      validate(config, runDir);
      if (d.device.is_cuda())
        cudaCrossEntropy();  // an unknown NF_CUDA_CROSS_ENTROPY, before anything is written
      if (workers) batchShare(config.optimizer.microBatch, *workers);  // a named error when it does not split
      return toJson(config).dump();
    });
    t->m_config = d.isMain() ? config : runConfigFromJson(json::parse(settings), "worker 0's settings");
    const RunConfig& c = t->m_config;
    if (c.mode == TrainingMode::Pretrain) {
      CausalLM fresh = makeModel(Impl::shapeToPretrain(c.model));
      fresh->initWeights(c.optimizer.seed);
      fresh->to(d.device);
      d.setUp(fresh);
      broadcastWeights(d.group.get(), d.parameters);
    } else {
      d.setUp(loadModel(c.model, d.device));
    }
    requireWorkersAgree(d.group.get(), *d.model, d.samplerState(), d.dataFilesPrint, 0, /*atStart=*/true);
    Schedule schedule;
    if (c.mode == TrainingMode::Remove) {
      schedule = c.schedule;
      d.requireScheduleFits(schedule);
    }
    d.setSchedule(schedule, c.removal.treatments());
    d.restoreAutopilot(nullptr, runDir);
    t->m_config.schedule = d.schedule->schedule();
    onWorker0(d.group.get(), "writing the run directory", [&] {
      fs::create_directories(run::checkpointsPath(runDir));
      d.runLock = std::make_unique<RunLock>(runDir);
      run::requireStartable(runDir);  // another trainer may have trained it since the check above
      clearDeadTrainersLeftovers(runDir);
      writeRunConfig(runDir, t->m_config);
      run::keepSourceModel(runDir, c.model, c.mode != TrainingMode::Pretrain);
      d.schedule->persist(d.schedule->schedule());
      d.metrics = std::make_unique<MetricsWriter>(runDir, 0);
      json startRecord = metricsStartRecord();
      startRecord.update({{"mode", trainingModeName(c.mode)}, {"max_steps", c.optimizer.maxSteps}});
      if (d.group) startRecord["world_size"] = d.group->size();
      d.record(startRecord);
      if (c.mode == TrainingMode::Remove) d.warnOfWhatScheduleLeaves();
      d.warnOfOtherTokenizers();
      return std::string();
    });
    if (c.mode == TrainingMode::Remove) d.measureScales();
    d.evaluateAll(0);
  });
  return t;
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& runDir,
                                         const std::optional<WorkerEnvironment>& workers,
                                         const ResumeOverrides& overrides) {
  requireRunFolder(runDir);  // a start killed before its config.json, or a mistyped folder: said
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  t->m_config = readRunConfig(runDir);
  const json asFound = toJson(t->m_config);  // config.json before this resume's own overrides
  json changed = applyResumeOverrides(t->m_config, overrides);  // for the resume record
  const bool settingsGiven = !changed.empty();
  d.device = torch::Device(t->m_config.device);
  d.joinWorkers(workers, t->m_config.device);
  d.tellingOthersOfFailure([&] {
    // Every worker resumes from the checkpoint worker 0 found newest, with worker 0's settings (as a start).
    const json found = json::parse(onWorker0(d.group.get(), "finding the checkpoint to resume from", [&] {
      d.runLock = std::make_unique<RunLock>(runDir);  // before anything is written
      clearDeadTrainersLeftovers(runDir);  // a checkpoint moved aside by a writer that died is restored first
      const std::string newest = run::latestCheckpoint(runDir);
      if (newest.empty())
        throw FileError(
            run::checkpointsPath(runDir),
            "holds no complete checkpoint to resume from (the run stopped before its first one): start it "
            "again, in place, with the command that started it");
      if (workers) batchShare(t->m_config.optimizer.microBatch, *workers);
      return json{{"checkpoint", newest}, {"settings", toJson(t->m_config)}}.dump();
    }));
    const std::string checkpoint = found["checkpoint"];
    if (!d.isMain()) t->m_config = runConfigFromJson(found["settings"], "worker 0's settings");
    const TrainingState state = readTrainingState(checkpoint);
    requireResumable(runDir, t->m_config, overrides, checkpoint, state);
    d.setUp(loadModel(checkpoint, d.device));
    loadOptimizerState(*d.optimizer, checkpoint, state);
    t->m_stepsDone = state.stepsDone;
    d.eventsFiredThrough = state.stepsDone - 1;
    if (d.group) d.group->setStepsDone(state.stepsDone);
    d.sampler->setState(state.samplerState);
    requireWorkersAgree(d.group.get(), *d.model, d.samplerState(), d.dataFilesPrint, state.stepsDone, true);
    try {
      d.tracker->restore(state.trackers);
    } catch (const std::exception& e) {
      throw FileError(run::checkpointStatePath(checkpoint),
                      std::string("malformed checkpoint state: ") + e.what());
    }
    d.applied = state.appliedEvents;
    d.restoreAutopilot(state.autopilot, run::checkpointStatePath(checkpoint));
    d.takeBackEdits(state, overrides.schedule.has_value());
    if (d.autopilot && (overrides.maxSteps || overrides.autopilotPatience)) {  // to train on: a new plateau
      d.autopilot->restartPlateau();
      changed["plateau"] = "counted afresh from step " + std::to_string(state.stepsDone);
    }
    changed.update(d.resumeSchedule(overrides, state));
    if (d.group && d.isMain()) ++d.scheduleVersion;  // the others take worker 0's before the first step
    d.restoreDivergence(state.divergence, run::checkpointStatePath(checkpoint), state.stepsDone);
    d.newestCheckpoint = {state.stepsDone, state.id};
    // config.json edited by hand since the checkpoint (a micro-batch, the training data): used, and said.
    const json edited = state.settings.is_null() ? json::object() : settingsChanged(state.settings, asFound);
    onWorker0(d.group.get(), "opening metrics.jsonl", [&] {
      if (state.stepsDone < t->m_config.optimizer.maxSteps)
        retireFinalModel(runDir, state);  // before anything is written
      if (settingsGiven) writeRunConfig(runDir, t->m_config);
      if (overrides.schedule || overrides.maxSteps) d.schedule->persist(d.schedule->schedule());
      // The history stays whole: records after the checkpoint (of steps trained again now) are kept, and
      // readers take this record as the point from which the run went on (run/metrics_log.h).
      d.metrics = std::make_unique<MetricsWriter>(runDir, -1);
      json resumeRecord{
          {record::kType, record::kResume}, {"step", t->m_stepsDone.load()}, {"checkpoint", checkpoint}};
      if (!edited.empty()) changed["config.json"] = edited;
      if (!changed.empty()) resumeRecord["overrides"] = changed;
      if (d.group) resumeRecord["world_size"] = d.group->size();
      d.record(resumeRecord);
      d.warnOfChangedInputs(state, edited);
      return std::string();
    });
  });
  return t;
}

bool Trainer::run(const ProgressFn& progress) {
  // A run ended by an error says why in its log, for whoever follows it (best effort: a full disk's own).
  auto logFailure = [this](const std::string& error) {
    try {
      m_impl->record({{record::kType, record::kStop}, {"step", m_stepsDone.load()}, {"error", error}});
    } catch (const std::exception&) {
    }
  };
  try {
    return runSteps(progress);
  } catch (const WorkerLost& e) {
    const std::string checkpoint = run::latestCheckpoint(m_dir);
    const WorkerLost named(std::string(e.what()) + ". " +
                           (checkpoint.empty() ? "The run had no checkpoint yet: start it again."
                                               : "The last checkpoint, " + checkpoint +
                                                     ", is intact: 'normfree-cli resume " + m_dir +
                                                     "' continues the run, with any number of workers."));
    logFailure(named.what());
    throw named;
  } catch (const std::exception& e) {
    if (m_impl->group) m_impl->group->tellOthersOfFailure(e.what());
    logFailure(e.what());
    throw;
  }
}

bool Trainer::runSteps(const ProgressFn& progress) {
  Impl& d = *m_impl;
  const OptimizerSettings& o = m_config.optimizer;
  d.beginSteps();
  d.observing = d.removing();
  if (d.observing) d.model->setNormObserver(d.tracker.get());
  // Batches are drawn one ahead on another thread. However run() ends, the sampler is handed back in the
  // state after the last batch trained on, the tracker stops observing and a pause ends.
  d.prefetcher = std::make_unique<BatchPrefetcher>(*d.sampler, d.device.is_cuda());
  const ScopeExit cleanUp([&] {
    d.prefetcher.reset();
    d.leaveLoop();
    m_paused = m_pauseRequested = false;
  });
  d.finishing = false;
  const int64_t firstStep = m_stepsDone.load();
  // The step of the newest checkpoint this run has (-1: none yet), so a checkpoint is never written twice.
  int64_t lastCheckpoint =
      run::latestCheckpoint(m_dir) == run::checkpointPath(m_dir, firstStep) ? firstStep : -1;
  // Whether steps were trained since the newest checkpoint (a finished run resumed again has none).
  auto newSteps = [&] { return m_stepsDone.load() != firstStep && lastCheckpoint != m_stepsDone.load(); };
  bool finished = false;
  while (true) {
    const int64_t step = m_stepsDone.load();
    // The budget spent, or the autopilot's plateau after the last removal: the run ends here (after a pause
    // asked for during the last step).
    const Impl::BeforeStep next = d.holdBeforeStep(step, lastCheckpoint);
    if (next == Impl::BeforeStep::Stop) break;
    if (next == Impl::BeforeStep::Finish) {
      // The last evaluation can still show a divergence, and roll back, before the final checkpoint. (Not
      // newSteps(): an autopilot's end at a periodic checkpoint's step had gone unmeasured.)
      const bool trained = step != firstStep;
      if (trained && d.lastEvaluated != step && d.evaluateAndCheck(step)) {
        lastCheckpoint = m_stepsDone.load();  // rolled back to it
        d.finishing = false;                  // it trains again: a pause is held again
        continue;
      }
      if ((trained || d.lastTracked < 0) && d.trackingDue(step, true)) d.track(step, false);
      finished = true;
      break;
    }
    std::unique_lock<std::mutex> modelLock = d.lockBetweenSteps();  // a waiting snapshot goes first
    auto started = std::chrono::steady_clock::now();
    d.tracker->discardCollected();  // nothing left over from a step that failed half-way
    d.dropGradients();
    d.steerByAutopilot(step);
    const bool eventsFired = d.applyEvents(step) > 0;
    if (d.trackingDue(step, eventsFired)) {
      d.track(step, eventsFired);
      started = std::chrono::steady_clock::now();  // the step's pace is the step's (tracking has its own)
    }
    d.tracker->advanceRamps(step);  // after tracking, which measures the model as checkpoint `step` holds it
    const double lr = learningRate(o, step) * d.lrScale;
    setLearningRate(*d.optimizer, lr);
    const Impl::StepResult result = d.forwardBackwardClip(step);
    const Impl::Losses& losses = result.losses;
    // The same losses (summed over workers) on every worker, so all of them see a divergence at once.
    std::optional<std::string> divergence = d.guard->checkStep(losses.ce + losses.aux);
    if (!divergence && !std::isfinite(result.gradNorm))
      divergence = "the gradient norm is " + std::to_string(result.gradNorm);
    if (divergence) {
      d.dropGradients();
      d.diverged(step, *divergence);  // throws, or rolls back to its sane checkpoint
      lastCheckpoint = m_stepsDone.load();
      continue;
    }
    // This step's loss vouches for the weights it started from, and so for a checkpoint of them.
    d.checkpoints.stepPassed(step);
    d.optimizer->scaleGradientsInNextStep(d.clippingScale(result.gradNorm));
    d.optimizer->step();
    d.dropGradients();
    if (d.autopilot) d.autopilot->observe(losses.ce, result.gradNorm);
    const int64_t done = m_stepsDone = step + 1;
    if (d.group) d.group->setStepsDone(done);
    modelLock.unlock();

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double tokensPerSecond = static_cast<double>(o.microBatch * o.accumulation * o.context) / seconds;
    d.logStep(done, result, lr, tokensPerSecond);
    if (m_config.eval.interval > 0 && done % m_config.eval.interval == 0 && done < o.maxSteps &&
        d.evaluateAndCheck(done)) {
      lastCheckpoint = m_stepsDone.load();  // diverged and rolled back to it
      continue;
    }
    if (m_config.checkpointInterval > 0 && done % m_config.checkpointInterval == 0 && done < o.maxSteps) {
      if (d.checkpoint()) lastCheckpoint = done;
    }
    if (progress) {
      char detail[160];
      const std::string next = d.nextEventText();
      std::snprintf(detail, sizeof detail, "loss %.4f  %.0f tok/s%s%s", losses.ce + losses.aux,
                    tokensPerSecond, next.empty() ? "" : "  next: ", next.c_str());
      progress({trainingModeName(m_config.mode), done, o.maxSteps, "steps", done == o.maxSteps, detail});
    }
  }
  d.leaveLoop();
  d.endSteps(m_stepsDone);
  if (newSteps()) d.checkpointAtEnd(finished);  // evaluated above when finished
  if (finished) {
    d.saveFinal();
    json finish{{record::kType, record::kFinish},
                {"step", m_stepsDone.load()},
                {"final", run::finalModelPath(m_dir)},
                {"layernorm_free", d.model->norms().isLayerNormFree()}};
    // Only the plateau ends a run before its budget; nothing trained since it was found, so it still holds.
    if (m_stepsDone < o.maxSteps) finish["reason"] = "autopilot: " + d.trainedOut(m_stepsDone);
    const std::string left = m_config.mode == TrainingMode::Remove ? d.tracker->leftUndone() : "";
    if (!left.empty()) d.warn("norms_left", left);
    d.record(finish);
  } else {
    d.record({{record::kType, record::kStop}, {"step", m_stepsDone.load()}});
  }
  m_stopRequested = false;  // handled: a later run() continues
  return finished;
}

}  // namespace nf
