#include "run/RunSession.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "logic/RemoteSchedule.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/trainer.h"
#include "util/progress.h"

RunSession::RunSession(QObject* parent)
    : QObject(parent),
      m_worker(new QObject),
      m_workerProgram(QCoreApplication::applicationDirPath() + "/normfree-cli") {
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.setObjectName("training");
  m_thread.start();
  m_drainTimer.setInterval(50);
  connect(&m_drainTimer, &QTimer::timeout, this, &RunSession::drain);
  m_drainTimer.start();
}

RunSession::~RunSession() { shutdown(); }

bool RunSession::busy() const {
  if (m_remote) return false;  // the run trains elsewhere: this process is free for anything
  return m_state == State::Preparing || m_state == State::Running || m_state == State::Pausing ||
         m_state == State::Stopping;
}

int64_t RunSession::stepsDone() const {
  if (m_trainer) return m_trainer->stepsDone();
  return m_remote ? std::max(m_remoteStepsDone, m_metrics.lastStep()) : m_metrics.lastStep();
}

std::optional<WindowEvent> RunSession::phaseEvent() const {
  switch (m_state) {
    case State::Idle:
      return std::nullopt;
    case State::Preparing:
      return WindowEvent::Preparing;
    case State::Running:
      return WindowEvent::Running;
    case State::Pausing:
      return WindowEvent::Pausing;
    case State::Paused:
      return WindowEvent::Paused;
    case State::Stopping:
      return WindowEvent::Stopping;
    case State::Stopped:
      return WindowEvent::Stopped;
    case State::Finished:
      return WindowEvent::Finished;
    case State::Failed:
      return WindowEvent::Failed;
    case State::Following:
      break;
  }
  const std::string& status = m_metrics.lastStatus;
  return status == nf::record::kFinish  ? WindowEvent::Finished
         : status == nf::record::kStop  ? WindowEvent::Stopped
         : status == nf::record::kPause ? WindowEvent::Paused
                                        : WindowEvent::Running;
}

void RunSession::letGo() {
  forgetRemote();
  endOtherWorkers();
  m_trainer.reset();
  m_queue.reset();
  m_live.reset();
  m_follower.reset();
  m_stopAfterPause = false;
}

void RunSession::close() {
  if (busy()) return;
  letGo();
  m_runDir.clear();
  m_config = {};
  m_metrics.clear();
  Q_EMIT metricsChanged();
  setState(State::Idle);
}

void RunSession::setState(State state) {
  if (state == m_state) return;
  m_state = state;
  Q_EMIT stateChanged(state);
}

void RunSession::runOnWorker(std::function<void()> work) {
  if (m_shutDown) return;  // the worker is gone (a result of Start arriving after the window closed)
  QMetaObject::invokeMethod(m_worker, std::move(work), Qt::QueuedConnection);
}

void RunSession::adoptTrainer(std::shared_ptr<nf::Trainer> trainer, int layers) {
  m_trainer = std::move(trainer);
  m_config = m_trainer->config();
  m_queue = m_trainer->subscribe();
  m_live = std::make_shared<LiveSchedule>(m_trainer, layers);
  // Nothing trains between subscribing and run(): the file holds every record so far, the queue the rest.
  m_metrics.clear();
  for (const std::string& line : nf::MetricsFollower(m_runDir.toStdString()).read().lines)
    m_metrics.ingest(line);
  Q_EMIT trainerReady();
  Q_EMIT metricsChanged();
}

