#include "window/MainWindow.h"

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
#include <QScreen>
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
#include "logic/WindowPlacement.h"
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
  // On the screen it opens on: a first launch no larger than it, a remembered geometry (from a larger screen,
  // or one no longer attached) brought back onto it.
  const QRect screenArea = screen()->availableGeometry();
  const ScreenRect available{screenArea.x(), screenArea.y(), screenArea.width(), screenArea.height()};
  const bool restored = restoreGeometry(settings.value("mainWindow/geometry").toByteArray());
  const QRect remembered = geometry();
  const ScreenRect placed =
      restored ? fitWindowRect({remembered.x(), remembered.y(), remembered.width(), remembered.height()},
                               available)
               : firstWindowRect(available);
  setGeometry(placed.x, placed.y, placed.width, placed.height);
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
