#include "window/MainWindow.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStatusBar>
#include <QUndoStack>

#include "analysis/AnalysisPane.h"
#include "analysis/AnalysisPanes.h"
#include "model/model_folder.h"
#include "run/run_directory.h"
#include "timeline/TimelineWidget.h"
#include "views/ModelInfoView.h"
#include "views/RunSetupView.h"
#include "views/RunsView.h"
#include "views/TrainingView.h"
#include "window/AppFolders.h"
#include "window/DockLayout.h"
#include "window/MenuCommands.h"
#include "window/NextRun.h"
#include "window/RunStatusBar.h"
#include "window/WindowActions.h"

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_setup(new RunSetupView(this)), m_next(m_setup) {
  setWindowIcon(QIcon(":/normfree.svg"));
  m_session = new RunSession(this);
  m_runner = new AnalysisRunner(this);
  m_info = new ModelInfoView(this);
  m_timeline = new TimelineWidget(this);
  m_training = new TrainingView(this);
  m_panes = makeAnalysisPanes(m_runner, this, &m_heads);
  m_figures = std::make_unique<FigureExport>(m_training, m_panes);

  setCentralWidget(m_training);
  m_runs = new RunsView(this);
  m_layout = new DockLayout(this, m_timeline, m_setup, m_info, groupAnalysisPanes(m_panes), m_runs);
  m_actions = new WindowActions(this, m_timeline->undoStack());
  m_actions->addDockToggles(m_layout->docks());
  m_status = new RunStatusBar(statusBar());
  MenuCommands::connect(this, m_actions);
  connectViews();
  connectSession();

  setLanguage(QSettings().value("language", QLocale().name().startsWith("de") ? "de" : "en").toString());
  retranslate();
  m_layout->restore();
  m_setup->setRunFolder(QString());
  if (const QString start = AppFolders::startModel(); !start.isEmpty()) openModelFolder(start);
  applyShown();
}

MainWindow::~MainWindow() { m_session->shutdown(); }

void MainWindow::connectViews() {
  // The loss plots and the timeline show the same steps.
  connect(m_timeline, &TimelineWidget::viewRangeChanged, m_training, &TrainingView::setXRange);
  connect(m_runs, &RunsView::overlayChanged, this, [this] { m_training->setComparison(m_runs->overlaid()); });
  connect(m_training, &TrainingView::xRangeChanged, m_timeline, &TimelineWidget::setViewRange);
  connect(m_training, &TrainingView::xRangeResetRequested, m_timeline, &TimelineWidget::zoomToFit);
  connect(m_timeline, &TimelineWidget::scheduleEdited, this, &MainWindow::updateStatus);
  connect(m_setup, &RunSetupView::presetChanged, this, &MainWindow::resetDraftSchedule);
  connect(m_setup, &RunSetupView::stepsChanged, this, [this] {
    if (viewOf(m_shown).timeline != TimelineShows::Draft || !m_next.draft()) return;
    QString note;  // the events the shorter budget leaves out are dropped, and said so
    m_timeline->setEditor(m_next.trimDraft(&note));  // a fresh undo history: it may name the dropped events
    if (!note.isEmpty()) statusBar()->showMessage(note, 8000);
    updateStatus();
  });
  connect(m_setup, &RunSetupView::deviceChanged, this, &MainWindow::updateStatus);
}

void MainWindow::connectSession() {
  connect(m_session, &RunSession::metricsChanged, this, &MainWindow::onMetrics);
  connect(m_session, &RunSession::phaseChanged, this, &MainWindow::onPhaseChanged);
  connect(m_session, &RunSession::connectionChanged, this, &MainWindow::updateStatus);
  connect(m_session, &RunSession::failed, this, [this](const QString& message) {
    showError(tr("Training stopped"),
              tr("The run could not go on. Its last checkpoint is kept; fix the cause and press Resume."),
              message);
  });
  connect(m_session, &RunSession::trainerReady, this, [this] {
    m_timeline->setEditor(m_session->liveSchedule());
    m_runner->setSource(
        {m_session->trainer(), {}, m_session->serveAddress(), m_session->config().optimizer.context});
    if (m_session->remote()) {
      m_info->showRunElsewhere(m_session->runDir(), m_session->remoteAddress());
      statusBar()->showMessage(
          tr("Connected to the run %1 at %2").arg(m_session->runDir(), m_session->remoteAddress()), 8000);
    }
    applyShown();  // the title names the run
  });
  connect(m_session, &RunSession::notBegun, this, [this](const QString& message) {
    if (!message.isEmpty())  // empty: given up with Stop (connecting, or making a start's data)
      showError(tr("Cannot connect"), tr("The run could not be reached or read."), message);
    if (!m_next.modelFolder().isEmpty()) return showModel();  // its setup and draft as they were
    m_session->close();  // nothing of the run stays (its plots, its followed schedule)
    m_timeline->setEditor(nullptr);
    moveTo(WindowEvent::Close);
  });
  connect(m_session, &RunSession::remoteEditRefused, m_timeline, &TimelineWidget::refresh);
  connect(m_session, &RunSession::scheduleReplaced, this, [this] {
    m_timeline->refresh();
    updateStatus();
  });
  m_status->watch(m_session, m_timeline, m_runner);  // progress, notices, edits refused, analyses failed
}