void RunSession::start(const nf::RunConfig& config, const QString& runDir, int layers,
                       std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare, int workers) {
  if (busy() || !checkWorkerProgram(workers)) return;
  letGo();  // the previous run's schedule is no longer edited from here
  m_workers = workers;
  m_runDir = runDir;
  m_config = config;
  m_cancelPreparation = false;
  m_metrics.clear();  // a new run: nothing of the last one stays on the plots while this one is made
  Q_EMIT metricsChanged();
  setState(State::Preparing);
  runOnWorker([this, config, runDir, layers, prepare, workers] {
    try {
      nf::RunConfig c = config;
      if (prepare) {
        auto lastReport = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        prepare(c, [this, &lastReport](const nf::Progress& p) {
          if (m_cancelPreparation) throw nf::Cancelled();
          const auto now = std::chrono::steady_clock::now();
          if (!p.finished && now - lastReport < std::chrono::milliseconds(100)) return;
          lastReport = now;
          const QString task = QString::fromStdString(p.task);
          const qint64 done = p.done, total = p.total;
          QMetaObject::invokeMethod(
              this, [this, task, done, total] { Q_EMIT progress(task, done, total); }, Qt::QueuedConnection);
        });
      }
      const std::optional<nf::WorkerEnvironment> self =
          asMainOfLocalWorkers(workers, {"join", runDir, "--device", QString::fromStdString(c.device)});
      std::shared_ptr<nf::Trainer> trainer = nf::Trainer::start(runDir.toStdString(), c, self);
      QMetaObject::invokeMethod(
          this,
          [this, trainer, layers] {
            if (m_shutDown) return;
            Q_EMIT progress(QString(), 0, 0);
            adoptTrainer(trainer, layers);
            launchUnlessStopped();
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      const bool cancelled = dynamic_cast<const nf::Cancelled*>(&e) != nullptr;
      QMetaObject::invokeMethod(
          this,
          [this, message, cancelled] {
            Q_EMIT progress(QString(), 0, 0);
            endOtherWorkers(/*now=*/true);
            setState(cancelled ? State::Stopped : State::Failed);
            if (!cancelled) Q_EMIT failed(message + m_workerNotes.join(QString()));
          },
          Qt::QueuedConnection);
    }
  });
}

void RunSession::launchUnlessStopped() {
  if (m_stopAfterPause) {  // Stop was pressed while the trainer was being made
    m_stopAfterPause = false;
    setState(State::Stopped);
    return;
  }
  launchRun();
}

void RunSession::launchRun() {
  setState(State::Running);
  runOnWorker([this, trainer = m_trainer] {
    try {
      const bool finished = trainer->run();
      QMetaObject::invokeMethod(
          this,
          [this, finished] {
            if (m_shutDown) return;
            drain();  // the last records before the state changes
            if (finished) {
              setState(State::Finished);
            } else if (m_stopAfterPause) {
              m_stopAfterPause = false;
              setState(State::Stopped);
            } else {
              setState(State::Paused);
            }
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      reportFailure(e.what());
    }
  });
}

void RunSession::reportFailure(const std::string& what) {
  const QString message = QString::fromStdString(what);
  QMetaObject::invokeMethod(
      this,
      [this, message] {
        if (m_shutDown) return;
        drain();  // the records before the failure
        endOtherWorkers(/*now=*/true);
        setState(State::Failed);
        Q_EMIT failed(message + m_workerNotes.join(QString()));
      },
      Qt::QueuedConnection);
}

void RunSession::pause() {
  if (m_remote && m_state == State::Running) {
    m_remote->request(RemoteRun::Control::Pause);
    setState(State::Pausing);
    return;
  }
  if (m_state != State::Running || !m_trainer) return;
  m_trainer->requestStop();
  setState(State::Pausing);
}

void RunSession::stop() {
  if (m_remote) {
    m_remote->request(RemoteRun::Control::Stop);  // "stopped" is concluded only once the run says so
    setState(State::Stopping);
    return;
  }
  if (m_state == State::Preparing) {
    m_cancelPreparation = true;
    m_stopAfterPause = true;
    setState(State::Stopping);
    return;
  }
  if (m_state == State::Paused) {
    setState(State::Stopped);
    return;
  }
  if ((m_state != State::Running && m_state != State::Pausing) || !m_trainer) return;
  m_stopAfterPause = true;
  m_trainer->requestStop();
  setState(State::Stopping);
}

void RunSession::continueRun() {
  if (m_remote) {
    continueRemoteAfterEdits();
    return;
  }
  // The trainer in memory goes on where it stopped (it may not have written a checkpoint yet); only a
  // failed one is replaced by its last checkpoint.
  // The other workers of a multi-worker run ended with the pause: they start again from its checkpoint.
  if ((m_state == State::Paused || m_state == State::Stopped) && m_trainer && m_workers <= 1) {
    launchRun();
    return;
  }
  if (!m_runDir.isEmpty() && !busy() && m_state != State::Finished)
    resume(m_runDir, m_live ? m_live->layers() : 0, m_workers);
}

void RunSession::resume(const QString& runDir, int layers, int workers) {
  if (busy() || !checkWorkerProgram(workers)) return;
  letGo();
  m_workers = workers;
  m_runDir = runDir;
  setState(State::Preparing);
  runOnWorker([this, runDir, layers, workers] {
    try {
      const std::optional<nf::WorkerEnvironment> self = asMainOfLocalWorkers(workers, {"resume", runDir});
      std::shared_ptr<nf::Trainer> trainer = nf::Trainer::resume(runDir.toStdString(), self);
      QMetaObject::invokeMethod(
          this,
          [this, trainer, layers] {
            if (m_shutDown) return;
            adoptTrainer(trainer, layers);
            launchUnlessStopped();
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      reportFailure(e.what());
    }
  });
}

bool RunSession::follow(const QString& runDir) {
  if (busy()) return false;
  const std::string dir = runDir.toStdString();
  m_config = nf::readRunConfig(dir);  // throws FileError
  auto follower = std::make_unique<nf::MetricsFollower>(dir);
  const std::vector<std::string> lines = follower->read().lines;
  // A log from a newer build is refused at its start record (FileError), not misread.
  if (!lines.empty())
    nf::checkMetricsRecord(nlohmann::json::parse(lines.front(), nullptr, false), nf::run::metricsPath(dir));
  letGo();
  m_runDir = runDir;
  m_follower = std::move(follower);
  m_metrics.clear();
  for (const std::string& line : lines) m_metrics.ingest(line);
  Q_EMIT metricsChanged();
  setState(State::Following);
  return true;
}

void RunSession::readFollowedFile() {
  nf::MetricsFollower::NewLines read = m_follower->read();
  bool added = read.restarted;  // a resumed run's log: what came after its checkpoint is gone
  if (read.restarted) m_metrics.clear();
  for (const std::string& line : read.lines) added = m_metrics.ingest(line) || added;
  if (added) Q_EMIT metricsChanged();
}

void RunSession::drain() {
  if (m_remote) {
    readRemote();
    return;
  }
  if (m_state == State::Following) {
    readFollowedFile();
    return;
  }
  if (!m_queue) return;
  bool added = false;
  for (const std::string& record : m_queue->drain()) added = m_metrics.ingest(record) || added;
  if (added) Q_EMIT metricsChanged();
}

void RunSession::connectTo(const nf::ServeAddress& address) {
  if (busy()) return;
  letGo();
  m_remoteAddress = QString::fromStdString(address.text());
  m_runDir.clear();
  m_metrics.clear();
  Q_EMIT metricsChanged();
  setState(State::Preparing);
  runOnWorker([this, address] {
    try {
      nf::SteeringClient client(address, 10);
      const nlohmann::json status = client.status();
      const nf::Schedule schedule = client.schedule();
      const int layers = status.at("layers").get<int>();
      QMetaObject::invokeMethod(
          this,
          [this, address, schedule, layers, status] {
            if (m_shutDown) return;
            if (m_stopAfterPause) {  // Stop was pressed while connecting: no connection is made
              m_stopAfterPause = false;
              m_remoteAddress.clear();
              setState(State::Idle);
              return;
            }
            try {
              adoptRemote(address, schedule, layers, status);
            } catch (const std::exception& e) {
              const QString address = m_remoteAddress;
              forgetRemote();
              setState(State::Failed);
              Q_EMIT connectFailed(tr("The run at %1 answered its status malformed: %2")
                                       .arg(address, QString::fromStdString(e.what())));
            }
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(
          this,
          [this, message] {
            if (m_shutDown) return;
            m_remoteAddress.clear();
            setState(State::Failed);
            Q_EMIT connectFailed(message);
          },
          Qt::QueuedConnection);
    }
  });
}

// Edits made while paused go first: a continue that overtook them could let the run pass their steps.
void RunSession::continueRemoteAfterEdits() {
  if (!m_remote) return;
  const auto edits = std::dynamic_pointer_cast<RemoteSchedule>(m_live);
  if (edits && edits->waitingEdits() > 0 && edits->problem().empty()) {
    QTimer::singleShot(20, this, &RunSession::continueRemoteAfterEdits);
    return;
  }
  m_remote->request(RemoteRun::Control::Continue);
}

void RunSession::adoptRemote(const nf::ServeAddress& address, const nf::Schedule& schedule, int layers,
                             const nlohmann::json& status) {
  const std::string source = "the run at " + address.text();
  m_config = nf::runConfigFromJson(status.at("config"), source);
  m_runDir = QString::fromStdString(status.at("run").get<std::string>());
  m_remoteStepsDone = 0;
  m_remoteStopRequested = false;
  m_connectionProblem.clear();
  m_metrics.clear();
  m_remote = std::make_shared<RemoteRun>(address);
  RemoteSchedule::Callbacks callbacks;
  callbacks.refused = [this](const nf::EditResult& result) {
    QMetaObject::invokeMethod(
        this, [this, result] { Q_EMIT remoteEditRefused(result); }, Qt::QueuedConnection);
  };
  callbacks.changed = [this] {
    QMetaObject::invokeMethod(
        this, [this] { Q_EMIT scheduleReplaced(); }, Qt::QueuedConnection);
  };
  m_live = std::make_shared<RemoteSchedule>(
      address, schedule, layers, m_config.optimizer.maxSteps, [this] { return stepsDone(); }, callbacks,
      m_config.removal.treatments());
  applyRemoteStatus(status);
  Q_EMIT trainerReady();
  Q_EMIT metricsChanged();
  Q_EMIT connectionChanged();
}

void RunSession::applyRemoteStatus(const nlohmann::json& status) {
  try {
    m_remoteStepsDone = status.at("steps_done").get<int64_t>();
    // Once asked to stop, a run ends (a status taken after its last step may say otherwise).
    m_remoteStopRequested = m_remoteStopRequested || status.at("stop_requested").get<bool>();
    const bool paused = status.at("paused").get<bool>(), pausing = status.at("pause_requested").get<bool>();
    setState(m_remoteStopRequested ? State::Stopping
             : paused              ? State::Paused
             : pausing             ? State::Pausing
                                   : State::Running);
  } catch (const nlohmann::json::exception& e) {
    Q_EMIT remoteNotice(tr("The run at %1 answered its status malformed: %2")
                            .arg(m_remoteAddress, QString::fromStdString(e.what())));
  }
}

void RunSession::readRemote() {
  RemoteRun::News news = m_remote->take();
  bool added = news.restarted;
  if (news.restarted) m_metrics.clear();
  for (const std::string& line : news.lines) added = m_metrics.ingest(line) || added;
  if (added) Q_EMIT metricsChanged();
  if (news.stopRequested) m_remoteStopRequested = true;  // also when a later status no longer says so
  if (news.status) applyRemoteStatus(*news.status);
  for (const std::string& failure : news.failures) Q_EMIT remoteNotice(QString::fromStdString(failure));
  const QString problem = QString::fromStdString(news.problem);
  // A run that stopped or finished stops serving: unreachable then means ended, not lost.
  const bool finished =
      m_metrics.lastStatus == nf::record::kFinish || m_remoteStepsDone >= m_config.optimizer.maxSteps;
  if (!problem.isEmpty() &&
      (finished || m_remoteStopRequested || m_metrics.lastStatus == nf::record::kStop)) {
    setState(finished ? State::Finished : State::Stopped);  // still remote(): the messages say where
    leaveRemote();
    return;
  }
  if (problem != m_connectionProblem) {
    m_connectionProblem = problem;
    Q_EMIT connectionChanged();
  }
}

void RunSession::leaveRemote() {
  // The timeline may hold the schedule editor longer: it takes no more edits and calls back no more.
  if (auto remote = std::dynamic_pointer_cast<RemoteSchedule>(m_live)) remote->close();
  if (!m_remote) return;
  auto ending = std::make_shared<std::shared_ptr<RemoteRun>>(std::move(m_remote));
  m_connectionProblem.clear();
  QMetaObject::invokeMethod(
      m_worker, [ending] { ending->reset(); }, Qt::QueuedConnection);
  Q_EMIT connectionChanged();
}

void RunSession::forgetRemote() {
  leaveRemote();
  if (std::dynamic_pointer_cast<RemoteSchedule>(m_live)) m_live.reset();
  m_remoteAddress.clear();
}

void RunSession::shutdown() {
  if (!m_thread.isRunning()) return;
  m_shutDown = true;
  m_cancelPreparation = true;
  if (auto remote = std::dynamic_pointer_cast<RemoteSchedule>(m_live)) remote->close();  // no callbacks
  m_remote.reset();  // its stream ends at once; a status request in flight ends within its timeout
  if (m_trainer) m_trainer->requestStop();
  m_thread
      .quit();  // after the work in progress (run() returns once the step ends and the checkpoint is written)
  m_thread.wait();
  m_drainTimer.stop();
  endOtherWorkers();
}

bool RunSession::checkWorkerProgram(int workers) {
  if (workers <= 1 || QFileInfo(m_workerProgram).isExecutable()) return true;
  Q_EMIT failed(tr("A run with %1 workers starts the others with %2, which is missing or not executable.")
                    .arg(workers)
                    .arg(m_workerProgram));
  return false;
}

std::optional<nf::WorkerEnvironment> RunSession::asMainOfLocalWorkers(int workers,
                                                                      const QStringList& arguments) {
  if (workers <= 1) return std::nullopt;
  nf::WorkerEnvironment self;  // rank 0, which serves the rendezvous store
  self.worldSize = self.localWorldSize = workers;
  self.masterPort = nf::freeLoopbackPort();
  const int port = self.masterPort;
  QMetaObject::invokeMethod(
      this, [this, arguments, port] { startOtherWorkers(arguments, port); }, Qt::QueuedConnection);
  return self;
}

void RunSession::startOtherWorkers(const QStringList& arguments, int port) {
  if (m_shutDown) return;
  m_workerNotes.clear();
  for (int rank = 1; rank < m_workers; ++rank) {
    auto* process = new QProcess(this);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("RANK", QString::number(rank));
    environment.insert("LOCAL_RANK", QString::number(rank));
    environment.insert("WORLD_SIZE", QString::number(m_workers));
    environment.insert("LOCAL_WORLD_SIZE", QString::number(m_workers));
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
      m_workerNotes << tr("\n\nWorker %1 ended (%2): %3")
                           .arg(rank)
                           .arg(status == QProcess::CrashExit ? tr("crashed")
                                                              : tr("exit status %1").arg(code))
                           .arg(lines.isEmpty() ? QString() : lines.last().trimmed());
    });
    process->start(m_workerProgram, arguments);
    m_otherWorkers.push_back(process);
  }
}

void RunSession::endOtherWorkers(bool now) {
  for (QProcess* process : m_otherWorkers) {
    // A stopped or finished run's workers end by themselves, at the same step as this one; a failed run's
    // would wait for their timeout, and how they end then says nothing new.
    if (now) process->disconnect(this);
    if (process->state() != QProcess::NotRunning && (now || !process->waitForFinished(5000))) process->kill();
    process->waitForFinished(1000);
    delete process;
  }
  m_otherWorkers.clear();
}
