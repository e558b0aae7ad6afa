#include "train/settings.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "analysis/tracked_analyses.h"
#include "io/atomic_file.h"
#include "io/file_format.h"
#include "io/json_read.h"
#include "run/run_directory.h"
#include "util/whole_number.h"

namespace nf {
std::string trainingModeName(TrainingMode mode) {
  switch (mode) {
    case TrainingMode::Pretrain:
      return "pretrain";
    case TrainingMode::Finetune:
      return "finetune";
    case TrainingMode::Remove:
      return "remove";
  }
  return "?";
}

TrainingMode parseTrainingMode(const std::string& name) {
  for (TrainingMode m : {TrainingMode::Pretrain, TrainingMode::Finetune, TrainingMode::Remove})
    if (trainingModeName(m) == name) return m;
  throw std::invalid_argument("unknown mode '" + name + "' (pretrain, finetune or remove)");
}

RunConfig makeRunConfig(const std::string& presetName, TrainingMode mode, const ModelShape& shape,
                        const RunChoices& choices) {
  const Preset& preset = findPreset(presetName);
  // A preset's own schedule names the layers of its depth: on a deeper model the rest would keep their norm.
  if (mode == TrainingMode::Remove && !choices.schedule && preset.nLayer != 0 &&
      preset.nLayer != shape.nLayer)
    throw std::invalid_argument(
        "preset " + preset.name + "'s schedule is made for " + std::to_string(preset.nLayer) +
        " layers; the model has " + std::to_string(shape.nLayer) + ": choose " +
        presetForDepth(shape.nLayer).name + " (made for its depth) with --preset, or give a --schedule");
  RunConfig c;
  c.mode = mode;
  c.preset = preset.name;
  c.model = choices.model;
  c.trainData = choices.trainData;
  c.evalData = choices.evalData;
  c.device = choices.device;
  c.optimizer = preset.optimizer;
  c.removal = preset.removal;
  c.schedule = mode == TrainingMode::Remove ? choices.schedule.value_or(presetSchedule(preset, shape.nLayer))
                                            : Schedule{};
  if (preset.nLayer == 0) c.optimizer.maxSteps = stepsForDepth(shape.nLayer);
  auto choose = [](auto& field, const auto& choice) {
    if (choice) field = *choice;
  };
  choose(c.optimizer.maxSteps, choices.maxSteps);
  choose(c.optimizer.warmupSteps, choices.warmupSteps);
  choose(c.optimizer.microBatch, choices.microBatch);
  choose(c.optimizer.accumulation, choices.accumulation);
  choose(c.optimizer.context, choices.context);
  choose(c.optimizer.lr, choices.lr);
  choose(c.optimizer.minLr, choices.minLr);
  choose(c.optimizer.weightDecay, choices.weightDecay);
  choose(c.optimizer.seed, choices.seed);
  choose(c.optimizer.documentWindows, choices.documentWindows);
  choose(c.optimizer.bf16, choices.bf16);
  choose(c.optimizer.activationCheckpointing, choices.activationCheckpointing);
  choose(c.removal.auxWeight, choices.auxWeight);
  choose(c.removal.emaMomentum, choices.emaMomentum);
  choose(c.removal.interpolationSteps, choices.interpolationSteps);
  c.removal.pos0Treatment = c.removal.pos0Treatment || choices.pos0Treatment;
  c.removal.eotTreatment = c.removal.eotTreatment || choices.eotTreatment;
  choose(c.eval.interval, choices.evalInterval);
  choose(c.eval.tokens, choices.evalTokens);
  choose(c.checkpointInterval, choices.checkpointInterval);
  choose(c.keepCheckpoints, choices.keepCheckpoints);
  choose(c.divergence.action, choices.onDivergence);
  choose(c.divergence.factor, choices.divergenceFactor);
  if (mode == TrainingMode::Remove) choose(c.autopilot, choices.autopilot);
  choose(c.tracking, choices.tracking);
  // An autopilot run retries a removal that made it diverge (from its last sane checkpoint), unless told.
  if (c.autopilot.enabled && !choices.onDivergence) c.divergence.action = DivergenceAction::Rollback;
  // The context can never exceed the model's positions: the preset's is cut to them, one asked for refused.
  if (choices.context && *choices.context > shape.nPositions)
    throw std::invalid_argument("a context of " + std::to_string(*choices.context) +
                                " tokens is longer than the model's " + std::to_string(shape.nPositions) +
                                " positions (--context)");
  c.optimizer.context = std::min<int64_t>(c.optimizer.context, shape.nPositions);
  if (c.mode == TrainingMode::Remove && c.autopilot.enabled) waitAtTheLastStep(c.schedule, c, 0);
  return c;
}

void waitAtTheLastStep(Schedule& schedule, const RunConfig& config, int64_t fromStep) {
  const int64_t last = config.optimizer.maxSteps - 1 - config.removal.interpolationSteps;
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const ScheduleEvent& e : schedule.events)
    if (e.step >= fromStep) first = std::min(first, e.step);
  if (first > last) return;  // the first is past the budget too: refused as placed
  for (ScheduleEvent& e : schedule.events)
    if (e.step >= fromStep) e.step = std::min(e.step, last);
}

