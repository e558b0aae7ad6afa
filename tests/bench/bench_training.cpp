// Training-step throughput of remove mode against finetune mode (the vanilla control) on the same model
// and data, in the same invocation, alternating rounds so machine noise hits both. Prints figures, asserts
// nothing. The removal protocol's extra work (σ statistics per site, the auxiliary loss, EMA updates)
// should cost < 10%.
//   bench_training [--steps N] [--rounds R] [--device cpu|cuda] [--layers L --d-model D --vocab V]
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "data/token_file.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"
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
  int steps = 40, rounds = 3, layers = 4, dModel = 128, vocab = 2048, context = 128, batch = 32;
  std::string device = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--steps")
      steps = std::stoi(v);
    else if (a == "--rounds")
      rounds = std::stoi(v);
    else if (a == "--device")
      device = v;
    else if (a == "--layers")
      layers = std::stoi(v);
    else if (a == "--d-model")
      dModel = std::stoi(v);
    else if (a == "--vocab")
      vocab = std::stoi(v);
    else if (a == "--context")
      context = std::stoi(v);
    else if (a == "--batch")
      batch = std::stoi(v);
  }
  const std::string work = (fs::temp_directory_path() / "nf-bench-training").string();
  fs::remove_all(work);
  fs::create_directories(work);
  nf::GPT2Config c;
  c.nLayer = layers, c.nHead = dModel / 32, c.nEmbd = dModel, c.nPositions = context, c.vocabSize = vocab;
  c.eotTokenId = vocab - 1;
  nf::GPT2 model(c);
  model->initWeights(0);
  nf::saveModel(*model, work + "/model");
  {
    auto gen = at::detail::createCPUGenerator(1);
    const auto tokens = torch::randint(0, vocab, {2'000'000}, gen, torch::kInt);
    nf::TokenFileMeta meta;
    meta.vocabSize = vocab;
    nf::TokenFileWriter writer(work + "/train.bin", meta);
    writer.append(tokens.data_ptr<int32_t>(), tokens.numel());
    writer.finish();
  }
  std::printf("model: %d layers, d_model %d, vocab %d; batch %d × %d tokens; %d steps per run, device %s\n",
              layers, dModel, vocab, batch, context, steps, device.c_str());
  double finetuneSum = 0, removeSum = 0;
  for (int round = 0; round < rounds; ++round) {
    double rate[2];
    for (int m = 0; m < 2; ++m) {
      nf::RunConfig config;
      config.mode = m == 0 ? nf::TrainingMode::Finetune : nf::TrainingMode::Remove;
      config.model = work + "/model";
      config.trainData = work + "/train.bin";
      config.device = device;
      config.optimizer.microBatch = batch;
      config.optimizer.context = context;
      config.optimizer.maxSteps = steps;
      config.checkpointInterval = 0;
      config.eval.interval = 0;
      // Every site stays real and tracked for the whole run: the protocol's full per-step cost.
      config.schedule = {};
      const std::string runDir = work + "/run-" + std::to_string(round) + "-" + std::to_string(m);
      nf::Trainer::start(runDir, config)->run();
      rate[m] = medianTokensPerSecond(runDir, 3);
      fs::remove_all(runDir);
    }
    std::printf("round %d: finetune %.0f tok/s, remove %.0f tok/s, ratio %.3f\n", round + 1, rate[0], rate[1],
                rate[1] / rate[0]);
    finetuneSum += rate[0], removeSum += rate[1];
  }
  std::printf("mean: finetune %.0f tok/s, remove %.0f tok/s, remove / finetune = %.3f\n",
              finetuneSum / rounds, removeSum / rounds, removeSum / finetuneSum);
  fs::remove_all(work);
  return 0;
}
