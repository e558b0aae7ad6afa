// A run another process trains and serves (--serve, docs/STEERING.md), connected to, also through an SSH
// tunnel: first asked for its status and schedule on the training thread (an unreachable run never blocks
// the GUI), then its metrics streamed and its status read (RemoteRun), its schedule edited without waiting on
// the network (RemoteSchedule), pause / continue / stop sent to it; a lost connection is re-made. A run that
// stopped or finished serves no more: the connection then ends, and the address stays for the messages.
#pragma once
#include <QObject>
#include <QString>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "logic/RemoteRun.h"
#include "logic/WindowState.h"
#include "schedule/schedule.h"
#include "serve/serve_address.h"
#include "train/settings.h"

class RemoteSchedule;
class ScheduleEditor;

class ConnectedRun : public QObject {
  Q_OBJECT
 public:
  // `training`: the object of the thread the first questions and the ending connections go to.
  ConnectedRun(QObject* training, QObject* parent = nullptr);

  // Asks the run for its status and schedule: answered() or unreachable(), unless forget() or another
  // connectTo() came first.
  void connectTo(const nf::ServeAddress& address);
  // The run answered: the connection is made; the schedule the timeline edits is returned. `stepsDone`
  // is where the window shows the run (for the edits' locking).
  std::shared_ptr<RemoteSchedule> adopt(const nf::ServeAddress& address, const nf::Schedule& schedule,
                                        int layers, const nf::RunConfig& config,
                                        std::function<int64_t()> stepsDone);

  bool connected() const { return m_remote != nullptr; }
  QString address() const { return m_address; }  // "host:port", also after the connection ended
  std::optional<nf::ServeAddress> serveAddress() const;
  QString problem() const { return m_problem; }  // "" while the run answers
  int64_t stepsDone() const { return m_stepsDone; }
  bool stopRequested() const { return m_stopRequested; }
  bool autopilot() const { return m_autopilot; }  // as the run's last status said

  void request(RemoteRun::Control control);
  // Continue, after the edits made while paused have reached the run (one overtaking them could let the
  // run pass their steps).
  void continueAfterEdits(std::shared_ptr<ScheduleEditor> live);
  // What arrived since the last call; a status read into stepsDone(), stopRequested() and the phase it
  // says (nullopt, and *malformed set, for a status that cannot be read).
  RemoteRun::News take();
  std::optional<RunPhase> phaseOf(const nlohmann::json& status, QString* malformed);
  bool setProblem(const QString& problem);  // true when it changed
  // The connection ends (its threads end on the training thread); the address stays. forget() drops it.
  void leave();
  void forget();
  void shutdown();  // the window closes: no more callbacks, the stream ends at once

 Q_SIGNALS:
  void answered(const nf::ServeAddress& address, const nf::Schedule& schedule, int layers,
                const nlohmann::json& status);
  void unreachable(const QString& message);
  void editRefused(const nf::EditResult& result);  // an edit the timeline showed as made
  void scheduleReplaced();                         // the run's schedule replaced the timeline's copy

 private:
  // continueAfterEdits() for the connection of `adoption`: given up once that connection is left (its
  // Continue had gone to the next run connected to).
  void continueWhenSent(std::shared_ptr<ScheduleEditor> live, int64_t adoption);
  QObject* m_training;
  std::shared_ptr<RemoteRun> m_remote;
  std::shared_ptr<RemoteSchedule> m_schedule;
  QString m_address, m_problem;
  int64_t m_stepsDone = 0;
  int64_t m_attempt = 0;    // connectTo() and forget() count up: an answer to an earlier attempt is dropped
  int64_t m_adoptions = 0;  // adopt() and leave() count up: an earlier schedule's news is dropped
  bool m_stopRequested = false, m_shutDown = false, m_autopilot = false;
};
