#include "window/WindowActions.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStyle>
#include <QToolBar>
#include <QUndoStack>

WindowActions::WindowActions(QMainWindow* window, QUndoStack* timelineEdits)
    : QObject(window), m_window(window) {
  auto make = [this](QKeySequence::StandardKey key = QKeySequence::UnknownKey) {
    auto* action = new QAction(this);
    if (key != QKeySequence::UnknownKey) action->setShortcut(key);
    return action;
  };
  open = make(QKeySequence::Open);
  openRun = make();
  connectRun = make();
  loadSchedule = make();
  datasets = make();
  runFolder = make();
  exportAll = make();
  settings = make(QKeySequence::Preferences);
  quit = make(QKeySequence::Quit);
  undo = timelineEdits->createUndoAction(this);
  undo->setShortcut(QKeySequence::Undo);
  redo = timelineEdits->createRedoAction(this);
  redo->setShortcut(QKeySequence::Redo);
  deleteEvents = make();
  fitTimeline = make();
  const QStyle* s = window->style();
  start = new QAction(s->standardIcon(QStyle::SP_MediaPlay), QString(), this);
  pause = new QAction(s->standardIcon(QStyle::SP_MediaPause), QString(), this);
  stop = new QAction(s->standardIcon(QStyle::SP_MediaStop), QString(), this);
  resume = new QAction(s->standardIcon(QStyle::SP_MediaSeekForward), QString(), this);
  refresh = new QAction(s->standardIcon(QStyle::SP_BrowserReload), QString(), this);
  refresh->setShortcut(QKeySequence::Refresh);
  autopilot = make();
  autopilot->setCheckable(true);
  guide = make();
  about = make();

  toolbar = window->addToolBar(QString());
  toolbar->setObjectName("runToolBar");
  toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolbar->addActions({start, pause, stop, resume});
  toolbar->addSeparator();
  toolbar->addAction(refresh);

  QMenuBar* bar = window->menuBar();
  fileMenu = bar->addMenu(QString());
  fileMenu->addActions({open, openRun, connectRun});
  recentMenu = fileMenu->addMenu(QString());
  bundledMenu = fileMenu->addMenu(QString());
  fileMenu->addSeparator();
  fileMenu->addActions({loadSchedule, datasets, runFolder});
  fileMenu->addSeparator();
  exportMenu = fileMenu->addMenu(QString());
  fileMenu->addAction(exportAll);
  fileMenu->addSeparator();
  fileMenu->addAction(quit);
  editMenu = bar->addMenu(QString());
  editMenu->addActions({undo, redo, deleteEvents});
  editMenu->addSeparator();
  editMenu->addAction(settings);
  runMenu = bar->addMenu(QString());
  runMenu->addActions({start, pause, stop, resume});
  runMenu->addSeparator();
  runMenu->addActions({autopilot, refresh});
  viewMenu = bar->addMenu(QString());
  helpMenu = bar->addMenu(QString());
  helpMenu->addActions({guide, about});
}

void WindowActions::addDockToggles(const QList<QDockWidget*>& docks) {
  for (QDockWidget* dock : docks) viewMenu->addAction(dock->toggleViewAction());
  viewMenu->addAction(toolbar->toggleViewAction());
  viewMenu->addSeparator();
  viewMenu->addAction(fitTimeline);
}

