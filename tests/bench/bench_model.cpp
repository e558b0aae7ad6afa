// Benchmark (not a test): forward and training-step tokens/s of the engine's GPT-2 next to an eager PyTorch
// implementation of the same model, measured in the same invocation; prints the figures and the ratios.
//
// usage: bench_model [--seconds S] [--only tiny|small] [--device cpu|cuda]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"

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

template <typename F>
double secondsPerCall(F&& step, double budget) {
  step();  // warm-up
  int n = 0;
  auto start = std::chrono::steady_clock::now();
  while (true) {
    step();
    ++n;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= budget && n >= 2) return elapsed / n;
  }
}

nlohmann::json runEager(const Shape& s, double budget) {
  char cmd[1024];
  std::snprintf(cmd, sizeof cmd, "%s %s/bench_eager.py %d %d %d %d %d %d %d %g", NF_REFERENCE_PYTHON,
                NF_REFERENCE_DIR, s.layers, s.heads, s.dModel, s.context, s.vocab, s.batch, s.seq, budget);
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
  double budget = 5.0;
  std::string only, deviceName = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      budget = std::stod(argv[i + 1]);
    else if (a == "--only")
      only = argv[i + 1];
    else if (a == "--device")
      deviceName = argv[i + 1];
    else {
      std::cerr << "usage: bench_model [--seconds S] [--only tiny|small] [--device cpu|cuda]\n";
      return 2;
    }
  }
  const torch::Device device(deviceName);
  std::printf("LibTorch %s, ATen intra-op threads %d, device %s, %.0f s per measurement\n", TORCH_VERSION,
              at::get_num_threads(), deviceName.c_str(), budget);
  std::printf("%-6s %-8s %14s %14s %8s\n", "shape", "measure", "engine tok/s", "eager tok/s", "ratio");
  for (const Shape& s : kShapes) {
    if (!only.empty() && only != s.name) continue;
    nf::ModelShape c;
    c.nLayer = s.layers;
    c.nHead = s.heads;
    c.nEmbd = s.dModel;
    c.nPositions = s.context;
    c.vocabSize = s.vocab;
    nf::CausalLM model = nf::makeModel(c);
    model->to(device);
    auto tokens = torch::randint(0, s.vocab, {s.batch, s.seq + 1}, torch::kLong).to(device);
    auto x = tokens.slice(1, 0, s.seq), y = tokens.slice(1, 1).reshape({-1});
    const double tokensPerStep = static_cast<double>(s.batch) * s.seq;
    auto sync = [&] {
      if (device.is_cuda()) torch::cuda::synchronize();
    };

    const double fwd = secondsPerCall(
        [&] {
          torch::NoGradGuard noGrad;
          model->forward(x);
          sync();
        },
        budget);
    torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-4).weight_decay(0.01));
    const double train = secondsPerCall(
        [&] {
          for (auto& p : model->parameters())
            p.mutable_grad().reset();  // set-to-none, as the eager side does
          auto loss = torch::nn::functional::cross_entropy(model->forward(x).view({-1, s.vocab}), y);
          loss.backward();
          opt.step();
          sync();
        },
        budget);

    nlohmann::json eager = device.is_cpu() ? runEager(s, budget) : nullptr;
    auto row = [&](const char* what, double ours, const char* key) {
      if (eager.is_null()) {
        std::printf("%-6s %-8s %14.0f %14s %8s\n", s.name, what, ours, "-", "-");
      } else {
        const double theirs = eager[key].get<double>();
        std::printf("%-6s %-8s %14.0f %14.0f %8.2f\n", s.name, what, ours, theirs, ours / theirs);
      }
    };
    row("forward", tokensPerStep / fwd, "forward_tokens_per_s");
    row("train", tokensPerStep / train, "train_tokens_per_s");
    if (!eager.is_null())
      std::printf("       (eager: PyTorch %s, %d threads)\n", eager["torch"].get<std::string>().c_str(),
                  eager["threads"].get<int>());
    std::fflush(stdout);
  }
  return 0;
}
