// normfree-cli training commands: pretrain, finetune, remove, resume, export, schedule.
#include <torch/torch.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "data/batches.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "progress_bar.h"
#include "text/bpe_tokenizer.h"
#include "train/export.h"
#include "run/run_directory.h"
#include "train/trainer.h"

namespace nf::cli {
namespace {

// Ctrl-C asks the running trainer to stop after the current step and write a checkpoint.
std::atomic<Trainer*> g_running{nullptr};
extern "C" void onInterrupt(int) {
  if (Trainer* t = g_running.load()) t->requestStop();
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

void addRunOptions(Args& args, const std::string& defaultPreset) {
  args.positional("run", "run directory to create (config.json, schedule.json, metrics.jsonl, checkpoints/)")
      .option("model", "folder", "model folder to start from")
      .option("train", "file.bin", "training token file")
      .option("eval", "files", "token files to evaluate periodically, comma-separated (e.g. val.bin,alt.bin)",
              "")
      .option("preset", "name",
              "settings and schedule to start from: gpt2, gpt2-medium, gpt2-large, gpt2-xl, "
              "blog-v2, tiny",
              defaultPreset)
      .option("steps", "n", "optimizer steps (default: the preset's)", "")
      .option("lr", "x", "peak learning rate (default: the preset's)", "")
      .option("min-lr", "x", "final learning rate of the cosine decay", "")
      .option("warmup", "n", "warmup steps", "")
      .option("micro-batch", "n", "sequences per micro-batch", "")
      .option("accumulation", "n", "micro-batches per optimizer step", "")
      .option("context", "n", "tokens per sequence (default: the preset's, at most the model's)", "")
      .option("seed", "n", "data order seed", "0")
      .option("eval-interval", "n", "steps between evaluations (0: only at start and end)", "100")
      .option("eval-tokens", "n", "tokens per evaluation set", "65536")
      .option("checkpoint-interval", "n", "steps between checkpoints", "100")
      .option("device", "cpu|cuda[:N]", "where to train", "cpu")
      .flag("bf16", "bf16 autocast on CUDA (fp32 master weights and optimizer state)");
}

RunConfig runConfigFrom(const Args& args, TrainingMode mode) {
  RunConfig c;
  c.mode = mode;
  Preset preset;
  try {
    preset = findPreset(args.get("preset"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  c.preset = preset.name;
  c.optimizer = preset.optimizer;
  c.removal = preset.removal;
  c.schedule = preset.schedule;
  c.model = args.get("model");
  c.trainData = args.get("train");
  c.evalData = splitList(args.get("eval"));
  c.device = parseDevice(args.get("device")).str();
  auto set = [&](const char* name, auto& field) {
    if (args.get(name).empty()) return;
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_floating_point_v<T>)
      field = args.getDouble(name);
    else
      field = args.getInt64(name);
  };
  set("steps", c.optimizer.maxSteps);
  set("lr", c.optimizer.lr);
  set("min-lr", c.optimizer.minLr);
  set("warmup", c.optimizer.warmupSteps);
  set("micro-batch", c.optimizer.microBatch);
  set("accumulation", c.optimizer.accumulation);
  set("context", c.optimizer.context);
  c.optimizer.seed = static_cast<uint64_t>(args.getInt64("seed"));
  c.optimizer.bf16 = args.has("bf16");
  c.eval.interval = args.getInt64("eval-interval");
  c.eval.tokens = args.getInt64("eval-tokens");
  c.checkpointInterval = args.getInt64("checkpoint-interval");
  // The context can never exceed the model's positions.
  const ModelConfig shape = loadConfigFile(c.model + "/config.json");
  c.optimizer.context = std::min<int64_t>(c.optimizer.context, shape.shape.nPositions);
  return c;
}

int train(std::unique_ptr<Trainer> trainer) {
  g_running = trainer.get();
  auto previous = std::signal(SIGINT, onInterrupt);
  const bool finished = trainer->run(progressBar());
  std::signal(SIGINT, previous);
  g_running = nullptr;
  printJson({{"run", trainer->runDir()},
             {"finished", finished},
             {"steps", trainer->stepsDone()},
             {"final", finished ? run::finalModelPath(trainer->runDir()) : ""},
             {"checkpoint", run::latestCheckpoint(trainer->runDir())}});
  return finished ? 0 : 3;
}

int startRun(const Argv& argv, TrainingMode mode, const std::string& name, const std::string& summary,
             const std::string& defaultPreset) {
  Args args(name, summary);
  addRunOptions(args, defaultPreset);
  if (mode == TrainingMode::Remove)
    args.option("schedule", "file.json", "removal schedule (default: the preset's)", "")
        .option("aux-weight", "λ", "weight of the auxiliary loss on ln_f's input (default: the preset's)", "")
        .option("ema", "k", "EMA momentum of the tracked LN scale (default: the preset's)", "")
        .option("interpolation-steps", "n", "ramp each site's divisor from σ to s over n steps (0: off)", "0")
        .flag("pos0-treatment", "sites that turn fake divide position 0 by their own s_0 (blog recipe)")
        .flag("eot-treatment", "LN_v sites that turn fake divide end-of-text tokens by s_0 (blog recipe)");
  if (!args.parse(argv)) return 0;
  RunConfig c = runConfigFrom(args, mode);
  if (mode == TrainingMode::Remove) {
    if (!args.get("schedule").empty())
      c.schedule =
          scheduleFromJson(nlohmann::json::parse(readTextFile(args.get("schedule"))), args.get("schedule"));
    if (!args.get("aux-weight").empty()) c.removal.auxWeight = args.getDouble("aux-weight");
    if (!args.get("ema").empty()) c.removal.emaMomentum = args.getDouble("ema");
    c.removal.interpolationSteps = args.getInt64("interpolation-steps");
    c.removal.pos0Treatment = c.removal.pos0Treatment || args.has("pos0-treatment");
    c.removal.eotTreatment = c.removal.eotTreatment || args.has("eot-treatment");
  } else {
    c.schedule = Schedule{};
  }
  return train(Trainer::start(args.get("run"), c));
}

double maxLogitDifference(GPT2Impl& a, GPT2Impl& b, const torch::Tensor& tokens) {
  torch::NoGradGuard noGrad;
  return (a.forward(tokens).to(torch::kFloat64) - b.forward(tokens).to(torch::kFloat64))
      .abs()
      .max()
      .item<double>();
}

}  // namespace

int cmdPretrain(const Argv& argv) {
  return startRun(
      argv, TrainingMode::Pretrain, "pretrain",
      "Train a GPT-2 from scratch (with LayerNorm). --model names a folder whose config.json gives "
      "the shape (e.g. one written by 'init'); the weights are initialised from --seed.",
      "tiny");
}

int cmdFinetune(const Argv& argv) {
  return startRun(
      argv, TrainingMode::Finetune, "finetune",
      "The vanilla control: fine-tune with the same data, learning rate and steps as a removal run, "
      "removing nothing and without the auxiliary loss.",
      "tiny");
}

int cmdRemove(const Argv& argv) {
  return startRun(argv, TrainingMode::Remove, "remove",
                  "Remove LayerNorm by fine-tuning (PROTOCOL §2–4): each site is tracked by an EMA of its "
                  "scale and replaced by a FakeLN with that scale frozen at the step the schedule says, with "
                  "the auxiliary loss on ln_f's input. Ctrl-C stops after the current step and writes a "
                  "checkpoint; 'resume' continues.",
                  "tiny");
}

int cmdResume(const Argv& argv) {
  Args args("resume",
            "Continue a run from its newest checkpoint (on CPU the result is bit-identical to an "
            "uninterrupted run).");
  args.positional("run", "run directory");
  if (!args.parse(argv)) return 0;
  return train(Trainer::resume(args.get("run")));
}

int cmdExport(const Argv& argv) {
  Args args("export",
            "Export an LN-free model (every site FakeLN) in two forms: folded (no normalization left in the "
            "blocks, our format) and standard GPT-2 (each LN kept with γ·10⁶/s and ε = 10¹², loadable by any "
            "GPT-2 implementation). Prints each form's largest logit difference from the FakeLN model.");
  args.positional("model", "a model folder, or a run directory (its final/ model)")
      .option("out", "folder", "writes <out>/folded and <out>/standard")
      .option("data", "file.bin", "tokens to compare logits on (default: random tokens)", "")
      .option("device", "cpu|cuda[:N]", "where to compute", "cpu");
  if (!args.parse(argv)) return 0;
  const std::string folder = run::modelFolder(args.get("model"));
  const torch::Device device = parseDevice(args.get("device"));
  GPT2 fake = loadModel(folder, device);
  GPT2 folded{nullptr}, standard{nullptr};
  try {
    folded = foldLayerNorms(*fake);
    standard = standardFormatWithHugeEpsilon(*fake);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(folder + ": " + e.what());
  }
  const GPT2Config& c = fake->config();
  const int64_t T = std::min<int64_t>(c.nPositions, 128);
  torch::Tensor tokens;
  if (args.get("data").empty()) {
    auto gen = at::detail::createCPUGenerator(0);
    tokens = torch::randint(0, c.vocabSize, {8, T}, gen, torch::kLong);
  } else {
    tokens = EvalChunks(TokenFile::open(args.get("data")), T, c.vocabSize).chunks(0, 1).inputs;
  }
  tokens = tokens.to(device);
  const double foldedDiff = maxLogitDifference(*fake, *folded, tokens);
  const double standardDiff = maxLogitDifference(*fake, *standard, tokens);
  const std::string out = args.get("out");
  SaveOptions foldedOptions;
  foldedOptions.folded = true;
  saveModel(*folded, out + "/folded", foldedOptions);
  saveModel(*standard, out + "/standard");
  copyTokenizerFiles(folder, out + "/folded");
  copyTokenizerFiles(folder, out + "/standard");
  const double largest = largestNormWeight(*standard);
  printJson(
      {{"source", folder},
       {"folded", out + "/folded"},
       {"standard", out + "/standard"},
       {"max_abs_logit_difference_folded", foldedDiff},
       {"max_abs_logit_difference_standard", standardDiff},
       {"compared_on_tokens", tokens.numel()},
       {"largest_ln_weight_standard", largest},
       {"float16_safe", largest < 65504},
       {"note",
        "the standard form's LayerNorm weights are scaled by 1e6/s: keep them in float32 or bfloat16"}});
  return 0;
}

int cmdSchedule(const Argv& argv) {
  Args args(
      "schedule",
      "Print a preset (its settings and schedule as JSON), list the presets, or validate a schedule file "
      "for a model depth and step count.");
  args.option("preset", "name", "print this preset", "")
      .option("validate", "file.json", "validate this schedule file", "")
      .option("layers", "n", "model depth for --validate", "12")
      .option("steps", "n", "max steps for --validate", "300")
      .flag("list", "list the presets");
  if (!args.parse(argv)) return 0;
  if (args.has("list") || (args.get("preset").empty() && args.get("validate").empty())) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : presets())
      list.push_back({{"name", p.name},
                      {"layers", p.nLayer},
                      {"steps", p.optimizer.maxSteps},
                      {"description", p.description}});
    printJson(list);
    return 0;
  }
  if (!args.get("preset").empty()) {
    Preset p;
    try {
      p = findPreset(args.get("preset"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    RunConfig c;
    c.preset = p.name;
    c.optimizer = p.optimizer;
    c.removal = p.removal;
    c.schedule = p.schedule;
    nlohmann::json j = toJson(c);
    for (const char* key : {"model", "train_data", "eval_data", "device", "mode", "format", "version"})
      j.erase(key);
    j["layers"] = p.nLayer;
    j["description"] = p.description;
    printJson(j);
    return 0;
  }
  const std::string file = args.get("validate");
  const Schedule s = scheduleFromJson(nlohmann::json::parse(readTextFile(file)), file);
  try {
    s.validate(args.getInt("layers"), args.getInt64("steps"));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file + ": invalid schedule:\n" + e.what());
  }
  printJson({{"file", file}, {"valid", true}, {"events", s.events.size()}});
  return 0;
}

}  // namespace nf::cli
