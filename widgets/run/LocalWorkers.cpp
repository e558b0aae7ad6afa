#include "run/LocalWorkers.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QProcessEnvironment>

LocalWorkers::LocalWorkers(QObject* parent)
    : QObject(parent), m_program(QCoreApplication::applicationDirPath() + "/normfree-cli") {}

QString LocalWorkers::cannotStart(int workers) const {
  if (workers <= 1 || QFileInfo(m_program).isExecutable()) return QString();
  return tr("A run with %1 workers starts the others with %2, which is missing or not executable.")
      .arg(workers)
      .arg(m_program);
}

std::optional<nf::WorkerEnvironment> LocalWorkers::asWorkerZero(int workers, const QStringList& arguments) {
  if (workers <= 1) return std::nullopt;
  nf::WorkerEnvironment self;  // rank 0, which serves the rendezvous store
  self.worldSize = self.localWorldSize = workers;
  self.masterPort = nf::freeLoopbackPort();
  const int port = self.masterPort;
  QMetaObject::invokeMethod(
      this, [this, workers, arguments, port] { startOthers(workers, arguments, port); },
      Qt::QueuedConnection);
  return self;
}

void LocalWorkers::shutdown() {
  m_shutDown = true;
  end();
}

void LocalWorkers::startOthers(int workers, const QStringList& arguments, int port) {
  if (m_shutDown) return;
  for (int rank = 1; rank < workers; ++rank) {
    auto* process = new QProcess(this);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("RANK", QString::number(rank));
    environment.insert("LOCAL_RANK", QString::number(rank));
    environment.insert("WORLD_SIZE", QString::number(workers));
    environment.insert("LOCAL_WORLD_SIZE", QString::number(workers));
    environment.insert("MASTER_ADDR", "127.0.0.1");
    environment.insert("MASTER_PORT", QString::number(port));
    process->setProcessEnvironment(environment);
    process->setProcessChannelMode(QProcess::MergedChannels);
    // Its last words, for the message when it ends badly (a worker says why on stderr).
    connect(process, &QProcess::readyRead, process, [process] {
      QByteArray kept = process->property("output").toByteArray() + process->readAll();
      process->setProperty("output", kept.right(2000));
    });
    connect(process, &QProcess::finished, this, [this, process, rank](int code, QProcess::ExitStatus status) {
      if (status == QProcess::NormalExit && (code == 0 || code == 3)) return;  // finished, or stopped
      const QStringList lines =
          QString::fromUtf8(process->property("output").toByteArray()).split('\n', Qt::SkipEmptyParts);
      m_notes << tr("\n\nWorker %1 ended (%2): %3")
                     .arg(rank)
                     .arg(status == QProcess::CrashExit ? tr("crashed") : tr("exit status %1").arg(code))
                     .arg(lines.isEmpty() ? QString() : lines.last().trimmed());
    });
    process->start(m_program, arguments);
    m_processes.push_back(process);
  }
}

void LocalWorkers::end(bool now) {
  for (QProcess* process : m_processes) {
    // A stopped or finished run's workers end by themselves, at the same step as this one; a failed run's
    // would wait for their timeout, and how they end then says nothing new.
    if (now) process->disconnect(this);
    if (process->state() != QProcess::NotRunning && (now || !process->waitForFinished(5000))) process->kill();
    process->waitForFinished(1000);
    delete process;
  }
  m_processes.clear();
}
