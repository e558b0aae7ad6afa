#include "train/trainer.h"

#include <fcntl.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "data/batches.h"
#include "eval/evaluate.h"
#include "io/atomic_file.h"
#include "io/hf_checkpoint.h"
#include "model/gpt2.h"
#include "text/bpe_tokenizer.h"
#include "train/aux_loss.h"
#include "train/run_directory.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nf {

torch::Tensor auxiliaryLoss(const torch::Tensor& finalInput, const torch::Tensor& tokens, int64_t eotTokenId,
                            double eps) {
  const torch::Tensor x = finalInput.to(torch::kFloat32);
  const torch::Tensor sigma = (x.var(-1, /*unbiased=*/false) + eps).sqrt();
  torch::Tensor mask = tokens.ne(eotTokenId);
  mask.select(1, 0).fill_(false);
  const torch::Tensor weight = mask.to(sigma.scalar_type());
  const torch::Tensor target = (sigma.detach() * weight).sum() / weight.sum().clamp_min(1);
  return (sigma - target).pow(2).mean();
}

void MetricsQueue::push(std::string record) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_records.push_back(std::move(record));
}

std::vector<std::string> MetricsQueue::drain() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<std::string> out(std::make_move_iterator(m_records.begin()),
                               std::make_move_iterator(m_records.end()));
  m_records.clear();
  return out;
}

double learningRate(const OptimizerSettings& s, int64_t step) {
  if (step < s.warmupSteps) return s.lr * static_cast<double>(step + 1) / static_cast<double>(s.warmupSteps);
  const double span = std::max<int64_t>(1, s.maxSteps - s.warmupSteps);
  const double progress = std::min(1.0, static_cast<double>(step - s.warmupSteps) / span);
  return s.minLr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (s.lr - s.minLr);
}

namespace run {

std::string latestCheckpoint(const std::string& dir) {
  const std::string pointer = checkpointsPath(dir) + "/latest";
  if (!fs::exists(pointer)) return "";
  std::string name = readTextFile(pointer);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  const std::string path = checkpointsPath(dir) + "/" + name;
  return fs::is_directory(path) ? path : "";
}

std::string checkpointName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%07lld", static_cast<long long>(step));
  return name;
}

std::string modelFolder(const std::string& runOrModel) {
  return fs::exists(finalModelPath(runOrModel) + "/config.json") ? finalModelPath(runOrModel) : runOrModel;
}

}  // namespace run

namespace {

// Removal bookkeeping of one site (PROTOCOL §2).
struct SiteTracker {
  bool hasValue = false;
  double tracked = 0, trackedPos0 = 0;  // EMA of the batch-mean σ, and of σ at position 0
  int64_t fakeSince = -1;               // step the site turned fake; -1 while real
  int64_t rampFrom = -1;                // step its interpolation ramp started; -1: no ramp
  bool pos0Ended = false, eotEnded = false;
};

void fsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path, "cannot open to flush it to disk");
  const int result = ::fsync(fd);
  ::close(fd);
  if (result != 0) throw FileError(path, "could not be flushed to disk (disk full or I/O error?)");
}

json trackerJson(const SiteTracker& t) {
  return {{"has_value", t.hasValue},   {"tracked", t.tracked},    {"tracked_pos0", t.trackedPos0},
          {"fake_since", t.fakeSince}, {"ramp_from", t.rampFrom}, {"pos0_ended", t.pos0Ended},
          {"eot_ended", t.eotEnded}};
}

}  // namespace

struct Trainer::Impl : NormObserver {
  explicit Impl(Trainer& owner) : owner(owner) {}

  Trainer& owner;
  torch::Device device{torch::kCPU};
  GPT2 model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<torch::Tensor> parameters;
  std::unique_ptr<BatchSampler> sampler;
  std::vector<TokenFile> evalFiles;
  std::map<SiteId, SiteTracker> trackers;

  // What the observer collects during one training forward pass.
  bool observing = false;  // installed as the model's observer by run()
  bool collecting = false;
  std::vector<std::pair<SiteId, torch::Tensor>> sigmas;
  torch::Tensor lastFinalInput;

