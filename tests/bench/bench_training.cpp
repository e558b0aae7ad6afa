// Training-step throughput of the engine, per training mode, on one model shape and device, in the same
// invocation, alternating rounds so machine noise hits every mode. Remove mode keeps every site real and
// tracked (the protocol's full per-step cost); autopilot is remove mode with the autopilot deciding before
// every step about a full schedule of pending removals (its whole per-step cost: the removals themselves
// are planned past the measured steps); finetune is the vanilla control. Prints figures (and one
// JSON line per mode), asserts nothing.
//   bench_training [--device cpu|cuda] [--bf16] [--checkpointing] [--modes finetune,remove,autopilot]
//                  [--family gpt2|gpt_neox|llama|qwen2 --kv-heads K --mlp-width W --untied]
//                  [--layers L --heads H --d-model D --vocab V --context T --batch B --accumulation A]
//                  [--steps N] [--rounds R]
// NF_CUDA_CROSS_ENTROPY=blocks or kernel: how CUDA computes the loss (train/cross_entropy.h), named in the
// JSON
// ("cross_entropy"), as is the AdamW update the steps took ("adamw": fused on the CPU, foreach on a GPU,
// libtorch where a parameter's state differs from the others').
// Model FLOPs per token follow the usual convention: 6·N (N: every parameter but the position table, the
// tied unembedding counted once) + 12·L·T·D for attention; recomputation is not counted. A family other
// than GPT-2 gets its Hugging Face defaults (Pythia: rotary on a quarter, parallel residual; LLaMA: RMSNorm,
// SwiGLU, the unembedding tied unless --untied) — the shapes of SmolLM2 or Pythia, say, with random weights.
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "data/token_file.h"
#include "model/device_memory.h"
#include "model/family.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"
#include "train/cross_entropy.h"
#include "train/optimizer.h"
#include "train/trainer.h"

namespace fs = std::filesystem;

