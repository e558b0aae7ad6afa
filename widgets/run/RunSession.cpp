#include "run/RunSession.h"

#include <QSignalBlocker>
#include <nlohmann/json.hpp>

#include "logic/RemoteSchedule.h"
#include "run/ConnectedRun.h"
#include "run/LocalRun.h"
#include "run/LocalWorkers.h"
#include "run/metrics_log.h"
#include "run/metrics_records.h"
#include "train/trainer.h"

namespace {

// A followed run's phase: what its own process last recorded.
RunPhase followedPhase(const std::string& lastStatus) {
  return lastStatus == nf::record::kFinish  ? RunPhase::Finished
         : lastStatus == nf::record::kStop  ? RunPhase::Stopped
         : lastStatus == nf::record::kPause ? RunPhase::Paused
                                            : RunPhase::Running;
}

}  // namespace

RunSession::RunSession(QObject* parent) : QObject(parent), m_worker(new QObject) {
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.setObjectName("training");
  m_thread.start();
  m_others = new LocalWorkers(this);
  m_local = new LocalRun(m_worker, m_others, this);
  m_connected = new ConnectedRun(m_worker, this);
  connect(m_local, &LocalRun::phaseChanged, this, &RunSession::onLocalPhase);
  connect(m_local, &LocalRun::trainerMade, this, [this] { onTrainerMade(m_layers); });
  connect(m_local, &LocalRun::failed, this, &RunSession::failed);
  connect(m_local, &LocalRun::preparationStopped, this, [this] {
    setPhase(RunPhase::Failed);
    Q_EMIT notBegun(QString());  // no trainer nor folder was made: nothing to resume
  });
  connect(m_local, &LocalRun::progress, this, &RunSession::progress);
  connect(m_connected, &ConnectedRun::answered, this, &RunSession::onAnswered);
  connect(m_connected, &ConnectedRun::unreachable, this, [this](const QString& message) {
    setPhase(RunPhase::Failed);
    Q_EMIT notBegun(message);
  });
  connect(m_connected, &ConnectedRun::editRefused, this, &RunSession::remoteEditRefused);
  connect(m_connected, &ConnectedRun::scheduleReplaced, this, &RunSession::scheduleReplaced);
  m_drainTimer.setInterval(50);
  connect(&m_drainTimer, &QTimer::timeout, this, &RunSession::drain);
  m_drainTimer.start();
}

RunSession::~RunSession() { shutdown(); }

bool RunSession::remote() const { return m_connected->connected(); }
QString RunSession::remoteAddress() const { return m_connected->address(); }
std::optional<nf::ServeAddress> RunSession::serveAddress() const { return m_connected->serveAddress(); }
QString RunSession::connectionProblem() const { return m_connected->problem(); }
std::shared_ptr<nf::Trainer> RunSession::trainer() const { return m_local->trainer(); }
void RunSession::setWorkerProgram(const QString& path) { m_others->setProgram(path); }

bool RunSession::busy() const {
  return isTraining(m_local->phase());  // a run trained elsewhere leaves this process free for anything
}

int64_t RunSession::stepsDone() const {
  if (const auto trainer = m_local->trainer()) return trainer->stepsDone();
  return remote() ? std::max(m_connected->stepsDone(), m_metrics.lastStep()) : m_metrics.lastStep();
}

int64_t RunSession::maxSteps() const {
  return m_metrics.maxSteps > 0 ? m_metrics.maxSteps : m_config.optimizer.maxSteps;
}

void RunSession::setPhase(RunPhase phase) {
  if (phase == m_phase) return;
  m_phase = phase;
  Q_EMIT phaseChanged(phase);
}

void RunSession::letGo() {
  const bool wasConnected = remote();
  m_connected->forget();
  m_local->letGo();
  m_follower.reset();
  m_live.reset();
  m_autopilotToCarry.reset();
  if (wasConnected) Q_EMIT connectionChanged();
}

void RunSession::close() {
  if (busy()) return;
  letGo();
  m_runDir.clear();
  m_config = {};
  ingest({}, /*restarted=*/true);  // no metrics, and the plots told
  setPhase(RunPhase::None);
}