  // Schedule state, shared with editing threads.
  mutable std::mutex scheduleMutex;
  // Snapshots: a requester raises snapshotsWanted and takes modelMutex between two steps; the training
  // loop waits for snapshotTaken before its next step, so a snapshot never waits more than one step.
  std::mutex modelMutex;
  std::condition_variable snapshotTaken;
  std::atomic<int> snapshotsWanted{0};
  Schedule schedule;
  int64_t highestId = 0;  // the largest event id this process has seen in the schedule (never reused)
  int64_t decidedThrough = -1;  // events at steps ≤ this have been applied (or were never going to be)
  std::vector<std::pair<int64_t, int64_t>> applied;  // (event id, step)
  json edits = json::array();

  std::mutex listenersMutex;
  std::vector<std::weak_ptr<MetricsQueue>> listeners;
  std::FILE* metrics = nullptr;

  ~Impl() override {
    if (metrics) std::fclose(metrics);
  }

  bool removing() const { return owner.m_config.mode == TrainingMode::Remove; }

  void sigma(SiteId site, const torch::Tensor& s) override {
    if (collecting) sigmas.emplace_back(site, s);
  }
  void finalInput(const torch::Tensor& x) override {
    if (collecting) lastFinalInput = x;
  }

  void record(json r) {
    r["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string line = r.dump(-1, ' ', false, json::error_handler_t::replace);
    if (metrics) {
      // One write per record: a crash leaves at most a partial last line, which readers skip.
      const std::string withNewline = line + "\n";
      if (std::fwrite(withNewline.data(), 1, withNewline.size(), metrics) != withNewline.size() ||
          std::fflush(metrics) != 0)
        throw FileError(run::metricsPath(owner.m_dir), "write failed (disk full?)");
    }
    std::lock_guard<std::mutex> lock(listenersMutex);
    for (auto it = listeners.begin(); it != listeners.end();) {
      if (auto queue = it->lock()) {
        queue->push(line);
        ++it;
      } else {
        it = listeners.erase(it);
      }
    }
  }

  void openMetrics(int64_t keepBytes) {
    const std::string path = run::metricsPath(owner.m_dir);
    if (keepBytes >= 0 && fs::exists(path)) fs::resize_file(path, static_cast<uintmax_t>(keepBytes));
    metrics = std::fopen(path.c_str(), "ab");
    if (!metrics) throw FileError(path, "cannot open for appending");
  }

  void buildOptimizer() {
    const auto& o = owner.m_config.optimizer;
    std::vector<torch::Tensor> decay, noDecay;
    parameters.clear();
    for (auto& p : model->parameters()) {
      parameters.push_back(p);
      (p.dim() >= 2 ? decay : noDecay).push_back(p);
    }
    auto options = [&](double wd) {
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, options(o.weightDecay));
    groups.emplace_back(noDecay, options(0.0));
    optimizer = std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(o.lr));
  }

  void openData() {
    const auto& c = owner.m_config;
    sampler =
        std::make_unique<BatchSampler>(TokenFile::open(c.trainData), c.optimizer.microBatch,
                                       c.optimizer.context, c.optimizer.seed, model->config().vocabSize);
    evalFiles.clear();
    for (const auto& path : c.evalData) evalFiles.push_back(TokenFile::open(path));
  }

  // Per-site batch statistics of the last forward pass folded into the EMAs (one device → host copy).
  void updateTrackers(const torch::Tensor& tokens) {
    const auto& r = owner.m_config.removal;
    std::vector<torch::Tensor> values;
    std::vector<SiteId> sites;
    for (auto& [site, s] : sigmas) {
      const SiteTracker& t = trackers[site];
      if (t.fakeSince >= 0) continue;  // frozen
      // While a treatment will apply to this site, s describes the other positions only.
      torch::Tensor weight = torch::ones_like(s);
      if (r.pos0Treatment && !t.pos0Ended) weight.select(1, 0).zero_();
      if (r.eotTreatment && !t.eotEnded && site.kind == SiteKind::V)
        weight = weight * tokens.ne(model->config().eotTokenId).to(weight.scalar_type());
      values.push_back((s * weight).sum() / weight.sum().clamp_min(1));
      values.push_back(s.select(1, 0).mean());
      sites.push_back(site);
    }
    sigmas.clear();
    if (sites.empty()) return;
    const torch::Tensor host = torch::stack(values).to(torch::kCPU, torch::kFloat64);
    const double* v = host.data_ptr<double>();
    const double k = r.emaMomentum;
    for (std::size_t i = 0; i < sites.size(); ++i) {
      SiteTracker& t = trackers[sites[i]];
      if (!t.hasValue) {
        t.tracked = v[2 * i], t.trackedPos0 = v[2 * i + 1], t.hasValue = true;
      } else {
        t.tracked = k * t.tracked + (1 - k) * v[2 * i];
        t.trackedPos0 = k * t.trackedPos0 + (1 - k) * v[2 * i + 1];
      }
    }
  }