nlohmann::json toJson(const RunConfig& c) {
  const auto& o = c.optimizer;
  const auto& r = c.removal;
  return {{"format", kRunConfigFormat.name},
          {"version", kRunConfigFormat.version},
          {"mode", trainingModeName(c.mode)},
          {"preset", c.preset},
          {"model", c.model},
          {"train_data", c.trainData},
          {"eval_data", c.evalData},
          {"device", c.device},
          {"checkpoint_interval", c.checkpointInterval},
          {"keep_checkpoints", c.keepCheckpoints},
          {"optimizer",
           {{"micro_batch", o.microBatch},
            {"accumulation", o.accumulation},
            {"context", o.context},
            {"max_steps", o.maxSteps},
            {"warmup_steps", o.warmupSteps},
            {"lr", o.lr},
            {"min_lr", o.minLr},
            {"weight_decay", o.weightDecay},
            {"beta1", o.beta1},
            {"beta2", o.beta2},
            {"eps", o.eps},
            {"clip_norm", o.clipNorm},
            {"seed", o.seed},
            {"document_windows", o.documentWindows},
            {"bf16", o.bf16},
            {"activation_checkpointing", o.activationCheckpointing}}},
          {"removal",
           {{"ema_momentum", r.emaMomentum},
            {"aux_weight", r.auxWeight},
            {"pos0_treatment", r.pos0Treatment},
            {"eot_treatment", r.eotTreatment},
            {"interpolation_steps", r.interpolationSteps}}},
          {"eval", {{"interval", c.eval.interval}, {"tokens", c.eval.tokens}}},
          {"divergence",
           {{"action", divergenceActionName(c.divergence.action)},
            {"factor", c.divergence.factor},
            {"lr_factor", c.divergence.lrFactor},
            {"max_rollbacks", c.divergence.maxRollbacks}}},
          {"autopilot",
           {{"enabled", c.autopilot.enabled},
            {"tolerance", c.autopilot.tolerance},
            {"grad_factor", c.autopilot.gradFactor},
            {"min_gap", c.autopilot.minGap},
            {"max_gap", c.autopilot.maxGap},
            {"max_group", c.autopilot.maxGroup},
            {"smoothing", c.autopilot.smoothing},
            {"patience", c.autopilot.patience},
            {"min_improvement", c.autopilot.minImprovement}}},
          {"tracking",
           {{"analyses", c.tracking.analyses},
            {"every", c.tracking.every},
            {"sequences", c.tracking.sequences},
            {"length", c.tracking.length},
            {"data", c.tracking.data}}},
          {"schedule", toJson(c.schedule)}};
}

