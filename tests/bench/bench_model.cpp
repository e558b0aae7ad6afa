// Benchmark (not a test): forward and training-step tokens/s of the engine next to an eager PyTorch
// implementation of the same model (tests/reference/bench_eager.py), measured in the same invocation;
// prints the figures and the ratios.
//
// forward: the engine's model under no-grad. train: the engine's trainer itself (nf::Trainer, finetune,
// one micro-batch per step, clipping at 1, no evaluation or checkpoints) on random tokens, against an eager
// loop of forward, cross-entropy, backward, clipping and AdamW. The eager reference runs in two processes:
// as a user runs it, and with the C library's allocator set as the engine sets it (util/allocator.h), so the
// ratio shows what is left beyond that setting. Engine and references take turns call by call (lockstep):
// on a shared machine whose speed drifts by tens of percent within seconds, each ratio then compares calls
// made under the same load. Each figure is the median over calls after a warm-up.
//
// --profile N: instead, N steps of the engine's trainer under LibTorch's profiler (1.x, CPU): the self time
// of each operation, summed over the steps, largest first — the profile in docs/BENCHMARKS.md. The
// profiler's own memory grows while it runs, which slows every allocating operation: read the shares.
//
// usage: bench_model [--seconds S] [--only tiny|tiny8k|small] [--device cpu|cuda] [--profile STEPS]
//   S: seconds per measurement, engine and references together (default 20); the attention line takes S/4.
// Memory: both references stay resident beside the engine (each a model with AdamW's state: ~3 GB for GPT-2
// Small).
#include <torch/torch.h>
#if TORCH_VERSION_MAJOR < 2
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/token_file.h"
#include "model/attention.h"
#include "model/causal_lm.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"
#include "train/trainer.h"
#include "util/allocator.h"
#include "util/blas_threads.h"
#include "util/child_process.h"

namespace fs = std::filesystem;

