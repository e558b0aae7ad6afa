#include "window/MenuCommands.h"

#include <QAction>
#include <QFileDialog>
#include <QMenu>
#include <QSettings>
#include <QStandardPaths>

#include "run/RunSession.h"
#include "timeline/TimelineWidget.h"
#include "views/RunSetupView.h"
#include "window/AppFolders.h"
#include "window/MainWindow.h"
#include "window/WindowActions.h"
#include "window/WindowDialogs.h"

void MenuCommands::connect(MainWindow* w, WindowActions* a) {
  QObject::connect(a->open, &QAction::triggered, w, [w] {
    const QString folder =
        QFileDialog::getExistingDirectory(w, tr("Open Model Folder"), w->nextRun().modelFolder());
    if (!folder.isEmpty()) w->openModelFolder(folder);
  });
  QObject::connect(a->openRun, &QAction::triggered, w, [w] {
    const QString dir =
        QFileDialog::getExistingDirectory(w, tr("Open Run Directory"), AppFolders::dataFolder("runs"));
    if (!dir.isEmpty()) w->openRun(dir);
  });
  QObject::connect(a->connectRun, &QAction::triggered, w, [w] {
    if (const auto address = WindowDialogs::askServedRun(w, AppFolders::dataFolder("runs")))
      w->connectToRun(*address);
  });
  QObject::connect(a->loadSchedule, &QAction::triggered, w, [w] {
    const QString file = QFileDialog::getOpenFileName(w, tr("Open Schedule"), QString(),
                                                      tr("Schedules (*.json);;All files (*)"));
    if (!file.isEmpty()) w->loadSchedule(file);
  });
  QObject::connect(a->datasets, &QAction::triggered, w, [w] {
    if (const auto chosen = WindowDialogs::askDatasets(w, w->nextRun().datasets()))
      w->setDatasets(chosen->train, chosen->validation, chosen->alternative);
  });
  QObject::connect(a->runFolder, &QAction::triggered, w, [w] {
    w->runSetup()->setRunFolder(
        QFileDialog::getExistingDirectory(w, tr("Folder for the Next Run"), AppFolders::dataFolder("runs")));
  });
  QObject::connect(a->exportMenu, &QMenu::aboutToShow, w,
                   [w, a] { w->figures().fillMenu(a->exportMenu, viewOf(w->shown()).runPlots, w); });
  QObject::connect(a->exportAll, &QAction::triggered, w, [w] {
    // Not the working folder (the source tree when started from a build): where figures are kept.
    const QString where = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    const QString folder = QFileDialog::getExistingDirectory(w, tr("Export All Figures To"), where);
    if (!folder.isEmpty()) w->exportAllFigures(folder);
  });
  QObject::connect(a->settings, &QAction::triggered, w, [w] {
    QSettings settings;
    const auto chosen = WindowDialogs::askSettings(
        w, {w->language(), settings.value("analysis/autoRefreshSteps", 0).toInt()});
    if (!chosen) return;
    settings.setValue("analysis/autoRefreshSteps", chosen->autoRefreshSteps);
    w->setLanguage(chosen->language);
  });
  QObject::connect(a->quit, &QAction::triggered, w, &QWidget::close);
  QObject::connect(a->deleteEvents, &QAction::triggered, w->timeline(), &TimelineWidget::deleteSelected);
  QObject::connect(a->fitTimeline, &QAction::triggered, w->timeline(), &TimelineWidget::zoomToFit);
  QObject::connect(a->start, &QAction::triggered, w, [w] { w->startRun(); });
  QObject::connect(a->pause, &QAction::triggered, w->session(), &RunSession::pause);
  QObject::connect(a->stop, &QAction::triggered, w->session(), &RunSession::stop);
  QObject::connect(a->resume, &QAction::triggered, w, &MainWindow::resume);
  QObject::connect(a->autopilot, &QAction::triggered, w, [w](bool on) { w->session()->setAutopilot(on); });
  QObject::connect(a->refresh, &QAction::triggered, w, [w] { w->refreshAnalyses(false); });
  QObject::connect(a->guide, &QAction::triggered, w, [w] { WindowDialogs::showGuide(w); });
  QObject::connect(a->about, &QAction::triggered, w, [w] { WindowDialogs::showAbout(w); });
}
