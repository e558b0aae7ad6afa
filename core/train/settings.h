// Everything a training run is configured by, as plain data (the run directory's config.json), and the
// presets (defined in train/presets.cpp): the paper's four GPT-2 schedules (PROTOCOL §4, Table 4), the blog's
// v2 recipe and the bundled tiny model's. Plain C++ (no torch): the GUI shows and edits these.
#pragma once
#include <algorithm>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "schedule/autopilot.h"
#include "schedule/schedule.h"

namespace nf {

enum class TrainingMode {
  Pretrain,  // from a fresh initialisation, with LayerNorm
  Finetune,  // the vanilla control: same data, LR and steps, nothing removed, no auxiliary loss
  Remove,    // the protocol: the schedule turns sites fake, with the auxiliary loss on ln_f's input
};
std::string trainingModeName(TrainingMode mode);  // "pretrain", "finetune", "remove"
TrainingMode parseTrainingMode(const std::string& name);

struct OptimizerSettings {
  int64_t microBatch = 32;
  int64_t accumulation = 1;  // micro-batches per optimizer step
  int64_t context = 128;
  int64_t maxSteps = 500;
  int64_t warmupSteps = 20;  // linear from lr/warmup to lr, then cosine down to minLr at maxSteps
  double lr = 6e-4, minLr = 3e-4;
  double weightDecay = 0.01;  // on 2-D weight matrices only
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double clipNorm = 1.0;  // 0: no clipping
  uint64_t seed = 0;
  // The share of training windows that start at a document, with the end-of-text marker before it as
  // their first token (as LLaMA-family models see their BOS); the others start anywhere (GPT-2's way).
  double documentWindows = 0;
  bool bf16 = false;  // CUDA autocast; fp32 master weights and optimizer state always
  // Keep only each block's input in the forward pass and recompute the block in the backward pass: the
  // same gradients for ~1/3 more compute and a fraction of the activation memory.
  bool activationCheckpointing = false;
};

struct RemovalSettings {
  double emaMomentum = 0.9;        // k in s ← k·s + (1−k)·m, per micro-batch
  double auxWeight = 0.1;          // λ of the auxiliary loss on ln_f's input (0: off)
  bool pos0Treatment = false;      // sites that turn fake divide position 0 by their own s_0
  bool eotTreatment = false;       // LN_v sites that turn fake divide end-of-text tokens by s_0
  int64_t interpolationSteps = 0;  // > 0: divisor ramps from σ_t to s over this many steps
  // The treatments a schedule may switch off (the schedule's rules refuse ending one not in use).
  Treatments treatments() const { return {pos0Treatment, eotTreatment}; }
};

// What a run does when it diverges (train/divergence.h): a step's loss not finite or above `factor` × the
// median of the last 50 steps', or an evaluation's above `factor` × its lowest. It is caught before the
// step's update. Stop: the run ends with an error, its checkpoints rewound to the last sane one. Rollback:
// the run goes back to that checkpoint, multiplies its learning rate (and minimum) by `lrFactor` and goes
// on, at most `maxRollbacks` times, each logged as a "rollback" record.
enum class DivergenceAction { Stop, Rollback };
std::string divergenceActionName(DivergenceAction action);  // "stop", "rollback"
DivergenceAction parseDivergenceAction(const std::string& name);

struct DivergenceSettings {
  DivergenceAction action = DivergenceAction::Stop;
  double factor = 3.0;  // 0: only a loss that is not finite
  double lrFactor = 0.5;
  int maxRollbacks = 3;
};

struct EvalSettings {
  int64_t interval = 100;  // steps between evaluations (0: only at the end)
  int64_t tokens = 65536;  // per evaluation set
};

// Analyses measured while the run trains (analysis/tracked_analyses.h): at its first step, every `every`
// steps, at each removal event (on the model as the event leaves it) and at its last step, on `sequences`
// chunks of `length` tokens of `data`; each measurement is a "track" record in metrics.jsonl.
struct TrackingSettings {
  std::vector<std::string> analyses;  // empty: nothing is tracked
  int64_t every = 0;                  // 0: a twentieth of the run's steps
  int64_t sequences = 16;
  int64_t length = 128;  // at most the run's context
  std::string data;      // a token file; empty: the first evaluation file, else the training data
  // The steps between two measurements at the cadence, for a run of maxSteps.
  int64_t interval(int64_t maxSteps) const { return every > 0 ? every : std::max<int64_t>(1, maxSteps / 20); }
};

struct RunConfig {
  TrainingMode mode = TrainingMode::Remove;
  std::string preset;     // informational: which preset the settings came from
  std::string model;      // model folder to start from (pretrain: its config.json gives the shape)
  std::string trainData;  // token file
  std::vector<std::string> evalData;  // token files evaluated periodically (e.g. val.bin, alt.bin)
  std::string device = "cpu";
  int64_t checkpointInterval = 100;  // steps; a checkpoint is also written at the end and on stop
  int keepCheckpoints = 2;  // the newest checkpoints kept on disk (and the last sane one); 0: all of them
  OptimizerSettings optimizer;
  RemovalSettings removal;
  EvalSettings eval;
  DivergenceSettings divergence;
  // The autopilot (schedule/autopilot.h): when enabled, the schedule gives the removals' order and the
  // first one's step; the steps of the others are decided while training.
  AutopilotSettings autopilot;
  TrackingSettings tracking;
  Schedule schedule;  // used in remove mode; ignored otherwise
};

// The token file the tracked analyses read: their own, else the first evaluation file, else the training
// data.
inline const std::string& trackingDataFile(const RunConfig& c) {
  return !c.tracking.data.empty() ? c.tracking.data : !c.evalData.empty() ? c.evalData.front() : c.trainData;
}

// What `resume` may change of a run (each change is in its "resume" record and written to config.json or
// schedule.json): the learning rate and its minimum, e.g. after a divergence; the step budget and the
// autopilot's patience, e.g. to train on after the run ended; and the schedule, which must agree with the
// events the checkpoint has applied.
struct ResumeOverrides {
  std::optional<double> lr, minLr;
  // Either counts the autopilot's plateau afresh from the resumed step (a run that ended at its plateau
  // would otherwise end again at once); the cosine decay stretches to a new budget.
  std::optional<int64_t> maxSteps, autopilotPatience;
  std::optional<int> keepCheckpoints;
  std::optional<Schedule> schedule;
  std::string scheduleSource;  // the file it was read from: errors name it, not the run's schedule.json
};
// Applies the overrides' settings (not the schedule) to `config` and checks them: what changed, by name.
nlohmann::json applyResumeOverrides(RunConfig& config, const ResumeOverrides& overrides);

nlohmann::json toJson(const RunConfig& config);
// Throws FileError(source, …) for settings out of range (batch, steps, learning rate, EMA momentum …).
void validate(const RunConfig& config, const std::string& source);
// With an interpolation ramp a site's σ share falls to 0 only interpolation_steps after it is made fake:
// std::invalid_argument naming each make-fake event (at or after fromStep) whose ramp would end past the
// last step, leaving the finished model dividing by each token's scale.
void requireRampsEnd(const Schedule& schedule, const RunConfig& config, int64_t fromStep = 0);
// With the autopilot the schedule gives the order and the first removal's step; the others' steps are only
// tentative. Those from `fromStep` on past the budget (a preset's on a shorter --steps, a resume's shorter
// budget) wait at the last step a removal may fire (its ramp ending in time), in their order, for the
// autopilot to bring forward; they had made the run refused for steps the user never chose. Left as they
// are when the first of them lies past it too.
void waitAtTheLastStep(Schedule& schedule, const RunConfig& config, int64_t fromStep);
RunConfig runConfigFromJson(const nlohmann::json& j, const std::string& source);
// A run's config.json (run/run_directory.h): read and checked (FileError naming the file), and written
// atomically — the one reader and writer of the file.
RunConfig readRunConfig(const std::string& runDir);
// The settings that differ between two toJson(RunConfig)s, by dotted name: {"optimizer.micro_batch":
// {"from": 4, "to": 8}, …}; the schedule (edited live, kept in schedule.json) is not compared. What a resume
// records when config.json was edited by hand since its checkpoint.
nlohmann::json settingsChanged(const nlohmann::json& before, const nlohmann::json& after);
void writeRunConfig(const std::string& runDir, const RunConfig& config);

struct Preset {
  std::string name, description;
  int nLayer = 0;  // the schedule's model depth; 0: any (the schedule follows the depth, scheduleForDepth)
  OptimizerSettings optimizer;
  RemovalSettings removal;
  Schedule schedule;
};

// "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "blog-v2", "tiny", "pythia-70m", "by-depth".
const std::vector<Preset>& presets();

// The paper's rule, read off its four GPT-2 schedules (PROTOCOL §4, Table 4): LN_mlp block by block from
// step 20, one block every 2 steps, then LN_qk the same way, then LN_v at 3 steps per block, then LN_f,
// each kind starting when the previous one has finished; from 25 blocks on, 4, 4 and 6 steps per block
// and a later start (30; 50 from 37 blocks). It gives Table 4's schedules for 12, 24, 36 and 48 blocks
// exactly, and a schedule for a model of any depth.
Schedule scheduleForDepth(int nLayer);
// Steps for a run on that schedule: 2.5 × the step of its last event, rounded up to 100, at least 300
// (the paper ran 300 steps for GPT-2 Small and 500 for Medium).
int64_t stepsForDepth(int nLayer);
// A preset's schedule for a model of nLayer blocks (its own, or the depth rule's for "by-depth").
Schedule presetSchedule(const Preset& preset, int nLayer);
const Preset& findPreset(const std::string& name);  // throws std::invalid_argument listing the names
// The first preset made for nLayer blocks (gpt2 for 12, small for 6, tiny for 4), else "by-depth": what the
// CLI and the workbench start from when no preset is chosen.
const Preset& presetForDepth(int nLayer);

// What a run is started with besides its preset: the model, the data, the device, and every setting
// that differs from the preset's (unset: the preset's, or RunConfig's default where a preset has none).
struct RunChoices {
  std::string model, trainData, device = "cpu";
  std::vector<std::string> evalData;
  std::optional<int64_t> maxSteps, warmupSteps, microBatch, accumulation, context;
  std::optional<double> lr, minLr, weightDecay;
  std::optional<uint64_t> seed;
  std::optional<double> documentWindows;
  std::optional<bool> bf16, activationCheckpointing;
  std::optional<double> auxWeight, emaMomentum;
  std::optional<int64_t> interpolationSteps;
  bool pos0Treatment = false, eotTreatment = false;  // switched on in addition to the preset's
  std::optional<Schedule> schedule;
  std::optional<int64_t> evalInterval, evalTokens, checkpointInterval;
  std::optional<int> keepCheckpoints;
  std::optional<DivergenceAction> onDivergence;
  std::optional<double> divergenceFactor;
  std::optional<AutopilotSettings> autopilot;  // remove mode only
  std::optional<TrackingSettings> tracking;
};

// A run's settings, the one way the CLI and the GUI make them: the preset's, then the choices; the
// context is capped at the model's positions; modes other than remove get no schedule. Throws
// std::invalid_argument for an unknown preset.
RunConfig makeRunConfig(const std::string& preset, TrainingMode mode, const ModelShape& shape,
                        const RunChoices& choices);

}  // namespace nf