RunConfig runConfigFromJson(const nlohmann::json& j, const std::string& source) {
  checkFileFormat(j, kRunConfigFormat, source);
  // Every field type-checked: a step count of 2.7 or a batch of true is refused, never converted.
  RunConfig c;
  try {
    readJson(j, "run configuration", [&](const JsonIn& in) {
      // Every member known: a misspelt setting ("learning_rate") would train with the default unsaid.
      in.requireKnown({"format", "version", "mode", "preset", "model", "train_data", "eval_data", "device",
                       "checkpoint_interval", "keep_checkpoints", "optimizer", "removal", "eval",
                       "divergence", "autopilot", "tracking", "schedule"});
      c.mode = parseTrainingMode(in["mode"].text());
      in["preset"].readIfGiven(c.preset);
      c.model = in["model"].text();
      c.trainData = in["train_data"].text();
      if (in["eval_data"].present())
        c.evalData = in["eval_data"].list([](const JsonIn& x) { return x.text(); });
      in["device"].readIfGiven(c.device);
      in["checkpoint_interval"].readIfGiven(c.checkpointInterval);
      in["keep_checkpoints"].readIfGiven(c.keepCheckpoints);
      const JsonIn o = in["optimizer"];
      auto& oc = c.optimizer;
      o.requireKnown({"micro_batch", "accumulation", "context", "max_steps", "warmup_steps", "lr", "min_lr",
                      "weight_decay", "beta1", "beta2", "eps", "clip_norm", "seed", "document_windows",
                      "bf16", "activation_checkpointing"});
      oc.microBatch = o["micro_batch"].whole<int64_t>();
      oc.accumulation = o["accumulation"].whole<int64_t>();
      oc.context = o["context"].whole<int64_t>();
      oc.maxSteps = o["max_steps"].whole<int64_t>();
      oc.warmupSteps = o["warmup_steps"].whole<int64_t>();
      oc.lr = o["lr"].real();
      oc.minLr = o["min_lr"].real();
      o["weight_decay"].readIfGiven(oc.weightDecay);
      o["beta1"].readIfGiven(oc.beta1);
      o["beta2"].readIfGiven(oc.beta2);
      o["eps"].readIfGiven(oc.eps);
      o["clip_norm"].readIfGiven(oc.clipNorm);
      o["seed"].readIfGiven(oc.seed);
      o["document_windows"].readIfGiven(oc.documentWindows);
      o["bf16"].readIfGiven(oc.bf16);
      o["activation_checkpointing"].readIfGiven(oc.activationCheckpointing);
      const JsonIn r = in["removal"];
      if (r.present()) {
        auto& rc = c.removal;
        r.requireKnown(
            {"ema_momentum", "aux_weight", "pos0_treatment", "eot_treatment", "interpolation_steps"});
        r["ema_momentum"].readIfGiven(rc.emaMomentum);
        r["aux_weight"].readIfGiven(rc.auxWeight);
        r["pos0_treatment"].readIfGiven(rc.pos0Treatment);
        r["eot_treatment"].readIfGiven(rc.eotTreatment);
        r["interpolation_steps"].readIfGiven(rc.interpolationSteps);
      }
      const JsonIn e = in["eval"];
      if (e.present()) {
        e.requireKnown({"interval", "tokens"});
        e["interval"].readIfGiven(c.eval.interval);
        e["tokens"].readIfGiven(c.eval.tokens);
      }
      const JsonIn d = in["divergence"];  // runs written before it existed take the defaults
      if (d.present()) {
        d.requireKnown({"action", "factor", "lr_factor", "max_rollbacks"});
        if (d["action"].present()) c.divergence.action = parseDivergenceAction(d["action"].text());
        // Written as null by the builds of 2026-11-24 to 11-30 for --divergence-factor inf: never rolled
        // back, which factor 0 means now.
        if (d["factor"].null())
          c.divergence.factor = 0;
        else
          d["factor"].readIfGiven(c.divergence.factor);
        d["lr_factor"].readIfGiven(c.divergence.lrFactor);
        d["max_rollbacks"].readIfGiven(c.divergence.maxRollbacks);
      }
      const JsonIn a = in["autopilot"];  // runs written before it existed: off
      if (a.present()) {
        a.requireKnown({"enabled", "tolerance", "grad_factor", "min_gap", "max_gap", "max_group", "smoothing",
                        "patience", "min_improvement"});
        a["enabled"].readIfGiven(c.autopilot.enabled);
        a["tolerance"].readIfGiven(c.autopilot.tolerance);
        a["grad_factor"].readIfGiven(c.autopilot.gradFactor);
        a["min_gap"].readIfGiven(c.autopilot.minGap);
        a["max_gap"].readIfGiven(c.autopilot.maxGap);
        a["max_group"].readIfGiven(c.autopilot.maxGroup);
        a["smoothing"].readIfGiven(c.autopilot.smoothing);
        c.autopilot.patience = 0;  // runs from before the plateau trained to the end of their budget
        a["patience"].readIfGiven(c.autopilot.patience);
        a["min_improvement"].readIfGiven(c.autopilot.minImprovement);
      }
      const JsonIn t = in["tracking"];  // runs written before it existed track nothing
      if (t.present()) {
        t.requireKnown({"analyses", "every", "sequences", "length", "data"});
        if (t["analyses"].present())
          c.tracking.analyses = t["analyses"].list([](const JsonIn& x) { return x.text(); });
        t["every"].readIfGiven(c.tracking.every);
        t["sequences"].readIfGiven(c.tracking.sequences);
        t["length"].readIfGiven(c.tracking.length);
        t["data"].readIfGiven(c.tracking.data);
      }
      return 0;
    });
    if (j.contains("schedule")) c.schedule = scheduleFromJson(j["schedule"], source);
  } catch (const std::invalid_argument& e) {
    throw FileError(source, e.what());
  }
  validate(c, source);
  return c;
}

