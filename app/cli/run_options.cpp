#include "run_options.h"

#include <filesystem>
#include <iostream>

#include "analysis/tracked_analyses.h"
#include "commands.h"
#include "io/atomic_file.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"

namespace nf::cli {

std::string presetList() {
  std::string names;
  for (const Preset& p : presets()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

void addRunOptions(CLI::App& command, RunOptions& o) {
  command
      .add_option("run", o.run,
                  "run directory to create (config.json, schedule.json, metrics.jsonl, checkpoints/)")
      ->required();
  command.add_option("--model", o.model, "model folder to start from (a run directory: its final model)")
      ->type_name("folder")
      ->required();
  command.add_option("--train", o.train, "training token file")->type_name("file.bin")->required();
  addingUp(command
               .add_option("--eval", o.eval,
                           "token files to evaluate periodically, comma-separated (e.g. val.bin,alt.bin)")
               ->type_name("files"));
  command
      .add_option("--preset", o.preset,
                  "settings and schedule to start from: " + presetList() +
                      " (default: the first made for the model's depth, else by-depth)")
      ->type_name("name");
  addOptional(command, "--steps", o.steps, "optimizer steps (default: the preset's)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  addOptional(command, "--lr", o.lr, "peak learning rate (default: the preset's)")
      ->type_name("x")
      ->transform(above(0.0));
  addOptional(command, "--min-lr", o.minLr, "final learning rate of the cosine decay")
      ->type_name("x")
      ->transform(atLeast(0.0));
  addOptional(command, "--weight-decay", o.weightDecay,
              "AdamW's decoupled weight decay on the 2-D weight matrices (default: the preset's)")
      ->type_name("x")
      ->transform(atLeast(0.0));
  addOptional(command, "--warmup", o.warmup, "warmup steps")->type_name("n")->transform(atLeast<int64_t>(0));
  addOptional(command, "--micro-batch", o.microBatch, "sequences per micro-batch")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  addOptional(command, "--accumulation", o.accumulation, "micro-batches per optimizer step")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  addOptional(command, "--context", o.context,
              "tokens per sequence (default: the preset's, at most the model's)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  command.add_option("--seed", o.seed, "data order seed")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  addOptional(command, "--document-windows", o.documentWindows,
              "the share of training windows that start at a document, with the end-of-text marker before "
              "it as their first token, as LLaMA-family models see a BOS (1: all; default 0: windows "
              "start anywhere, as GPT-2 was trained)")
      ->type_name("share")
      ->transform(fraction());
  command
      .add_option("--eval-interval", o.evalInterval, "steps between evaluations (0: only at start and end)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str()
      ->each([&o](const std::string&) { o.evalSettingsGiven.interval = true; });
  command.add_option("--eval-tokens", o.evalTokens, "tokens per evaluation set (0: the whole file)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str()
      ->each([&o](const std::string&) { o.evalSettingsGiven.tokens = true; });
  command.add_option("--checkpoint-interval", o.checkpointInterval, "steps between checkpoints")
      ->type_name("n")
      ->transform(atLeast<int64_t>(0))
      ->capture_default_str();
  addOptional(command, "--keep-checkpoints", o.keepCheckpoints,
              "how many of the newest checkpoints stay on disk (default " +
                  std::to_string(RunConfig{}.keepCheckpoints) +
                  "; the last sane one is kept too); 0: every one, to analyse the model over training "
                  "('analyze … --step n')")
      ->type_name("n")
      ->transform(atLeast<int>(0));
  addOptional(command, "--on-divergence", o.onDivergence,
              "when a step's loss is not finite or above --divergence-factor × the median of the last "
              "50 (caught before that step's update): stop, or roll back to the last sane checkpoint "
              "with half the learning rate (at most 3 times; each a 'rollback' record). Default: stop; "
              "rollback with --autopilot")
      ->check(CLI::IsMember({"stop", "rollback"}));
  command
      .add_option("--divergence-factor", o.divergenceFactor,
                  "how far above the recent median a loss counts as diverged (0: only a non-finite loss)")
      ->type_name("x")
      // A finite decimal (config.json writes an infinity as null, which a resume read as the default 3).
      ->transform(inRange(0.0, std::numeric_limits<double>::max()))
      ->check([](const std::string& text) {
        const double factor = std::stod(text);  // a number: the transform above has read it
        return factor == 0 || factor > 1 ? std::string() : std::string("must be 0 or > 1");
      })
      ->capture_default_str();
  command.add_option("--device", o.device, "where to train")
      ->type_name("cpu|cuda[:N]")
      ->capture_default_str();
  command.add_flag("--bf16", o.bf16, "bf16 autocast on CUDA (fp32 master weights and optimizer state)");
  command.add_flag("--activation-checkpointing", o.activationCheckpointing,
                   "keep only each block's input and recompute the block in backward: same gradients, "
                   "~1/3 more compute, a fraction of the activation memory");
  addingUp(command
               .add_option("--track", o.track,
                           "analyses to measure while training, comma-separated: " + trackedAnalysisNames() +
                               " — every --track-every steps, at each removal event and at the last step, as "
                               "\"track\" records in metrics.jsonl (docs/TRAINING.md, \"Tracked analyses\")")
               ->type_name("names"));
  addOptional(command, "--track-every", o.trackEvery,
              "steps between tracked measurements (default: 1/20 of the run)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  addOptional(command, "--track-sequences", o.trackSequences,
              "sequences of the tracking data each measurement reads (default 16, of at most 128 tokens)")
      ->type_name("n")
      ->transform(atLeast<int64_t>(1));
  command
      .add_option(
          "--track-data", o.trackData,
          "token file the tracked analyses read (default: the first --eval file, else the training data)")
      ->type_name("file.bin");
  command.add_flag(
      "--fit", o.fit,
      "choose micro-batch × accumulation (keeping their product, the global batch) and activation "
      "checkpointing so the run fits the device's free memory ('normfree-cli plan' shows the plan)");
}

// The command line's choices, made into a run's settings the one way the GUI makes them too.
RunConfig runConfigFrom(const RunOptions& o, TrainingMode mode) {
  try {
    if (!o.preset.empty()) findPreset(o.preset);  // an unknown preset is bad usage, before any file is read
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  RunChoices choices;
  // Stored whole: a resume from another directory would read other files under the same relative names.
  auto whole = [](const std::string& path) {
    return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
  };
  const std::string model = run::modelFolder(o.model);  // a run directory: its final model
  choices.model = whole(model);
  choices.trainData = whole(o.train);
  for (const std::string& file : splitList(o.eval)) choices.evalData.push_back(whole(file));
  choices.device = parseDevice(o.device, o.bf16).str();
  choices.maxSteps = o.steps;
  choices.lr = o.lr;
  choices.minLr = o.minLr;
  choices.weightDecay = o.weightDecay;
  choices.warmupSteps = o.warmup;
  choices.microBatch = o.microBatch;
  choices.accumulation = o.accumulation;
  choices.context = o.context;
  choices.seed = static_cast<uint64_t>(o.seed);
  choices.documentWindows = o.documentWindows;
  choices.bf16 = o.bf16;
  if (o.activationCheckpointing) choices.activationCheckpointing = true;
  // Without evaluation sets they had been ignored unsaid (--eval-interval 0, no periodic evaluation, agrees).
  if (choices.evalData.empty() &&
      ((o.evalSettingsGiven.interval && o.evalInterval != 0) || o.evalSettingsGiven.tokens))
    throw UsageError("--eval-interval and --eval-tokens need --eval (the token files to evaluate)");
  choices.evalInterval = o.evalInterval;
  choices.evalTokens = o.evalTokens;
  choices.checkpointInterval = o.checkpointInterval;
  choices.keepCheckpoints = o.keepCheckpoints;
  if (o.onDivergence) choices.onDivergence = parseDivergenceAction(*o.onDivergence);
  choices.divergenceFactor = o.divergenceFactor;
  if (!o.track.empty()) {
    TrackingSettings tracking;
    try {
      tracking.analyses = parseTrackedAnalyses(o.track);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--track: ") + e.what());
    }
    tracking.every = o.trackEvery.value_or(0);
    tracking.sequences = o.trackSequences.value_or(tracking.sequences);
    tracking.data = whole(o.trackData);
    choices.tracking = tracking;
  } else if (o.trackEvery || o.trackSequences || !o.trackData.empty()) {
    throw UsageError("--track-every, --track-sequences and --track-data need --track");
  }
  if (mode == TrainingMode::Remove) {
    if (!o.schedule.empty()) choices.schedule = readScheduleFile(o.schedule);
    choices.auxWeight = o.auxWeight;
    choices.emaMomentum = o.ema;
    choices.interpolationSteps = o.interpolationSteps;
    choices.pos0Treatment = o.pos0Treatment;
    choices.eotTreatment = o.eotTreatment;
    if (o.autopilot) {
      choices.autopilot = o.pilot;
      choices.autopilot->enabled = true;
      try {
        checkAutopilotSettings(*choices.autopilot);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
  }
  const ModelShape shape = loadConfigFile(model + "/config.json").shape;
  RunConfig config;
  try {  // a preset made for another depth, a context past the model's: bad usage of the options named
    config =
        makeRunConfig(o.preset.empty() ? presetForDepth(shape.nLayer).name : o.preset, mode, shape, choices);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  try {                      // here, where the file is known, so that the error names it
    if (choices.schedule) {  // as the run takes it (the autopilot's fitted into the budget)
      config.schedule.validate(shape.nLayer, config.optimizer.maxSteps, config.removal.treatments());
      requireRampsEnd(config.schedule, config);
    }
  } catch (const std::invalid_argument& e) {
    throw FileError(o.schedule, std::string("does not fit this run:\n") + e.what());
  }
  const OptimizerSettings& opt = config.optimizer;
  if (opt.warmupSteps >= opt.maxSteps)  // a preset's warmup kept under a shorter --steps
    std::cerr << "note: the learning rate warms up over " << opt.warmupSteps
              << " steps, no fewer than the run's " << opt.maxSteps
              << ": it never reaches its peak nor decays (--warmup)\n";
  return config;
}

}  // namespace nf::cli
