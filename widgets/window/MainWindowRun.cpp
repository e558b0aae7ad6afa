// MainWindow's run: starting one from the setup, the metrics it streams into the views, its state (the
// toolbar, the timeline's editor, the analyses' staleness) and the status bar. The window's layout and
// models are in MainWindow.cpp, its actions and dialogs in MainWindowActions.cpp.
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/AnalysisRunner.h"
#include "analysis/CalibrationPane.h"
#include "analysis/HeadsPane.h"
#include "analysis/NeuronsPane.h"
#include "analysis/NormsPane.h"
#include "analysis/PatchingPane.h"
#include "data/default_datasets.h"
#include "data/token_file.h"
#include "io/atomic_file.h"
#include "model/model_folder.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "timeline/EditRefusalText.h"
#include "timeline/TimelineWidget.h"
#include "train/trainer.h"
#include "util/bytes.h"
#include "views/ModelInfoView.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/RunSetupView.h"
#include "views/TrainingView.h"
#include "window/MainWindow.h"

namespace {
QString hms(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  return QString("%1:%2:%3")
      .arg(s / 3600)
      .arg((s / 60) % 60, 2, 10, QChar('0'))
      .arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

void MainWindow::startRun(const QString& requestedDir) {
  if (m_folder.isEmpty() || m_layers <= 0) {
    showError(tr("No model"), tr("Open a model folder first (File › Open Model Folder)."), QString());
    return;
  }
  if (m_session->busy()) return;
  nf::RunChoices choices;
  choices.model = m_folder.toStdString();
  choices.device = m_setup->device().toStdString();
  choices.maxSteps = m_setup->maxSteps();
  if (m_draft) choices.schedule = m_draft->schedule();
  // Evaluations and checkpoints scale with the budget: a short run on a laptop still shows ten of each.
  choices.evalInterval = std::max<int64_t>(10, m_setup->maxSteps() / 10);
  choices.evalTokens = 32768;
  choices.checkpointInterval = std::max<int64_t>(50, m_setup->maxSteps() / 5);
  if (!m_train.isEmpty()) {
    choices.trainData = m_train.toStdString();
    choices.evalData = {m_validation.toStdString()};
    if (!m_alternative.isEmpty()) choices.evalData.push_back(m_alternative.toStdString());
  }
  const nf::ModelShape shape = m_info->summary().shape;
  nf::RunConfig c = nf::makeRunConfig(m_setup->preset(), m_setup->mode(), shape, choices);
  // The settings the setup pane shows: planned again now, as free memory may have changed since.
  m_setup->updateMemoryPlan();
  if (m_setup->memoryPlan() && m_setup->memoryPlan()->fits) nf::applyPlan(*m_setup->memoryPlan(), c);
  QString dir = requestedDir.isEmpty() ? m_setup->runFolder() : requestedDir;
  if (dir.isEmpty())
    dir = appDataFolder("runs/" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + "-" +
                        QString::fromStdString(nf::trainingModeName(c.mode)));
  if (QFileInfo::exists(QString::fromStdString(nf::run::configPath(dir.toStdString())))) {
    showError(tr("Run folder in use"),
              tr("This folder holds a run already: open it with File › Open Run, or "
                 "choose another folder."),
              dir);
    return;
  }
  std::function<void(nf::RunConfig&, const nf::ProgressFn&)> prepare;
  if (m_train.isEmpty()) {
    const std::string folder = m_folder.toStdString(), datasets = defaultDatasetsFolder();
    prepare = [folder, datasets](nf::RunConfig& config, const nf::ProgressFn& progress) {
      const nf::Datasets d = nf::prepareSyntheticDatasets(datasets, folder, progress);
      config.trainData = d.train;
      config.evalData = {d.val, d.alt};
    };
  }
  m_lastAutoRefresh = 0;
  QDir().mkpath(QFileInfo(dir).absolutePath());
  m_session->start(c, dir, m_layers, prepare, m_setup->workers());
  rememberRecent(kRecentRuns, dir);
  statusBar()->showMessage(tr("Starting %1").arg(dir), 5000);
}

void MainWindow::onMetrics() {
  if (m_session->state() == RunSession::State::Following) {
    // A followed run's model now: its final model once there, else its newest checkpoint.
    const std::string dir = m_session->runDir().toStdString();
    const std::string final = nf::run::finalModelPath(dir);
    m_runner->setCurrentFolder(QFileInfo::exists(QString::fromStdString(final + "/config.json"))
                                   ? final
                                   : nf::run::latestCheckpoint(dir));
  }
  if (m_session->state() == RunSession::State::Following) onStateChanged();  // its status may have changed
  const MetricsStore& m = m_session->metrics();
  if (m.lastCheckpointStep !=
      m_shownCheckpoint) {  // a periodic checkpoint, said before a warning it may bring
    m_shownCheckpoint = m.lastCheckpointStep;
    if (m.lastCheckpointStep >= 0 && m_session->state() == RunSession::State::Running)
      statusBar()->showMessage(
          tr("Checkpoint of step %1 written (%2)")
              .arg(m.lastCheckpointStep)
              .arg(QString::fromStdString(nf::formatBytes(static_cast<int64_t>(m.lastCheckpointBytes)))),
          5000);
  }
  if (m.lastWarning != m_shownWarning) {  // a checkpoint that could not be written, a disk filling up
    m_shownWarning = m.lastWarning;
    const QString detail = QString::fromStdString(m.lastWarning);
    if (m.lastWarningCode == nf::warning_code::kCheckpointFailed)
      statusBar()->showMessage(
          tr("A checkpoint could not be written; training goes on from memory: %1").arg(detail), 30000);
    else if (m.lastWarningCode == nf::warning_code::kLowDiskSpace)
      statusBar()->showMessage(tr("The disk is filling up: %1").arg(detail), 30000);
    else if (!m.lastWarning.empty())
      statusBar()->showMessage(tr("Warning from the run: %1").arg(detail), 30000);
  }
  if (!m_session->runDir().isEmpty()) {
    // The Model view follows the run: each site made fake so far, with its frozen scale.
    std::map<std::string, double> frozen;
    for (const auto& [site, points] : m.scales)
      for (auto it = points.rbegin(); it != points.rend(); ++it)
        if (!std::isnan(it->frozen)) {
          frozen[site] = it->frozen;
          break;
        }
    m_info->showRunState(frozen, m_session->stepsDone());
  }
  const int64_t maxSteps = m.maxSteps > 0 ? m.maxSteps : m_session->config().optimizer.maxSteps;
  m_training->showMetrics(m, maxSteps);
  m_timeline->refresh();
  const int64_t step = m_session->stepsDone();
  for (AnalysisPane* pane : m_panes) pane->setCurrentStep(step);
  const int every = QSettings().value("analysis/autoRefreshSteps", 0).toInt();
  if (every > 0 && m_session->state() == RunSession::State::Running && step - m_lastAutoRefresh >= every) {
    m_lastAutoRefresh = step;
    refreshAnalyses(true);
  }
  updateStatus();
}

void MainWindow::refreshAnalyses(bool onlyVisible) {
  for (AnalysisPane* pane : m_panes)
    if (!onlyVisible || !pane->visibleRegion().isEmpty()) pane->refresh();
}

void MainWindow::onStateChanged() {
  using S = RunSession::State;
  const S s = m_session->state();
  // remote: connected to a run trained elsewhere; ended: such a run stopped or finished since.
  const bool busy = m_session->busy(), remote = m_session->remote();
  const bool ended = !remote && !m_session->remoteAddress().isEmpty();
  m_startAction->setEnabled(!busy && !remote);
  m_pauseAction->setEnabled(s == S::Running);
  m_stopAction->setEnabled(s == S::Running || s == S::Pausing || s == S::Preparing || s == S::Paused);
  // A followed run is resumed here only once its own process has stopped it (two trainers on one run
  // folder would overwrite each other's checkpoints).
  const bool followedStopped = s == S::Following && m_session->metrics().lastStatus == nf::record::kStop;
  const bool resumable = s == S::Paused || s == S::Stopped || followedStopped ||
                         (s == S::Failed && !m_session->runDir().isEmpty());
  m_resumeAction->setEnabled(remote ? s == S::Paused : resumable && !ended);
  for (QAction* a : {m_openAction, m_openRunAction, m_connectAction, m_openScheduleAction, m_datasetsAction})
    a->setEnabled(!busy);
  m_recentMenu->setEnabled(!busy);
  m_bundledMenu->setEnabled(!busy);
  m_setup->setEnabled(!busy && !remote);  // the next local run's setup: a connected run keeps its own
  m_openScheduleAction->setEnabled(!busy && !remote);
  // While a trainer is being made nothing is editable: the old run's schedule no longer applies.
  // A connected run that ended takes no more edits; its timeline stays to be looked at.
  m_timeline->setEnabled(s != S::Preparing && !ended);
  if (s == S::Preparing) m_runner->setTrainer(nullptr);
  if (remote || ended) {
    const QString where = m_session->remoteAddress();
    if (s == S::Finished)
      statusBar()->showMessage(tr("The run at %1 finished: its model is in %2/final on the server")
                                   .arg(where, m_session->runDir()));
    if (s == S::Stopped)
      statusBar()->showMessage(tr("The run at %1 stopped at step %2 with a checkpoint; resume it on the "
                                  "server (normfree-cli resume)")
                                   .arg(where)
                                   .arg(m_session->stepsDone()));
    if (s == S::Paused)
      statusBar()->showMessage(
          tr("The run at %1 is paused at step %2").arg(where).arg(m_session->stepsDone()), 8000);
  } else {
    if (s == S::Finished)
      statusBar()->showMessage(tr("Finished: the trained model is in %1/final").arg(m_session->runDir()));
    if (s == S::Paused)
      statusBar()->showMessage(tr("Paused at step %1; checkpoint written. Resume goes on; edits to the "
                                  "schedule apply when it does.")
                                   .arg(m_session->stepsDone()),
                               10000);
    if (s == S::Stopped)
      statusBar()->showMessage(
          tr("Stopped at step %1; checkpoint written. Resume continues this run from it; "
             "Start begins a new one.")
              .arg(m_session->stepsDone()),
          10000);
  }
  if (s == S::Idle || s == S::Finished) m_progress->hide();
  updateStatus();
}

QString MainWindow::phaseText() const {
  using S = RunSession::State;
  const MetricsStore& m = m_session->metrics();
  const int64_t step = m_session->stepsDone();
  switch (m_session->state()) {
    case S::Idle:
      return QString();
    case S::Preparing:  // Trainer::start loads the model and evaluates it before the first step
      return tr("Preparing the data and the model, evaluating the starting model…");
    case S::Running:
      return m.steps.step.empty() ? tr("Starting the first step…") : tr("Training");
    case S::Pausing:
      return tr("Pausing: finishing the step and writing a checkpoint…");
    case S::Paused:
      return tr("Paused at step %1").arg(step);
    case S::Stopping:
      return tr("Stopping: finishing the step and writing a checkpoint…");
    case S::Stopped:
      return tr("Stopped at step %1").arg(step);
    case S::Finished:
      return tr("Finished");
    case S::Failed:
      return tr("Failed at step %1").arg(step);
    case S::Following:
      if (m.lastStatus == nf::record::kFinish) return tr("Followed run finished");
      if (m.lastStatus == nf::record::kStop) return tr("Followed run stopped at step %1").arg(step);
      if (m.lastStatus == nf::record::kPause) return tr("Followed run paused at step %1").arg(step);
      return tr("Following a run another process trains");
  }
  return QString();
}

void MainWindow::updateStatus() {
  m_phaseLabel->setText("<b>" + phaseText().toHtmlEscaped() + "</b>");
  const MetricsStore& m = m_session->metrics();
  const int64_t done = m_session->stepsDone();
  const nf::RunConfig& c = m_session->config();
  const bool attached = !m_session->runDir().isEmpty();
  const int64_t maxSteps = attached ? c.optimizer.maxSteps : m_setup->maxSteps();
  m_stepLabel->setText(tr("step %1 / %2").arg(done).arg(maxSteps));
  const double tps = m.recentTokensPerSecond();
  QString speed = tps > 0 ? tr("%1 tok/s").arg(tps, 0, 'f', 0) : QString();
  if (tps > 0 && m.worldSize > 1) {
    // Each worker's own pace: a slow GPU or a busy machine shows here.
    QStringList paces;
    for (double pace : m.workerTokensPerSecond) paces << QString::number(pace, 'f', 0);
    speed += tr(" · %1 workers: %2").arg(m.worldSize).arg(paces.join(QStringLiteral(" / ")));
  }
  m_speedLabel->setText(speed);
  const double tokensPerStep =
      static_cast<double>(c.optimizer.microBatch * c.optimizer.accumulation * c.optimizer.context);
  m_etaLabel->setText(tps > 0 && m_session->state() == RunSession::State::Running
                          ? tr("ETA %1").arg(hms(static_cast<double>(maxSteps - done) * tokensPerStep / tps))
                          : QString());
  QString next;
  if (ScheduleEditor* editor = m_timeline->editor())
    for (const nf::ScheduleEvent& e : editor->schedule().events)
      if (e.step >= done) {
        next = tr("next: %1").arg(TimelineWidget::happeningOf(e));
        break;
      }
  m_nextLabel->setText(next);
  m_deviceLabel->setText(attached ? QString::fromStdString(c.device) : m_setup->device());
  const QString problem = m_session->connectionProblem();
  m_connectionLabel->setVisible(m_session->remote());
  m_connectionLabel->setText(problem.isEmpty()
                                 ? tr("connected to %1").arg(m_session->remoteAddress())
                                 : tr("%1 unreachable: reconnecting").arg(m_session->remoteAddress()));
  m_connectionLabel->setToolTip(problem);
  m_connectionLabel->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("color: #c62828"));
}

QString MainWindow::statusText() const {
  return QStringList{phaseText(),
                     m_stepLabel->text(),
                     m_speedLabel->text(),
                     m_etaLabel->text(),
                     m_nextLabel->text(),
                     m_deviceLabel->text(),
                     m_session->remote() ? m_connectionLabel->text() : QString()}
      .join(" | ");
}
