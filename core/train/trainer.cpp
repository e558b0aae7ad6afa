#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "data/batches.h"
#include "eval/evaluate.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"
#include "text/bpe_tokenizer.h"
#include "train/aux_loss.h"
#include "train/checkpoint.h"
#include "train/optimizer.h"
#include "train/removal_tracker.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {

struct Trainer::Impl {
  explicit Impl(Trainer& owner) : owner(owner) {}

  Trainer& owner;
  torch::Device device{torch::kCPU};
  CausalLM model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<torch::Tensor> parameters;
  std::unique_ptr<BatchSampler> sampler;
  std::unique_ptr<BatchPrefetcher> prefetcher;  // owns the sampler while run() trains
  std::vector<TokenFile> evalFiles;
  std::unique_ptr<RemovalTracker> tracker;
  std::unique_ptr<MetricsWriter> metrics;
  bool observing = false;  // the tracker is the model's norm observer (remove mode, inside run())

  // Schedule state, shared with editing threads. Events at steps before schedule->lockedBefore() have
  // been applied (or were never going to be).
  mutable std::mutex scheduleMutex;
  std::unique_ptr<EditableSchedule> schedule;
  std::vector<std::pair<int64_t, int64_t>> applied;  // (event id, step)
  json edits = json::array();

  // Snapshots: a requester raises snapshotsWanted and takes modelMutex between two steps; the training
  // loop waits for snapshotTaken before its next step, so a snapshot never waits more than one step.
  std::mutex modelMutex;
  std::condition_variable snapshotTaken;
  std::atomic<int> snapshotsWanted{0};

  const RunConfig& config() const { return owner.m_config; }
  bool removing() const { return config().mode == TrainingMode::Remove; }
  void record(json r) { metrics->write(std::move(r)); }

  // --- setting up -------------------------------------------------------------------------------------

  void setUp(CausalLM m) {
    model = std::move(m);
    model->setCudaBf16Autocast(config().optimizer.bf16);
    model->setActivationCheckpointing(config().optimizer.activationCheckpointing);
    optimizer = makeOptimizer(*model, config().optimizer);
    parameters = model->parameters();
    const auto& c = config();
    sampler =
        std::make_unique<BatchSampler>(TokenFile::open(c.trainData), c.optimizer.microBatch,
                                       c.optimizer.context, c.optimizer.seed, model->config().vocabSize);
    evalFiles.clear();
    for (const auto& path : c.evalData) evalFiles.push_back(TokenFile::open(path));
    tracker = std::make_unique<RemovalTracker>(*model, c.removal);
  }

  void setSchedule(Schedule s) {
    schedule =
        std::make_unique<EditableSchedule>(std::move(s), model->config().nLayer, config().optimizer.maxSteps);
    // An edit is accepted only once schedule.json holds it.
    const std::string path = run::schedulePath(owner.m_dir);
    schedule->persist = [path](const Schedule& edited) {
      writeFileAtomic(path, toJson(edited).dump(2) + "\n");
    };
  }

  // Measures every site once before training, so an event at step 0 has a scale to freeze. A separate
  // sampler keeps the training batches identical to a run without this pass.
  void measureScales() {
    const auto& c = config();
    BatchSampler calibration(TokenFile::open(c.trainData), c.optimizer.microBatch, c.optimizer.context,
                             c.optimizer.seed ^ 0x5eed5eedULL, model->config().vocabSize);
    torch::NoGradGuard noGrad;
    model->setNormObserver(tracker.get());
    tracker->setCollecting(true);
    const torch::Tensor inputs = calibration.next().inputs.to(device);
    model->forward(inputs);
    tracker->update(inputs);
    tracker->fold();
    tracker->setCollecting(false);
  }

  // --- one optimizer step ------------------------------------------------------------------------------

  // Waits until no snapshot is wanted and holds the model: weights and norm state change only under it.
  std::unique_lock<std::mutex> lockBetweenSteps() {
    std::unique_lock<std::mutex> lock(modelMutex);
    snapshotTaken.wait(lock, [&] { return snapshotsWanted.load() == 0; });
    return lock;
  }