  void makeFake(const SiteId& site, int64_t step) {
    SiteTracker& t = trackers[site];
    if (t.fakeSince >= 0) return;
    if (!t.hasValue)
      throw std::logic_error(siteName(site) + " turns fake before its scale was ever measured");
    if (!std::isfinite(t.tracked) || t.tracked <= 0)
      throw std::runtime_error("step " + std::to_string(step) + ": " + siteName(site) +
                               "'s tracked scale is " + std::to_string(t.tracked) +
                               "; refusing to freeze it (did training diverge?)");
    const auto& r = owner.m_config.removal;
    SiteNorm& n = model->norms().at(site);
    n.kind = NormKind::FakeLN;
    n.scale = t.tracked;
    n.scalePos0 = t.trackedPos0;
    n.pos0Treatment = r.pos0Treatment && !t.pos0Ended;
    n.eotTreatment = r.eotTreatment && site.kind == SiteKind::V && !t.eotEnded;
    n.realMix = r.interpolationSteps > 0 ? 1.0 : 0.0;
    t.fakeSince = step;
    t.rampFrom = r.interpolationSteps > 0 ? step : -1;
  }

  // Events of step `step` fire before its first micro-batch (PROTOCOL §4).
  void applyEvents(int64_t step) {
    std::vector<ScheduleEvent> due;
    {
      std::lock_guard<std::mutex> lock(scheduleMutex);
      if (step <= decidedThrough) return;  // already applied (run() called again after a failed step)
      for (const auto& e : schedule.events)
        if (e.step == step) due.push_back(e);
      decidedThrough = step;
      for (const auto& e : due) applied.emplace_back(e.id, e.step);
    }
    const int nLayer = model->config().nLayer;
    for (const auto& e : due) {
      json sites = json::array();
      for (const SiteId& site : Schedule::sitesOf(e, nLayer)) {
        SiteTracker& t = trackers[site];
        SiteNorm& n = model->norms().at(site);
        if (e.action == EventAction::MakeFake) {
          makeFake(site, step);
        } else if (e.action == EventAction::EndPos0Treatment) {
          t.pos0Ended = true;
          n.pos0Treatment = false;
        } else {
          t.eotEnded = true;
          n.eotTreatment = false;
        }
        json entry{{"site", siteName(site)}, {"scale", n.scale}, {"kind", normKindName(n.kind)}};
        if (n.pos0Treatment || n.eotTreatment) entry["scale_pos0"] = n.scalePos0;
        sites.push_back(entry);
      }
      record({{"type", "event"},
              {"step", step},
              {"event", toJson(Schedule{{e}})["events"][0]},
              {"description", describe(e)},
              {"sites", sites}});
    }
    // Interpolation ramps: the share of σ_t falls linearly to 0 over interpolationSteps.
    const int64_t ramp = owner.m_config.removal.interpolationSteps;
    if (ramp > 0) {
      for (auto& [site, t] : trackers) {
        if (t.rampFrom < 0) continue;
        model->norms().at(site).realMix =
            std::max(0.0, 1.0 - static_cast<double>(step - t.rampFrom) / static_cast<double>(ramp));
      }
    }
  }

  std::string nextEventText() const {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    for (const auto& e : schedule.events)
      if (e.step > decidedThrough) return describe(e);
    return "";
  }

  json scalesJson() const {
    json scales = json::object();
    for (const auto& [site, t] : trackers) {
      const SiteNorm& n = model->norms().at(site);
      scales[siteName(site)] = {{"tracked", t.hasValue ? json(t.tracked) : json()},
                                {"frozen", n.kind == NormKind::FakeLN ? json(n.scale) : json()}};
    }
    return scales;
  }

