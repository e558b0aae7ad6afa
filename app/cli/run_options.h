// The options pretrain, finetune and remove take, and the run's settings made from them the one way the
// GUI makes them too (train/settings.h, makeRunConfig): preset, data, optimizer, removal, evaluation,
// divergence, autopilot and tracked analyses. A room of its own: train_commands.cpp runs what they set up.
#pragma once
#include <optional>
#include <string>

#include "options.h"
#include "schedule/autopilot.h"
#include "train/settings.h"

namespace nf::cli {

std::string presetList();  // "gpt2, gpt2-medium, …": the presets' names, for help texts

// What pretrain, finetune and remove take on the command line. The optional settings default to the preset's.
struct RunOptions {
  std::string run, model, train, eval, preset, device = "cpu";
  std::optional<int64_t> steps, warmup, microBatch, accumulation, context;
  std::optional<int> keepCheckpoints;
  std::optional<double> lr, minLr, weightDecay, documentWindows;
  // The engine's defaults (the workbench's runs get the same).
  int64_t seed = 0, evalInterval = EvalSettings{}.interval, evalTokens = EvalSettings{}.tokens,
          checkpointInterval = RunConfig{}.checkpointInterval;
  struct {
    bool interval = false, tokens = false;
  } evalSettingsGiven;  // on the command line, to refuse them without --eval
  bool bf16 = false, activationCheckpointing = false, fit = false;
  std::string track, trackData;
  std::optional<int64_t> trackEvery, trackSequences;
  std::optional<std::string> onDivergence;
  double divergenceFactor = 3.0;
  // remove only
  std::string schedule;
  std::optional<double> auxWeight, ema;
  int64_t interpolationSteps = 0;
  bool pos0Treatment = false, eotTreatment = false;
  bool autopilot = false;
  AutopilotSettings pilot;  // its settings, the engine's defaults unless given
};

void addRunOptions(CLI::App& command, RunOptions& o);
// The command line's choices as a run's settings; UsageError for an unknown preset or tracked analysis.
RunConfig runConfigFrom(const RunOptions& o, TrainingMode mode);

}  // namespace nf::cli
