// normfree-cli training commands: pretrain, finetune, remove, resume, join.
#include <sys/prctl.h>
#include <torch/torch.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "commands.h"
#include "distributed/local_launcher.h"
#include "distributed/worker_environment.h"
#include "model/device_memory.h"
#include "model/hf_checkpoint.h"
#include "options.h"
#include "progress_bar.h"
#include "run_options.h"
#ifdef NF_STEERING
#include "serve/steering_server.h"
#endif
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/memory_plan.h"
#include "train/trainer.h"
#include "util/exit_status.h"
#include "util/scope_exit.h"

namespace nf::cli {
namespace {

// Ctrl-C (SIGINT) and SIGTERM — what Slurm, systemd, docker stop and timeout send before they kill — finish
// the step, write a checkpoint and exit 3; a second one stops at once, as the sender then expects. One
// within a second of the first is the same request: a worker of --nproc gets the terminal's Ctrl-C and its
// launcher's copy of it together (it had been killed by the pair, its steps since the checkpoint lost).
std::atomic<Trainer*> g_running{nullptr};
std::atomic<int64_t> g_firstStopSignalNs{-1};
static_assert(std::atomic<int64_t>::is_always_lock_free, "read and written in a signal handler");
int64_t monotonicNs() {  // clock_gettime is async-signal-safe
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}
extern "C" void onInterrupt(int signal) {
  Trainer* t = g_running.load();
  if (t && !t->stopRequested()) {
    g_firstStopSignalNs = monotonicNs();
    t->requestStopFromSignal();
    return;
  }
  if (t && monotonicNs() - g_firstStopSignalNs.load() < 1'000'000'000) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}
// SIGHUP — a closed terminal, or a launched worker's launcher gone (the kernel may send it once per thread) —
// only ever asks for the stop: it never escalates.
extern "C" void onHangup(int) {
  if (Trainer* t = g_running.load()) t->requestStopFromSignal();
}

// How many workers train the run, and whether it is served (pretrain, finetune, remove, resume).
struct WorkerOptions {
  int nproc = 1;
  double timeout = 600;
  bool timeoutGiven = false;
  std::string serve;
  bool serveRemote = false;
};

void addWorkerOptions(CLI::App& command, WorkerOptions& o) {
  command
      .add_option("--nproc", o.nproc,
                  "workers to start on this machine, each with its share of every batch (one GPU each on "
                  "cuda). Under torchrun or srun, which start the workers themselves, leave it out: each "
                  "worker reads RANK, WORLD_SIZE, MASTER_ADDR, … (docs/TRAINING.md)")
      ->type_name("n")
      ->transform(atLeast(1))
      ->capture_default_str();
  command
      .add_option("--worker-timeout", o.timeout,
                  "seconds a worker waits for the others (to join, or in one exchange) before it stops and "
                  "names those that did not answer; longer than the slowest checkpoint")
      ->type_name("s")
      ->transform(inRange(0.0, 1e7, true))  // beyond ~115 days the launcher's deadline would overflow
      ->each([&o](const std::string&) { o.timeoutGiven = true; })
      ->capture_default_str();
  command
      .add_option("--serve", o.serve,
                  "serve the run for steering over HTTP on [HOST:]PORT (host 127.0.0.1; port 0: a free one); "
                  "the address and token go to RUN/serve.json (owner-only). docs/STEERING.md")
      ->type_name("[host:]port")
      ->check([](const std::string& address) {  // at parse time: before any run folder is made
        if (address.empty()) return std::string("needs an address, [host:]port (0: a free port)");
#ifdef NF_STEERING
        try {
          parseServeAddress(address);
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
#endif
        return std::string();
      });
  command
      .add_flag("--serve-remote", o.serveRemote,
                "allow --serve on an address other than loopback (prefer an SSH tunnel)")
      ->needs("--serve");
}

// This process's place among a multi-worker run's workers, from torchrun's variables (none: one process).
std::optional<WorkerEnvironment> workerFromEnvironment() {
  try {
    return readWorkerEnvironment();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("the multi-worker environment is malformed: ") + e.what());
  }
}

// The command line without "--nproc N": what each worker the launcher starts is given.
std::vector<std::string> argumentsForWorkers() {
  std::vector<std::string> kept;
  const auto& all = commandLineArguments();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == "--nproc") {
      ++i;
      continue;
    }
    if (all[i].rfind("--nproc=", 0) == 0) continue;
    kept.push_back(all[i]);
  }
  return kept;
}

// --fit: the memory plan for the run's device, applied to its settings before it starts; says what it chose.
// On the CPU the workers of this machine (`nproc`, or the launcher's count a worker was started with) share
// its memory, each holding its own weights, gradients and optimizer state: each plans for its share (they
// had each planned for all of it).
void fitToDevice(RunConfig& config, int nproc) {
  const ModelShape shape = loadConfigFile(config.model + "/config.json").shape;
  const int64_t free = deviceMemory(config.device).freeBytes;
  const std::optional<WorkerEnvironment> worker = workerFromEnvironment();
  const int sharing = config.device == "cpu" ? std::max(1, worker ? worker->localWorldSize : nproc) : 1;
  const int64_t available = free / sharing;
  const MemoryPlan plan = planTrainingMemory(planRequest(config, shape, available));
  const std::string predicted =
      formatBytes(plan.estimate.total) + " predicted of " + formatBytes(plan.usableBytes) + " usable (" +
      formatBytes(free) + " free on " + config.device +
      (sharing > 1 ? ", shared by " + std::to_string(sharing) + " workers" : std::string()) + ")";
  if (!plan.fits)
    throw std::runtime_error("--fit: the run does not fit on " + config.device + ": " + plan.reason);
  const int64_t asked = config.optimizer.microBatch;
  applyPlan(plan, config);
  std::cerr << "fit: micro-batch " << plan.microBatch << " × accumulation " << plan.accumulation
            << ", activation checkpointing " << (plan.activationCheckpointing ? "on" : "off") << "; "
            << predicted << "; " << plan.reason << "\n";
  if (config.mode == TrainingMode::Remove && asked != plan.microBatch)
    std::cerr << "fit: a removal's statistics are per micro-batch (the auxiliary loss's target σ̂, the σ "
                 "average, whose k stays "
              << config.removal.emaMomentum << " per micro-batch: --ema k^(" << plan.microBatch << "/"
              << asked
              << ") keeps its span in tokens): this split gives a close, not identical, removal to the "
                 "preset's\n";
}

// --serve's endpoint: its address bound before the run folder is made (a port in use or a bad address
// leaves no folder that neither the command nor resume would take), serving the run once its trainer
// exists, and closed before the trainer goes. Only worker 0 serves.
class ServeEndpoint {
 public:
  ServeEndpoint(const WorkerOptions& w, bool mainWorker) : m_remote(w.serveRemote) {
    if (w.serve.empty() || !mainWorker) return;
#ifdef NF_STEERING
    ServeOptions serve;
    try {
      serve = parseServeAddress(w.serve);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--serve: ") + e.what());
    }
    serve.allowRemote = w.serveRemote;
    m_server = std::make_unique<SteeringServer>(serve);
#else
    throw UsageError("--serve: this build has no steering endpoint (NF_STEERING off)");
#endif
  }