  void evaluateAll(int64_t step) {
    if (evalFiles.empty()) return;
    model->setNormObserver(nullptr);  // evaluation never moves the EMAs
    EvalOptions options;
    options.context = owner.m_config.optimizer.context;
    options.maxTokens = owner.m_config.eval.tokens;
    options.batchSize = owner.m_config.optimizer.microBatch;
    for (const TokenFile& file : evalFiles) {
      const EvalResult result = evaluate(*model, file, options);
      json r = toJson(result.summary);
      r.erase("calibration_bins");
      r["type"] = "eval";
      r["step"] = step;
      r["file"] = file.path();
      record(r);
    }
    if (observing) model->setNormObserver(this);
  }

  json stateJson() const {
    json trackerState = json::object();
    for (const auto& [site, t] : trackers) trackerState[siteName(site)] = trackerJson(t);
    std::vector<std::string> samplerState;
    for (uint64_t word : sampler->state()) samplerState.push_back(std::to_string(word));
    std::lock_guard<std::mutex> lock(scheduleMutex);
    return {{"format", "normfree-checkpoint"},
            {"version", 1},
            {"steps_done", owner.m_stepsDone.load()},
            {"sampler_state", samplerState},
            {"trackers", trackerState},
            {"schedule", toJson(schedule)},
            {"applied_events", applied},
            {"edits", edits},
            {"metrics_bytes", metrics ? static_cast<int64_t>(std::ftell(metrics)) : 0}};
  }

  void writeCheckpoint() {
    const std::string dir = run::checkpointsPath(owner.m_dir);
    const std::string name = run::checkpointName(owner.m_stepsDone.load());
    const std::string tmp = dir + "/." + name + ".tmp-" + std::to_string(::getpid());
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    saveModel(*model, tmp);
    torch::save(*optimizer, tmp + "/optimizer.pt");
    fsyncPath(tmp + "/optimizer.pt");
    writeFileAtomic(tmp + "/state.json", stateJson().dump(1) + "\n");
    fsyncPath(tmp);
    // The folder appears under its name only when complete; "latest" moves only after that. A checkpoint
    // of the same step (a finished run resumed) is moved aside first, never deleted before its successor.
    const std::string final = dir + "/" + name;
    const std::string aside = dir + "/." + name + ".old-" + std::to_string(::getpid());
    if (fs::exists(final)) fs::rename(final, aside);
    fs::rename(tmp, final);
    fsyncPath(dir);
    writeFileAtomic(dir + "/latest", name + "\n");
    fs::remove_all(aside);
    // Keep the newest few; never the one "latest" names; clear what killed writers left behind.
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string n = entry.path().filename().string();
      if (!entry.is_directory()) continue;
      if (n.rfind("step-", 0) == 0 && n < name)
        names.push_back(n);
      else if (n.rfind(".step-", 0) == 0)
        fs::remove_all(entry.path());
    }
    std::sort(names.begin(), names.end());
    const std::size_t keepOlder = static_cast<std::size_t>(std::max(1, owner.m_config.keepCheckpoints) - 1);
    for (std::size_t i = 0; i + keepOlder < names.size(); ++i) fs::remove_all(dir + "/" + names[i]);
    record({{"type", "checkpoint"}, {"step", owner.m_stepsDone.load()}, {"path", final}});
  }

  void saveFinal() {
    const std::string out = run::finalModelPath(owner.m_dir);
    saveModel(*model, out);
    copyTokenizerFiles(owner.m_config.model, out);
  }

  // The rules every live edit follows once its steps are known to be in the future: the schedule stays
  // valid; accepted edits are logged (metrics, checkpoint) and schedule.json is rewritten. Caller holds
  // scheduleMutex.
  EditResult commit(Schedule edited, std::vector<json> logs, int64_t id) {
    try {
      edited.validate(model->config().nLayer, owner.m_config.optimizer.maxSteps);
    } catch (const std::invalid_argument& e) {
      return {false, e.what()};
    }
    edited.sort();
    // The file first: if it cannot be written the edit is refused and nothing changed.
    try {
      writeFileAtomic(run::schedulePath(owner.m_dir), toJson(edited).dump(2) + "\n");
    } catch (const std::exception& e) {
      return {false, e.what()};
    }
    schedule = std::move(edited);
    for (json& log : logs) {
      log["at_step"] = decidedThrough + 1;
      edits.push_back(log);
      record(log);
    }
    return {true, "", id};
  }

  // Why an edit touching `step`, or event `id`, is too late (empty when it is not). Caller holds
  // scheduleMutex.
  std::string tooLate(int64_t step) const {
    if (step > decidedThrough) return "";
    return "step " + std::to_string(step) + " has already started (the run is at step " +
           std::to_string(decidedThrough) + ")";
  }
  std::string notEditable(int64_t id) const {
    const ScheduleEvent* e = schedule.find(id);
    if (!e) return "there is no event " + std::to_string(id);
    if (e->step <= decidedThrough)
      return "event " + std::to_string(id) + " (" + describe(*e) + ") has already been applied";
    return "";
  }

  void writeSchedule() const {
    writeFileAtomic(run::schedulePath(owner.m_dir), toJson(schedule).dump(2) + "\n");
  }
};