namespace {

struct Shape {
  const char* name;
  int layers, heads, dModel, context, vocab, batch, seq;
};

// The bundled default model's shape (resources/tiny-gpt2: vocabulary 2,048), the same with the largest
// vocabulary the tiny target names (8,192; this file's "tiny" before 2026-11-24, which its comment mistook
// for the bundled model's), and GPT-2 Small.
const Shape kShapes[] = {
    {"tiny", 4, 4, 128, 128, 2048, 32, 128},
    {"tiny8k", 4, 4, 128, 128, 8192, 32, 128},
    {"small", 12, 12, 768, 1024, 50257, 4, 256},
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// Calls `round` until the budget is spent, at least three times.
template <typename F>
void roundsUntilSpent(double budget, F&& round) {
  const auto start = std::chrono::steady_clock::now();
  for (int rounds = 0;
       rounds < 3 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget;
       ++rounds)
    round();
}

// The eager reference (tests/reference/bench_eager.py) as a child process that runs one call per request.
class EagerReference {
 public:
  // Starts it with `environment` ("NAME=value" entries, replacing ours of those names) and waits until it
  // has built the model and run each call once. Throws, saying how the child ended, when it cannot.
  EagerReference(const Shape& s, const std::vector<std::string>& environment, std::string name)
      : m_name(std::move(name)) {
    std::vector<std::string> args = {NF_REFERENCE_PYTHON, std::string(NF_REFERENCE_DIR) + "/bench_eager.py"};
    for (int v : {s.layers, s.heads, s.dModel, s.context, s.vocab, s.batch, s.seq})
      args.push_back(std::to_string(v));
    std::vector<std::string> env = nf::environmentWith(environment);
    // Close-on-exec: a second reference must not inherit this one's pipes, or neither would see its input
    // end.
    int toChild[2] = {-1, -1}, fromChild[2] = {-1, -1};
    if (::pipe2(toChild, O_CLOEXEC) != 0 || ::pipe2(fromChild, O_CLOEXEC) != 0) {
      for (int fd : {toChild[0], toChild[1]})
        if (fd >= 0) ::close(fd);
      throw std::runtime_error(m_name + ": no pipe: " + std::strerror(errno));
    }
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_adddup2(&files, toChild[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&files, fromChild[1], STDOUT_FILENO);
    const int error = ::posix_spawnp(&m_pid, args[0].c_str(), &files, nullptr, nf::pointers(args).data(),
                                     nf::pointers(env).data());
    posix_spawn_file_actions_destroy(&files);
    ::close(toChild[0]), ::close(fromChild[1]);
    if (error != 0) {
      ::close(toChild[1]), ::close(fromChild[0]);
      m_pid = -1;
      throw std::runtime_error(m_name + ": cannot start " + args[0] + ": " + std::strerror(error));
    }
    m_in = ::fdopen(toChild[1], "w");
    m_out = ::fdopen(fromChild[0], "r");
    if (!m_in || !m_out) fail("no stream on its pipes");
    m_info = nlohmann::json::parse(readLine(), nullptr, /*allow_exceptions=*/false);
    if (!m_info.is_object() || !m_info.value("ready", false)) fail("it did not get ready");
  }

  ~EagerReference() { stop(); }
  EagerReference(const EagerReference&) = delete;
  EagerReference& operator=(const EagerReference&) = delete;

  // Runs `call` ("forward" or "train") there once; its seconds. Throws, saying how the child ended, if it
  // stops answering.
  double seconds(const char* call) {
    if (std::fprintf(m_in, "%s\n", call) < 0 || std::fflush(m_in) != 0) fail("it stopped reading");
    const std::string line = readLine();
    char* end = nullptr;
    const double value = std::strtod(line.c_str(), &end);
    if (line.empty() || end == line.c_str()) fail("it stopped answering");
    return value;
  }

  const nlohmann::json& info() const { return m_info; }

 private:
  std::string readLine() {
    char buf[4096];
    return m_out && std::fgets(buf, sizeof buf, m_out) ? std::string(buf) : std::string();
  }

  // Ends the child: the end of its input makes it exit. How it ended, or "" when it was not running.
  std::string stop() {
    if (m_in) std::fclose(m_in), m_in = nullptr;
    if (m_out) std::fclose(m_out), m_out = nullptr;
    if (m_pid <= 0) return "";
    int status = 0;
    const bool waited = ::waitpid(m_pid, &status, 0) == m_pid;
    m_pid = -1;
    return waited ? nf::howItEnded(status) : "ended, how is unknown";
  }

  [[noreturn]] void fail(const std::string& what) {
    const std::string ended = stop();
    throw std::runtime_error(m_name + ": " + what + (ended.empty() ? "" : " — it " + ended));
  }

  std::string m_name;
  pid_t m_pid = -1;
  std::FILE* m_in = nullptr;
  std::FILE* m_out = nullptr;
  nlohmann::json m_info;
};

// Seconds per call of the engine and of each reference, one entry per round: a round is one engine call
// and then one call of each reference, in an order that alternates between rounds.
struct Lockstep {
  std::vector<double> engine;
  std::vector<std::vector<double>> references;
  std::size_t rounds = 0;

  explicit Lockstep(std::size_t referenceCount) : references(referenceCount) {}
  void referencesCall(const std::vector<std::unique_ptr<EagerReference>>& refs, const char* call) {
    const bool reversed = rounds++ % 2 == 1;
    for (std::size_t j = 0; j < refs.size(); ++j) {
      const std::size_t i = reversed ? refs.size() - 1 - j : j;
      references[i].push_back(refs[i]->seconds(call));
    }
  }
};

// Runs `steps` more steps of the trainer on this thread under the profiler; prints each operation's self
// time (its time minus that of the operations it called) summed over the steps, as a share of the total.
void profileTrainer(nf::Trainer& trainer, int steps) {
#if TORCH_VERSION_MAJOR < 2
  using namespace torch::autograd::profiler;
  std::map<std::string, std::pair<double, int64_t>> self;  // name → (µs, calls)
  double wall = 0;
  {
    const auto start = std::chrono::steady_clock::now();
    TLSLegacyProfilerGuard guard(
        torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU),
        [&](const thread_event_lists& threads) {
          for (const auto& events : threads) {
            struct Open {
              const LegacyEvent* push;
              double children;
            };
            std::vector<Open> stack;
            for (const LegacyEvent& e : events) {
              if (e.kind() == EventKind::PushRange) {
                stack.push_back({&e, 0.0});
              } else if (e.kind() == EventKind::PopRange && !stack.empty()) {
                const Open open = stack.back();
                stack.pop_back();
                const double elapsed = open.push->cpuElapsedUs(e);
                auto& entry = self[open.push->name()];
                entry.first += elapsed - open.children;
                entry.second += 1;
                if (!stack.empty()) stack.back().children += elapsed;
              }
            }
          }
        });
    const int64_t target = trainer.stepsDone() + steps;
    trainer.run([&](const nf::Progress& p) {
      if (p.done >= target) trainer.requestStop();
    });
    wall = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> rows(self.begin(), self.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  double total = 0;
  for (const auto& r : rows) total += r.second.first;
  std::printf("%d steps, %.1f ms per step (wall, profiled), %.1f ms per step in operations\n", steps,
              wall / 1e3 / steps, total / 1e3 / steps);
  std::printf("%-44s %12s %8s %8s\n", "operation (self time)", "ms per step", "share", "calls");
  for (std::size_t i = 0; i < rows.size() && i < 30; ++i)
    std::printf("%-44s %12.2f %7.1f%% %8lld\n", rows[i].first.c_str(), rows[i].second.first / 1e3 / steps,
                100.0 * rows[i].second.first / total, static_cast<long long>(rows[i].second.second / steps));
#else
  (void)trainer, (void)steps;
  std::printf("--profile needs LibTorch 1.x's legacy profiler (this is %s)\n", TORCH_VERSION);
#endif
}

// The engine's trainer on random tokens (finetune, one micro-batch per step, clipping at 1, no evaluation or
// checkpoints), its model and data written under `work`.
std::unique_ptr<nf::Trainer> startTrainer(const Shape& s, const nf::ModelShape& shape,
                                          const std::string& device, const std::string& work) {
  {
    nf::CausalLM model = nf::makeModel(shape);
    nf::saveModel(*model, work + "/model");
    auto gen = at::detail::createCPUGenerator(1);
    const auto tokens = torch::randint(0, s.vocab, {1'000'000}, gen, torch::kInt);
    nf::TokenFileMeta meta;
    meta.vocabSize = s.vocab;
    meta.dtype = nf::tokenDTypeFor(s.vocab);
    nf::TokenFileWriter writer(work + "/train.bin", meta);
    writer.append(tokens.data_ptr<int32_t>(), tokens.numel());
    writer.finish();
  }
  nf::RunConfig config;
  config.mode = nf::TrainingMode::Finetune;
  config.model = work + "/model";
  config.trainData = work + "/train.bin";
  config.device = device;
  config.optimizer.microBatch = s.batch;
  config.optimizer.accumulation = 1;
  config.optimizer.context = s.seq;
  config.optimizer.maxSteps = 1'000'000;  // stopped when the budget is spent
  config.optimizer.clipNorm = 1.0;
  config.checkpointInterval = 0;
  config.keepCheckpoints = 1;
  config.eval.interval = 0;
  config.schedule = {};
  return nf::Trainer::start(work + "/run", config);
}

// The model's forward pass under no-grad and each reference's, in turns, until the budget is spent (at
// least three rounds after one warm-up call).
Lockstep forwardInLockstep(nf::CausalLMImpl& model, const torch::Tensor& tokens,
                           const std::vector<std::unique_ptr<EagerReference>>& refs, double budget) {
  auto call = [&] {
    torch::NoGradGuard noGrad;
    model.forward(tokens);
    if (tokens.is_cuda()) torch::cuda::synchronize();
  };
  call();
  Lockstep times(refs.size());
  roundsUntilSpent(budget, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    times.engine.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    times.referencesCall(refs, "forward");
  });
  return times;
}

// The trainer's steps after the first, each followed by one training step of each reference, until the
// budget is spent (at least four steps). The engine's seconds per step are the trainer's own (metrics.jsonl).
Lockstep trainingInLockstep(nf::Trainer& trainer, const std::string& runDir, double tokensPerStep,
                            const std::vector<std::unique_ptr<EagerReference>>& refs, double budget) {
  Lockstep times(refs.size());
  std::chrono::steady_clock::time_point firstStepDone;
  trainer.run([&](const nf::Progress& p) {
    if (p.done == 1) firstStepDone = std::chrono::steady_clock::now();
    if (p.done > 1) times.referencesCall(refs, "train");
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - firstStepDone).count();
    if (p.done >= 4 && elapsed >= budget) trainer.requestStop();
  });
  std::ifstream in(nf::run::metricsPath(runDir));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "step" && j["step"].get<int>() > 1)
      times.engine.push_back(tokensPerStep / j["tokens_per_second"].get<double>());
  }
  return times;
}

