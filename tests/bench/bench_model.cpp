// Benchmark (not a test): forward and training-step tokens/s of the engine next to an eager PyTorch
// implementation of the same model (tests/reference/bench_eager.py), measured in the same invocation;
// prints the figures and the ratios.
//
// forward: the engine's model under no-grad. train: the engine's trainer itself (nf::Trainer, finetune,
// one micro-batch per step, clipping at 1, no evaluation or checkpoints) on random tokens, against an eager
// loop of forward, cross-entropy, backward, clipping and AdamW. Each figure is the median over steps after
// a warm-up. The eager reference runs twice: as a user runs it, and with the C library's allocator set as
// the engine sets it (util/allocator.h), so the ratio shows what is left beyond that setting.
//
// --profile N: instead, N steps of the engine's trainer under LibTorch's profiler (1.x, CPU): the self time
// of each operation, summed over the steps, largest first — the profile in docs/BENCHMARKS.md. The
// profiler's own memory grows while it runs, which slows every allocating operation: read the shares.
//
// usage: bench_model [--seconds S] [--only tiny|small] [--device cpu|cuda] [--profile STEPS]
#include <torch/torch.h>
#if TORCH_VERSION_MAJOR < 2
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "data/token_file.h"
#include "model/causal_lm.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"
#include "train/trainer.h"
#include "util/allocator.h"

namespace fs = std::filesystem;

namespace {

struct Shape {
  const char* name;
  int layers, heads, dModel, context, vocab, batch, seq;
};

// The tiny shape of the bundled default model (its vocabulary is our own BPE's, 8192 here) and GPT-2 Small.
const Shape kShapes[] = {
    {"tiny", 4, 4, 128, 128, 8192, 32, 128},
    {"small", 12, 12, 768, 1024, 50257, 4, 256},
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// Median seconds per call after one warm-up call, over calls until the budget is spent (at least three).
template <typename F>
double secondsPerCall(F&& call, double budget) {
  call();
  std::vector<double> seconds;
  const auto start = std::chrono::steady_clock::now();
  while (seconds.size() < 3 ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(seconds);
}

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

// The trainer's median tokens/s over its steps after the first, run until the budget is spent (≥ 4 steps).
// profileSteps > 0: runs that many steps after the first under the profiler and prints its table instead.
double trainerTokensPerSecond(const Shape& s, const nf::ModelShape& shape, const std::string& device,
                              double budget, const std::string& work, int profileSteps = 0) {
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
  const std::string runDir = work + "/run";
  auto trainer = nf::Trainer::start(runDir, config);
  if (profileSteps > 0) {
    trainer->run([&](const nf::Progress& p) {
      if (p.done >= 1) trainer->requestStop();
    });
    profileTrainer(*trainer, profileSteps);
    return 0;
  }
  std::chrono::steady_clock::time_point firstStepDone;
  trainer->run([&](const nf::Progress& p) {
    if (p.done == 1) firstStepDone = std::chrono::steady_clock::now();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - firstStepDone).count();
    if (p.done >= 4 && elapsed >= budget) trainer->requestStop();
  });
  trainer.reset();
  std::vector<double> rates;
  std::ifstream in(nf::run::metricsPath(runDir));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "step" && j["step"].get<int>() > 1) rates.push_back(j["tokens_per_second"]);
  }
  return median(rates);
}

nlohmann::json runEager(const Shape& s, double budget, const char* environment) {
  char cmd[1024];
  std::snprintf(cmd, sizeof cmd, "%s %s %s/bench_eager.py %d %d %d %d %d %d %d %g", environment,
                NF_REFERENCE_PYTHON, NF_REFERENCE_DIR, s.layers, s.heads, s.dModel, s.context, s.vocab,
                s.batch, s.seq, budget);
  std::FILE* pipe = ::popen(cmd, "r");
  if (!pipe) return nullptr;
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  if (::pclose(pipe) != 0 || out.empty()) return nullptr;
  return nlohmann::json::parse(out);
}

}  // namespace

int main(int argc, char** argv) {
  const bool allocatorSet = nf::keepFreedMemoryForReuse();  // as normfree and normfree-cli do
  double budget = 5.0;
  std::string only, deviceName = "cpu";
  int profileSteps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      budget = std::stod(argv[i + 1]);
    else if (a == "--only")
      only = argv[i + 1];
    else if (a == "--device")
      deviceName = argv[i + 1];
    else if (a == "--profile")
      profileSteps = std::stoi(argv[i + 1]);
    else {
      std::cerr
          << "usage: bench_model [--seconds S] [--only tiny|small] [--device cpu|cuda] [--profile STEPS]\n";
      return 2;
    }
  }
  const torch::Device device(deviceName);
  std::printf("LibTorch %s, ATen intra-op threads %d, device %s, %.0f s per measurement, allocator %s\n",
              TORCH_VERSION, at::get_num_threads(), deviceName.c_str(), budget,
              allocatorSet ? "set (util/allocator.h)" : "NOT set");
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
      trainerTokensPerSecond(s, c, deviceName, budget, work, profileSteps);
      continue;
    }
    double forward = 0;
    {
      nf::CausalLM model = nf::makeModel(c);
      model->to(device);
      auto x = torch::randint(0, s.vocab, {s.batch, s.seq}, torch::kLong).to(device);
      forward = tokensPerStep / secondsPerCall(
                                    [&] {
                                      torch::NoGradGuard noGrad;
                                      model->forward(x);
                                      if (device.is_cuda()) torch::cuda::synchronize();
                                    },
                                    budget);
    }
    const double train = trainerTokensPerSecond(s, c, deviceName, budget, work);
    fs::remove_all(work);

    nlohmann::json eager, eagerSameAllocator;
    if (device.is_cpu()) {
      eager = runEager(s, budget, "");
      eagerSameAllocator =
          runEager(s, budget,
                   "MALLOC_MMAP_THRESHOLD_=2147483647 MALLOC_TRIM_THRESHOLD_=2147483647 MALLOC_ARENA_MAX=1");
    }
    auto row = [&](const char* what, double ours, const char* key) {
      std::printf("%-6s %-8s %13.0f", s.name, what, ours);
      for (const nlohmann::json* e : {&eager, &eagerSameAllocator}) {
        if (e->is_null()) {
          std::printf(" %13s %7s", "-", "-");
        } else {
          const double theirs = (*e)[key].get<double>();
          std::printf(e == &eager ? " %13.0f %7.2f" : " %17.0f %7.2f", theirs, ours / theirs);
        }
      }
      std::printf("\n");
    };
    row("forward", forward, "forward_tokens_per_s");
    row("train", train, "train_tokens_per_s");
    if (!eager.is_null())
      std::printf("       (eager: PyTorch %s, %d threads)\n", eager["torch"].get<std::string>().c_str(),
                  eager["threads"].get<int>());
    std::fflush(stdout);
  }
  return 0;
}