void WindowActions::enableFor(const WindowView& view, bool removal, bool autopilotOn) {
  autopilot->setEnabled(view.autopilotSwitch && removal);
  autopilot->setChecked(autopilot->isEnabled() && autopilotOn);
  start->setEnabled(view.start);
  pause->setEnabled(view.pause);
  stop->setEnabled(view.stop);
  resume->setEnabled(view.resume != ResumeMeans::Disabled);
  refresh->setEnabled(view.analyses == AnalysesCan::Compute);
  for (QAction* a : {open, openRun, connectRun, datasets}) a->setEnabled(view.openOther);
  bundledMenu->setEnabled(view.openOther);
  m_canOpen = view.openOther;
  recentMenu->setEnabled(m_canOpen && m_hasRecent);
  loadSchedule->setEnabled(view.loadSchedule);
  runFolder->setEnabled(view.setupEditable);
  const bool edits = view.timeline == TimelineShows::Draft || view.timeline == TimelineShows::LiveEdits;
  deleteEvents->setEnabled(edits);
  // What Resume does, said where it is pressed.
  switch (view.resume) {
    case ResumeMeans::TakeOverFollowed:
      resume->setToolTip(tr("Continue the run from its newest checkpoint, trained in this process"));
      break;
    case ResumeMeans::ContinueConnected:
      resume->setToolTip(tr("Tell the connected run to go on"));
      break;
    default:
      resume->setToolTip(tr("Continue the run shown from where it stopped"));
  }
}

void WindowActions::setRecent(const QStringList& models, const QStringList& runs, OpenFn openModel,
                              OpenFn openRun) {
  recentMenu->clear();
  for (const QString& folder : models)
    recentMenu->addAction(tr("Model: %1").arg(folder), this, [openModel, folder] { openModel(folder); });
  if (!models.isEmpty() && !runs.isEmpty()) recentMenu->addSeparator();
  for (const QString& run : runs)
    recentMenu->addAction(tr("Run: %1").arg(run), this, [openRun, run] { openRun(run); });
  m_hasRecent = !models.isEmpty() || !runs.isEmpty();
  recentMenu->setEnabled(m_canOpen && m_hasRecent);
}

void WindowActions::setBundled(const QList<std::pair<QString, QString>>& labelledFolders, OpenFn openModel) {
  bundledMenu->clear();
  for (const auto& [label, folder] : labelledFolders)
    bundledMenu->addAction(label, this, [openModel, folder = folder] { openModel(folder); });
  bundledMenu->menuAction()->setVisible(!bundledMenu->isEmpty());  // an installation without resources/
}

void WindowActions::retranslate() {
  fileMenu->setTitle(tr("&File"));
  open->setText(tr("&Open Model Folder…"));
  openRun->setText(tr("Open &Run…"));
  connectRun->setText(tr("&Connect to Run…"));
  recentMenu->setTitle(tr("Open &Recent"));
  bundledMenu->setTitle(tr("Open &Bundled Model"));
  loadSchedule->setText(tr("Load &Schedule…"));
  datasets->setText(tr("Choose &Datasets…"));
  runFolder->setText(tr("Folder for the &Next Run…"));
  exportMenu->setTitle(tr("&Export Figure"));
  exportAll->setText(tr("Export &All Figures…"));
  quit->setText(tr("&Quit"));
  editMenu->setTitle(tr("&Edit"));
  undo->setText(tr("&Undo"));
  redo->setText(tr("&Redo"));
  deleteEvents->setText(tr("&Delete Selected Events"));
  settings->setText(tr("&Settings…"));
  runMenu->setTitle(tr("&Run"));
  start->setText(tr("Start"));
  start->setToolTip(tr("Start a new run of the opened model with the setup on the left"));
  pause->setText(tr("Pause"));
  pause->setToolTip(tr("Finish the step in progress, write a checkpoint and wait"));
  stop->setText(tr("Stop"));
  stop->setToolTip(tr("Stop the run after the step in progress (a checkpoint is written)"));
  resume->setText(tr("Resume"));
  autopilot->setText(tr("&Autopilot"));
  autopilot->setToolTip(tr("Time the pending removals of the run shown by its recovery from the last one"));
  refresh->setText(tr("Refresh analyses"));
  refresh->setToolTip(tr("Compute every analysis pane on the model as it is now"));
  viewMenu->setTitle(tr("&View"));
  fitTimeline->setText(tr("Zoom Timeline to &Fit"));
  helpMenu->setTitle(tr("&Help"));
  guide->setText(tr("The &First Ten Minutes"));
  about->setText(tr("&About"));
  toolbar->setWindowTitle(tr("Run"));
}
