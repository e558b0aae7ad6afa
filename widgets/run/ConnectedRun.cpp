#include "run/ConnectedRun.h"

#include <QTimer>

#include "logic/RemoteSchedule.h"
#include "serve/steering_client.h"

ConnectedRun::ConnectedRun(QObject* training, QObject* parent) : QObject(parent), m_training(training) {}

std::optional<nf::ServeAddress> ConnectedRun::serveAddress() const {
  return m_remote ? std::optional<nf::ServeAddress>(m_remote->address()) : std::nullopt;
}

void ConnectedRun::connectTo(const nf::ServeAddress& address) {
  forget();
  m_address = QString::fromStdString(address.text());
  const int64_t attempt = m_attempt;
  QMetaObject::invokeMethod(
      m_training,
      [this, address, attempt] {
        try {
          nf::SteeringClient client(address, 10);
          const nlohmann::json status = client.status();
          const nf::Schedule schedule = client.schedule();
          const int layers = status.at("layers").get<int>();
          QMetaObject::invokeMethod(
              this,
              [this, address, schedule, layers, status, attempt] {
                if (!m_shutDown && attempt == m_attempt) Q_EMIT answered(address, schedule, layers, status);
              },
              Qt::QueuedConnection);
        } catch (const std::exception& e) {
          const QString message = QString::fromStdString(e.what());
          QMetaObject::invokeMethod(
              this,
              [this, message, attempt] {
                if (m_shutDown || attempt != m_attempt) return;
                m_address.clear();
                Q_EMIT unreachable(message);
              },
              Qt::QueuedConnection);
        }
      },
      Qt::QueuedConnection);
}

std::shared_ptr<RemoteSchedule> ConnectedRun::adopt(const nf::ServeAddress& address,
                                                    const nf::Schedule& schedule, int layers,
                                                    const nf::RunConfig& config,
                                                    std::function<int64_t()> stepsDone) {
  m_stepsDone = 0;
  m_stopRequested = false;
  m_problem.clear();
  m_remote = std::make_shared<RemoteRun>(address);
  // Told on the GUI thread after the editor's thread heard it: dropped if this run has been left since.
  const int64_t adoption = ++m_adoptions;
  RemoteSchedule::Callbacks callbacks;
  callbacks.refused = [this, adoption](const nf::EditResult& result) {
    QMetaObject::invokeMethod(
        this,
        [this, adoption, result] {
          if (adoption == m_adoptions) Q_EMIT editRefused(result);
        },
        Qt::QueuedConnection);
  };
  callbacks.changed = [this, adoption] {
    QMetaObject::invokeMethod(
        this,
        [this, adoption] {
          if (adoption == m_adoptions) Q_EMIT scheduleReplaced();
        },
        Qt::QueuedConnection);
  };
  m_schedule = std::make_shared<RemoteSchedule>(address, schedule, layers, config.optimizer.maxSteps,
                                                std::move(stepsDone), callbacks, config.removal.treatments());
  m_autopilot = config.autopilot.enabled;
  m_schedule->setTentative([this] { return m_autopilot; });
  return m_schedule;
}

void ConnectedRun::request(RemoteRun::Control control) {
  if (m_remote) m_remote->request(control);
}

void ConnectedRun::continueAfterEdits(std::shared_ptr<ScheduleEditor> live) {
  continueWhenSent(std::move(live), m_adoptions);
}

void ConnectedRun::continueWhenSent(std::shared_ptr<ScheduleEditor> live, int64_t adoption) {
  if (!m_remote || adoption != m_adoptions) return;
  const auto edits = std::dynamic_pointer_cast<RemoteSchedule>(live);
  if (edits && edits->waitingEdits() > 0 && edits->problem().empty()) {
    QTimer::singleShot(20, this, [this, live, adoption] { continueWhenSent(live, adoption); });
    return;
  }
  m_remote->request(RemoteRun::Control::Continue);
}

RemoteRun::News ConnectedRun::take() {
  RemoteRun::News news = m_remote ? m_remote->take() : RemoteRun::News{};
  if (news.stopRequested) m_stopRequested = true;  // also when a later status no longer says so
  return news;
}

std::optional<RunPhase> ConnectedRun::phaseOf(const nlohmann::json& status, QString* malformed) {
  using S = RunPhase;
  try {
    m_stepsDone = status.at("steps_done").get<int64_t>();
    m_autopilot = status.value("autopilot", false);  // absent from runs served before it existed
    // Once asked to stop, a run ends (a status taken after its last step may say otherwise).
    m_stopRequested = m_stopRequested || status.at("stop_requested").get<bool>();
    const bool paused = status.at("paused").get<bool>(), pausing = status.at("pause_requested").get<bool>();
    return m_stopRequested ? S::Stopping : paused ? S::Paused : pausing ? S::Pausing : S::Running;
  } catch (const nlohmann::json::exception& e) {
    *malformed = tr("The run at %1 answered its status malformed: %2")
                     .arg(m_address, QString::fromStdString(e.what()));
    return std::nullopt;
  }
}

bool ConnectedRun::setProblem(const QString& problem) {
  if (problem == m_problem) return false;
  m_problem = problem;
  return true;
}

void ConnectedRun::leave() {
  // The timeline may hold the schedule editor longer: it takes no more edits and calls back no more.
  if (m_schedule) m_schedule->close();
  m_schedule.reset();
  ++m_adoptions;  // what it told before closing, still on its way, is dropped
  if (!m_remote) return;
  auto ending = std::make_shared<std::shared_ptr<RemoteRun>>(std::move(m_remote));
  m_problem.clear();
  QMetaObject::invokeMethod(
      m_training, [ending] { ending->reset(); }, Qt::QueuedConnection);
}

void ConnectedRun::forget() {
  leave();
  m_address.clear();
  ++m_attempt;
}

void ConnectedRun::shutdown() {
  m_shutDown = true;
  if (m_schedule) m_schedule->close();  // no callbacks
  m_remote.reset();  // its stream ends at once; a status request in flight ends within its timeout
}
