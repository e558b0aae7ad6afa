// Pause, continue, checkpoint and stop requests, and the snapshot gate (trainer_state.h): requests come
// from any thread (the GUI, the endpoint, a signal handler) and take effect between two steps; a snapshot
// waits for the step in progress and holds training back only while it copies.
#include <chrono>

#include "run/metrics_records.h"
#include "train/trainer_state.h"
#include "util/scope_exit.h"

namespace nf {

// Waits until no snapshot is wanted and holds the model: weights and norm state change only under it.
std::unique_lock<std::mutex> Trainer::Impl::lockBetweenSteps() {
  std::unique_lock<std::mutex> lock(modelMutex);
  snapshotTaken.wait(lock, [&] { return snapshotsWanted.load() == 0; });
  return lock;
}

void Trainer::Impl::leaveLoop() {
  if (observing) model->setNormObserver(nullptr);
  observing = false;
}

Trainer::Impl::Controls Trainer::Impl::controls(int64_t step) {
  const bool last = step >= owner.m_config.optimizer.maxSteps || !trainedOut(step).empty();
  Controls here;
  {
    // The pause read and the end decided together: a pause is either held or refused, never lost.
    std::lock_guard<std::mutex> lock(controlMutex);
    here = {owner.m_stopRequested.load(), isMain() && owner.m_pauseRequested.load(),
            isMain() && owner.m_checkpointRequested.exchange(false), last};
    finishing = here.finish && !here.pause;
  }
  if (!group) return here;
  torch::Tensor flags =
      torch::tensor({int64_t{here.stop}, int64_t{here.pause}, int64_t{here.checkpoint}, int64_t{here.finish}},
                    torch::TensorOptions().dtype(torch::kLong).device(device));
  group->sum(flags, "the start of step " + std::to_string(step + 1));
  flags = flags.to(torch::kCPU);
  return {flags[0].item<int64_t>() > 0, flags[1].item<int64_t>() > 0, flags[2].item<int64_t>() > 0,
          flags[3].item<int64_t>() > 0};
}

// Before `step`: writes a checkpoint asked for, and holds while paused. The workers of a multi-worker
// run ask again every second while paused, so each exchange completes at once and a long pause never
// reaches the worker timeout. Returns whether to train the step, stop, or finish the run here: with the
// budget spent a stop finishes it too (its steps are all trained; the end costs one evaluation).
Trainer::Impl::BeforeStep Trainer::Impl::holdBeforeStep(int64_t step, int64_t& lastCheckpoint) {
  bool held = false;
  while (true) {
    const Controls c = controls(step);
    if (c.checkpoint && lastCheckpoint != step && checkpoint()) {
      lastCheckpoint = step;
    }
    if (c.stop || !c.pause) {
      if (held && !c.stop) record({{record::kType, record::kContinue}, {"step", step}});
      owner.m_paused = false;
      if (step >= owner.m_config.optimizer.maxSteps) return BeforeStep::Finish;
      return c.stop ? BeforeStep::Stop : c.finish ? BeforeStep::Finish : BeforeStep::Train;
    }
    if (!held) {
      held = true;
      // Recorded before it is said: a client that sees the run paused finds the pause in its log.
      record({{record::kType, record::kPause}, {"step", step}});
      owner.m_paused = true;
    }
    applyAutopilotSwitch(step);  // made while paused: a run killed before its next step keeps it
    std::unique_lock<std::mutex> lock(controlMutex);
    // Woken by a request; the timeout also notices a stop asked for by a signal handler, which cannot
    // notify. The other workers take no requests but a stop: they wait the second out, then ask worker 0.
    controlChanged.wait_for(lock, std::chrono::seconds(1), [&] {
      return owner.m_stopRequested || (isMain() && (!owner.m_pauseRequested || owner.m_checkpointRequested ||
                                                    autopilotSwitch.load() >= 0));
    });
  }
}

void Trainer::Impl::controlRequested() {
  std::lock_guard<std::mutex> lock(controlMutex);  // so a waiting run cannot miss the change
  controlChanged.notify_all();
}

void Trainer::requestStop() {
  m_stopRequested = true;
  m_impl->controlRequested();
}

bool Trainer::requestPause() {
  std::lock_guard<std::mutex> lock(m_impl->controlMutex);
  if (m_impl->finishing) return false;
  m_pauseRequested = true;
  return true;
}

void Trainer::requestContinue() {
  m_pauseRequested = false;
  m_impl->controlRequested();
}

void Trainer::requestCheckpoint() {
  m_checkpointRequested = true;
  m_impl->controlRequested();
}

SnapshotPtr Trainer::snapshot() {
  Impl& d = *m_impl;
  ++d.snapshotsWanted;
  const ScopeExit done([&] {
    {
      // Under the lock: the training loop checks the count and waits under it, so the wakeup is not lost.
      std::lock_guard<std::mutex> lock(d.modelMutex);
      --d.snapshotsWanted;
    }
    d.snapshotTaken.notify_all();
  });
  std::lock_guard<std::mutex> lock(d.modelMutex);
  return ModelSnapshot::copyOf(*d.model, m_stepsDone.load(), m_dir);
}

}  // namespace nf
