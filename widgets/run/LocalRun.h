// A run trained in this process: the engine's Trainer made (or resumed from its checkpoint) and run on the
// session's training thread, paused, stopped and continued between two steps; its records drained from
// the trainer's listener. Worker 0 of a run with several workers (the others: LocalWorkers). Its phase, its
// trainer and its failures are reported as signals; the GUI thread never waits on it.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "logic/WindowState.h"
#include "train/settings.h"
#include "util/progress.h"

class LocalWorkers;

namespace nf {
class Trainer;
class MetricsQueue;
}  // namespace nf

class LocalRun : public QObject {
  Q_OBJECT
 public:
  // `training`: the object of the thread that trains (work is posted to it).
  LocalRun(QObject* training, LocalWorkers* others, QObject* parent = nullptr);

  using Prepare = std::function<void(nf::RunConfig&, const nf::ProgressFn&)>;
  void start(const nf::RunConfig& config, const QString& runDir, Prepare prepare, int workers);
  void resume(const QString& runDir, int workers);  // from the run's newest checkpoint
  void launch();                                    // the trainer in memory goes on (Running)
  // The step in progress completes and a checkpoint is written, then Paused (pause) or Stopped (stop);
  // stop while the trainer is being made cancels that. False when there is nothing to pause or stop.
  bool pause();
  bool stop();
  std::vector<std::string> drain();  // the records since the last call
  std::shared_ptr<nf::Trainer> trainer() const { return m_trainer; }
  RunPhase phase() const { return m_phase; }
  void letGo();     // of the trainer (its checkpoint is on disk)
  void shutdown();  // the window closes: the trainer stops after its step; late results are ignored

 Q_SIGNALS:
  void phaseChanged(RunPhase phase);
  void trainerMade();  // trainer() is new: its records so far are in the run's metrics.jsonl
  void failed(const QString& message);
  void preparationStopped();  // Stop while the data was being made: no trainer, no run folder
  void progress(const QString& task, qint64 done, qint64 total);

 private:
  void post(std::function<void()> work);  // to the training thread
  void setPhase(RunPhase phase);
  void adopt(std::shared_ptr<nf::Trainer> trainer);
  void reportFailure(const std::string& what);  // from the training thread
  QObject* m_training;
  LocalWorkers* m_others;
  RunPhase m_phase = RunPhase::None;
  std::shared_ptr<nf::Trainer> m_trainer;
  std::shared_ptr<nf::MetricsQueue> m_queue;
  bool m_stopAfterPause = false;
  std::atomic<bool> m_cancelPreparation{false};  // read by the preparation's progress callback
  bool m_shutDown = false;
};
