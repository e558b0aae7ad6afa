// A training run as the GUI sees it: the engine's Trainer working on a QThread, commands sent to it
// queued, its metrics drained from the engine's listener on a timer (at most one update per ~50 ms), or —
// for a run started elsewhere (the CLI on a server) — its metrics.jsonl followed as it grows. The GUI
// thread never waits on training: only shutdown() (closing the window) waits, for the step in progress
// and the checkpoint that stopping writes.
// A run another process trains with --serve is connected to over the network (RemoteRun), also through an
// SSH tunnel: the same view, edits and controls as a run trained here.
// A run with several workers (docs/TRAINING.md) trains here as worker 0 — live edits, snapshots and the
// analysis panes work as in one process — and the other workers are `normfree-cli` processes started here.
#pragma once
#include <QFile>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>

#include "distributed/worker_environment.h"
#include "logic/MetricsStore.h"
#include "logic/RemoteRun.h"
#include "logic/ScheduleEditor.h"
#include "logic/WindowState.h"
#include "train/settings.h"
#include "util/progress.h"

namespace nf {
class Trainer;
}

class RunSession : public QObject {
  Q_OBJECT
 public:
  enum class State {
    Idle,
    Preparing,
    Running,
    Pausing,
    Paused,
    Stopping,
    Stopped,
    Finished,
    Following,
    Failed
  };
  Q_ENUM(State)

  explicit RunSession(QObject* parent = nullptr);
  ~RunSession() override;

  // A new run in runDir (which must not hold one). `prepare`, when given, runs first on the worker thread
  // (e.g. making the default datasets) and may fill in the config; it reports through progress().
  // workers > 1: a multi-worker run on this machine (one GPU each on cuda, else CPU processes).
  void start(const nf::RunConfig& config, const QString& runDir, int layers,
             std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare = {}, int workers = 1);
  void pause();        // the step in progress completes, a checkpoint is written; continueRun() goes on
  void stop();         // the same, then the trainer is let go; resume() continues from its checkpoint
  void continueRun();  // a multi-worker run resumes from the checkpoint its pause wrote, with new workers
  void resume(const QString& runDir, int layers,
              int workers = 1);        // a stopped run (also one the CLI started)
  bool follow(const QString& runDir);  // watch a headless run's metrics.jsonl grow (false while busy)
  // A run another process trains and serves (--serve, docs/STEERING.md): its metrics streamed, its
  // schedule edited (RemoteSchedule), pause / continue / stop sent to it; a lost connection is re-made.
  // State Preparing while the run is first asked, then the run's own state; Failed when it cannot be.
  void connectTo(const nf::ServeAddress& address);
  // Lets go of the run shown, unless one trains here now: the trainer in memory (its checkpoint is on
  // disk), the followed file, the connection (the connected run trains on where it is). No run, no
  // metrics; state Idle.
  void close();
  // Stops a run (writing its checkpoint) and waits for the worker; for closing the window.
  void shutdown();

  State state() const { return m_state; }
  // The window's phase event for the state now (a followed run: what its own process last said); none
  // while Idle.
  std::optional<WindowEvent> phaseEvent() const;
  bool remote() const { return m_remote != nullptr; }
  QString remoteAddress() const { return m_remoteAddress; }  // "host:port" of the run connected to
  std::optional<nf::ServeAddress> serveAddress() const {     // and with its token, while connected
    return m_remote ? std::optional<nf::ServeAddress>(m_remote->address()) : std::nullopt;
  }
  QString connectionProblem() const { return m_connectionProblem; }  // "" while the run answers
  bool busy() const;                                                 // the worker is doing something
  QString runDir() const { return m_runDir; }
  const nf::RunConfig& config() const { return m_config; }
  const MetricsStore& metrics() const { return m_metrics; }
  std::shared_ptr<nf::Trainer> trainer() const { return m_trainer; }
  int64_t stepsDone() const;
  std::shared_ptr<ScheduleEditor> liveSchedule() const { return m_live; }
  int workers() const { return m_workers; }
  // The program the other workers run: normfree-cli next to this executable unless set.
  void setWorkerProgram(const QString& path) { m_workerProgram = path; }

 Q_SIGNALS:
  void stateChanged(RunSession::State state);
  void metricsChanged();  // new records were added to metrics() (or it was reloaded)
  void trainerReady();    // trainer() and liveSchedule() are new
  void progress(const QString& task, qint64 done, qint64 total);
  void failed(const QString& message);
  void connectFailed(const QString& message);            // connectTo() could not reach or read the run
  void connectionChanged();                              // remote() or connectionProblem() changed
  void remoteNotice(const QString& message);             // a control the connected run refused
  void remoteEditRefused(const nf::EditResult& result);  // an edit the timeline showed as made
  void scheduleReplaced();  // the connected run's schedule replaced the timeline's copy

 private:
  void setState(State state);
  void letGo();  // of the trainer, the followed file, the connection and the other workers
  void runOnWorker(std::function<void()> work);
  void launchRun();
  void launchUnlessStopped();
  void reportFailure(const std::string& what);  // from the worker: Failed, and failed(message)
  void adoptTrainer(std::shared_ptr<nf::Trainer> trainer, int layers);
  void drain();
  void readFollowedFile();
  void adoptRemote(const nf::ServeAddress& address, const nf::Schedule& schedule, int layers,
                   const nlohmann::json& status);
  void readRemote();
  void applyRemoteStatus(const nlohmann::json& status);
  // The connection ends (its threads on the worker thread: an unreachable run never blocks this one);
  // the address stays, so messages can name the run that ended. forgetRemote() drops it all.
  void leaveRemote();
  void forgetRemote();
  void continueRemoteAfterEdits();
  // On the worker thread, for a run with `workers` > 1: this process's place as worker 0 (serving the
  // rendezvous on a free port), with the others started on the GUI thread; nullopt for one worker.
  std::optional<nf::WorkerEnvironment> asMainOfLocalWorkers(int workers, const QStringList& arguments);
  // The other workers of a multi-worker run, started with `arguments` (e.g. "join", runDir) and the
  // rendezvous at 127.0.0.1:port; ended when the session fails or shuts down.
  void startOtherWorkers(const QStringList& arguments, int port);
  void endOtherWorkers(bool now = false);  // now: kill them (a failed run), else let them finish first
  bool checkWorkerProgram(int workers);    // false (and failed()) when workers > 1 cannot be started

  QThread m_thread;
  QObject* m_worker;  // lives on m_thread; work is posted to it
  QTimer m_drainTimer;
  State m_state = State::Idle;
  QString m_runDir;
  nf::RunConfig m_config;
  std::shared_ptr<nf::Trainer> m_trainer;
  std::shared_ptr<nf::MetricsQueue> m_queue;
  std::shared_ptr<ScheduleEditor> m_live;
  bool m_stopAfterPause = false;
  std::atomic<bool> m_cancelPreparation{false};  // read by the preparation's progress callback
  // After shutdown(): no more work is posted, late results are ignored.
  bool m_shutDown = false;
  MetricsStore m_metrics;
  std::unique_ptr<nf::MetricsFollower> m_follower;  // a followed run's metrics.jsonl
  std::shared_ptr<RemoteRun> m_remote;              // a connected run's stream and controls
  QString m_remoteAddress, m_connectionProblem;
  int64_t m_remoteStepsDone = 0;
  bool m_remoteStopRequested = false;
  int m_workers = 1;
  QString m_workerProgram;
  std::vector<QProcess*> m_otherWorkers;  // worker r is m_otherWorkers[r - 1]
  QStringList m_workerNotes;              // how other workers ended badly, for the failure message
};