Trainer::Trainer(std::string runDir) : m_dir(std::move(runDir)), m_impl(std::make_unique<Impl>(*this)) {}
Trainer::~Trainer() = default;

GPT2Impl& Trainer::model() { return *m_impl->model; }

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

std::shared_ptr<MetricsQueue> Trainer::subscribe() {
  auto queue = std::make_shared<MetricsQueue>();
  std::lock_guard<std::mutex> lock(m_impl->listenersMutex);
  m_impl->listeners.push_back(queue);
  return queue;
}

std::unique_ptr<Trainer> Trainer::start(const std::string& runDir, const RunConfig& config) {
  if (fs::exists(run::configPath(runDir)))
    throw FileError(runDir, "already holds a run (config.json exists); resume it or choose another folder");
  validate(config, runDir);
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  t->m_config = config;
  Impl& d = *t->m_impl;
  d.device = torch::Device(config.device);
  if (config.mode == TrainingMode::Pretrain) {
    const ModelConfig shape = loadConfigFile(config.model + "/config.json");
    d.model = GPT2(shape.shape);
    d.model->initWeights(config.optimizer.seed);
    d.model->to(d.device);
  } else {
    d.model = loadModel(config.model, d.device);
  }
  d.model->setCudaBf16Autocast(config.optimizer.bf16);
  const int nLayer = d.model->config().nLayer;
  if (config.mode == TrainingMode::Remove) {
    d.schedule = config.schedule;
    d.highestId = d.schedule.nextId() - 1;
    d.schedule.sort();
    try {
      d.schedule.validate(nLayer, config.optimizer.maxSteps);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("the schedule does not fit this run:\n") + e.what());
    }
  }
  for (const SiteId& site : d.model->norms().sites()) {
    SiteTracker& tracker = d.trackers[site];
    const SiteNorm& n = d.model->norms().at(site);
    if (n.kind == NormKind::FakeLN) tracker.fakeSince = 0, tracker.hasValue = true, tracker.tracked = n.scale;
  }
  d.buildOptimizer();
  d.openData();
  fs::create_directories(run::checkpointsPath(runDir));
  t->m_config.schedule = d.schedule;
  writeFileAtomic(run::configPath(runDir), toJson(t->m_config).dump(2) + "\n");
  d.writeSchedule();
  d.openMetrics(0);
  d.record(
      {{"type", "start"}, {"mode", trainingModeName(config.mode)}, {"max_steps", config.optimizer.maxSteps}});
  if (config.mode == TrainingMode::Remove) {
    // Measure every site once before training, so an event at step 0 has a scale to freeze. A separate
    // sampler keeps the training batches identical to a run without this pass.
    BatchSampler calibration(TokenFile::open(config.trainData), config.optimizer.microBatch,
                             config.optimizer.context, config.optimizer.seed ^ 0x5eed5eedULL,
                             d.model->config().vocabSize);
    torch::NoGradGuard noGrad;
    d.model->setNormObserver(&d);
    d.collecting = true;
    const Batch b = calibration.next();
    const torch::Tensor inputs = b.inputs.to(d.device);
    d.model->forward(inputs);
    d.updateTrackers(inputs);
    d.collecting = false;
  }
  d.evaluateAll(0);
  return t;
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& runDir) {
  std::unique_ptr<Trainer> t(new Trainer(runDir));
  Impl& d = *t->m_impl;
  try {
    t->m_config =
        runConfigFromJson(json::parse(readTextFile(run::configPath(runDir))), run::configPath(runDir));
  } catch (const json::exception& e) {
    throw FileError(run::configPath(runDir), std::string("is not valid JSON: ") + e.what());
  }
  const std::string checkpoint = run::latestCheckpoint(runDir);
  if (checkpoint.empty())
    throw FileError(
        run::checkpointsPath(runDir),
        "holds no complete checkpoint to resume from (the run stopped before its first one): start it "
        "again in a new folder");
  const std::string statePath = checkpoint + "/state.json";
  json state;
  try {
    state = json::parse(readTextFile(statePath));
  } catch (const json::exception& e) {
    throw FileError(statePath, std::string("is not valid JSON: ") + e.what());
  }
  d.device = torch::Device(t->m_config.device);
  d.model = loadModel(checkpoint, d.device);
  d.model->setCudaBf16Autocast(t->m_config.optimizer.bf16);
  d.buildOptimizer();
  torch::load(*d.optimizer, checkpoint + "/optimizer.pt");
  d.openData();
  try {
    t->m_stepsDone = state.at("steps_done").get<int64_t>();
    Random::State s;
    const auto words = state.at("sampler_state").get<std::vector<std::string>>();
    for (std::size_t i = 0; i < 4; ++i) s[i] = std::stoull(words.at(i));
    d.sampler->setState(s);
    const int nLayer = d.model->config().nLayer;
    for (auto& [name, v] : state.at("trackers").items()) {
      SiteTracker& tr = d.trackers[parseSiteName(name, nLayer)];
      tr.hasValue = v.at("has_value");
      tr.tracked = v.at("tracked");
      tr.trackedPos0 = v.at("tracked_pos0");
      tr.fakeSince = v.at("fake_since");
      tr.rampFrom = v.value("ramp_from", int64_t{-1});
      tr.pos0Ended = v.at("pos0_ended");
      tr.eotEnded = v.at("eot_ended");
    }
    d.applied = state.at("applied_events").get<std::vector<std::pair<int64_t, int64_t>>>();
    d.edits = state.at("edits");
  } catch (const std::exception& e) {
    throw FileError(statePath, std::string("malformed checkpoint state: ") + e.what());
  }
  d.decidedThrough = t->m_stepsDone - 1;
  // The current schedule (live edits made after the checkpoint included) must agree with what the
  // checkpoint already applied: the companion code's resumed runs did not know which events had fired.
  const std::string schedulePath = run::schedulePath(runDir);
  try {
    d.schedule = scheduleFromJson(json::parse(readTextFile(schedulePath)), schedulePath);
    d.highestId = d.schedule.nextId() - 1;
    d.schedule.validate(d.model->config().nLayer, t->m_config.optimizer.maxSteps);
  } catch (const json::exception& e) {
    throw FileError(schedulePath, std::string("is not valid JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw FileError(schedulePath, std::string("is not a valid schedule for this run:\n") + e.what());
  }
  for (const auto& [id, step] : d.applied) {
    const ScheduleEvent* e = d.schedule.find(id);
    if (!e || e->step != step)
      throw FileError(schedulePath, "event " + std::to_string(id) + " was applied at step " +
                                        std::to_string(step) + " but the schedule " +
                                        (e ? "now puts it at step " + std::to_string(e->step)
                                           : std::string("no longer has it")));
  }
  for (const auto& e : d.schedule.events) {
    const bool wasApplied =
        std::any_of(d.applied.begin(), d.applied.end(), [&](auto& a) { return a.first == e.id; });
    if (e.step < t->m_stepsDone && !wasApplied)
      throw FileError(schedulePath, "event " + std::to_string(e.id) + " (" + describe(e) +
                                        ") lies before the checkpoint's step " +
                                        std::to_string(t->m_stepsDone) + " but was never applied");
  }
  d.openMetrics(state.value("metrics_bytes", int64_t{-1}));
  d.record({{"type", "resume"}, {"step", t->m_stepsDone.load()}, {"checkpoint", checkpoint}});
  return t;
}

void Trainer::requestStop() { m_stopRequested = true; }

bool Trainer::run(const ProgressFn& progress) {
  Impl& d = *m_impl;
  const OptimizerSettings& o = m_config.optimizer;
  const bool removing = d.removing();
  if (removing) d.model->setNormObserver(&d);
  d.observing = removing;
  const int64_t vocab = d.model->config().vocabSize;
  auto lastCheckpoint = m_stepsDone.load();
  bool finished = false;
  while (true) {
    const int64_t step = m_stepsDone.load();
    if (step >= o.maxSteps) {
      finished = true;
      break;
    }
    if (m_stopRequested.load()) break;
    // The weights and norm state change only under modelMutex; a waiting snapshot goes first.
    std::unique_lock<std::mutex> modelLock(d.modelMutex);
    d.snapshotTaken.wait(modelLock, [&] { return d.snapshotsWanted.load() == 0; });
    const auto started = std::chrono::steady_clock::now();
    d.sigmas.clear();  // nothing left over from a step that failed half-way
    for (auto& p : d.parameters) p.mutable_grad().reset();
    d.applyEvents(step);
    const double lr = learningRate(o, step);
    for (auto& group : d.optimizer->param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);

    torch::Tensor ceSum = torch::zeros({}, torch::TensorOptions().device(d.device));
    torch::Tensor auxSum = torch::zeros({}, torch::TensorOptions().device(d.device));
    for (int64_t micro = 0; micro < o.accumulation; ++micro) {
      const Batch batch = d.sampler->next();
      const torch::Tensor inputs = batch.inputs.to(d.device), targets = batch.targets.to(d.device);
      d.collecting = removing;
      const torch::Tensor logits = d.model->forward(inputs);
      d.collecting = false;
      const torch::Tensor ce =
          torch::nn::functional::cross_entropy(logits.view({-1, vocab}), targets.view({-1}));
      torch::Tensor loss = ce;
      if (removing && m_config.removal.auxWeight > 0) {
        const torch::Tensor aux =
            m_config.removal.auxWeight * auxiliaryLoss(d.lastFinalInput, inputs, d.model->config().eotTokenId,
                                                       d.model->config().layerNormEpsilon);
        loss = loss + aux;
        auxSum = auxSum + aux.detach();
      }
      (loss / static_cast<double>(o.accumulation)).backward();
      ceSum = ceSum + ce.detach();
      d.lastFinalInput = torch::Tensor();
      if (removing) d.updateTrackers(inputs);
    }
    const double ceValue = ceSum.item<double>() / o.accumulation,
                 auxValue = auxSum.item<double>() / o.accumulation;
    const double gradNorm = torch::nn::utils::clip_grad_norm_(
        d.parameters, o.clipNorm > 0 ? o.clipNorm : std::numeric_limits<double>::infinity());
    if (!std::isfinite(ceValue + auxValue) || !std::isfinite(gradNorm))
      throw std::runtime_error("step " + std::to_string(step + 1) + ": the loss (" +
                               std::to_string(ceValue + auxValue) + ") or gradient norm (" +
                               std::to_string(gradNorm) +
                               ") is not finite; stopped before updating the weights. Resume from the last "
                               "checkpoint with a lower learning rate or a later schedule.");
    d.optimizer->step();
    for (auto& p : d.parameters) p.mutable_grad().reset();  // dropping, not zeroing: 1.13 zeroes
    m_stepsDone = step + 1;
    modelLock.unlock();

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double ce = ceValue, aux = auxValue;
    const double tokensPerSecond = static_cast<double>(o.microBatch * o.accumulation * o.context) / seconds;
    json r{{"type", "step"},
           {"step", step + 1},
           {"ce", ce},
           {"aux", aux},
           {"loss", ce + aux},
           {"lr", lr},
           {"grad_norm", gradNorm},
           {"tokens_per_second", tokensPerSecond}};
    if (removing) r["scales"] = d.scalesJson();
    d.record(r);

    const int64_t done = step + 1;
    if (m_config.eval.interval > 0 && done % m_config.eval.interval == 0 && done < o.maxSteps)
      d.evaluateAll(done);
    if (m_config.checkpointInterval > 0 && done % m_config.checkpointInterval == 0 && done < o.maxSteps) {
      d.writeCheckpoint();
      lastCheckpoint = done;
    }
    if (progress) {
      char detail[160];
      const std::string next = d.nextEventText();
      std::snprintf(detail, sizeof detail, "loss %.4f  %.0f tok/s%s%s", ce + aux, tokensPerSecond,
                    next.empty() ? "" : "  next: ", next.c_str());
      progress({trainingModeName(m_config.mode), done, o.maxSteps, "steps", done == o.maxSteps, detail});
    }
  }
  if (removing) d.model->setNormObserver(nullptr);
  d.observing = false;
  if (finished) {
    if (lastCheckpoint != m_stepsDone.load()) {  // a finished run resumed again has nothing new to save
      d.evaluateAll(o.maxSteps);
      d.writeCheckpoint();
    }
    d.saveFinal();
    d.record({{"type", "finish"},
              {"step", m_stepsDone.load()},
              {"final", run::finalModelPath(m_dir)},
              {"layernorm_free", d.model->norms().isLayerNormFree()}});
  } else {
    if (lastCheckpoint != m_stepsDone.load()) d.writeCheckpoint();
    d.record({{"type", "stop"}, {"step", m_stepsDone.load()}});
  }
  m_stopRequested = false;  // handled: a later run() continues
  return finished;
}

Schedule Trainer::schedule() const {
  std::lock_guard<std::mutex> lock(m_impl->scheduleMutex);
  return m_impl->schedule;
}

EditResult Trainer::addEvent(ScheduleEvent event) {
  Impl& d = *m_impl;
  std::lock_guard<std::mutex> lock(d.scheduleMutex);
  if (auto why = d.tooLate(event.step); !why.empty()) return {false, why};
  // Never an id used before in this process (not even by a deleted event): callers keep ids as handles.
  event.id = std::max(d.schedule.nextId(), d.highestId + 1);
  Schedule edited = d.schedule;
  edited.events.push_back(event);
  EditResult r = d.commit(std::move(edited),
                          {{{"type", "edit"}, {"edit", "add"}, {"event", toJson(Schedule{{event}})["events"][0]}}},
                          event.id);
  if (r.accepted) d.highestId = event.id;
  return r;
}

EditResult Trainer::moveEvent(int64_t id, int64_t step) { return moveEvents({{id, step}}); }

EditResult Trainer::moveEvents(const std::vector<std::pair<int64_t, int64_t>>& idAndStep) {
  Impl& d = *m_impl;
  std::lock_guard<std::mutex> lock(d.scheduleMutex);
  Schedule edited = d.schedule;
  std::vector<json> logs;
  for (const auto& [id, step] : idAndStep) {
    if (auto why = d.notEditable(id); !why.empty()) return {false, why};
    if (auto why = d.tooLate(step); !why.empty()) return {false, why};
    for (auto& ev : edited.events)
      if (ev.id == id) {
        logs.push_back({{"type", "edit"}, {"edit", "move"}, {"event_id", id}, {"from", ev.step}, {"to", step}});
        ev.step = step;
      }
  }
  return d.commit(std::move(edited), std::move(logs), idAndStep.empty() ? 0 : idAndStep.front().first);
}

EditResult Trainer::deleteEvent(int64_t id) {
  Impl& d = *m_impl;
  std::lock_guard<std::mutex> lock(d.scheduleMutex);
  if (auto why = d.notEditable(id); !why.empty()) return {false, why};
  const json removed = toJson(Schedule{{*d.schedule.find(id)}})["events"][0];
  Schedule edited = d.schedule;
  edited.events.erase(std::remove_if(edited.events.begin(), edited.events.end(),
                                     [&](const ScheduleEvent& ev) { return ev.id == id; }),
                      edited.events.end());
  return d.commit(std::move(edited), {{{"type", "edit"}, {"edit", "delete"}, {"event", removed}}}, id);
}

}  // namespace nf
