#include "train/trainer.h"

#include <torch/torch.h>

#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "data/batches.h"
#include "distributed/worker_group.h"
#include "eval/evaluate.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "text/bpe_tokenizer.h"
#include "train/aux_loss.h"
#include "train/checkpoint.h"
#include "train/cross_entropy.h"
#include "train/divergence.h"
#include "train/optimizer.h"
#include "train/removal_tracker.h"
#include "util/bytes.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {

struct Trainer::Impl {
  explicit Impl(Trainer& owner) : owner(owner) {}

  Trainer& owner;
  torch::Device device{torch::kCPU};
  CausalLM model{nullptr};
  std::unique_ptr<FusedAdamW> optimizer;
  std::vector<torch::Tensor> parameters;
  std::unique_ptr<BatchSampler> sampler;
  std::unique_ptr<BatchPrefetcher> prefetcher;  // owns the sampler while run() trains
  std::vector<TokenFile> evalFiles;
  std::unique_ptr<RemovalTracker> tracker;
  std::unique_ptr<MetricsWriter> metrics;
  bool observing = false;  // the tracker is the model's norm observer (remove mode, inside run())

  // A multi-worker run: this worker and the group of all of them (null in one process).
  WorkerEnvironment worker;
  std::unique_ptr<WorkerGroup> group;
  // Worker 0 counts its accepted edits (scheduleVersion); sharedVersion is the count whose schedule all
  // workers hold.
  int64_t scheduleVersion = 0, sharedVersion = 0;
  int64_t eventsFiredThrough = -1;  // the last step whose events have fired

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

  // Divergence (train/divergence.h): the guard over this stretch of the run; the newest checkpoint that a
  // later step's loss vouched for (rollbacks go there, retention keeps it) and the newest one, not yet
  // vouched for (-1: none); the rollbacks made; the learning rate's factor after them.
  std::unique_ptr<DivergenceGuard> guard;
  int64_t saneCheckpoint = -1, unconfirmedCheckpoint = -1;
  int rollbacks = 0;
  double lrScale = 1;

  // Pause, continue, checkpoint and stop requests wake a paused run through this.
  std::mutex controlMutex;
  std::condition_variable controlChanged;

  const RunConfig& config() const { return owner.m_config; }
  bool removing() const { return config().mode == TrainingMode::Remove; }
  bool isMain() const { return worker.isMain(); }
  void record(json r) {
    if (metrics) metrics->write(std::move(r));  // worker 0's only
  }

  // --- the other workers -------------------------------------------------------------------------------

  void joinWorkers(const std::optional<WorkerEnvironment>& workers, const std::string& configDevice) {
    if (!workers) return;
    worker = *workers;
    device = torch::Device(workerDevice(configDevice, worker));
    group = std::make_unique<WorkerGroup>(worker, device);
  }

  // Work that worker 0 alone does (checks, writing the run directory); every worker gets its text, or
  // throws its error, so no worker goes on when worker 0 could not.
  std::string onMain(const std::string& during, const std::function<std::string()>& work) {
    if (!group) return work();
    json outcome;
    std::exception_ptr failure;
    if (isMain()) {
      try {
        outcome["text"] = work();
      } catch (const std::exception& e) {
        failure = std::current_exception();
        outcome["error"] = e.what();
      }
    }
    outcome = json::parse(group->broadcastText(isMain() ? outcome.dump() : "", during));
    if (failure) std::rethrow_exception(failure);
    if (outcome.contains("error"))
      throw std::runtime_error("worker 0 stopped the run during " + during + ": " +
                               outcome["error"].get<std::string>());
    return outcome["text"];
  }

  std::function<void(torch::Tensor&)> sumOverWorkers(const std::string& during) {
    if (!group) return {};
    return [this, during](torch::Tensor& t) { group->sum(t, during); };
  }

  // Worker 0's weights on every worker (a fresh model's initialisation, whatever the device did).
  void broadcastParameters() {
    if (!group) return;
    torch::NoGradGuard noGrad;
    for (auto& p : parameters) group->broadcast(p, "the initial weights");
  }

  // At every checkpoint: every worker's weights and data position must still be worker 0's. A cheap
  // fingerprint per parameter (float64 sum and sum of squares) is compared, bit for bit.
  void requireWorkersAgree(int64_t step) {
    if (!group) return;
    torch::NoGradGuard noGrad;
    const auto named = model->named_parameters();
    std::vector<torch::Tensor> prints;
    for (const auto& item : named) {
      const torch::Tensor p = item.value().detach().to(torch::kFloat64);
      prints.push_back(p.sum());
      prints.push_back(p.pow(2).sum());
    }
    const Random::State words = samplerState();
    for (uint64_t word : words)  // in 32-bit halves, which float64 holds exactly
      for (uint64_t half : std::array<uint64_t, 2>{word >> 32, word & 0xffffffffU})
        prints.push_back(torch::full({}, static_cast<double>(half), torch::kFloat64).to(device));
    const std::string during = "the workers' agreement check at step " + std::to_string(step);
    const torch::Tensor all = group->gather(torch::stack(prints), during).to(torch::kCPU);
    for (int r = 1; r < group->size(); ++r) {
      const torch::Tensor differs = all[r].ne(all[0]).nonzero();
      if (differs.size(0) == 0) continue;
      const int64_t first = differs[0][0].item<int64_t>();
      const std::string what = first < 2 * static_cast<int64_t>(named.size())
                                   ? "parameter " + named[first / 2].key()
                                   : std::string("data position (sampler state)");
      throw std::runtime_error("step " + std::to_string(step) + ": worker " + std::to_string(r) +
                               " no longer agrees with worker 0 (its " + what +
                               " differs): the workers diverged, so this step is not checkpointed. Resume "
                               "from the last checkpoint; if it happens again, report it.");
    }
  }