RunConfig readRunConfig(const std::string& runDir) {
  const std::string path = run::configPath(runDir);
  return runConfigFromJson(readFormatFile(path), path);
}

namespace {

void collectChanges(const nlohmann::json& before, const nlohmann::json& after, const std::string& prefix,
                    nlohmann::json& changes) {
  if (before.is_object() && after.is_object()) {
    for (const auto& [key, value] : after.items()) {
      if (prefix.empty() && key == "schedule") continue;
      collectChanges(before.contains(key) ? before.at(key) : nlohmann::json(), value,
                     prefix.empty() ? key : prefix + "." + key, changes);
    }
    for (const auto& [key, value] : before.items())
      if (!after.contains(key))
        collectChanges(value, nlohmann::json(), prefix.empty() ? key : prefix + "." + key, changes);
    return;
  }
  if (before != after) changes[prefix] = {{"from", before}, {"to", after}};
}

}  // namespace

nlohmann::json settingsChanged(const nlohmann::json& before, const nlohmann::json& after) {
  nlohmann::json changes = nlohmann::json::object();
  collectChanges(before, after, "", changes);
  return changes;
}

void writeRunConfig(const std::string& runDir, const RunConfig& config) {
  writeFileAtomic(run::configPath(runDir), toJson(config).dump(2) + "\n");
}

nlohmann::json applyResumeOverrides(RunConfig& c, const ResumeOverrides& overrides) {
  nlohmann::json changed = nlohmann::json::object();
  if (overrides.lr) changed["lr"] = c.optimizer.lr = *overrides.lr;
  if (overrides.minLr) changed["min_lr"] = c.optimizer.minLr = *overrides.minLr;
  if (overrides.maxSteps) changed["max_steps"] = c.optimizer.maxSteps = *overrides.maxSteps;
  if (overrides.autopilotPatience && !c.autopilot.enabled)
    throw std::invalid_argument("--autopilot-patience was given, but this run's autopilot is off");
  if (overrides.autopilotPatience)
    changed["autopilot_patience"] = c.autopilot.patience = *overrides.autopilotPatience;
  if (overrides.keepCheckpoints) changed["keep_checkpoints"] = c.keepCheckpoints = *overrides.keepCheckpoints;
  validate(c, "the settings given to resume");
  return changed;
}

namespace {

// A device the engine trains on, spelt as LibTorch parses it — what the CLI's --device accepted: "cpu" or
// "cuda", each with ":N" or not (N of at most 3 digits, written as std::to_string writes it: no sign, no
// leading zero). Checked here, without LibTorch (this file builds without it for the fuzzers), so that a
// hand-edited config.json is named in the error; LibTorch's names no file.
bool isTrainingDevice(const std::string& d) {
  const std::size_t colon = d.find(':');
  const std::string type = d.substr(0, colon);
  if (type != "cpu" && type != "cuda") return false;
  if (colon == std::string::npos) return true;
  const std::string index = d.substr(colon + 1);
  const std::optional<int64_t> n = wholeNumber(index);
  return n && *n >= 0 && *n <= 999 && std::to_string(*n) == index;
}

}  // namespace