  // Events of step `step` fire before its first micro-batch (PROTOCOL §4); then the ramps move on.
  void applyEvents(int64_t step) {
    std::vector<ScheduleEvent> due;
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      if (step < schedule->lockedBefore())
        return;  // already applied (run() called again after a failed step)
      for (const auto& e : schedule->schedule().events)
        if (e.step == step) due.push_back(e);
      schedule->lockBefore(step + 1);
      for (const auto& e : due) applied.emplace_back(e.id, e.step);
    }
    for (const auto& e : due)
      record({{"type", "event"},
              {"step", step},
              {"event", toJson(e)},
              {"description", describe(e)},
              {"sites", tracker->apply(e, step)}});
    tracker->advanceRamps(step);
  }

  struct Losses {
    double ce = 0, aux = 0;
  };
  struct StepResult {
    Losses losses;
    double gradNorm = 0;
  };

  // Forward and backward over the step's micro-batches (gradients of CE, + λ·aux when removing), then
  // clipping. The device is never waited for until the end: losses, gradient norm and the σ statistics
  // reach the host in one copy, before the optimizer may update the weights.
  StepResult forwardBackwardClip() {
    const OptimizerSettings& o = config().optimizer;
    const double auxWeight = removing() ? config().removal.auxWeight : 0.0;
    const int64_t vocab = model->config().vocabSize;
    torch::Tensor ceSum = torch::zeros({}, torch::TensorOptions().device(device));
    torch::Tensor auxSum = torch::zeros({}, torch::TensorOptions().device(device));
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      const Batch batch = prefetcher->next();
      // The CPU ids go to forward(), which checks them there; the device copies are for the losses.
      const torch::Tensor inputs = batch.inputs.to(device, /*non_blocking=*/true);
      const torch::Tensor targets = batch.targets.to(device, /*non_blocking=*/true);
      tracker->setCollecting(removing());
      const torch::Tensor logits = model->forward(batch.inputs);
      const bool centresFinalInput = centresInput(model->norms().at({SiteKind::Final, -1}).kind);
      tracker->setCollecting(false);
      const torch::Tensor ce =
          torch::nn::functional::cross_entropy(logits.view({-1, vocab}), targets.view({-1}));
      const torch::Tensor finalInput = tracker->takeFinalInput();
      torch::Tensor loss = ce;
      if (auxWeight > 0) {
        const torch::Tensor aux =
            auxWeight * auxiliaryLoss(finalInput, inputs, model->config().eotTokenId,
                                      model->config().layerNormEpsilon, centresFinalInput);
        loss = loss + aux;
        auxSum = auxSum + aux.detach();
      }
      (loss / static_cast<double>(o.accumulation)).backward();
      ceSum = ceSum + ce.detach();
      if (removing()) tracker->update(inputs);
    }
    const torch::Tensor gradNorm = clipGradients();
    const torch::Tensor host = torch::cat({torch::stack({ceSum, auxSum, gradNorm}).to(torch::kFloat64),
                                           tracker->pendingStatistics()})
                                   .to(torch::kCPU);  // the step's one wait for the device
    const double* v = host.data_ptr<double>();
    tracker->fold(v + 3);
    return {{v[0] / o.accumulation, v[1] / o.accumulation}, v[2]};
  }

  // Scales the gradients to a total 2-norm of at most clipNorm (as torch::nn::utils::clip_grad_norm_,
  // which waits for the device to return the norm as a double); returns the norm before clipping.
  torch::Tensor clipGradients() {
    std::vector<torch::Tensor> grads, norms;
    for (const auto& p : parameters)
      if (p.grad().defined()) grads.push_back(p.grad()), norms.push_back(p.grad().norm(2));
    if (grads.empty()) return torch::zeros({}, torch::TensorOptions().device(device));
    const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
    const double clip = config().optimizer.clipNorm;
    if (clip > 0) {
      const torch::Tensor coefficient = torch::clamp_max(clip / (total + 1e-6), 1.0);
      for (auto& g : grads) g.mul_(coefficient);
    }
    return total;
  }

  void dropGradients() {
    for (auto& p : parameters) p.mutable_grad().reset();  // dropping, not zeroing: 1.13 zeroes
  }

  static void requireFinite(int64_t step, const Losses& l, double gradNorm) {
    if (std::isfinite(l.ce + l.aux) && std::isfinite(gradNorm)) return;
    throw std::runtime_error("step " + std::to_string(step + 1) + ": the loss (" +
                             std::to_string(l.ce + l.aux) + ") or gradient norm (" +
                             std::to_string(gradNorm) +
                             ") is not finite; stopped before updating the weights. Resume from the last "
                             "checkpoint with a lower learning rate or a later schedule.");
  }

  void logStep(int64_t done, const Losses& l, double lr, double gradNorm, double tokensPerSecond) {
    json r{{"type", "step"},
           {"step", done},
           {"ce", l.ce},
           {"aux", l.aux},
           {"loss", l.ce + l.aux},
           {"lr", lr},
           {"grad_norm", gradNorm},
           {"tokens_per_second", tokensPerSecond}};
    if (removing()) r["scales"] = tracker->scalesJson();
    record(r);
  }

  // --- around the steps --------------------------------------------------------------------------------

  void evaluateAll(int64_t step) {
    if (evalFiles.empty()) return;
    model->setNormObserver(nullptr);  // evaluation never moves the EMAs
    EvalOptions options;
    options.context = config().optimizer.context;
    options.maxTokens = config().eval.tokens;
    options.batchSize = config().optimizer.microBatch;
    for (const TokenFile& file : evalFiles) {
      json r = toJson(evaluate(*model, file, options).summary);
      r.erase("calibration_bins");
      r["type"] = "eval";
      r["step"] = step;
      r["file"] = file.path();
      record(r);
    }
    if (observing) model->setNormObserver(tracker.get());
  }

  void checkpoint() {
    TrainingState state;
    state.stepsDone = owner.m_stepsDone.load();
    state.samplerState = prefetcher ? prefetcher->state() : sampler->state();
    state.trackers = tracker->toJson();
    state.metricsBytes = metrics->bytesWritten();
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      state.schedule = schedule->schedule();
      state.appliedEvents = applied;
      state.edits = edits;
    }
    const std::string path =
        writeCheckpoint(owner.m_dir, *model, *optimizer, state, config().keepCheckpoints);
    record({{"type", "checkpoint"}, {"step", state.stepsDone}, {"path", path}});
  }

  void saveFinal() {
    const std::string out = run::finalModelPath(owner.m_dir);
    saveModel(*model, out);
    copyTokenizerFiles(config().model, out);
  }

  std::string nextEventText() const {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    for (const auto& e : schedule->schedule().events)
      if (e.step >= schedule->lockedBefore()) return describe(e);
    return "";
  }

  // An edit through the rules of EditableSchedule; accepted edits are logged (metrics, checkpoint).
  template <class Edit>
  EditResult edit(Edit&& apply) {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    EditResult result = apply(*schedule);
    if (!result.accepted) return result;
    for (const ScheduleChange& change : schedule->lastChanges()) {
      json log{{"type", "edit"}};
      if (change.kind == ScheduleChange::Kind::Move)
        log.update({{"edit", "move"},
                    {"event_id", change.event.id},
                    {"from", change.from},
                    {"to", change.event.step}});
      else
        log.update({{"edit", change.kind == ScheduleChange::Kind::Add ? "add" : "delete"},
                    {"event", toJson(change.event)}});
      log["at_step"] = schedule->lockedBefore();
      edits.push_back(log);
      record(log);
    }
    return result;
  }
};