// One layer's attention, forward and backward, at the shape's size: the engine's causalAttention against the
// math path, causalPattern·v with batched products (which it replaces on LibTorch 1.13's CPU path; on 1.13's
// CUDA path both sides are the math path), in turns; median ms of each.
std::pair<double, double> attentionMilliseconds(const Shape& s, const torch::Device& device, double budget) {
  const int64_t B = s.batch, T = s.seq, H = s.heads, dh = s.dModel / s.heads, D = s.dModel;
  const torch::Tensor qkv = torch::randn({B, T, 3 * D}, torch::TensorOptions(device)).requires_grad_();
  auto call = [&](bool engine) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto parts = qkv.split(D, -1);
    auto heads = [&](const torch::Tensor& t) { return t.view({B, T, H, dh}).transpose(1, 2); };
    const torch::Tensor q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);
    const torch::Tensor z = engine ? nf::causalAttention(q, k, v) : torch::matmul(nf::causalPattern(q, k), v);
    const torch::Tensor merged = z.transpose(1, 2).reshape({-1, D});  // as the output projection reads it
    merged.backward(torch::ones_like(merged));
    if (device.is_cuda()) torch::cuda::synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  call(true), call(false);
  std::vector<double> engine, math;
  roundsUntilSpent(budget, [&] {
    engine.push_back(call(true));
    math.push_back(call(false));
  });
  return {median(engine), median(math)};
}

}  // namespace