namespace {

// Median tokens/s of the run's step records, skipping the first (warm-up) steps.
double medianTokensPerSecond(const std::string& runDir, int skip) {
  std::vector<double> rates;
  std::ifstream in(nf::run::metricsPath(runDir));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "step" && j["step"].get<int>() > skip) rates.push_back(j["tokens_per_second"]);
  }
  std::sort(rates.begin(), rates.end());
  return rates.empty() ? 0 : rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 40, rounds = 3, layers = 4, heads = 0, dModel = 128, vocab = 2048, context = 128, batch = 32,
      accumulation = 1, kvHeads = 0, mlpWidth = 0;
  bool bf16 = false, checkpointing = false, untied = false;
  std::string device = "cpu", modes = "finetune,remove", family = "gpt2";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--bf16") {
      bf16 = true;
      continue;
    }
    if (a == "--checkpointing") {
      checkpointing = true;
      continue;
    }
    if (a == "--untied") {
      untied = true;
      continue;
    }
    if (i + 1 >= argc) break;
    const std::string v = argv[++i];
    if (a == "--steps") steps = std::stoi(v);
    if (a == "--rounds") rounds = std::stoi(v);
    if (a == "--device") device = v;
    if (a == "--modes") modes = v;
    if (a == "--layers") layers = std::stoi(v);
    if (a == "--heads") heads = std::stoi(v);
    if (a == "--d-model") dModel = std::stoi(v);
    if (a == "--vocab") vocab = std::stoi(v);
    if (a == "--context") context = std::stoi(v);
    if (a == "--batch") batch = std::stoi(v);
    if (a == "--accumulation") accumulation = std::stoi(v);
    if (a == "--family") family = v;
    if (a == "--kv-heads") kvHeads = std::stoi(v);
    if (a == "--mlp-width") mlpWidth = std::stoi(v);
  }
  if (heads == 0) heads = std::max(1, dModel / 32);
  std::vector<std::string> runModes;  // "autopilot": remove mode with the autopilot on
  std::stringstream list(modes);
  for (std::string m; std::getline(list, m, ',');) {
    if (m != "autopilot") nf::parseTrainingMode(m);  // an unknown mode is refused here
    runModes.push_back(m);
  }

  const std::string work = (fs::temp_directory_path() / "nf-bench-training").string();
  fs::remove_all(work);
  fs::create_directories(work);
  nf::ModelShape c;
  c.family = family;
  nf::familyNamed(family).applyDefaults(c);
  c.nKvHead = kvHeads, c.mlpWidth = mlpWidth;
  c.tiedUnembedding = !untied && family != "gpt_neox";  // GPT-NeoX always has its own embed_out
  c.nLayer = layers, c.nHead = heads, c.nEmbd = dModel, c.nPositions = context, c.vocabSize = vocab;
  c.eotTokenId = vocab - 1;
  int64_t flopParameters = 0;
  {
    nf::CausalLM model = nf::makeModel(c, /*initialize=*/false);
    model->initWeights(0);
    for (const auto& p : model->named_parameters())
      if (p.key().find("wpe.weight") == std::string::npos) flopParameters += p.value().numel();
    nf::saveModel(*model, work + "/model");
  }
  {
    auto gen = at::detail::createCPUGenerator(1);
    const auto tokens = torch::randint(0, vocab, {4'000'000}, gen, torch::kInt);
    nf::TokenFileMeta meta;
    meta.vocabSize = vocab;
    meta.dtype = nf::tokenDTypeFor(vocab);
    nf::TokenFileWriter writer(work + "/train.bin", meta);
    writer.append(tokens.data_ptr<int32_t>(), tokens.numel());
    writer.finish();
  }
  const double flopsPerToken = 6.0 * flopParameters + 12.0 * layers * context * dModel;
  std::printf(
      "model: %s, %d layers, %d heads, d_model %d, vocab %d (%.1fM parameters); %d × %d × %d tokens per "
      "step; "
      "%d steps per run; device %s%s%s\n",
      family.c_str(), layers, heads, dModel, vocab, flopParameters / 1e6, batch, accumulation, context, steps,
      device.c_str(), bf16 ? ", bf16 autocast" : "", checkpointing ? ", activation checkpointing" : "");
  // How the loss is computed (train/cross_entropy.h): the whole logits, blocks of rows, the row kernel.
  const std::string crossEntropy =
      device == "cpu" ? "blocks (cpu)" : nf::cudaCrossEntropyName(nf::cudaCrossEntropy());
  std::vector<double> sums(runModes.size(), 0.0);
  std::vector<int64_t> peaks(runModes.size(), 0);
  std::vector<nf::AdamWStepCounts> adamW(runModes.size());  // the AdamW updates each mode's steps took
  for (int round = 0; round < rounds; ++round) {
    std::printf("round %d:", round + 1);
    for (std::size_t m = 0; m < runModes.size(); ++m) {
      nf::RunConfig config;
      const bool autopilot = runModes[m] == "autopilot";
      config.mode = autopilot ? nf::TrainingMode::Remove : nf::parseTrainingMode(runModes[m]);
      config.model = work + "/model";
      config.trainData = work + "/train.bin";
      config.device = device;
      config.optimizer.microBatch = batch;
      config.optimizer.accumulation = accumulation;
      config.optimizer.context = context;
      config.optimizer.maxSteps = steps + 1000;  // stopped after `steps`: one checkpoint, no final model
      config.optimizer.bf16 = bf16;
      config.optimizer.activationCheckpointing = checkpointing;
      config.checkpointInterval = 0;
      config.keepCheckpoints = 1;
      config.eval.interval = 0;
      config.schedule = {};
      if (autopilot) {  // every site pending for the whole measurement: the policy looks at all each step
        config.autopilot.enabled = true;
        int64_t id = 1;
        for (nf::SiteKind kind : {nf::SiteKind::Mlp, nf::SiteKind::Qk, nf::SiteKind::V})
          for (int layer = 0; layer < layers; ++layer)
            config.schedule.events.push_back(
                {id++, steps + 100 + id, nf::EventAction::MakeFake, kind, layer});
      }
      const std::string runDir = work + "/run-" + std::to_string(round) + "-" + std::to_string(m);
      nf::resetPeakDeviceMemory(device);
      const nf::AdamWStepCounts before = nf::adamWStepCounts();
      auto trainer = nf::Trainer::start(runDir, config);
      trainer->run([&](const nf::Progress& p) {
        if (p.done >= steps) trainer->requestStop();
      });
      peaks[m] = std::max(peaks[m], nf::peakDeviceMemory(device));
      const nf::AdamWStepCounts after = nf::adamWStepCounts();
      adamW[m].fused += after.fused - before.fused;
      adamW[m].foreach += after.foreach - before.foreach;
      adamW[m].libtorch += after.libtorch - before.libtorch;
      const double rate = medianTokensPerSecond(runDir, std::min(3, steps / 2));
      sums[m] += rate;
      std::printf("  %s %.0f tok/s", runModes[m].c_str(), rate);
      trainer.reset();
      fs::remove_all(runDir);
    }
    std::printf("\n");
  }
  for (std::size_t m = 0; m < runModes.size(); ++m) {
    const double rate = sums[m] / rounds;
    // The update its steps took over every round (one step of LibTorch's own, and the speed is partly its).
    const char* update = adamW[m].libtorch > 0 ? "libtorch" : adamW[m].foreach > 0 ? "foreach" : "fused";
    const nlohmann::json figures{{"mode", runModes[m]},
                                 {"family", family},
                                 {"device", device},
                                 {"layers", layers},
                                 {"heads", heads},
                                 {"d_model", dModel},
                                 {"vocab", vocab},
                                 {"context", context},
                                 {"micro_batch", batch},
                                 {"accumulation", accumulation},
                                 {"bf16", bf16},
                                 {"activation_checkpointing", checkpointing},
                                 {"cross_entropy", crossEntropy},
                                 {"adamw", update},
                                 {"tokens_per_second", rate},
                                 {"model_tflops", rate * flopsPerToken / 1e12},
                                 {"peak_memory_bytes", peaks[m]}};
    std::printf("mean %s: %.0f tok/s, %.1f model TFLOP/s, peak memory %.2f GB\nJSON %s\n",
                runModes[m].c_str(), rate, rate * flopsPerToken / 1e12, peaks[m] / 1e9,
                figures.dump().c_str());
  }
  for (std::size_t m = 1; m < runModes.size(); ++m)
    std::printf("%s / %s = %.3f\n", runModes[m].c_str(), runModes[0].c_str(), sums[m] / sums[0]);
  fs::remove_all(work);
  return 0;
}
