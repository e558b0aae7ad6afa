// A training run as the GUI sees it, one at a time, behind one façade: a run trained here (LocalRun, with
// LocalWorkers for a run of several workers), a run another process trains whose metrics.jsonl is followed
// as it grows (the engine's MetricsFollower), or a run served elsewhere and connected to over the network,
// also through an SSH tunnel (ConnectedRun). The session holds what the window shows of it — its state,
// folder, settings, metrics and the schedule the timeline edits — and drains new records on a timer (at most
// one update per ~50 ms). The GUI thread never waits on training: only shutdown() (closing the window)
// waits, for the step in progress and the checkpoint that stopping writes.
#pragma once
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

#include "logic/MetricsStore.h"
#include "logic/ScheduleEditor.h"
#include "logic/WindowState.h"
#include "serve/serve_address.h"
#include "train/settings.h"
#include "util/progress.h"

class ConnectedRun;
class LocalRun;
class LocalWorkers;

namespace nf {
class MetricsFollower;
class Trainer;
struct EditResult;
}  // namespace nf

class RunSession : public QObject {
  Q_OBJECT
 public:
  explicit RunSession(QObject* parent = nullptr);
  ~RunSession() override;

  // A new run in runDir (which must not hold one). `prepare`, when given, runs first on the worker thread
  // (e.g. making the default datasets) and may fill in the config; it reports through progress().
  // workers > 1: a multi-worker run on this machine (one GPU each on cuda, else CPU processes).
  void start(const nf::RunConfig& config, const QString& runDir, int layers,
             std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare = {}, int workers = 1);
  void pause();        // the step in progress completes, a checkpoint is written; continueRun() goes on
  void stop();         // the same, then the trainer is let go; resume() continues from its checkpoint
  void continueRun();  // the run shown goes on (a multi-worker or failed one from its checkpoint)
  // The autopilot of the run trained here or connected to (schedule/autopilot.h): switched, and whether it
  // is on (a connected run's as its last status said).
  void setAutopilot(bool on);
  bool autopilot() const;
  void resume(const QString& runDir, int layers,
              int workers = 1);  // a stopped run (also one the CLI started)
  // follow() and connectTo() switch quietly: the run's first metrics and phase are not announced (the window
  // still shows the run before, and would take them as its own); the caller shows them once it has switched.
  bool follow(const QString& runDir);  // watch a headless run's metrics.jsonl grow (false while busy)
  // A run another process trains and serves (--serve, docs/STEERING.md): its metrics streamed, its
  // schedule edited (RemoteSchedule), pause / continue / stop sent to it; a lost connection is re-made.
  // Preparing while the run is first asked, then the run's own phase; Failed when it cannot be.
  void connectTo(const nf::ServeAddress& address);
  // Lets go of the run shown, unless one trains here now: the trainer in memory (its checkpoint is on
  // disk), the followed file, the connection (the connected run trains on where it is). No run, no
  // metrics; phase None.
  void close();
  // Stops a run (writing its checkpoint) and waits for the worker; for closing the window.
  void shutdown();

  // Where the run is (a followed run: what its own process last recorded); None while it holds none.
  RunPhase phase() const { return m_phase; }
  // A run another process trains, watched through its folder.
  bool following() const { return m_follower != nullptr; }
  bool remote() const;            // connected to a run trained elsewhere
  QString remoteAddress() const;  // "host:port" of the run connected to (kept once it ended)
  std::optional<nf::ServeAddress> serveAddress() const;  // and with its token, while connected
  QString connectionProblem() const;                     // "" while the run answers
  bool busy() const;                                     // training in this process is in progress
  QString runDir() const { return m_runDir; }
  const nf::RunConfig& config() const { return m_config; }
  // False while a connected run has not answered yet: config() is then no run's, only defaults.
  bool configKnown() const { return !m_runDir.isEmpty(); }
  const MetricsStore& metrics() const { return m_metrics; }
  std::shared_ptr<nf::Trainer> trainer() const;
  int64_t stepsDone() const;
  // The run's step budget: its records' (a resume can give a new one), else its config's.
  int64_t maxSteps() const;
  std::shared_ptr<ScheduleEditor> liveSchedule() const { return m_live; }
  int workers() const { return m_workers; }
  // The program the other workers run: normfree-cli next to this executable unless set.
  void setWorkerProgram(const QString& path);

 Q_SIGNALS:
  void phaseChanged(RunPhase phase);
  void metricsChanged();  // new records were added to metrics() (or it was reloaded)
  void trainerReady();    // trainer() and liveSchedule() are new
  void progress(const QString& task, qint64 done, qint64 total);
  void failed(const QString& message);
  // The run shown never began: connectTo() could not reach or read it, or was given up, or a start was
  // stopped while its data was being made; or a followed run's log can no longer be read (a newer build's
  // run replaced it). message: what to report ("" when the user gave it up).
  void notBegun(const QString& message);
  void connectionChanged();                              // remote() or connectionProblem() changed
  void remoteNotice(const QString& message);             // a control the connected run refused
  void remoteEditRefused(const nf::EditResult& result);  // an edit the timeline showed as made
  void scheduleReplaced();  // the connected run's schedule replaced the timeline's copy

 private:
  void setPhase(RunPhase phase);
  void letGo();  // of the run shown: its trainer, followed file or connection, and the other workers
  void ingest(const std::vector<std::string>& lines, bool restarted = false);
  void drain();
  void onLocalPhase(RunPhase phase);
  void onTrainerMade(int layers);
  void onAnswered(const nf::ServeAddress& address, const nf::Schedule& schedule, int layers,
                  const nlohmann::json& status);
  void readConnected();

  QThread m_thread;
  QObject* m_worker;  // lives on m_thread; work is posted to it
  QTimer m_drainTimer;
  LocalWorkers* m_others;
  LocalRun* m_local;
  ConnectedRun* m_connected;
  std::unique_ptr<nf::MetricsFollower> m_follower;  // a followed run's metrics.jsonl
  RunPhase m_phase = RunPhase::None;
  QString m_runDir;
  nf::RunConfig m_config;
  MetricsStore m_metrics;
  std::shared_ptr<ScheduleEditor> m_live;
  int m_layers = 0;
  int m_workers = 1;
  // The autopilot switch of a multi-worker run continued from its checkpoint: the trainer that took it
  // (stopped with the pause) is let go, so the one resumed takes it when made (a switch meanwhile too).
  std::optional<bool> m_autopilotToCarry;
};