  // --- setting up -------------------------------------------------------------------------------------

  void setUp(CausalLM m) {
    model = std::move(m);
    model->setCudaBf16Autocast(config().optimizer.bf16);
    model->setActivationCheckpointing(config().optimizer.activationCheckpointing);
    optimizer = makeOptimizer(*model, config().optimizer);
    parameters = model->parameters();
    const auto& c = config();
    sampler = std::make_unique<BatchSampler>(TokenFile::open(c.trainData), c.optimizer.microBatch,
                                             c.optimizer.context, c.optimizer.seed, model->config().vocabSize,
                                             batchShare(c.optimizer.microBatch, worker));
    evalFiles.clear();
    for (const auto& path : c.evalData) evalFiles.push_back(TokenFile::open(path));
    tracker = std::make_unique<RemovalTracker>(*model, c.removal);
    guard = std::make_unique<DivergenceGuard>(c.divergence.factor);
  }

  // `used`: the treatments whose switch-off events are accepted. A resumed run accepts any, since runs
  // written before they were checked may hold such events, applied already.
  void setSchedule(Schedule s, Treatments used = {}) {
    schedule = std::make_unique<EditableSchedule>(std::move(s), model->config().nLayer,
                                                  config().optimizer.maxSteps, used);
    if (!isMain()) return;  // worker 0 writes schedule.json
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
                             c.optimizer.seed ^ 0x5eed5eedULL, model->config().vocabSize,
                             batchShare(c.optimizer.microBatch, worker));
    torch::NoGradGuard noGrad;
    model->setNormObserver(tracker.get());
    tracker->setCollecting(true);
    const torch::Tensor inputs = calibration.next().inputs.to(device);
    model->forward(inputs);
    tracker->update(inputs);
    tracker->fold(sumOverWorkers("the first measurement of the scales"));
    tracker->setCollecting(false);
  }

  // --- one optimizer step ------------------------------------------------------------------------------

  // Waits until no snapshot is wanted and holds the model: weights and norm state change only under it.
  std::unique_lock<std::mutex> lockBetweenSteps() {
    std::unique_lock<std::mutex> lock(modelMutex);
    snapshotTaken.wait(lock, [&] { return snapshotsWanted.load() == 0; });
    return lock;
  }

  // Before a step of a multi-worker run: worker 0 locks its schedule at the step and, when it was edited
  // since the schedule was last shared, sends it to the others, so the same events fire everywhere at the
  // same step.
  void shareSchedule(int64_t step) {
    if (!group) return;
    const std::string during = "the schedule of step " + std::to_string(step + 1);
    int64_t version = 0;
    std::string text;
    if (isMain()) {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      schedule->lockBefore(std::max(schedule->lockedBefore(), step + 1));
      version = scheduleVersion;
      if (version != sharedVersion) text = toJson(schedule->schedule()).dump();
    }
    version = group->broadcast(version, during);
    if (version == sharedVersion) return;
    text = group->broadcastText(text, during);
    sharedVersion = version;
    if (isMain()) return;
    std::lock_guard<std::mutex> lock(scheduleMutex);
    setSchedule(scheduleFromJson(json::parse(text), "worker 0's schedule"));
    schedule->lockBefore(step + 1);
  }

  // Events of step `step` fire before its first micro-batch (PROTOCOL §4); then the ramps move on.
  void applyEvents(int64_t step) {
    std::vector<ScheduleEvent> due;
    if (step <= eventsFiredThrough) return;  // run() called again after a failed step
    shareSchedule(step);
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      for (const auto& e : schedule->schedule().events)
        if (e.step == step) due.push_back(e);
      schedule->lockBefore(std::max(schedule->lockedBefore(), step + 1));
      eventsFiredThrough = step;
      for (const auto& e : due) applied.emplace_back(e.id, e.step);
    }
    for (const auto& e : due)
      record({{record::kType, record::kEvent},
              {"step", step},
              {"event", toJson(e)},
              {"description", describe(e)},
              {"sites", tracker->apply(e, step)}});
    tracker->advanceRamps(step);
  }

  // The controls in force before `step`: stop when asked for on any worker, pause and checkpoint when
  // asked for on worker 0 (the one that serves), agreed on by all workers in one exchange.
  struct Controls {
    bool stop = false, pause = false, checkpoint = false;
  };
  Controls controls(int64_t step) {
    Controls here{owner.m_stopRequested.load(), isMain() && owner.m_pauseRequested.load(),
                  isMain() && owner.m_checkpointRequested.exchange(false)};
    if (!group) return here;
    torch::Tensor flags = torch::tensor({int64_t{here.stop}, int64_t{here.pause}, int64_t{here.checkpoint}},
                                        torch::TensorOptions().dtype(torch::kLong).device(device));
    group->sum(flags, "the start of step " + std::to_string(step + 1));
    flags = flags.to(torch::kCPU);
    return {flags[0].item<int64_t>() > 0, flags[1].item<int64_t>() > 0, flags[2].item<int64_t>() > 0};
  }

  // Before `step`: writes a checkpoint asked for, and holds while paused. The workers of a multi-worker
  // run ask again every second while paused, so each exchange completes at once and a long pause never
  // reaches the worker timeout. Returns whether to stop.
  bool holdBeforeStep(int64_t step, int64_t& lastCheckpoint) {
    bool held = false;
    while (true) {
      const Controls c = controls(step);
      if (c.checkpoint && lastCheckpoint != step && checkpoint()) {
        lastCheckpoint = step;
      }
      if (c.stop || !c.pause) {
        if (held && !c.stop) record({{record::kType, record::kContinue}, {"step", step}});
        owner.m_paused = false;
        return c.stop;
      }
      if (!held) {
        held = true;
        owner.m_paused = true;
        record({{record::kType, record::kPause}, {"step", step}});
      }
      std::unique_lock<std::mutex> lock(controlMutex);
      // Woken by a request; the timeout also notices a stop asked for by a signal handler, which cannot
      // notify. The other workers take no requests but a stop: they wait the second out, then ask worker 0.
      controlChanged.wait_for(lock, std::chrono::seconds(1), [&] {
        return owner.m_stopRequested ||
               (isMain() && (!owner.m_pauseRequested || owner.m_checkpointRequested));
      });
    }
  }
  void controlRequested() {
    std::lock_guard<std::mutex> lock(controlMutex);  // so a waiting run cannot miss the change
    controlChanged.notify_all();
  }

  struct Losses {
    double ce = 0, aux = 0;
  };
  struct StepResult {
    Losses losses;
    double gradNorm = 0;
    std::vector<double> workerSeconds;  // per worker: its forward and backward passes, before the exchange
  };

  // Forward and backward over the step's micro-batches (gradients of CE, + λ·aux when removing), then
  // clipping. The device is never waited for until the end: losses, gradient norm and the σ statistics
  // reach the host in one copy, before the optimizer may update the weights.
  StepResult forwardBackwardClip(int64_t step) {
    const auto started = std::chrono::steady_clock::now();
    const std::string stepName = "step " + std::to_string(step + 1);
    const OptimizerSettings& o = config().optimizer;
    const double auxWeight = removing() ? config().removal.auxWeight : 0.0;
    torch::Tensor ceSum = torch::zeros({}, torch::TensorOptions().device(device));
    torch::Tensor auxSum = torch::zeros({}, torch::TensorOptions().device(device));
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      const Batch batch = prefetcher->next();
      // The CPU ids go to forward(), which checks them there; the device copies are for the losses.
      const torch::Tensor inputs = batch.inputs.to(device, /*non_blocking=*/true);
      const torch::Tensor targets = batch.targets.to(device, /*non_blocking=*/true);
      tracker->setCollecting(removing());
      const torch::Tensor ce = nextTokenCrossEntropy(*model, batch.inputs, targets);
      const bool centresFinalInput = centresInput(model->norms().at({SiteKind::Final, -1}).kind);
      tracker->setCollecting(false);
      const torch::Tensor finalInput = tracker->takeFinalInput();
      torch::Tensor loss = ce;
      if (auxWeight > 0) {
        const torch::Tensor aux =
            auxWeight * auxiliaryLoss(finalInput, inputs, model->config().eotTokenId,
                                      model->config().layerNormEpsilon, centresFinalInput,
                                      sumOverWorkers(stepName + "'s auxiliary loss"));
        loss = loss + aux;
        auxSum = auxSum + aux.detach();
      }
      (loss / static_cast<double>(o.accumulation)).backward();
      ceSum = ceSum + ce.detach();
      if (removing()) tracker->update(inputs);
    }
    // Until here the worker worked on its own: its share of the batch took it this long (host clock).
    const double ownSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (group) group->averageGradients(parameters, stepName + "'s gradients");
    const torch::Tensor gradNorm = clipGradients();
    // Losses, σ statistics and each worker's seconds, summed over the workers: their sums are the
    // one-process batch's (the losses are means over equal shares, so their sum is W × the batch mean).
    const int workers = group ? group->size() : 1;
    torch::Tensor seconds = torch::zeros({workers}, torch::TensorOptions().dtype(torch::kFloat64));
    seconds[worker.rank] = ownSeconds;
    torch::Tensor shared = torch::cat({torch::stack({ceSum, auxSum}).to(torch::kFloat64),
                                       tracker->pendingStatistics(), seconds.to(device)});
    if (group) group->sum(shared, stepName + "'s losses and scales");
    const torch::Tensor host = torch::cat({shared, gradNorm.to(torch::kFloat64).reshape({1})})
                                   .to(torch::kCPU);  // the step's one wait for the device
    const double* v = host.data_ptr<double>();
    tracker->fold(v + 2);
    const double divisor = static_cast<double>(o.accumulation) * workers;
    StepResult result{{v[0] / divisor, v[1] / divisor}, v[host.numel() - 1], {}};
    result.workerSeconds.assign(v + host.numel() - 1 - workers, v + host.numel() - 1);
    return result;
  }

  // Scales the gradients to a total 2-norm of at most clipNorm (as torch::nn::utils::clip_grad_norm_,
  // which waits for the device to return the norm as a double); returns the norm before clipping. On the
  // CPU the optimizer's pass scales them (clippingScale), which saves a pass over every gradient.
  torch::Tensor clipGradients() {
    std::vector<torch::Tensor> grads, norms;
    for (const auto& p : parameters)
      if (p.grad().defined()) grads.push_back(p.grad()), norms.push_back(p.grad().norm(2));
    if (grads.empty()) return torch::zeros({}, torch::TensorOptions().device(device));
    const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
    const double clip = config().optimizer.clipNorm;
    if (clip > 0 && !device.is_cpu()) {
      const torch::Tensor coefficient = torch::clamp_max(clip / (total + 1e-6), 1.0);
      for (auto& g : grads) g.mul_(coefficient);
    }
    return total;
  }

  // The factor clipGradients() leaves to the optimizer on the CPU, from the norm before clipping.
  double clippingScale(double gradNorm) const {
    const double clip = config().optimizer.clipNorm;
    if (clip <= 0 || !device.is_cpu()) return 1.0;
    return std::min(1.0, static_cast<double>(static_cast<float>(clip / (gradNorm + 1e-6))));
  }

  void dropGradients() {
    for (auto& p : parameters) p.mutable_grad().reset();  // dropping, not zeroing: 1.13 zeroes
  }

  void logStep(int64_t done, const StepResult& result, double lr, double tokensPerSecond) {
    const Losses& l = result.losses;
    const double gradNorm = result.gradNorm;
    json r{{record::kType, record::kStep},
           {"step", done},
           {"ce", l.ce},
           {"aux", l.aux},
           {"loss", l.ce + l.aux},
           {"lr", lr},
           {"grad_norm", gradNorm},
           {"tokens_per_second", tokensPerSecond}};
    if (removing()) r["scales"] = tracker->scalesJson();
    if (group) {
      // Each worker's own pace: its share of the step's tokens over the time its passes took.
      const OptimizerSettings& o = config().optimizer;
      const double shareTokens =
          static_cast<double>(o.microBatch * o.accumulation * o.context) / group->size();
      json perWorker = json::array();
      for (double seconds : result.workerSeconds) perWorker.push_back(shareTokens / std::max(seconds, 1e-9));
      r["world_size"] = group->size();
      r["worker_tokens_per_second"] = perWorker;
    }
    record(r);
  }

  // --- around the steps --------------------------------------------------------------------------------

  // evaluateAll, then the divergence an evaluation showed (all workers learn of it from worker 0): returns
  // true after a rollback; a stop throws.
  bool evaluateAndCheck(int64_t step) {
    evaluateAll(step);
    int64_t diverged = divergedEvaluation.empty() ? 0 : 1;
    if (group) diverged = group->broadcast(diverged, "the evaluation's divergence check");
    if (!diverged) return false;
    const std::string why =
        divergedEvaluation.empty() ? "an evaluation diverged on worker 0" : divergedEvaluation;
    divergedEvaluation.clear();
    const std::unique_lock<std::mutex> lock = lockBetweenSteps();  // a rollback changes the weights
    this->diverged(step, why);
    return true;
  }

  void evaluateAll(int64_t step) {
    if (evalFiles.empty()) return;
    model->setNormObserver(nullptr);  // evaluation never moves the EMAs
    EvalOptions options;
    options.context = config().optimizer.context;
    options.maxTokens = config().eval.tokens;
    options.batchSize = config().optimizer.microBatch;
    options.shard = worker.rank;
    options.shards = worker.worldSize;
    for (const TokenFile& file : evalFiles) {
      TokenValues values;
      const EvalResult evaluated = evaluateTokens(*model, file, options, values);
      if (group) values = gatherTokenValues(values, "the evaluation of " + file.path());
      if (!isMain()) continue;
      requireEvaluatedTokens(values, evaluated);
      const LossSummary summary = summarize(values);
      // (The starting model's evaluation only sets the mark the later ones are compared with.)
      if (const auto why = guard->checkEvaluation(file.path(), summary.meanLoss); why && step > 0)
        divergedEvaluation = *why;
      json r = toJson(summary);
      r.erase("calibration_bins");
      r[record::kType] = record::kEval;
      r["step"] = step;
      r["file"] = file.path();
      record(r);
    }
    if (observing) model->setNormObserver(tracker.get());
  }

  // Every worker's per-token values, concatenated in rank order (= the one-process order of the chunks).
  TokenValues gatherTokenValues(const TokenValues& own, const std::string& during) {
    const int64_t n = static_cast<int64_t>(own.size());
    const torch::Tensor counts =
        group->gather(torch::full({1}, n, torch::TensorOptions().dtype(torch::kLong).device(device)), during)
            .to(torch::kCPU);
    const int64_t most = counts.max().item<int64_t>();
    torch::Tensor rows = torch::zeros({4, most}, torch::kFloat32);
    if (n > 0) {
      rows[0].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.loss.data()), {n}));
      rows[1].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.entropy.data()), {n}));
      rows[2].narrow(0, 0, n).copy_(torch::from_blob(const_cast<float*>(own.confidence.data()), {n}));
      rows[3].narrow(0, 0, n).copy_(
          torch::from_blob(const_cast<uint8_t*>(own.correct.data()), {n}, torch::kUInt8).to(torch::kFloat32));
    }
    const torch::Tensor all = group->gather(rows.to(device), during).to(torch::kCPU).contiguous();
    TokenValues values;
    for (int r = 0; r < group->size(); ++r) {
      const int64_t count = counts[r].item<int64_t>();
      const float* row = all[r].data_ptr<float>();
      values.loss.insert(values.loss.end(), row, row + count);
      values.entropy.insert(values.entropy.end(), row + most, row + most + count);
      values.confidence.insert(values.confidence.end(), row + 2 * most, row + 2 * most + count);
      for (int64_t i = 0; i < count; ++i) values.correct.push_back(row[3 * most + i] != 0);
    }
    return values;
  }

  // The data position after the last batch trained on (the prefetcher holds the sampler while training).
  const Random::State& samplerState() const { return prefetcher ? prefetcher->state() : sampler->state(); }

  // A warning for whoever watches the run: a "warning" record (the CLI prints it, the GUI shows it).
  void warn(const std::string& code, const std::string& message) {
    record({{record::kType, record::kWarning},
            {"step", owner.m_stepsDone.load()},
            {"code", code},
            {"message", message}});
  }

  // Writes a checkpoint. One that cannot be written (a full disk, an I/O error) leaves the previous one
  // newest and intact. When `required` — the checkpoint a stop or the end of the run leaves — that ends
  // run() with the error; otherwise training goes on, since its state is safe in memory and stopping would
  // lose the steps since the previous checkpoint, and the next checkpoint tries again (a warning says so).
  // Returns whether it was written, and so need not be retried at a stop. Only worker 0 knows, and every
  // worker must make the same checkpoint calls (they are collectives), so a multi-worker run never retries.
  bool checkpoint(bool required = false) {
    requireWorkersAgree(owner.m_stepsDone.load());
    if (!isMain()) {
      unconfirmedCheckpoint = owner.m_stepsDone.load();
      return true;
    }
    TrainingState state;
    state.stepsDone = owner.m_stepsDone.load();
    state.samplerState = samplerState();
    state.trackers = tracker->toJson();
    state.metricsBytes = metrics->bytesWritten();
    state.worldSize = worker.worldSize;
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      state.schedule = schedule->schedule();
      state.appliedEvents = applied;
      state.edits = edits;
    }
    WrittenCheckpoint written;
    try {
      written = writeCheckpoint(owner.m_dir, *model, *optimizer, state, config().keepCheckpoints,
                                saneCheckpoint >= 0 ? run::checkpointName(saneCheckpoint) : "");
    } catch (const FileError& e) {
      const std::string intact = run::latestCheckpoint(owner.m_dir);
      const std::string kept =
          intact.empty() ? "the run has no checkpoint yet" : "the newest intact checkpoint is " + intact;
      if (required)
        throw FileError(e.path(), e.problem() + ". The checkpoint of step " +
                                      std::to_string(state.stepsDone) + " was not written; " + kept +
                                      " ('normfree-cli resume " + owner.m_dir +
                                      "' continues from it once the problem is fixed)");
      warn(warning_code::kCheckpointFailed, "the checkpoint of step " + std::to_string(state.stepsDone) +
                                                " could not be written: " + e.what() + ". " + kept +
                                                "; training goes on and the next checkpoint tries again");
      return group != nullptr;
    }
    unconfirmedCheckpoint = state.stepsDone;
    record({{record::kType, record::kCheckpoint},
            {"step", state.stepsDone},
            {"path", written.folder},
            {"bytes", written.bytes},
            {"free_bytes", written.freeBytes}});
    if (written.lowOnSpace())
      warn(warning_code::kLowDiskSpace, formatBytes(written.freeBytes) + " free on the disk of " +
                                            run::checkpointsPath(owner.m_dir) + ", and a checkpoint takes " +
                                            formatBytes(written.bytes) +
                                            ": free space now, or a coming checkpoint fails");
    return true;
  }

  // --- divergence ---------------------------------------------------------------------------------------

  // Set by evaluateAll on worker 0 when an evaluation diverged; handled before the next step.
  std::string divergedEvaluation;

  // The run diverged at `step` (before its update): records why, rewinds the checkpoints to the last sane
  // one (a newer one holds the weights that diverged), then rolls back to it with a lower learning rate, or
  // throws Diverged. Every worker calls it at the same step.
  void diverged(int64_t step, const std::string& why) {
    const DivergenceSettings& settings = config().divergence;
    int64_t target = saneCheckpoint;
    if (group) target = group->broadcast(target, "the checkpoint to go back to after the divergence");
    const bool rollBack =
        settings.action == DivergenceAction::Rollback && target >= 0 && rollbacks < settings.maxRollbacks;
    record(
        {{record::kType, record::kDivergence},
         {"step", step},
         {"reason", why},
         {"action", rollBack ? "rollback" : "stop"},
         {"sane_checkpoint", target >= 0 ? json(run::checkpointPath(owner.m_dir, target)) : json(nullptr)}});
    if (isMain() && target >= 0) rewindCheckpoints(target);
    if (rollBack) return rollBackTo(target, step);
    const std::string where = "step " + std::to_string(step + 1) + ": " + why + ". The run diverged";
    if (target < 0) {
      const std::string newest = run::latestCheckpoint(owner.m_dir);
      throw Diverged(where + " and stopped before any step vouched for one of its checkpoints" +
                     (newest.empty() ? std::string()
                                     : " (the newest, " + newest + ", may hold the weights that diverged)") +
                     ": start the run again with a lower learning rate");
    }
    throw Diverged(where +
                   (settings.action == DivergenceAction::Rollback
                        ? " again after " + std::to_string(rollbacks) + " rollbacks"
                        : std::string()) +
                   " and stopped before updating the weights. Its newest checkpoint is now the last sane "
                   "one, " +
                   run::checkpointPath(owner.m_dir, target) +
                   ": resume it with a lower learning rate "
                   "('normfree-cli resume " +
                   owner.m_dir + " --lr …')");
  }

  // Checkpoints after `target` hold weights that led to the divergence: removed, and "latest" names
  // `target` again, so that neither a resume nor a rollback starts from them.
  void rewindCheckpoints(int64_t target) {
    const std::string dir = run::checkpointsPath(owner.m_dir);
    const std::string name = run::checkpointName(target);
    writeFileAtomic(run::latestPointerPath(owner.m_dir), name + "\n");
    std::error_code ignored;
    std::vector<fs::path> newer;
    for (const auto& entry : fs::directory_iterator(dir, ignored)) {
      const std::string n = entry.path().filename().string();
      if (run::isCheckpointName(n) && n > name) newer.push_back(entry.path());
    }
    for (const fs::path& path : newer) fs::remove_all(path, ignored);
    unconfirmedCheckpoint = -1;
  }

  // Goes back to the checkpoint of `target` steps in place (the weights, the optimizer, the data position,
  // the trackers, the applied events; the model object stays, which the optimizer and observers hold),
  // with the learning rate multiplied by the settings' factor, written to config.json so a resume keeps it.
  void rollBackTo(int64_t target, int64_t fromStep) {
    const std::string folder = run::checkpointPath(owner.m_dir, target);
    const TrainingState state = readTrainingState(folder);
    {
      const CausalLM saved = loadModel(folder, device);
      torch::NoGradGuard noGrad;
      const auto from = saved->named_parameters();
      for (auto& p : model->named_parameters()) p.value().copy_(from[p.key()]);
      model->norms() = saved->norms();
    }
    loadOptimizerState(*optimizer, folder);
    prefetcher.reset();  // hands the sampler back; it starts again from the checkpoint's position
    sampler->setState(state.samplerState);
    prefetcher = std::make_unique<BatchPrefetcher>(*sampler, device.is_cuda());
    tracker->discardCollected();
    tracker->restore(state.trackers);
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      applied = state.appliedEvents;
      schedule->lockBefore(target);  // the events after it fire again at their steps
    }
    eventsFiredThrough = target - 1;
    owner.m_stepsDone = target;
    if (group) group->setStepsDone(target);
    guard = std::make_unique<DivergenceGuard>(config().divergence.factor);
    unconfirmedCheckpoint = -1;
    ++rollbacks;
    lrScale *= config().divergence.lrFactor;
    RunConfig lowered = config();
    lowered.optimizer.lr *= lrScale;
    lowered.optimizer.minLr *= lrScale;
    if (isMain()) writeFileAtomic(run::configPath(owner.m_dir), toJson(lowered).dump(2) + "\n");
    record({{record::kType, record::kRollback},
            {"step", target},
            {"from_step", fromStep},
            {"checkpoint", folder},
            {"lr", lowered.optimizer.lr},
            {"min_lr", lowered.optimizer.minLr},
            {"rollbacks", rollbacks}});
  }

  void saveFinal() {
    if (!isMain()) return;
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

  // Worker 0 alone edits: the others take its schedule before each step.
  static EditResult notMainWorker() {
    return EditResult::refuse(EditRefusal(EditRefusal::Code::NotEditable));
  }

  // An edit through the rules of EditableSchedule; accepted edits are logged (metrics, checkpoint).
  template <class Edit>
  EditResult edit(Edit&& apply) {
    if (!isMain()) return notMainWorker();
    std::lock_guard<std::mutex> lock(scheduleMutex);
    EditResult result = apply(*schedule);
    if (!result.accepted) return result;
    ++scheduleVersion;
    for (const ScheduleChange& change : schedule->lastChanges()) {
      json log{{record::kType, record::kEdit}};
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

std::unique_ptr<Trainer> Trainer::start(const std::string& runDir, const RunConfig& config,
                                        const std::optional<WorkerEnvironment>& workers) {
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  d.device = torch::Device(config.device);
  d.joinWorkers(workers, config.device);
  // Worker 0 checks the folder and the settings; every worker then trains with worker 0's settings.
  const std::string settings = d.onMain("the start of the run", [&] {
    if (fs::exists(run::configPath(runDir)))
      throw FileError(runDir, "already holds a run (config.json exists); resume it or choose another folder");
    validate(config, runDir);
    if (workers) batchShare(config.optimizer.microBatch, *workers);  // a named error when it does not split
    return toJson(config).dump();
  });
  t->m_config = d.isMain() ? config : runConfigFromJson(json::parse(settings), "worker 0's settings");
  const RunConfig& c = t->m_config;
  if (c.mode == TrainingMode::Pretrain) {
    CausalLM fresh = makeModel(loadConfigFile(c.model + "/config.json").shape);
    fresh->initWeights(c.optimizer.seed);
    fresh->to(d.device);
    d.setUp(fresh);
    d.broadcastParameters();
  } else {
    d.setUp(loadModel(c.model, d.device));
  }
  Schedule schedule;
  if (c.mode == TrainingMode::Remove) {
    schedule = c.schedule;
    try {
      schedule.validate(d.model->config().nLayer, c.optimizer.maxSteps, c.removal.treatments());
      // A site the starting model has made fake already cannot be made fake again: such an event would
      // freeze a second scale over the first.
      std::string alreadyFake;
      for (const ScheduleEvent& e : schedule.events)
        for (const SiteId& site : Schedule::sitesOf(e, d.model->config().nLayer))
          if (e.action == EventAction::MakeFake && isFakeNorm(d.model->norms().at(site).kind))
            alreadyFake += "\nevent " + std::to_string(e.id) + " (" + describe(e) + "): " + siteName(site) +
                           " is " + normKindName(d.model->norms().at(site).kind) + " already in " + c.model;
      if (!alreadyFake.empty()) throw std::invalid_argument(alreadyFake.substr(1));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("the schedule does not fit this run:\n") + e.what());
    }
  }
  d.setSchedule(schedule, c.removal.treatments());
  t->m_config.schedule = d.schedule->schedule();
  d.onMain("writing the run directory", [&] {
    fs::create_directories(run::checkpointsPath(runDir));
    clearDeadWriters(runDir);
    writeFileAtomic(run::configPath(runDir), toJson(t->m_config).dump(2) + "\n");
    d.schedule->persist(d.schedule->schedule());
    d.metrics = std::make_unique<MetricsWriter>(runDir, 0);
    json startRecord = metricsStartRecord();
    startRecord.update({{"mode", trainingModeName(c.mode)}, {"max_steps", c.optimizer.maxSteps}});
    if (d.group) startRecord["world_size"] = d.group->size();
    d.record(startRecord);
    return std::string();
  });
  if (c.mode == TrainingMode::Remove) d.measureScales();
  d.evaluateAll(0);
  return t;
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& runDir,
                                         const std::optional<WorkerEnvironment>& workers,
                                         const ResumeOverrides& overrides) {
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  const std::string configPath = run::configPath(runDir);
  try {
    t->m_config = runConfigFromJson(json::parse(readTextFile(configPath)), configPath);
  } catch (const json::exception& e) {
    throw FileError(configPath, std::string("is not valid JSON: ") + e.what());
  }
  json changed = json::object();  // the overrides, for the resume record
  if (overrides.lr) changed["lr"] = t->m_config.optimizer.lr = *overrides.lr;
  if (overrides.minLr) changed["min_lr"] = t->m_config.optimizer.minLr = *overrides.minLr;
  validate(t->m_config, "the learning rate given to resume");
  d.device = torch::Device(t->m_config.device);
  d.joinWorkers(workers, t->m_config.device);
  // Every worker resumes from the checkpoint worker 0 found newest.
  const std::string checkpoint = d.onMain("finding the checkpoint to resume from", [&] {
    clearDeadWriters(runDir);  // a checkpoint moved aside by a writer that died is restored first
    const std::string newest = run::latestCheckpoint(runDir);
    if (newest.empty())
      throw FileError(
          run::checkpointsPath(runDir),
          "holds no complete checkpoint to resume from (the run stopped before its first one): start it "
          "again in a new folder");
    if (workers) batchShare(t->m_config.optimizer.microBatch, *workers);
    return newest;
  });
  const TrainingState state = readTrainingState(checkpoint);
  d.setUp(loadModel(checkpoint, d.device));
  loadOptimizerState(*d.optimizer, checkpoint);
  t->m_stepsDone = state.stepsDone;
  d.eventsFiredThrough = state.stepsDone - 1;
  if (d.group) d.group->setStepsDone(state.stepsDone);
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
    Schedule schedule = overrides.schedule
                            ? *overrides.schedule
                            : scheduleFromJson(json::parse(readTextFile(schedulePath)), schedulePath);
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
  d.unconfirmedCheckpoint = state.stepsDone;  // its first step vouches for it
  if (overrides.schedule) changed["schedule"] = toJson(d.schedule->schedule());
  d.onMain("opening metrics.jsonl", [&] {
    if (overrides.lr || overrides.minLr) writeFileAtomic(configPath, toJson(t->m_config).dump(2) + "\n");
    if (overrides.schedule) d.schedule->persist(d.schedule->schedule());
    // The history stays whole: records after the checkpoint (of steps trained again now) are kept, and
    // readers take this record as the point from which the run went on (run/metrics_log.h).
    d.metrics = std::make_unique<MetricsWriter>(runDir, -1);
    json resumeRecord{
        {record::kType, record::kResume}, {"step", t->m_stepsDone.load()}, {"checkpoint", checkpoint}};
    if (!changed.empty()) resumeRecord["overrides"] = changed;
    if (d.group) resumeRecord["world_size"] = d.group->size();
    d.record(resumeRecord);
    return std::string();
  });
  return t;
}

int Trainer::worldSize() const { return m_impl->group ? m_impl->group->size() : 1; }
bool Trainer::isMainWorker() const { return m_impl->isMain(); }

void Trainer::requestStop() {
  m_stopRequested = true;
  m_impl->controlRequested();
}

void Trainer::requestPause() { m_pauseRequested = true; }

void Trainer::requestContinue() {
  m_pauseRequested = false;
  m_impl->controlRequested();
}

void Trainer::requestCheckpoint() {
  m_checkpointRequested = true;
  m_impl->controlRequested();
}

bool Trainer::run(const ProgressFn& progress) {
  try {
    return runSteps(progress);
  } catch (const WorkerLost& e) {
    const std::string checkpoint = run::latestCheckpoint(m_dir);
    throw WorkerLost(std::string(e.what()) + ". " +
                     (checkpoint.empty()
                          ? "The run had no checkpoint yet: start it again."
                          : "The last checkpoint, " + checkpoint + ", is intact: 'normfree-cli resume " +
                                m_dir + "' continues the run, with any number of workers."));
  }
}

bool Trainer::runSteps(const ProgressFn& progress) {
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
  // A pause ends with run(), however it ends.
  struct EndPause {
    Trainer& t;
    ~EndPause() { t.m_paused = t.m_pauseRequested = false; }
  } endPause{*this};
  const int64_t firstStep = m_stepsDone.load();
  // The step of the newest checkpoint this run has (-1: none yet), so a checkpoint is never written twice.
  int64_t lastCheckpoint =
      run::latestCheckpoint(m_dir) == run::checkpointPath(m_dir, firstStep) ? firstStep : -1;
  // Whether steps were trained since the newest checkpoint (a finished run resumed again has none).
  auto newSteps = [&] { return m_stepsDone.load() != firstStep && lastCheckpoint != m_stepsDone.load(); };
  bool finished = false;
  while (true) {
    const int64_t step = m_stepsDone.load();
    if (step >= o.maxSteps) {
      // The last evaluation can still show a divergence, and roll back, before the final checkpoint.
      if (newSteps() && d.evaluateAndCheck(o.maxSteps)) {
        lastCheckpoint = m_stepsDone.load();  // rolled back to it
        continue;
      }
      finished = true;
      break;
    }
    if (d.holdBeforeStep(step, lastCheckpoint)) break;
    std::unique_lock<std::mutex> modelLock = d.lockBetweenSteps();  // a waiting snapshot goes first
    const auto started = std::chrono::steady_clock::now();
    d.tracker->discardCollected();  // nothing left over from a step that failed half-way
    d.dropGradients();
    d.applyEvents(step);
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
    if (d.unconfirmedCheckpoint == step) d.saneCheckpoint = step;
    d.optimizer->scaleGradientsInNextStep(d.clippingScale(result.gradNorm));
    d.optimizer->step();
    d.dropGradients();
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
  if (d.observing) d.model->setNormObserver(nullptr);
  d.observing = false;
  if (finished) {
    if (newSteps()) d.checkpoint(true);  // evaluated above
    d.saveFinal();
    d.record({{record::kType, record::kFinish},
              {"step", m_stepsDone.load()},
              {"final", run::finalModelPath(m_dir)},
              {"layernorm_free", d.model->norms().isLayerNormFree()}});
  } else {
    if (newSteps()) d.checkpoint(true);
    d.record({{record::kType, record::kStop}, {"step", m_stepsDone.load()}});
  }
  m_stopRequested = false;  // handled: a later run() continues
  return finished;
}

Schedule Trainer::schedule() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->schedule();
}

int Trainer::layers() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->nLayer();
}

EditResult Trainer::addEvent(ScheduleEvent event) {
  return m_impl->edit([&](EditableSchedule& s) { return s.add(event); });
}

EditResult Trainer::checkEvent(const ScheduleEvent& event) const {
  if (!m_impl->isMain()) return Impl::notMainWorker();
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule->checkAdd(event);
}

EditResult Trainer::moveEvent(int64_t id, int64_t step) { return moveEvents({{id, step}}); }

EditResult Trainer::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  return m_impl->edit([&](EditableSchedule& s) { return s.moveEvents(idAndStep); });
}

EditResult Trainer::deleteEvent(int64_t id) {
  return m_impl->edit([&](EditableSchedule& s) { return s.remove(id); });
}

}  // namespace nf