  void serve(Trainer& trainer) {
#ifdef NF_STEERING
    if (!m_server) return;
    m_server->serve(trainer);
    if (m_remote)
      std::cerr << "warning: the run is served on " << m_server->host()
                << ", beyond this machine; anyone who learns the token can steer it\n";
    std::cerr << "serving the run at http://" << m_server->host() << ":" << m_server->port() << " (token "
              << m_server->token() << ", also in " << run::servePath(trainer.runDir()) << ")\n";
#endif
  }

  void runEnded() {
#ifdef NF_STEERING
    if (m_server) m_server->runEnded();
#endif
  }

  void close() {
#ifdef NF_STEERING
    m_server.reset();
#endif
  }

 private:
  bool m_remote;
#ifdef NF_STEERING
  std::unique_ptr<SteeringServer> m_server;
#endif
};

int train(std::unique_ptr<Trainer> trainer, ServeEndpoint& endpoint) {
  ScopeExit closeFirst([&] { endpoint.close(); });  // the server reads the trainer until it stops
  endpoint.serve(*trainer);
  g_running = trainer.get();
  auto previousInt = std::signal(SIGINT, onInterrupt), previousTerm = std::signal(SIGTERM, onInterrupt),
       previousHup = std::signal(SIGHUP, onHangup);
  const bool main = trainer->isMainWorker();  // the others train quietly
  // The run's warnings (those of its start or resume, a checkpoint that could not be written, a disk filling
  // up), its tracked analyses and why it finished early on stderr, as they come.
  const std::shared_ptr<MetricsQueue> records = main ? trainer->subscribe(true) : nullptr;  // worker 0 logs
  auto printWarnings = [records] {
    if (!records) return;
    for (const std::string& line : records->drain()) {
      const auto r = nlohmann::json::parse(line, nullptr, false);
      if (!r.is_object()) continue;
      if (r.value(record::kType, "") == record::kWarning)
        std::cerr << "\nwarning: " << r.value("message", "") << "\n";
      if (r.value(record::kType, "") == record::kFinish && r.contains("reason"))  // before the budget's end
        std::cerr << "\nfinished at step " << r.value("step", 0) << ": " << r.value("reason", "") << "\n";
      if (r.value(record::kType, "") == record::kTrack) {
        std::ostringstream text;
        text << "\ntracked at step " << r.value("step", 0) << (r.value("event", false) ? " (removal)" : "")
             << ":";
        for (const auto& [name, value] : r["values"].items()) {
          text << "  " << name << " ";
          if (value.is_number())
            text << std::setprecision(4) << value.get<double>();
          else
            text << "undefined";  // null: a NaN or an infinity (a blown-up model's CE), or no effect to patch
        }
        std::cerr << text.str() << "\n";
      }
    }
  };
  ProgressFn progress;
  if (main)
    progress = [bar = progressBar(), printWarnings](const Progress& p) {
      printWarnings();
      bar(p);
    };
  const bool finished = trainer->run(progress);
  endpoint.runEnded();  // until it closes, it refuses what would never take effect
  printWarnings();
  std::signal(SIGINT, previousInt);
  std::signal(SIGTERM, previousTerm);
  std::signal(SIGHUP, previousHup);
  g_running = nullptr;
  const int status = finished ? exit_status::kSuccess : exit_status::kStopped;
  if (!main) return status;
  printJson({{"run", trainer->runDir()},
             {"finished", finished},
             {"steps", trainer->stepsDone()},
             {"final", finished ? run::finalModelPath(trainer->runDir()) : ""},
             {"checkpoint", run::latestCheckpoint(trainer->runDir())}});
  return status;
}

// One worker here (or, under torchrun, this one of many), or `--nproc` workers started by a launcher.
int trainAsWorkers(
    const WorkerOptions& w,
    const std::function<std::unique_ptr<Trainer>(const std::optional<WorkerEnvironment>&)>& make) {
  std::optional<WorkerEnvironment> worker = workerFromEnvironment();
  if (worker && w.nproc > 1)
    throw UsageError("--nproc starts workers itself, but this process is already one of " +
                     std::to_string(worker->worldSize) +
                     " (RANK is set, e.g. by torchrun): leave --nproc out");
  if (w.timeoutGiven && w.nproc <= 1 && !worker)
    throw UsageError(
        "--worker-timeout: this run has no other workers to wait for (give --nproc N, or run it "
        "under torchrun)");
  if (w.nproc > 1) {
    // A bad or busy --serve is named here, before any worker starts: in worker 0 alone it left the others
    // waiting out --worker-timeout. The probe binds and lets go; worker 0 binds again.
    { ServeEndpoint probe(w, true); }
    LaunchOptions launch;
    launch.workers = w.nproc;
    launch.program = "/proc/self/exe";
    launch.arguments = argumentsForWorkers();
    launch.timeoutSeconds = w.timeout;
    return launchLocalWorkers(launch, std::cerr);
  }
  if (worker) {
    worker->timeoutSeconds = w.timeout;
    // A worker outlives no launcher: when the process that started it dies, even by SIGKILL, the kernel
    // sends it SIGHUP, which stops it with a checkpoint. The parent may have died before the request: then
    // at once.
    const pid_t parent = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (::getppid() != parent) std::raise(SIGHUP);
    // A store whose host died must fail a write with an error the worker names, not end it by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
  }
  ServeEndpoint endpoint(w, !worker || worker->isMain());
  return train(make(worker), endpoint);
}

void startRun(CLI::App& command, TrainingMode mode, const std::string& description) {
  command.description(description);
  auto o = std::make_shared<RunOptions>();
  auto workers = std::make_shared<WorkerOptions>();
  addRunOptions(command, *o);
  addWorkerOptions(command, *workers);
  if (mode == TrainingMode::Remove) {
    command.add_option("--schedule", o->schedule, "removal schedule (default: the preset's)")
        ->type_name("file.json");
    addOptional(command, "--aux-weight", o->auxWeight,
                "weight of the auxiliary loss on ln_f's input (default: the preset's)")
        ->type_name("λ")
        ->transform(atLeast(0.0));
    addOptional(command, "--ema", o->ema, "EMA momentum of the tracked LN scale (default: the preset's)")
        ->type_name("k")
        ->transform(fraction());
    command
        .add_option("--interpolation-steps", o->interpolationSteps,
                    "ramp each site's divisor from σ to s over n steps (0: off)")
        ->type_name("n")
        ->transform(atLeast<int64_t>(0))
        ->capture_default_str();
    command.add_flag("--pos0-treatment", o->pos0Treatment,
                     "sites that turn fake divide position 0 by their own s_0 (blog recipe)");
    command.add_flag("--eot-treatment", o->eotTreatment,
                     "LN_v sites that turn fake divide end-of-text tokens by s_0 (blog recipe)");
    CLI::Option* autopilot = command.add_flag(
        "--autopilot", o->autopilot,
        "decide while training when each removal fires: the schedule (the preset's or "
        "--schedule's) gives their order and the first one's step; the next fires once the loss "
        "has recovered from the last; after the last, the run ends once the loss stops improving "
        "(docs/TRAINING.md, \"The autopilot\")");
    command
        .add_option("--autopilot-tolerance", o->pilot.tolerance,
                    "nats the smoothed loss may stay above its level before the last removal")
        ->type_name("nats")
        ->transform(inRange(0.0, 10.0, true))
        ->capture_default_str()
        ->needs(autopilot);
    command.add_option("--autopilot-min-gap", o->pilot.minGap, "steps between two removals, at least")
        ->type_name("n")
        ->transform(atLeast<int64_t>(1))
        ->capture_default_str()
        ->needs(autopilot);
    command.add_option("--autopilot-max-gap", o->pilot.maxGap, "steps between two removals, at most")
        ->type_name("n")
        ->transform(inRange<int64_t>(1, 1'000'000))
        ->capture_default_str()
        ->needs(autopilot);
    command
        .add_option("--autopilot-max-group", o->pilot.maxGroup,
                    "removals of one kind of site that may fire together")
        ->type_name("n")
        ->transform(inRange(1, 64))
        ->capture_default_str()
        ->needs(autopilot);
    command
        .add_option(
            "--autopilot-patience", o->pilot.patience,
            "after the last removal, end the run once the mean loss of the last n steps falls short "
            "of improving on the n before it, beyond twice its noise (0: train to the end of the step "
            "budget)")
        ->type_name("n")
        ->transform(inRange<int64_t>(0, 1'000'000))
        ->capture_default_str()
        ->needs(autopilot);
    command
        .add_option("--autopilot-min-improvement", o->pilot.minImprovement,
                    "nats the mean loss of n steps must fall below that of the n before to count as "
                    "improving")
        ->type_name("nats")
        ->transform(inRange(0.0, 10.0))
        ->capture_default_str()
        ->needs(autopilot);
  }
  onRun(command, [o, mode, workers] {
    if (o->fit && o->activationCheckpointing)
      throw UsageError("--fit chooses activation checkpointing itself: leave out --activation-checkpointing");
    RunConfig config = runConfigFrom(*o, mode);
    if (o->fit) fitToDevice(config, workers->nproc);
    return trainAsWorkers(*workers, [&](const std::optional<WorkerEnvironment>& worker) {
      return Trainer::start(o->run, config, worker);
    });
  });
}

}  // namespace

void cmdPretrain(CLI::App& command) {
  startRun(command, TrainingMode::Pretrain,
           "Train a model from scratch (with its norms). --model names a folder whose config.json gives "
           "the shape (e.g. one written by 'init'); the weights are initialised from --seed.");
}

void cmdFinetune(CLI::App& command) {
  startRun(command, TrainingMode::Finetune,
           "The vanilla control: fine-tune with the same data, learning rate and steps as a removal run, "
           "removing nothing and without the auxiliary loss.");
}

void cmdRemove(CLI::App& command) {
  startRun(command, TrainingMode::Remove,
           "Remove LayerNorm (or RMSNorm) by fine-tuning (PROTOCOL §2–4): each site is tracked by an EMA "
           "of its scale and replaced by a FakeLN (FakeRMSNorm) with that scale frozen at the step the "
           "schedule says, with the auxiliary loss on the final norm's input. Ctrl-C stops after the current "
           "step and writes a "
           "checkpoint; 'resume' continues.");
}

void cmdResume(CLI::App& command) {
  command.description(
      "Continue a run from its newest checkpoint, with the same or another number of workers (on CPU the "
      "result is bit-identical to an uninterrupted run with as many workers).");
  struct Options {
    std::string run, schedule;
    std::optional<double> lr, minLr;
    std::optional<int64_t> steps, patience;
    std::optional<int> keepCheckpoints;
  };
  auto o = std::make_shared<Options>();
  auto workers = std::make_shared<WorkerOptions>();
  command.add_option("run", o->run, "run directory")->required();
  addOptional(command, "--steps", o->steps,
              "a new step budget, e.g. to train on after the run finished (written to config.json; the "
              "cosine decay stretches to it; the autopilot's plateau is counted afresh)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  addOptional(command, "--autopilot-patience", o->patience,
              "a new plateau for the autopilot, counted from the resumed step (0: train to the end of the "
              "step budget)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0));
  addOptional(command, "--lr", o->lr,
              "a new peak learning rate, e.g. after a divergence (written to config.json; the resume "
              "record keeps the change)")
      ->type_name("η")
      ->transform(above(0.0));
  addOptional(command, "--min-lr", o->minLr, "a new final learning rate of the cosine decay")
      ->type_name("η")
      ->transform(atLeast(0.0));
  addOptional(command, "--keep-checkpoints", o->keepCheckpoints,
              "how many of the newest checkpoints stay on disk from now on (0: every one)")
      ->type_name("n")
      ->transform(atLeast<int>(0));
  command
      .add_option("--schedule", o->schedule,
                  "a new removal schedule (written to schedule.json); it must keep the events the "
                  "checkpoint has applied, at their steps")
      ->type_name("file.json");
  addWorkerOptions(command, *workers);
  onRun(command, [o, workers] {
    ResumeOverrides overrides;
    overrides.lr = o->lr;
    overrides.minLr = o->minLr;
    overrides.maxSteps = o->steps;
    overrides.autopilotPatience = o->patience;
    overrides.keepCheckpoints = o->keepCheckpoints;
    if (!o->schedule.empty()) {
      overrides.schedule = readScheduleFile(o->schedule);
      overrides.scheduleSource = o->schedule;
    }
    return trainAsWorkers(*workers, [&](const std::optional<WorkerEnvironment>& worker) {
      return Trainer::resume(o->run, worker, overrides);
    });
  });
}

void cmdJoin(CLI::App& command) {
  command.description(
      "Train as one of the workers of a run that worker 0 is starting, with worker 0's settings: the "
      "workbench trains as worker 0 and starts the others with this command. Needs the multi-worker "
      "environment (RANK ≥ 1, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; docs/TRAINING.md). A resumed run's "
      "other workers run 'resume' instead.");
  struct Options {
    std::string run, device = "cpu";
    double timeout = 600;
  };
  auto o = std::make_shared<Options>();
  command.add_option("run", o->run, "the run directory worker 0 creates")->required();
  command.add_option("--device", o->device, "where to train (a GPU per local rank on cuda)")
      ->type_name("cpu|cuda[:N]")
      ->capture_default_str();
  command.add_option("--worker-timeout", o->timeout, "seconds to wait for the other workers")
      ->type_name("s")
      ->transform(above(0.0))
      ->capture_default_str();
  onRun(command, [o] {
    std::optional<WorkerEnvironment> worker = workerFromEnvironment();
    if (!worker || worker->isMain())
      throw UsageError(
          "join is for workers other than worker 0: set RANK ≥ 1 and WORLD_SIZE (and "
          "MASTER_ADDR, MASTER_PORT)");
    worker->timeoutSeconds = o->timeout;
    RunConfig config;  // only the device counts until worker 0's settings arrive
    config.device = parseDevice(o->device).str();
    ServeEndpoint none({}, false);
    return train(Trainer::start(o->run, config, *worker), none);
  });
}

}  // namespace nf::cli
