// The other workers of a run trained here with several (docs/TRAINING.md): this process trains as worker 0
// and serves the rendezvous; workers 1 … N−1 are `normfree-cli join`/`resume` processes started here, on
// loopback. How one ended badly (its exit and last words) is kept for the failure message.
#pragma once
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "distributed/worker_environment.h"

class LocalWorkers : public QObject {
  Q_OBJECT
 public:
  explicit LocalWorkers(QObject* parent = nullptr);
  ~LocalWorkers() override { end(); }
  // The program the other workers run: normfree-cli next to this executable unless set.
  void setProgram(const QString& path) { m_program = path; }
  // Why `workers` > 1 cannot be started ("" when they can).
  QString cannotStart(int workers) const;
  // On the training thread: this process's place as worker 0 of `workers` (serving the rendezvous on a
  // free port), the others started on this object's thread with `arguments` (e.g. "join", runDir);
  // nullopt for one worker.
  std::optional<nf::WorkerEnvironment> asWorkerZero(int workers, const QStringList& arguments);
  // Ends them: now (a failed run: killed) or once they finish (a stopped or finished run ends them itself).
  void end(bool now = false);
  QString notes() const { return m_notes.join(QString()); }  // how workers ended badly, for messages
  void clearNotes() { m_notes.clear(); }  // a new run: an earlier run's workers are not its
  void shutdown();                        // the window closes: ends them and starts none any more

 private:
  void startOthers(int workers, const QStringList& arguments, int port);
  QString m_program;
  std::vector<QProcess*> m_processes;  // worker r is m_processes[r - 1]
  QStringList m_notes;
  bool m_shutDown = false;
};