int main(int argc, char** argv) {
  const bool allocatorSet = nf::keepFreedMemoryForReuse();  // as normfree and normfree-cli do
  const bool blasThreadsSleep = nf::letIdleBlasThreadsSleep();
  std::signal(SIGPIPE, SIG_IGN);  // a reference that dies is reported, not a silent end of this process
  double budget = 20.0;
  std::string only, deviceName = "cpu";
  int profileSteps = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    const bool known = a == "--seconds" || a == "--only" || a == "--device" || a == "--profile";
    if (!known || i + 1 == argc) {
      std::cerr << "usage: bench_model [--seconds S] [--only tiny|tiny8k|small] [--device cpu|cuda] "
                   "[--profile STEPS]\n";
      return 2;
    }
    const std::string value = argv[i + 1];
    if (a == "--seconds")
      budget = std::stod(value);
    else if (a == "--only")
      only = value;
    else if (a == "--device")
      deviceName = value;
    else
      profileSteps = std::stoi(value);
  }
  const torch::Device device(deviceName);
  std::printf(
      "LibTorch %s, ATen intra-op threads %d, device %s, %.0f s per measurement, allocator %s, idle BLAS "
      "threads %s\n",
      TORCH_VERSION, at::get_num_threads(), deviceName.c_str(), budget,
      allocatorSet ? "set (util/allocator.h)" : "NOT set",
      blasThreadsSleep ? "sleep (util/blas_threads.h)" : "as the BLAS runs them");
  std::printf("%-6s %-8s %13s %13s %7s %17s %7s\n", "shape", "measure", "engine tok/s", "eager tok/s",
              "ratio", "eager, same alloc", "ratio");
  const std::string work = (fs::temp_directory_path() / "nf-bench-model").string();
  for (const Shape& s : kShapes) {
    if (!only.empty() && only != s.name) continue;
    fs::remove_all(work);
    fs::create_directories(work);
    nf::ModelShape c;
    c.nLayer = s.layers;
    c.nHead = s.heads;
    c.nEmbd = s.dModel;
    c.nPositions = s.context;
    c.vocabSize = s.vocab;
    c.eotTokenId = s.vocab - 1;
    const double tokensPerStep = static_cast<double>(s.batch) * s.seq;
    if (profileSteps > 0) {
      std::printf("%s: the engine's training step, profiled\n", s.name);
      auto trainer = startTrainer(s, c, deviceName, work);
      trainer->run([&](const nf::Progress& p) {
        if (p.done >= 1) trainer->requestStop();
      });
      profileTrainer(*trainer, profileSteps);
      continue;
    }
    std::vector<std::unique_ptr<EagerReference>> refs;
    if (device.is_cpu()) {
      try {
        refs.push_back(std::make_unique<EagerReference>(s, std::vector<std::string>{}, "eager reference"));
        refs.push_back(std::make_unique<EagerReference>(
            s,
            std::vector<std::string>{"MALLOC_MMAP_THRESHOLD_=2147483647", "MALLOC_TRIM_THRESHOLD_=2147483647",
                                     "MALLOC_ARENA_MAX=1"},
            "eager reference with the engine's allocator setting"));
      } catch (const std::exception& e) {
        std::printf("(no eager reference: %s; it needs %s with torch)\n", e.what(), NF_REFERENCE_PYTHON);
        refs.clear();
      }
    }
    Lockstep forward(0), train(0);
    try {
      {
        nf::CausalLM model = nf::makeModel(c);
        model->to(device);
        const auto tokens = torch::randint(0, s.vocab, {s.batch, s.seq}, torch::kLong).to(device);
        forward = forwardInLockstep(*model, tokens, refs, budget);
      }
      auto trainer = startTrainer(s, c, deviceName, work);
      train = trainingInLockstep(*trainer, work + "/run", tokensPerStep, refs, budget);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_model: %s\n", e.what());
      return 1;
    }
    fs::remove_all(work);

    auto row = [&](const char* what, const Lockstep& times) {
      const double ours = tokensPerStep / median(times.engine);
      std::printf("%-6s %-8s %13.0f", s.name, what, ours);
      for (std::size_t i = 0; i < 2; ++i) {
        const char* format = i == 0 ? " %13.0f %7.2f" : " %17.0f %7.2f";
        if (i >= times.references.size()) {
          std::printf(i == 0 ? " %13s %7s" : " %17s %7s", "-", "-");
        } else {
          const double theirs = tokensPerStep / median(times.references[i]);
          std::printf(format, theirs, ours / theirs);
        }
      }
      std::printf("   (%zu rounds)\n", times.engine.size());
    };
    row("forward", forward);
    row("train", train);
    if (!refs.empty())
      std::printf("       (eager: PyTorch %s, %d threads)\n",
                  refs[0]->info()["torch"].get<std::string>().c_str(), refs[0]->info()["threads"].get<int>());
    const auto [attention, mathPath] = attentionMilliseconds(s, device, budget / 4);
    std::printf(
        "       (one layer's attention, forward and backward: %.2f ms; as causalPattern·v: %.2f ms; %.2fx)\n",
        attention, mathPath, mathPath / attention);
    std::fflush(stdout);
  }
  return 0;
}
