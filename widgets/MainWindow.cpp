#include "MainWindow.h"

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

#include "AnalysisRunner.h"
#include "CalibrationPane.h"
#include "EditRefusalText.h"
#include "HeadsPane.h"
#include "ModelInfoView.h"
#include "NeuronsPane.h"
#include "NormsPane.h"
#include "PatchingPane.h"
#include "Plots.h"
#include "QCustomPlotInclude.h"
#include "RunSetupView.h"
#include "TimelineWidget.h"
#include "TrainingView.h"
#include "data/default_datasets.h"
#include "data/token_file.h"
#include "io/atomic_file.h"
#include "model/model_folder.h"
#include "run/metrics_records.h"
#include "run/run_directory.h"
#include "train/trainer.h"
#include "util/bytes.h"

namespace {
QString hms(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  return QString("%1:%2:%3")
      .arg(s / 3600)
      .arg((s / 60) % 60, 2, 10, QChar('0'))
      .arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowIcon(QIcon(":/normfree.svg"));
  setDockNestingEnabled(true);
  m_session = new RunSession(this);
  m_runner = new AnalysisRunner(this);
  m_info = new ModelInfoView(this);
  m_timeline = new TimelineWidget(this);
  m_training = new TrainingView(this);
  m_setup = new RunSetupView(this);
  m_norms = new NormsPane(m_runner, this);
  m_heads = new HeadsPane(m_runner, this);
  m_patching = new PatchingPane(m_runner, this);
  m_neurons = new NeuronsPane(m_runner, this);
  m_calibration = new CalibrationPane(m_runner, this);
  m_panes = {m_norms, m_heads, m_patching, m_neurons, m_calibration};

  setCentralWidget(m_training);
  // The analysis panes take the window's full height (their heat maps and head detail need it); the
  // timeline runs under the setup and the loss plots, whose steps it shares.
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  addDock(m_timeline, "timelineDock", Qt::BottomDockWidgetArea);
  QDockWidget* setupDock = addDock(m_setup, "runSetupDock", Qt::LeftDockWidgetArea);
  QDockWidget* modelDock = addDock(m_info, "modelDock", Qt::LeftDockWidgetArea);
  tabifyDockWidget(setupDock, modelDock);
  setupDock->raise();
  QDockWidget* first = nullptr;
  for (AnalysisPane* pane : m_panes) {
    QDockWidget* dock = addDock(pane, pane->metaObject()->className(), Qt::RightDockWidgetArea);
    if (first)
      tabifyDockWidget(first, dock);
    else
      first = dock;
  }
  first->raise();

  buildActions();
  buildMenus();

  m_phaseLabel = new QLabel(this);
  m_stepLabel = new QLabel(this);
  m_speedLabel = new QLabel(this);
  m_etaLabel = new QLabel(this);
  m_nextLabel = new QLabel(this);
  m_deviceLabel = new QLabel(this);
  m_connectionLabel = new QLabel(this);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(220);
  m_progress->hide();
  for (QWidget* w :
       std::initializer_list<QWidget*>{m_phaseLabel, m_progress, m_stepLabel, m_speedLabel, m_etaLabel,
                                       m_nextLabel, m_deviceLabel, m_connectionLabel})
    statusBar()->addPermanentWidget(w);

  // The loss plots and the timeline show the same steps.
  connect(m_timeline, &TimelineWidget::viewRangeChanged, m_training, &TrainingView::setXRange);
  connect(m_training, &TrainingView::xRangeChanged, m_timeline, &TimelineWidget::setViewRange);
  connect(m_timeline, &TimelineWidget::editRefused, this,
          [this](const QString& why) { statusBar()->showMessage(tr("Edit refused: %1").arg(why), 8000); });
  connect(m_timeline, &TimelineWidget::scheduleEdited, this, &MainWindow::updateStatus);
  connect(m_timeline, &TimelineWidget::editAccepted, this,
          [this](const QString& what) { statusBar()->showMessage(what, 8000); });
  connect(m_setup, &RunSetupView::presetChanged, this, &MainWindow::resetDraftSchedule);
  connect(m_setup, &RunSetupView::stepsChanged, this, [this] {
    if (m_session->busy() || m_session->remote() || !m_draft) return;
    // The draft keeps its events; those the shorter budget leaves out are dropped, and said so.
    const size_t dropped = m_draft->trimTo(m_setup->maxSteps()).size();
    if (dropped > 0)
      statusBar()->showMessage(
          tr("%n event(s) past the last step were removed from the schedule", "", static_cast<int>(dropped)),
          8000);
    m_timeline->setEditor(m_draft);  // a fresh undo history: it may name the dropped events
    updateStatus();
  });
  connect(m_setup, &RunSetupView::deviceChanged, this, &MainWindow::updateStatus);
  connect(m_session, &RunSession::metricsChanged, this, &MainWindow::onMetrics);
  connect(m_session, &RunSession::stateChanged, this, &MainWindow::onStateChanged);
  connect(m_session, &RunSession::trainerReady, this, [this] {
    m_timeline->setEditor(m_session->liveSchedule());
    m_runner->setTrainer(m_session->trainer());
    m_runner->setServer(m_session->serveAddress(), m_session->config().optimizer.context);
    if (m_session->remote())
      statusBar()->showMessage(
          tr("Connected to the run %1 at %2").arg(m_session->runDir(), m_session->remoteAddress()), 8000);
  });
  connect(m_session, &RunSession::connectFailed, this, [this](const QString& message) {
    resetDraftSchedule();  // the timeline no longer shows a run it cannot reach
    showError(tr("Cannot connect"), tr("The run could not be reached or read."), message);
  });
  connect(m_session, &RunSession::connectionChanged, this, &MainWindow::onStateChanged);
  connect(m_session, &RunSession::remoteNotice, this,
          [this](const QString& message) { statusBar()->showMessage(message, 10000); });
  connect(m_session, &RunSession::remoteEditRefused, this, [this](const nf::EditResult& result) {
    statusBar()->showMessage(tr("The run refused an edit shown as made: %1").arg(EditRefusalText::of(result)),
                             10000);
    m_timeline->refresh();
  });
  connect(m_session, &RunSession::scheduleReplaced, this, [this] {
    m_timeline->refresh();
    updateStatus();
  });
  connect(m_session, &RunSession::failed, this, [this](const QString& message) {
    showError(tr("Training stopped"),
              tr("The run could not go on. Its last checkpoint is kept; fix the cause "
                 "and press Resume."),
              message);
  });
  connect(m_session, &RunSession::progress, this, [this](const QString& task, qint64 done, qint64 total) {
    m_progress->setVisible(!task.isEmpty());
    m_progress->setRange(0, total > 0 ? 1000 : 0);
    if (total > 0) m_progress->setValue(static_cast<int>(1000 * done / total));
    m_progress->setFormat(task + " %p%");
    m_progress->setTextVisible(true);
  });
  connect(m_runner, &AnalysisRunner::failed, this, [this](const QString&, const QString& message) {
    statusBar()->showMessage(tr("Analysis failed: %1").arg(message), 8000);
  });

  QSettings settings;
  setLanguage(settings.value("language", QLocale().name().startsWith("de") ? "de" : "en").toString());
  retranslate();
  rebuildRecentMenu();
  if (!restoreGeometry(settings.value("mainWindow/geometry").toByteArray())) resize(1500, 950);
  restoreState(settings.value("mainWindow/state").toByteArray());
  m_setup->setRunFolder(QString());
  const QStringList recent = settings.value(kRecentModels).toStringList();
  const QString start =
      recent.isEmpty() || !QFileInfo::exists(recent.first()) ? defaultModelFolder() : recent.first();
  if (!start.isEmpty()) openModelFolder(start);
  onStateChanged();
}

MainWindow::~MainWindow() { m_session->shutdown(); }

QString MainWindow::appDataFolder(const QString& sub) {
  return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/" + sub;
}

QString MainWindow::defaultModelFolder() {
  // NF_BUNDLED_MODEL overrides what the first launch opens (tests point it elsewhere, or at nothing).
  if (qEnvironmentVariableIsSet("NF_BUNDLED_MODEL")) {
    const QString folder = qEnvironmentVariable("NF_BUNDLED_MODEL");
    return QFileInfo::exists(folder + "/config.json") ? QDir::cleanPath(folder) : QString();
  }
  return bundledModelFolder("tiny-gpt2");
}

QString MainWindow::bundledModelFolder(const QString& name) {
  const QStringList candidates = {QApplication::applicationDirPath() + "/../share/normfree/" + name,
                                  QApplication::applicationDirPath() + "/../../resources/" + name,
                                  QStringLiteral(NF_RESOURCES_DIR) + "/" + name};
  for (const QString& c : candidates)
    if (QFileInfo::exists(c + "/config.json")) return QDir::cleanPath(c);
  return QString();
}

QDockWidget* MainWindow::addDock(QWidget* widget, const QString& objectName, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(this);
  dock->setObjectName(objectName);  // saveState/restoreState find docks by name
  dock->setWidget(widget);
  addDockWidget(area, dock);
  m_docks << dock;
  return dock;
}

bool MainWindow::openModelFolder(const QString& folder) {
  try {
    const QString clean = QDir::cleanPath(folder);
    nf::ModelSummary summary = nf::inspectModelFolder(clean.toStdString());
    if (m_session->busy()) {
      showError(tr("A run is in progress"), tr("Stop the run before opening another model."), clean);
      return false;
    }
    m_session->disconnectRemote();  // it trains on where it is
    m_info->setSummary(summary);
    m_setup->setModelShape(summary.shape);
    m_folder = clean;
    m_layers = summary.shape.nLayer;
    m_setup->matchModelDepth(summary.shape.nLayer);
    resetDraftSchedule();
    m_runner->setTrainer(nullptr);
    m_runner->setServer(std::nullopt);
    m_runner->setCurrentFolder(std::string());
    m_runner->setSetup(analysisSetup(m_validation.toStdString()));
    retranslate();
    statusBar()->showMessage(tr("Opened %1").arg(clean), 5000);
    rememberRecent(kRecentModels, clean);
    return true;
  } catch (const std::exception& e) {
    showError(tr("Cannot open model folder"), tr("The model folder could not be opened."), e.what());
    return false;
  }
}

void MainWindow::connectToRun(const nf::ServeAddress& address) {
  if (m_session->busy()) {
    showError(tr("A run is in progress"), tr("Stop the run before connecting to another."),
              QString::fromStdString(address.text()));
    return;
  }
  m_runner->setTrainer(nullptr);
  m_session->connectTo(address);
  statusBar()->showMessage(tr("Connecting to %1…").arg(QString::fromStdString(address.text())), 10000);
}

bool MainWindow::openRun(const QString& runDir) {
  try {
    const QString clean = QDir::cleanPath(runDir);
    if (!m_session->follow(clean))  // throws FileError for a folder without a readable config.json
      throw std::runtime_error("a run is in progress: stop it before opening another");
    const nf::RunConfig& c = m_session->config();
    const QString model = QString::fromStdString(c.model);
    if (!model.isEmpty() && model != m_folder) {
      const nf::ModelSummary summary = nf::inspectModelFolder(model.toStdString());
      m_info->setSummary(summary);
      m_setup->setModelShape(summary.shape);
      m_folder = model;
      m_layers = summary.shape.nLayer;
    }
    const std::string dir = clean.toStdString();
    m_timeline->setEditor(std::make_shared<FollowedSchedule>(dir, m_layers, c.optimizer.maxSteps,
                                                             [this] { return m_session->stepsDone(); }));
    m_runner->setTrainer(nullptr);
    m_runner->setServer(std::nullopt);
    m_runner->setSetup(analysisSetup(c.evalData.empty() ? std::string() : c.evalData.front()));
    rememberRecent(kRecentRuns, clean);
    statusBar()->showMessage(tr("Following %1").arg(clean), 5000);
    onMetrics();
    return true;
  } catch (const std::exception& e) {
    showError(tr("Cannot open run"), tr("The run directory could not be opened."), e.what());
    return false;
  }
}

std::string MainWindow::defaultDatasetsFolder() const {
  // One folder per model folder (its tokenizer makes the token files): name plus a hash of the path.
  const QByteArray key =
      QCryptographicHash::hash(m_folder.toUtf8(), QCryptographicHash::Sha1).toHex().left(10);
  return appDataFolder("datasets/" + QDir(m_folder).dirName() + "-" + key).toStdString();
}

AnalysisSetup MainWindow::analysisSetup(const std::string& validationData) const {
  AnalysisSetup setup;
  setup.modelFolder = m_folder.toStdString();
  setup.validationData = validationData;
  setup.datasetsFolder = defaultDatasetsFolder();  // used when validationData is empty
  return setup;
}

nf::Treatments MainWindow::draftTreatments() const {
  // The treatments the next run will use are its preset's (startRun adds none): the draft refuses, and
  // the timeline's menus do not offer, ending one it does not use.
  return nf::findPreset(m_setup->preset()).removal.treatments();
}

void MainWindow::resetDraftSchedule() {
  // A running or connected run's schedule is edited live, not drafted.
  if (m_session->busy() || m_session->remote() || m_layers <= 0) return;
  const nf::Preset& preset = nf::findPreset(m_setup->preset());
  m_draft = std::make_shared<DraftSchedule>(nf::presetSchedule(preset, m_layers), m_layers,
                                            m_setup->maxSteps(), draftTreatments());
  m_timeline->setEditor(m_draft);
  if (preset.nLayer != 0 && preset.nLayer != m_layers)
    statusBar()->showMessage(
        tr("The preset %1 is made for %2 layers; this model has %3. Choose another preset.")
            .arg(QString::fromStdString(preset.name))
            .arg(preset.nLayer)
            .arg(m_layers),
        10000);
  updateStatus();
}

bool MainWindow::loadSchedule(const QString& path) {
  try {
    const std::string file = path.toStdString();
    nf::Schedule schedule = nf::readScheduleFile(file);
    try {
      schedule.validate(m_layers, m_setup->maxSteps());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    if (m_session->busy() || m_session->remote())
      throw std::runtime_error("a run is in progress: edit its schedule on the timeline");
    m_draft = std::make_shared<DraftSchedule>(schedule, m_layers, m_setup->maxSteps(), draftTreatments());
    m_timeline->setEditor(m_draft);
    statusBar()->showMessage(tr("Loaded schedule %1").arg(path), 5000);
    return true;
  } catch (const nlohmann::json::exception& e) {
    showError(tr("Cannot load schedule"), tr("The schedule file is not valid JSON."), path + ": " + e.what());
  } catch (const std::exception& e) {
    showError(tr("Cannot load schedule"), tr("The schedule could not be used."), e.what());
  }
  return false;
}

bool MainWindow::setDatasets(const QString& train, const QString& validation, const QString& alternative) {
  try {
    for (const QString& f : {train, validation, alternative})
      if (!f.isEmpty()) nf::TokenFile::open(f.toStdString());  // throws naming the file and the problem
    if (train.isEmpty() || validation.isEmpty())
      throw std::runtime_error("a training and a validation token file are needed");
    m_train = train;
    m_validation = validation;
    m_alternative = alternative;
    m_setup->setDataDescription(
        tr("train %1, eval %2%3")
            .arg(QFileInfo(train).fileName(), QFileInfo(validation).fileName(),
                 alternative.isEmpty() ? QString() : ", " + QFileInfo(alternative).fileName()));
    if (!m_folder.isEmpty()) openModelFolder(m_folder);  // analyses read the new validation data
    return true;
  } catch (const std::exception& e) {
    showError(tr("Cannot use these datasets"), tr("A dataset could not be read."), e.what());
    return false;
  }
}

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

void MainWindow::showError(const QString& title, const QString& text, const QString& detail) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
  box->setInformativeText(detail);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, does not block the event loop (training goes on)
  statusBar()->showMessage(detail.isEmpty() ? text : detail, 10000);
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  // First launch (no saved layout): a narrow setup column, the room to the plots. Docks can only be
  // sized once the window has its geometry.
  if (m_firstShow && QSettings().value("mainWindow/state").isNull())
    QTimer::singleShot(0, this, [this] {
      // Setup column ~a fifth, analyses ~45 % of the width; the timeline as tall as its rows.
      const int w = width();
      resizeDocks({m_docks[1], m_docks[3]}, {std::clamp(w / 5, 250, 340), w * 45 / 100}, Qt::Horizontal);
      resizeDocks({m_docks[0]}, {m_timeline->sizeHint().height() + 28}, Qt::Vertical);
    });
  QTimer::singleShot(0, this, &MainWindow::showWholeTabTitles);
  m_firstShow = false;
}

void MainWindow::showWholeTabTitles() {
  // The docks' tab bars are made by QMainWindow as docks are tabified; by default they elide titles to
  // "He…" when the area is narrow. Whole titles, with scroll buttons when they do not all fit.
  for (QTabBar* bar : findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly)) {
    bar->setElideMode(Qt::ElideNone);
    bar->setUsesScrollButtons(true);
    bar->setExpanding(false);
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_session->busy()) statusBar()->showMessage(tr("Stopping the run and writing its checkpoint…"));
  m_session->shutdown();  // waits for the step in progress and the checkpoint
  QSettings settings;
  settings.setValue("mainWindow/geometry", saveGeometry());
  settings.setValue("mainWindow/state", saveState());
  event->accept();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

void MainWindow::retranslate() {
  setWindowTitle(m_folder.isEmpty() ? tr("NormFree Workbench")
                                    : tr("%1 — NormFree Workbench").arg(QDir(m_folder).dirName()));
  m_fileMenu->setTitle(tr("&File"));
  m_openAction->setText(tr("&Open Model Folder…"));
  m_openRunAction->setText(tr("Open &Run…"));
  m_connectAction->setText(tr("&Connect to Run…"));
  m_recentMenu->setTitle(tr("Open &Recent"));
  m_bundledMenu->setTitle(tr("Open &Bundled Model"));
  rebuildBundledMenu();
  m_openScheduleAction->setText(tr("Load &Schedule…"));
  m_datasetsAction->setText(tr("Choose &Datasets…"));
  m_runFolderAction->setText(tr("Folder for the &Next Run…"));
  m_exportMenu->setTitle(tr("&Export Figure"));
  m_exportAllAction->setText(tr("Export &All Figures…"));
  m_quitAction->setText(tr("&Quit"));
  m_editMenu->setTitle(tr("&Edit"));
  m_undoAction->setText(tr("&Undo"));
  m_redoAction->setText(tr("&Redo"));
  m_deleteAction->setText(tr("&Delete Selected Events"));
  m_settingsAction->setText(tr("&Settings…"));
  m_runMenu->setTitle(tr("&Run"));
  m_startAction->setText(tr("Start"));
  m_startAction->setToolTip(tr("Start a new run of the setup on the left"));
  m_pauseAction->setText(tr("Pause"));
  m_pauseAction->setToolTip(tr("Finish the step in progress, write a checkpoint and wait"));
  m_stopAction->setText(tr("Stop"));
  m_stopAction->setToolTip(tr("Stop the run after the step in progress (a checkpoint is written)"));
  m_resumeAction->setText(tr("Resume"));
  m_resumeAction->setToolTip(
      tr("Continue the run from where it stopped (for an opened run: from its newest "
         "checkpoint, in this process)"));
  m_refreshAction->setText(tr("Refresh analyses"));
  m_refreshAction->setToolTip(tr("Compute every analysis pane on the model as it is now"));
  m_viewMenu->setTitle(tr("&View"));
  m_fitAction->setText(tr("Zoom Timeline to &Fit"));
  m_helpMenu->setTitle(tr("&Help"));
  m_guideAction->setText(tr("The &First Ten Minutes"));
  m_aboutAction->setText(tr("&About"));
  m_toolbar->setWindowTitle(tr("Run"));
  const QString dockTitles[] = {tr("Removal timeline"), tr("Run setup"), tr("Model")};
  for (int i = 0; i < 3; ++i) m_docks[i]->setWindowTitle(dockTitles[i]);
  for (int i = 0; i < m_panes.size(); ++i) m_docks[3 + i]->setWindowTitle(m_panes[i]->title());
  showWholeTabTitles();
  rebuildRecentMenu();
  m_training->showMetrics(m_session->metrics(), m_session->config().optimizer.maxSteps);  // series names
  updateStatus();
}