bool MainWindow::moveTo(WindowEvent event) {
  const std::optional<WindowState> next = nextWindowState(m_shown, event);
  if (!next) return false;
  m_shown = *next;
  applyShown();
  return true;
}

void MainWindow::applyShown() {
  const WindowView v = viewOf(m_shown);
  const QString app = tr("NormFree Workbench"), run = QDir(m_session->runDir()).dirName();
  QString title = app;  // TitleShows::Application
  if (v.title == TitleShows::Model) title = tr("%1 — %2").arg(QDir(m_next.modelFolder()).dirName(), app);
  if (v.title == TitleShows::Run) title = tr("Run %1 — %2").arg(run, app);
  if (v.title == TitleShows::ConnectedRun)
    title = tr("Run %1 at %2 — %3")
                .arg(run.isEmpty() ? tr("(connecting)") : run, m_session->remoteAddress(), app);
  setWindowTitle(title);
  m_actions->enableFor(v, m_session->config().mode == nf::TrainingMode::Remove, m_session->autopilot());
  m_setup->setEditable(v.setupEditable);
  m_setup->showMemoryPlan(v.memoryPlan);
  m_setup->showRun(v.runPlots, m_session->configKnown() ? &m_session->config() : nullptr);
  const bool local = m_shown.subject != Subject::ConnectedRun;  // a connected run's folder is the server's
  m_runs->setShownRun(v.runPlots && local ? m_session->runDir() : QString());  // its siblings
  m_timeline->setEnabled(v.timeline == TimelineShows::Draft || v.timeline == TimelineShows::LiveEdits ||
                         v.timeline == TimelineShows::Followed);
  if (v.modelPane == ModelPaneShows::Empty) m_info->clear();
  m_runner->setAvailability(v.analyses);
  updateStatus();
}

void MainWindow::onPhaseChanged() {
  m_shown = withRunPhase(m_shown, m_session->phase());
  // While a trainer is made the old one's model is not what the panes would show.
  // (A resumed followed run's folder is the nearest to it.)
  if (m_session->phase() == RunPhase::Preparing)
    m_runner->setSource(AnalysisSource::folder(m_runner->source().currentFolder));
  m_status->sayPhase(*m_session, m_shown);
  applyShown();
}

void MainWindow::resume() {
  const ResumeMeans means = viewOf(m_shown).resume;
  const WindowState before = m_shown;
  if (!moveTo(WindowEvent::Resume)) return;
  // The trainer in memory goes on (a failed one: from its checkpoint), or the connected run is told to.
  if ((means == ResumeMeans::ContinueHere && m_session->trainer()) || means == ResumeMeans::ContinueConnected)
    return m_session->continueRun();
  m_session->resume(m_session->runDir(), m_next.layers(), m_setup->workers());    // its newest checkpoint
  if (m_session->phase() != RunPhase::Preparing) m_shown = before, applyShown();  // refused, and said why
}

bool MainWindow::openModelFolder(const QString& folder) {
  const QString clean = QDir::cleanPath(folder);
  nf::ModelSummary summary;
  try {
    summary = nf::inspectModelFolder(clean.toStdString());
  } catch (const std::exception& e) {
    showError(tr("Cannot open model folder"), tr("The model folder could not be opened."), e.what());
    return false;
  }
  if (!nextWindowState(m_shown, WindowEvent::OpenModel)) {
    showError(tr("A run is in progress"), tr("Stop the run before opening another model."), clean);
    return false;
  }
  const QString setAside = m_next.setModel(clean, summary);  // datasets of another tokenizer
  showModel(/*draftAfter=*/true);                            // (letting the run go says so: "Opened" after)
  statusBar()->showMessage(setAside.isEmpty() ? tr("Opened %1").arg(clean) : setAside, 15000);
  resetDraftSchedule();  // its note, when it has one, after: a replaced draft is worth the line
  remember(AppFolders::Recent::Models, clean);
  return true;
}

void MainWindow::showModel(bool draftAfter) {
  m_session->close();  // the run shown is let go: its checkpoint stays, a connected one trains on
  m_info->setSummary(m_next.alone());
  m_runner->forgetModel();  // a run's analyses of this same model are not the model's
  m_runner->setSource({});  // the model folder
  m_runner->setSetup(m_next.analysisSetup({}));
  moveTo(WindowEvent::OpenModel);
  m_timeline->setEditor(m_next.draft());  // made afresh if for another model (a run of one opened since):
  if (!draftAfter && !m_next.draftIsForModel()) resetDraftSchedule();
}