// `restarted`: the lines replace what was held (a resumed run's log, whose records after its checkpoint are
// gone; a run newly shown), and the plots are told even when there are none.
void RunSession::ingest(const std::vector<std::string>& lines, bool restarted) {
  bool added = restarted;
  if (restarted) m_metrics.clear();
  for (const std::string& line : lines) added = m_metrics.ingest(line) || added;
  // A followed run is in the phase its records say: known before the metrics are shown.
  if (m_follower) setPhase(followedPhase(m_metrics.lastStatus));
  if (added) Q_EMIT metricsChanged();
}

void RunSession::drain() {
  if (remote()) {
    readConnected();
  } else if (m_follower) {
    try {
      const nf::MetricsFollower::NewLines read = m_follower->read();
      ingest(read.lines, read.restarted);
    } catch (const std::exception& e) {  // its folder now holds a newer build's run: not misread
      letGo();
      Q_EMIT notBegun(QString::fromUtf8(e.what()));
    }
  } else {
    ingest(m_local->drain());
  }
}

void RunSession::start(const nf::RunConfig& config, const QString& runDir, int layers,
                       std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare, int workers) {
  if (busy()) return;
  if (const QString why = m_others->cannotStart(workers); !why.isEmpty()) {
    Q_EMIT failed(why);
    return;
  }
  letGo();  // the previous run's schedule is no longer edited from here
  m_workers = workers;
  m_layers = layers;
  m_runDir = runDir;
  m_config = config;
  ingest({}, /*restarted=*/true);  // a new run: nothing of the last one stays on the plots while it is made
  m_local->start(config, runDir, std::move(prepare), workers);
}

void RunSession::resume(const QString& runDir, int layers, int workers) {
  if (busy()) return;
  if (const QString why = m_others->cannotStart(workers); !why.isEmpty()) {
    Q_EMIT failed(why);
    return;
  }
  letGo();
  m_workers = workers;
  m_layers = layers;
  m_runDir = runDir;
  m_local->resume(runDir, workers);
}

void RunSession::onLocalPhase(RunPhase phase) {
  ingest(m_local->drain());  // the last records before the state changes
  setPhase(phase);
}

void RunSession::onTrainerMade(int layers) {
  const std::shared_ptr<nf::Trainer> trainer = m_local->trainer();
  if (m_autopilotToCarry && *m_autopilotToCarry != trainer->autopilotOn())
    trainer->setAutopilot(*m_autopilotToCarry);
  m_autopilotToCarry.reset();
  m_config = trainer->config();
  m_live = std::make_shared<LiveSchedule>(trainer, layers);
  // Nothing trains before run(): the file holds every record so far, the trainer's queue the rest.
  m_metrics.clear();
  for (const std::string& line : nf::MetricsFollower(m_runDir.toStdString()).read().lines)
    m_metrics.ingest(line);
  Q_EMIT trainerReady();
  Q_EMIT metricsChanged();
}

void RunSession::pause() {
  if (remote()) {
    if (m_phase != RunPhase::Running) return;
    m_connected->request(RemoteRun::Control::Pause);
    setPhase(RunPhase::Pausing);
    return;
  }
  m_local->pause();
}

void RunSession::stop() {
  if (remote()) {
    m_connected->request(RemoteRun::Control::Stop);  // "stopped" is concluded only once the run says so
    setPhase(RunPhase::Stopping);
    return;
  }
  if (m_phase == RunPhase::Preparing && !m_connected->address().isEmpty()) {  // while it is first asked
    m_connected->forget();
    setPhase(RunPhase::Failed);
    Q_EMIT notBegun(QString());  // given up, not failed: nothing to report
    return;
  }
  m_local->stop();
}

void RunSession::continueRun() {
  if (remote()) {
    m_connected->continueAfterEdits(m_live);
    return;
  }
  // The trainer in memory goes on where it stopped (it may not have written a checkpoint yet); a failed
  // one, or a multi-worker run whose other workers ended with the pause, from its last checkpoint.
  if ((m_phase == RunPhase::Paused || m_phase == RunPhase::Stopped) && m_local->trainer() && m_workers <= 1) {
    m_local->launch();
    return;
  }
  if (!m_runDir.isEmpty() && !busy() && m_phase != RunPhase::Finished) {
    // The switch of the trainer let go (or one kept from a Continue whose resume failed) is the resumed
    // one's.
    const std::optional<bool> carried =
        m_local->trainer() ? std::optional<bool>(autopilot()) : m_autopilotToCarry;
    resume(m_runDir, m_live ? m_live->layers() : m_layers, m_workers);
    m_autopilotToCarry = carried;  // (resume let the old trainer go, and the carry with it)
  }
}