Trainer::Trainer(std::string runDir) : m_dir(std::move(runDir)), m_impl(std::make_unique<Impl>(*this)) {}
Trainer::~Trainer() = default;

CausalLMImpl& Trainer::model() { return *m_impl->model; }

SnapshotPtr Trainer::snapshot() {
  Impl& d = *m_impl;
  ++d.snapshotsWanted;
  struct Done {
    Impl& d;
    ~Done() {
      {
        // Under the lock: the training loop checks the count and waits under it, so the wakeup is not lost.
        std::lock_guard<std::mutex> lock(d.modelMutex);
        --d.snapshotsWanted;
      }
      d.snapshotTaken.notify_all();
    }
  } done{d};
  std::lock_guard<std::mutex> lock(d.modelMutex);
  return ModelSnapshot::copyOf(*d.model, m_stepsDone.load(), m_dir);
}

std::shared_ptr<MetricsQueue> Trainer::subscribe() { return m_impl->metrics->subscribe(); }

std::unique_ptr<Trainer> Trainer::start(const std::string& runDir, const RunConfig& config) {
  if (fs::exists(run::configPath(runDir)))
    throw FileError(runDir, "already holds a run (config.json exists); resume it or choose another folder");
  validate(config, runDir);
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  t->m_config = config;
  Impl& d = *t->m_impl;
  d.device = torch::Device(config.device);
  if (config.mode == TrainingMode::Pretrain) {
    CausalLM fresh = makeModel(loadConfigFile(config.model + "/config.json").shape);
    fresh->initWeights(config.optimizer.seed);
    fresh->to(d.device);
    d.setUp(fresh);
  } else {
    d.setUp(loadModel(config.model, d.device));
  }
  Schedule schedule;
  if (config.mode == TrainingMode::Remove) {
    schedule = config.schedule;
    try {
      schedule.validate(d.model->config().nLayer, config.optimizer.maxSteps);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("the schedule does not fit this run:\n") + e.what());
    }
  }
  d.setSchedule(schedule);
  fs::create_directories(run::checkpointsPath(runDir));
  t->m_config.schedule = d.schedule->schedule();
  writeFileAtomic(run::configPath(runDir), toJson(t->m_config).dump(2) + "\n");
  d.schedule->persist(d.schedule->schedule());
  d.metrics = std::make_unique<MetricsWriter>(runDir, 0);
  json startRecord = metricsStartRecord();
  startRecord.update({{"mode", trainingModeName(config.mode)}, {"max_steps", config.optimizer.maxSteps}});
  d.record(startRecord);
  if (config.mode == TrainingMode::Remove) d.measureScales();
  d.evaluateAll(0);
  return t;
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& runDir) {
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  const std::string configPath = run::configPath(runDir);
  try {
    t->m_config = runConfigFromJson(json::parse(readTextFile(configPath)), configPath);
  } catch (const json::exception& e) {
    throw FileError(configPath, std::string("is not valid JSON: ") + e.what());
  }
  const std::string checkpoint = run::latestCheckpoint(runDir);
  if (checkpoint.empty())
    throw FileError(
        run::checkpointsPath(runDir),
        "holds no complete checkpoint to resume from (the run stopped before its first one): start it "
        "again in a new folder");
  const TrainingState state = readTrainingState(checkpoint);
  d.device = torch::Device(t->m_config.device);
  d.setUp(loadModel(checkpoint, d.device));
  loadOptimizerState(*d.optimizer, checkpoint);
  t->m_stepsDone = state.stepsDone;
  d.sampler->setState(state.samplerState);
  try {
    d.tracker->restore(state.trackers);
  } catch (const std::exception& e) {
    throw FileError(run::checkpointStatePath(checkpoint),
                    std::string("malformed checkpoint state: ") + e.what());
  }
  d.applied = state.appliedEvents;
  d.edits = state.edits;
  // The current schedule (live edits made after the checkpoint included) must agree with what the
  // checkpoint already applied: the companion code's resumed runs did not know which events had fired.
  const std::string schedulePath = run::schedulePath(runDir);
  try {
    Schedule schedule = scheduleFromJson(json::parse(readTextFile(schedulePath)), schedulePath);
    schedule.validate(d.model->config().nLayer, t->m_config.optimizer.maxSteps);
    d.setSchedule(schedule);
  } catch (const json::exception& e) {
    throw FileError(schedulePath, std::string("is not valid JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw FileError(schedulePath, std::string("is not a valid schedule for this run:\n") + e.what());
  }
  d.schedule->lockBefore(t->m_stepsDone);
  const Schedule& schedule = d.schedule->schedule();
  for (const auto& [id, step] : d.applied) {
    const ScheduleEvent* e = schedule.find(id);
    if (!e || e->step != step)
      throw FileError(schedulePath, "event " + std::to_string(id) + " was applied at step " +
                                        std::to_string(step) + " but the schedule " +
                                        (e ? "now puts it at step " + std::to_string(e->step)
                                           : std::string("no longer has it")));
  }
  for (const auto& e : schedule.events) {
    const bool wasApplied =
        std::any_of(d.applied.begin(), d.applied.end(), [&](auto& a) { return a.first == e.id; });
    if (e.step < t->m_stepsDone && !wasApplied)
      throw FileError(schedulePath, "event " + std::to_string(e.id) + " (" + describe(e) +
                                        ") lies before the checkpoint's step " +
                                        std::to_string(t->m_stepsDone) + " but was never applied");
  }
  d.metrics = std::make_unique<MetricsWriter>(runDir, state.metricsBytes);
  d.record({{"type", "resume"}, {"step", t->m_stepsDone.load()}, {"checkpoint", checkpoint}});
  return t;
}

void Trainer::requestStop() { m_stopRequested = true; }

bool Trainer::run(const ProgressFn& progress) {
  Impl& d = *m_impl;
  const OptimizerSettings& o = m_config.optimizer;
  d.observing = d.removing();
  if (d.observing) d.model->setNormObserver(d.tracker.get());
  // Batches are drawn one ahead on another thread; however run() ends, the sampler is handed back in the
  // state after the last batch trained on.
  d.prefetcher = std::make_unique<BatchPrefetcher>(*d.sampler, d.device.is_cuda());
  struct StopPrefetching {
    Impl& d;
    ~StopPrefetching() { d.prefetcher.reset(); }
  } stopPrefetching{d};
  int64_t lastCheckpoint = m_stepsDone.load();
  bool finished = false;
  while (true) {
    const int64_t step = m_stepsDone.load();
    if ((finished = step >= o.maxSteps) || m_stopRequested.load()) break;
    std::unique_lock<std::mutex> modelLock = d.lockBetweenSteps();  // a waiting snapshot goes first
    const auto started = std::chrono::steady_clock::now();
    d.tracker->discardCollected();  // nothing left over from a step that failed half-way
    d.dropGradients();
    d.applyEvents(step);
    const double lr = learningRate(o, step);
    setLearningRate(*d.optimizer, lr);
    const auto [losses, gradNorm] = d.forwardBackwardClip();
    Impl::requireFinite(step, losses, gradNorm);
    d.optimizer->step();
    d.dropGradients();
    const int64_t done = m_stepsDone = step + 1;
    modelLock.unlock();

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double tokensPerSecond = static_cast<double>(o.microBatch * o.accumulation * o.context) / seconds;
    d.logStep(done, losses, lr, gradNorm, tokensPerSecond);
    if (m_config.eval.interval > 0 && done % m_config.eval.interval == 0 && done < o.maxSteps)
      d.evaluateAll(done);
    if (m_config.checkpointInterval > 0 && done % m_config.checkpointInterval == 0 && done < o.maxSteps) {
      d.checkpoint();
      lastCheckpoint = done;
    }
    if (progress) {
      char detail[160];
      const std::string next = d.nextEventText();
      std::snprintf(detail, sizeof detail, "loss %.4f  %.0f tok/s%s%s", losses.ce + losses.aux,
                    tokensPerSecond, next.empty() ? "" : "  next: ", next.c_str());
      progress({trainingModeName(m_config.mode), done, o.maxSteps, "steps", done == o.maxSteps, detail});
    }
  }
  if (d.observing) d.model->setNormObserver(nullptr);
  d.observing = false;
  const bool newSteps = lastCheckpoint != m_stepsDone.load();  // a finished run resumed again has nothing new
  if (finished) {
    if (newSteps) {
      d.evaluateAll(o.maxSteps);
      d.checkpoint();
    }
    d.saveFinal();
    d.record({{"type", "finish"},
              {"step", m_stepsDone.load()},
              {"final", run::finalModelPath(m_dir)},
              {"layernorm_free", d.model->norms().isLayerNormFree()}});
  } else {
    if (newSteps) d.checkpoint();
    d.record({{"type", "stop"}, {"step", m_stepsDone.load()}});
  }
  m_stopRequested = false;  // handled: a later run() continues
  return finished;
}

Schedule Trainer::schedule() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->schedule();
}

EditResult Trainer::addEvent(ScheduleEvent event) {
  return m_impl->edit([&](EditableSchedule& s) { return s.add(event); });
}

EditResult Trainer::moveEvent(int64_t id, int64_t step) { return moveEvents({{id, step}}); }

EditResult Trainer::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return m_impl->edit([&](EditableSchedule& s) { return s.moveEvents(idAndStep); });
}

EditResult Trainer::deleteEvent(int64_t id) {
  return m_impl->edit([&](EditableSchedule& s) { return s.remove(id); });
}

}  // namespace nf
