#include "run/LocalRun.h"

#include <chrono>

#include "run/LocalWorkers.h"
#include "train/trainer.h"

LocalRun::LocalRun(QObject* training, LocalWorkers* others, QObject* parent)
    : QObject(parent), m_training(training), m_others(others) {}

void LocalRun::post(std::function<void()> work) {
  if (m_shutDown) return;  // the thread is gone (a result of Start arriving after the window closed)
  QMetaObject::invokeMethod(m_training, std::move(work), Qt::QueuedConnection);
}

void LocalRun::setPhase(RunPhase phase) {
  if (phase == m_phase) return;
  m_phase = phase;
  Q_EMIT phaseChanged(phase);
}

void LocalRun::letGo() {
  m_others->end();
  m_trainer.reset();
  m_queue.reset();
  m_stopAfterPause = false;
  m_phase = RunPhase::None;
}

void LocalRun::start(const nf::RunConfig& config, const QString& runDir, Prepare prepare, int workers) {
  letGo();
  m_others->clearNotes();  // a run of one worker after one of several had told of the others' ends
  m_cancelPreparation = false;
  setPhase(RunPhase::Preparing);
  post([this, config, runDir, prepare, workers] {
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
          m_others->asWorkerZero(workers, {"join", runDir, "--device", QString::fromStdString(c.device)});
      std::shared_ptr<nf::Trainer> trainer = nf::Trainer::start(runDir.toStdString(), c, self);
      QMetaObject::invokeMethod(
          this,
          [this, trainer] {
            if (m_shutDown) return;
            Q_EMIT progress(QString(), 0, 0);
            adopt(trainer);
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      const bool cancelled = dynamic_cast<const nf::Cancelled*>(&e) != nullptr;
      QMetaObject::invokeMethod(
          this,
          [this, message, cancelled] {
            Q_EMIT progress(QString(), 0, 0);
            m_others->end(/*now=*/true);
            if (cancelled) {
              letGo();  // no trainer was made: nothing stops any more (it had stayed Stopping, busy)
              Q_EMIT preparationStopped();
              return;
            }
            setPhase(RunPhase::Failed);
            Q_EMIT failed(message + m_others->notes());
          },
          Qt::QueuedConnection);
    }
  });
}

void LocalRun::resume(const QString& runDir, int workers) {
  letGo();
  m_others->clearNotes();
  setPhase(RunPhase::Preparing);
  post([this, runDir, workers] {
    try {
      const std::optional<nf::WorkerEnvironment> self = m_others->asWorkerZero(workers, {"resume", runDir});
      std::shared_ptr<nf::Trainer> trainer = nf::Trainer::resume(runDir.toStdString(), self);
      QMetaObject::invokeMethod(
          this,
          [this, trainer] {
            if (!m_shutDown) adopt(trainer);
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      reportFailure(e.what());
    }
  });
}

void LocalRun::adopt(std::shared_ptr<nf::Trainer> trainer) {
  m_trainer = std::move(trainer);
  m_queue = m_trainer->subscribe();  // nothing trains before run(): the file holds the records so far
  Q_EMIT trainerMade();
  if (m_stopAfterPause) {  // Stop was pressed while the trainer was being made
    m_stopAfterPause = false;
    setPhase(RunPhase::Stopped);
    return;
  }
  launch();
}

void LocalRun::launch() {
  setPhase(RunPhase::Running);
  post([this, trainer = m_trainer] {
    try {
      const bool finished = trainer->run();
      QMetaObject::invokeMethod(
          this,
          [this, finished] {
            if (m_shutDown) return;
            if (finished) {
              setPhase(RunPhase::Finished);
            } else if (m_stopAfterPause) {
              m_stopAfterPause = false;
              setPhase(RunPhase::Stopped);
            } else {
              setPhase(RunPhase::Paused);
            }
          },
          Qt::QueuedConnection);
    } catch (const std::exception& e) {
      reportFailure(e.what());
    }
  });
}

void LocalRun::reportFailure(const std::string& what) {
  const QString message = QString::fromStdString(what);
  QMetaObject::invokeMethod(
      this,
      [this, message] {
        if (m_shutDown) return;
        m_others->end(/*now=*/true);
        setPhase(RunPhase::Failed);
        Q_EMIT failed(message + m_others->notes());
      },
      Qt::QueuedConnection);
}

bool LocalRun::pause() {
  if (m_phase != RunPhase::Running || !m_trainer) return false;
  m_trainer->requestStop();
  setPhase(RunPhase::Pausing);
  return true;
}

bool LocalRun::stop() {
  using S = RunPhase;
  if (m_phase == S::Preparing) {
    m_cancelPreparation = true;
    m_stopAfterPause = true;
    setPhase(S::Stopping);
    return true;
  }
  if (m_phase == S::Paused) {
    setPhase(S::Stopped);
    return true;
  }
  if ((m_phase != S::Running && m_phase != S::Pausing) || !m_trainer) return false;
  m_stopAfterPause = true;
  m_trainer->requestStop();
  setPhase(S::Stopping);
  return true;
}

std::vector<std::string> LocalRun::drain() { return m_queue ? m_queue->drain() : std::vector<std::string>{}; }

void LocalRun::shutdown() {
  m_shutDown = true;
  m_cancelPreparation = true;
  if (m_trainer) m_trainer->requestStop();
}