void RunSession::setAutopilot(bool on) {
  if (remote())
    m_connected->request(on ? RemoteRun::Control::AutopilotOn : RemoteRun::Control::AutopilotOff);
  else if (const auto trainer = m_local->trainer())
    trainer->setAutopilot(on);
  else
    m_autopilotToCarry = on;  // a run being resumed: its trainer takes it when made
}

bool RunSession::autopilot() const {
  if (remote()) return m_connected->autopilot();
  if (const auto trainer = m_local->trainer()) return trainer->autopilotOn();
  return m_autopilotToCarry.value_or(m_config.autopilot.enabled);
}

bool RunSession::follow(const QString& runDir) {
  if (busy()) return false;
  const std::string dir = runDir.toStdString();
  nf::RunConfig config = nf::readRunConfig(dir);  // throws FileError
  auto follower = std::make_unique<nf::MetricsFollower>(dir);
  const std::vector<std::string> lines = follower->read().lines;  // a newer build's log: FileError
  const QSignalBlocker quiet(this);                               // shown by the caller, switched
  letGo();
  m_config = std::move(config);
  m_runDir = runDir;
  m_follower = std::move(follower);
  ingest(lines, /*restarted=*/true);  // its whole log so far, in place of what was shown
  return true;
}

void RunSession::connectTo(const nf::ServeAddress& address) {
  if (busy()) return;
  const QSignalBlocker quiet(this);  // shown by the caller, switched
  letGo();
  m_runDir.clear();
  m_config = nf::RunConfig{};  // the run before's settings are not this one's (they came with it)
  ingest({}, /*restarted=*/true);
  m_connected->connectTo(address);
  setPhase(RunPhase::Preparing);
}

void RunSession::onAnswered(const nf::ServeAddress& address, const nf::Schedule& schedule, int layers,
                            const nlohmann::json& status) {
  try {
    m_config = nf::runConfigFromJson(status.at("config"), "the run at " + address.text());
    m_runDir = QString::fromStdString(status.at("run").get<std::string>());
  } catch (const std::exception& e) {
    const QString where = m_connected->address();
    m_connected->forget();
    setPhase(RunPhase::Failed);
    Q_EMIT notBegun(
        tr("The run at %1 answered its status malformed: %2").arg(where, QString::fromStdString(e.what())));
    return;
  }
  m_metrics.clear();
  m_live = m_connected->adopt(address, schedule, layers, m_config, [this] { return stepsDone(); });
  QString malformed;
  if (const std::optional<RunPhase> phase = m_connected->phaseOf(status, &malformed))
    setPhase(*phase);
  else
    Q_EMIT remoteNotice(malformed);
  Q_EMIT trainerReady();
  Q_EMIT metricsChanged();
  Q_EMIT connectionChanged();
}

void RunSession::readConnected() {
  const RemoteRun::News news = m_connected->take();
  ingest(news.lines, news.restarted);
  if (news.status) {
    QString malformed;
    if (const std::optional<RunPhase> phase = m_connected->phaseOf(*news.status, &malformed))
      setPhase(*phase);
    else
      Q_EMIT remoteNotice(malformed);
  }
  for (const std::string& failure : news.failures) Q_EMIT remoteNotice(QString::fromStdString(failure));
  const QString problem = QString::fromStdString(news.problem);
  // A run that stopped or finished stops serving: unreachable then means ended, not lost.
  const bool finished = m_metrics.lastStatus == nf::record::kFinish || m_connected->stepsDone() >= maxSteps();
  if (!problem.isEmpty() &&
      (finished || m_connected->stopRequested() || m_metrics.lastStatus == nf::record::kStop)) {
    setPhase(finished ? RunPhase::Finished : RunPhase::Stopped);  // still remote(): the messages say where
    m_connected->leave();
    Q_EMIT connectionChanged();
    return;
  }
  if (m_connected->setProblem(problem)) Q_EMIT connectionChanged();
}

void RunSession::shutdown() {
  if (!m_thread.isRunning()) return;
  m_connected->shutdown();
  m_local->shutdown();
  m_thread.quit();  // after the work in progress (run() returns once the step ends, its checkpoint written)
  m_thread.wait();
  m_drainTimer.stop();
  m_others->shutdown();
}