void validate(const RunConfig& c, const std::string& source) {
  if (!isTrainingDevice(c.device))
    throw FileError(source, "device \"" + c.device + "\" is not cpu, cuda or cuda:N");
  const auto& o = c.optimizer;
  if (o.microBatch < 1 || o.accumulation < 1 || o.context < 1 || o.maxSteps < 1 || o.warmupSteps < 0 ||
      !(o.lr > 0) || !(o.minLr >= 0) || !(o.clipNorm >= 0) || !(o.weightDecay >= 0) || !std::isfinite(o.lr) ||
      !std::isfinite(o.weightDecay))
    throw FileError(source,
                    "optimizer settings out of range (batch, accumulation, context, steps ≥ 1; lr > 0; "
                    "min lr, clip norm, weight decay ≥ 0; lr and weight decay finite)");
  if (o.minLr > o.lr) {
    std::ostringstream text;
    text << "the minimum learning rate " << o.minLr << " is above the peak " << o.lr
         << ": the cosine decay would raise the rate (lower min_lr, --min-lr)";
    throw FileError(source, text.str());
  }
  if (!(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps > 0))
    throw FileError(source, "AdamW's betas must lie in [0, 1) and its eps be positive");
  if (!(o.documentWindows >= 0 && o.documentWindows <= 1))
    throw FileError(
        source, "the share of document windows must lie in [0, 1], got " + std::to_string(o.documentWindows));
  if (!(c.removal.emaMomentum >= 0 && c.removal.emaMomentum <= 1))
    throw FileError(source,
                    "the EMA momentum must lie in [0, 1], got " + std::to_string(c.removal.emaMomentum));
  if (!(c.removal.auxWeight >= 0) || !std::isfinite(c.removal.auxWeight) || c.removal.interpolationSteps < 0)
    throw FileError(source, "the auxiliary loss weight and interpolation steps must be non-negative");
  if (c.checkpointInterval < 0 || c.keepCheckpoints < 0 || c.eval.interval < 0 || c.eval.tokens < 0)
    throw FileError(source,
                    "checkpoint and evaluation intervals and the checkpoints kept must be non-negative");
  if (c.eval.tokens > 0 && c.eval.tokens < o.context)  // a whole chunk would be evaluated, unsaid
    throw FileError(source, "an evaluation of " + std::to_string(c.eval.tokens) +
                                " tokens is less than one chunk of the context, " +
                                std::to_string(o.context) + " (--eval-tokens)");
  const DivergenceSettings& d = c.divergence;
  if (!(d.factor == 0 || d.factor > 1) || !(d.lrFactor > 0 && d.lrFactor < 1) || d.maxRollbacks < 0)
    throw FileError(source,
                    "divergence settings out of range (factor 0 or > 1; learning-rate factor in (0, 1); "
                    "rollbacks ≥ 0)");
  try {
    checkAutopilotSettings(c.autopilot);
  } catch (const std::invalid_argument& e) {
    throw FileError(source, e.what());
  }
  if (c.autopilot.enabled && c.mode != TrainingMode::Remove)
    throw FileError(source, "the autopilot times removals: it needs remove mode");
  const TrackingSettings& t = c.tracking;
  if (t.every < 0 || t.sequences < 1 || t.length < 2)
    throw FileError(source, "tracking settings out of range (every ≥ 0; sequences ≥ 1; length ≥ 2)");
  try {
    checkTrackedAnalyses(t.analyses);
  } catch (const std::invalid_argument& e) {
    throw FileError(source, e.what());
  }
}

void requireRampsEnd(const Schedule& schedule, const RunConfig& config, int64_t fromStep) {
  const int64_t ramp = config.removal.interpolationSteps, last = config.optimizer.maxSteps - 1;
  std::string late;
  for (const ScheduleEvent& e : schedule.events)
    if (ramp > 0 && e.action == EventAction::MakeFake && e.step >= fromStep && e.step + ramp > last)
      late += "\nevent " + std::to_string(e.id) + " (" + describe(e) + "): its ramp of " +
              std::to_string(ramp) + " steps (--interpolation-steps) ends at step " +
              std::to_string(e.step + ramp) + ", past the last step " + std::to_string(last) + " (--steps)";
  if (!late.empty()) throw std::invalid_argument(late.substr(1));
}

std::string divergenceActionName(DivergenceAction action) {
  return action == DivergenceAction::Rollback ? "rollback" : "stop";
}

DivergenceAction parseDivergenceAction(const std::string& name) {
  if (name == "stop") return DivergenceAction::Stop;
  if (name == "rollback") return DivergenceAction::Rollback;
  throw std::invalid_argument("unknown divergence action '" + name + "' (expected stop or rollback)");
}

}  // namespace nf