void MainWindow::connectToRun(const nf::ServeAddress& address) {
  if (!nextWindowState(m_shown, WindowEvent::Connect))
    return showError(tr("A run is in progress"), tr("Stop the run before connecting to another."),
                     QString::fromStdString(address.text()));
  m_runner->forgetModel();  // until the run answers, nothing of another's (the model opened before)
  m_lastAutoRefresh = 0;    // the steps counted are this run's
  m_session->connectTo(address);
  m_info->showRunElsewhere(QString(), QString::fromStdString(address.text()));
  m_timeline->setEditor(nullptr);  // the run's schedule comes with its first answer
  moveTo(WindowEvent::Connect);
  onMetrics();  // none yet: the run before's go
  onPhaseChanged();
  statusBar()->showMessage(tr("Connecting to %1…").arg(QString::fromStdString(address.text())), 10000);
}

bool MainWindow::openRun(const QString& runDir) {
  try {
    const QString clean = QDir::cleanPath(runDir);
    if (!nextWindowState(m_shown, WindowEvent::OpenRun))
      throw std::runtime_error("a run is in progress: stop it before opening another");
    // Whatever can fail is read first: a half-switched window showed the run's plots under another subject.
    const nf::RunConfig c = nf::readRunConfig(clean.toStdString());
    const NextRun::RunModel model = m_next.runModel(clean, c);
    const std::string current = nf::run::currentModelPath(clean.toStdString());
    if (!m_session->follow(clean))
      throw std::runtime_error("a run is in progress: stop it before opening another");
    const QString setAside = m_next.setRunModel(model);  // the datasets chosen, of another tokenizer
    const bool modelHere = !model.folder.isEmpty();      // else the analyses have no model (nothing stale)
    if (modelHere) m_info->setSummary(m_next.model());
    if (!modelHere) m_info->showRunElsewhere(clean, QString::fromStdString(c.model));
    m_timeline->setEditor(std::make_shared<FollowedSchedule>(
        clean.toStdString(), m_next.layers(), [this] { return m_session->maxSteps(); },
        [this] { return m_session->stepsDone(); }));
    m_runner->forgetModel();  // another run of the same model is another subject: its analyses go
    m_runner->setSource(AnalysisSource::folder(current));
    m_runner->setSetup(m_next.analysisSetup(c.evalData.empty() ? std::string() : c.evalData.front()));
    m_lastAutoRefresh = 0;
    moveTo(modelHere ? WindowEvent::OpenRunWithModel : WindowEvent::OpenRun);
    remember(AppFolders::Recent::Runs, clean);
    statusBar()->showMessage(setAside.isEmpty() ? tr("Following %1").arg(clean) : setAside, 15000);
    onMetrics();
    onPhaseChanged();  // the phase its own process last recorded
    return true;
  } catch (const std::exception& e) {
    showError(tr("Cannot open run"), tr("The run directory could not be opened."), e.what());
    return false;
  }
}

void MainWindow::resetDraftSchedule() {
  if (viewOf(m_shown).timeline != TimelineShows::Draft || m_next.layers() <= 0) return;  // a run's is live
  QString note;
  m_timeline->setEditor(m_next.resetDraft(&note));
  if (!note.isEmpty()) statusBar()->showMessage(note, 10000);
  updateStatus();
}

bool MainWindow::loadSchedule(const QString& path) {
  try {
    if (!viewOf(m_shown).loadSchedule)
      throw std::runtime_error("a run is shown: edit its schedule on the timeline, or open its model first");
    m_timeline->setEditor(m_next.loadDraft(path));
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
    m_next.setDatasets({train, validation, alternative});
    if (m_shown.subject == Subject::Model)
      m_runner->setSetup(m_next.analysisSetup({}));  // the new validation data
    return true;
  } catch (const std::exception& e) {
    showError(tr("Cannot use these datasets"), tr("A dataset could not be read."), e.what());
    return false;
  }
}

