// A run that diverged (trainer_state.h, train/divergence.h): it goes back to its last sane checkpoint with
// a lower learning rate, or stops with Diverged naming the checkpoint to resume from.
#include <filesystem>

#include "model/hf_checkpoint.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/checkpoint.h"
#include "train/trainer_state.h"

namespace nf {

using json = nlohmann::json;
namespace fs = std::filesystem;

// evaluateAll, then the divergence an evaluation showed (all workers learn of it from worker 0): returns
// true after a rollback; a stop throws.
bool Trainer::Impl::evaluateAndCheck(int64_t step) {
  evaluateAll(step);
  int64_t diverged = divergedEvaluation.empty() ? 0 : 1;
  if (group) diverged = group->broadcast(diverged, "the evaluation's divergence check");
  if (!diverged) return false;
  const std::string why =
      divergedEvaluation.empty() ? "an evaluation diverged on worker 0" : divergedEvaluation;
  divergedEvaluation.clear();
  const std::unique_lock<std::mutex> lock = lockBetweenSteps();  // a rollback changes the weights
  this->diverged(step, why);
  return true;
}

// The run diverged at `step` (before its update): records why, rewinds the checkpoints to the last sane
// one (a newer one holds the weights that diverged), then rolls back to it with a lower learning rate, or
// throws Diverged. Every worker calls it at the same step.
void Trainer::Impl::diverged(int64_t step, const std::string& why) {
  const DivergenceSettings& settings = config().divergence;
  int64_t target = checkpoints.sane();
  if (group) target = group->broadcast(target, "the checkpoint to go back to after the divergence");
  const bool rollBack =
      settings.action == DivergenceAction::Rollback && target >= 0 && rollbacks < settings.maxRollbacks;
  record({{record::kType, record::kDivergence},
          {"step", step},
          {"reason", why},
          {"action", rollBack ? "rollback" : "stop"},
          {"sane_checkpoint", target >= 0 ? json(run::checkpointPath(owner.m_dir, target)) : json(nullptr)}});
  if (isMain() && target >= 0) {
    rewindCheckpoints(owner.m_dir, target);  // its newer ones hold weights that led here
    checkpoints.forgetUnconfirmed();
  }
  if (rollBack) return rollBackTo(target, step);
  const std::string where = "step " + std::to_string(step + 1) + ": " + why + ". The run diverged";
  if (target < 0) {
    const std::string newest = run::latestCheckpoint(owner.m_dir);
    throw Diverged(where + " and stopped before any step vouched for one of its checkpoints" +
                   (newest.empty() ? std::string()
                                   : " (the newest, " + newest + ", may hold the weights that diverged)") +
                   ": start the run again with a lower learning rate");
  }
  throw Diverged(where +
                 (settings.action == DivergenceAction::Rollback
                      ? " again after " + std::to_string(rollbacks) + " rollbacks"
                      : std::string()) +
                 " and stopped before updating the weights. Its newest checkpoint is now the last sane "
                 "one, " +
                 run::checkpointPath(owner.m_dir, target) +
                 ": resume it with a lower learning rate "
                 "('normfree-cli resume " +
                 owner.m_dir + " --lr …')");
}

// Goes back to the checkpoint of `target` steps in place (the weights, the optimizer, the data position,
// the trackers, the applied events; the model object stays, which the optimizer and observers hold),
// with the learning rate multiplied by the settings' factor, written to config.json so a resume keeps it.
void Trainer::Impl::rollBackTo(int64_t target, int64_t fromStep) {
  const std::string folder = run::checkpointPath(owner.m_dir, target);
  const TrainingState state = readTrainingState(folder);
  {
    const CausalLM saved = loadModel(folder, device);
    torch::NoGradGuard noGrad;
    const auto from = saved->named_parameters();
    for (auto& p : model->named_parameters()) p.value().copy_(from[p.key()]);
    model->norms() = saved->norms();
  }
  loadOptimizerState(*optimizer, folder, state);
  prefetcher.reset();  // hands the sampler back; it starts again from the checkpoint's position
  sampler->setState(state.samplerState);
  prefetcher = std::make_unique<BatchPrefetcher>(*sampler, device.is_cuda());
  tracker->discardCollected();
  tracker->restore(state.trackers);
  {
    std::lock_guard<std::mutex> lock(scheduleMutex);
    applied = state.appliedEvents;
    schedule->lockBefore(target);  // the events after it fire again at their steps
    autopilotReasons.clear();
    // The autopilot goes back with the run, then retries more carefully: one site, a longer wait. The
    // schedule stays as edited, so the events a person placed since that checkpoint stay theirs.
    const std::vector<int64_t> pinned = autopilot ? autopilot->state().pinned : std::vector<int64_t>{};
    restoreAutopilot(state.autopilot, run::checkpointStatePath(folder));
    if (autopilot) {
      autopilot->state().pinned = pinned;
      autopilot->rolledBack();
    }
  }
  eventsFiredThrough = target - 1;
  // The measurements and evaluations at and after `target` are superseded: taken again as it trains on (the
  // end of the run's evaluation too, where the one rolled back was the end's).
  lastTracked = lastEvaluated = -1;
  owner.m_stepsDone = target;
  if (group) group->setStepsDone(target);
  guard = std::make_unique<DivergenceGuard>(config().divergence.factor);
  checkpoints.forgetUnconfirmed();
  ++rollbacks;
  lrScale = lrScale * config().divergence.lrFactor;
  const RunConfig lowered = settingsNow();
  if (isMain()) writeRunConfig(owner.m_dir, lowered);
  record({{record::kType, record::kRollback},
          {"step", target},
          {"from_step", fromStep},
          {"checkpoint", folder},
          {"lr", lowered.optimizer.lr},
          {"min_lr", lowered.optimizer.minLr},
          {"rollbacks", rollbacks}});
}

// The guard's memory and the newest sane checkpoint: a resumed run is watched, and rolls back, as it would
// have been without the stop. The rollbacks made are the process's (docs/TRAINING.md): a resume counts anew.
json Trainer::Impl::divergenceMemory() const {
  json memory = guard->toJson();
  memory["sane_checkpoint"] = checkpoints.sane();
  return memory;
}

// A checkpoint from before the memory was kept gives a fresh guard, as a resume did then. The checkpoint
// resumed from is vouched for by its first step; an older sane one stays the rollback's target while it is
// still there.
void Trainer::Impl::restoreDivergence(const json& memory, const std::string& source, int64_t stepsDone) {
  if (!memory.is_null()) try {
      guard->restore(memory);
      const int64_t sane = memory.at("sane_checkpoint").get<int64_t>();
      if (sane >= 0 &&
          fs::is_directory(fs::path(run::checkpointsPath(owner.m_dir)) / run::checkpointName(sane)))
        checkpoints.restore(sane);
    } catch (const std::exception& e) {
      throw FileError(source, std::string("malformed checkpoint state: divergence: ") + e.what());
    }
  checkpoints.written(stepsDone);
}

RunConfig Trainer::settingsNow() const { return m_impl->settingsNow(); }

RunConfig Trainer::Impl::settingsNow() const {
  RunConfig c = config();
  c.optimizer.lr *= lrScale;
  c.optimizer.minLr *= lrScale;
  // The switch as applied, kept beside the config rather than in it: the steering endpoint's threads read
  // the config while the training thread applies a switch.
  if (removing()) c.autopilot.enabled = autopilotOn;  // (not `autopilot`: a rollback replaces it meanwhile)
  return c;
}

}  // namespace nf