void MainWindow::startRun(const QString& requestedDir) {
  if (!nextWindowState(m_shown, WindowEvent::Start)) {
    if (m_shown.subject != Subject::Model)
      showError(tr("No model open"), tr("Open a model folder first (File › Open Model Folder)."), QString());
    return;
  }
  m_setup->commitTypedValues();  // the steps typed before Start was clicked in the toolbar
  QString dir = requestedDir.isEmpty() ? m_setup->runFolder() : requestedDir;
  if (dir.isEmpty())
    dir = AppFolders::newRunFolder(QString::fromStdString(nf::trainingModeName(m_setup->mode())));
  NextRun::Launch launch;
  try {  // what would fail only after its data is made, or train other than chosen
    launch = m_next.launch(dir);
  } catch (const std::exception& e) {
    return showError(tr("Cannot start the run"), tr("The run cannot start as it is set up."), e.what());
  }
  m_lastAutoRefresh = 0;
  m_status->forgetAnnounced();
  QDir().mkpath(QFileInfo(dir).absolutePath());
  m_session->start(launch.config, dir, m_next.layers(), launch.prepare, m_setup->workers());
  if (m_session->phase() != RunPhase::Preparing) return;  // refused, and said why
  moveTo(WindowEvent::Start);
  m_timeline->undoStack()->clear();  // the draft is the run's now: an undo would change what it does not hold
  remember(AppFolders::Recent::Runs, dir);
  if (dir == m_setup->runFolder()) m_setup->setRunFolder({});  // chosen for one run: it holds this one now
  statusBar()->showMessage(tr("Starting %1").arg(dir), 5000);
}

void MainWindow::onMetrics() {
  if (m_shown.subject == Subject::FollowedRun)  // its process may have written a newer checkpoint
    m_runner->setSource(AnalysisSource::folder(nf::run::currentModelPath(m_session->runDir().toStdString())));
  m_status->announce(*m_session);
  const MetricsStore& m = m_session->metrics();
  const WindowView view = viewOf(m_shown);
  if (view.modelPane == ModelPaneShows::RunSites)
    m_info->showRunState(m.frozenScales(), m_session->stepsDone());
  m_training->showMetrics(m);
  m_training->setProvenance({"run: " + m_session->runDir(),
                             "model: " + QString::fromStdString(m_session->config().model),
                             "step: " + QString::number(m_session->stepsDone())});
  m_timeline->refresh();
  const int64_t step = view.runPlots ? m_session->stepsDone() : 0;
  for (AnalysisPane* pane : m_panes) pane->setCurrentStep(step);
  const int every = QSettings().value("analysis/autoRefreshSteps", 0).toInt();
  if (every > 0 && m_shown.phase == RunPhase::Running && step - m_lastAutoRefresh >= every) {
    m_lastAutoRefresh = step;
    refreshAnalyses(true);
  }
  updateStatus();
}

void MainWindow::refreshAnalyses(bool onlyVisible) {
  for (AnalysisPane* pane : m_panes)
    if (!onlyVisible || !pane->visibleRegion().isEmpty()) pane->refresh();
}

void MainWindow::updateStatus() {
  m_status->update(*m_session, m_shown, {m_setup->maxSteps(), m_setup->device()}, m_timeline->editor());
}

QString MainWindow::phaseText() const { return m_status->phaseText(*m_session, m_shown); }
QString MainWindow::statusText() const { return m_status->text(); }

void MainWindow::exportAllFigures(const QString& folder) {
  const FigureExport::Written w = m_figures->exportAll(folder, viewOf(m_shown).runPlots);
  if (w.failures.isEmpty())
    statusBar()->showMessage(w.summary(folder), 15000);
  else
    showError(tr("Export incomplete"), w.summary(folder), w.failures.join("\n"));
}

void MainWindow::raisePane(QWidget* paneOrView) { m_layout->raise(paneOrView); }

void MainWindow::showError(const QString& title, const QString& text, const QString& detail) {
  WindowDialogs::showError(this, title, text, detail);
  statusBar()->showMessage(detail.isEmpty() ? text : detail, 10000);
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  m_layout->shown();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_session->busy()) statusBar()->showMessage(tr("Stopping the run and writing its checkpoint…"));
  m_session->shutdown();  // waits for the step in progress and the checkpoint
  m_layout->save();
  event->accept();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

void MainWindow::retranslate() {
  m_actions->retranslate();
  m_layout->setTitles(tr("Removal timeline"), tr("Run setup"), tr("Model"), tr("Runs"));
  rebuildFileMenus();
  m_training->showMetrics(m_session->metrics());  // series names
  applyShown();
}

void MainWindow::setLanguage(const QString& language) {
  if (language == m_language) return;
  m_language = AppFolders::applyLanguage(language, &m_translator);
  // removeTranslator/installTranslator send LanguageChange to every widget: each retranslates itself.
}

void MainWindow::remember(AppFolders::Recent kind, const QString& path) {
  AppFolders::remember(kind, path);
  rebuildFileMenus();
}

void MainWindow::rebuildFileMenus() {
  auto openModel = [this](const QString& folder) { openModelFolder(folder); };
  m_actions->setRecent(AppFolders::recent(AppFolders::Recent::Models),
                       AppFolders::recent(AppFolders::Recent::Runs), openModel,
                       [this](const QString& run) { openRun(run); });
  m_actions->setBundled(AppFolders::bundledModels(), openModel);
}
