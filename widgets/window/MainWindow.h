// The workbench's main window: the training view in the middle; docks for the removal timeline, the run
// setup, the model and the analysis panes (layout restored from QSettings); toolbar Start / Pause / Stop /
// Resume / Refresh analyses; a status bar with step, tokens/s, ETA, next event and device. On first launch
// it opens the bundled tiny model with its removal preset ready.
// What it shows is one thing at a time — a model, a run trained here, a followed run, a connected run — as
// the table in logic/WindowState.h says; this class wires the parts to that table. Its actions and menus
// are in WindowActions, the status bar in RunStatusBar, its dialogs in WindowDialogs, export in FigureExport.
#pragma once
#include <QMainWindow>
#include <QTranslator>
#include <memory>
#include <string>

#include "analysis/AnalysisRunner.h"
#include "logic/WindowState.h"
#include "run/RunSession.h"
#include "serve/serve_address.h"
#include "window/AppFolders.h"
#include "window/FigureExport.h"
#include "window/NextRun.h"
#include "window/WindowDialogs.h"

class AnalysisPane;
class CalibrationPane;
class DraftSchedule;
class HeadsPane;
class ModelInfoView;
class NeuronsPane;
class NormsPane;
class PatchingPane;
class DockLayout;
class RunSetupView;
class RunsView;
class RunStatusBar;
class TimelineWidget;
class TrainingView;
class WindowActions;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a model folder; on failure shows a (non-blocking) dialog naming the file and the problem,
  // keeps whatever was open before, and returns false. The run shown before is let go (its checkpoint
  // stays; a connected run trains on where it is).
  bool openModelFolder(const QString& folder);
  // Opens a run directory (e.g. one the CLI is training) and follows its metrics.
  bool openRun(const QString& runDir);
  // Connects to a run another process trains with --serve (docs/STEERING.md), also through an SSH
  // tunnel: it is shown, edited and controlled as a run trained here. Errors come as failed().
  void connectToRun(const nf::ServeAddress& address);
  // Reads a schedule file into the draft (before a run starts); errors as for openModelFolder.
  bool loadSchedule(const QString& path);
  // Uses these token files (train, validation, second eval set; the last may be empty).
  bool setDatasets(const QString& train, const QString& validation, const QString& alternative);
  // "en" or "de", applied at once (every visible string changes) and remembered.
  void setLanguage(const QString& language);

  // Starts a run of the current setup into runDir ("" : a new folder under the app's data folder).
  void startRun(const QString& runDir = QString());
  void exportAllFigures(const QString& folder);
  void resume();                           // what Resume means for the run shown (viewOf(shown()).resume)
  void refreshAnalyses(bool onlyVisible);  // every pane, or those on screen
  void raisePane(QWidget* paneOrView);     // brings the dock tab holding it to the front

  const WindowState& shown() const { return m_shown; }
  const NextRun& nextRun() const { return m_next; }
  const FigureExport& figures() const { return *m_figures; }
  const QString& language() const { return m_language; }
  WindowActions* actions() const { return m_actions; }
  ModelInfoView* modelInfoView() const { return m_info; }
  TimelineWidget* timeline() const { return m_timeline; }
  TrainingView* trainingView() const { return m_training; }
  RunSession* session() const { return m_session; }
  RunSetupView* runSetup() const { return m_setup; }
  RunsView* runsView() const { return m_runs; }
  HeadsPane* headsPane() const { return m_heads; }
  QList<AnalysisPane*> analysisPanes() const { return m_panes; }
  QString currentFolder() const { return m_next.modelFolder(); }  // the model opened last
  QString statusText() const;  // the status bar's permanent fields, for tests
  QString phaseText() const;  // what the run is doing now: "Evaluating the starting model…", "Paused at …"

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void connectViews();  // the timeline, plots and setup with each other
  void connectSession();
  // Moves to what `event` makes the window show and shows it; false (nothing changes) where refused.
  bool moveTo(WindowEvent event);
  void applyShown();  // every part as viewOf(m_shown) says
  void resetDraftSchedule();
  // Shows the next run's model (m_next's, as a model of its own): its analyses, no run. Its setup is kept,
  // and its draft where made for it, else the preset's anew (draftAfter: the caller makes it after).
  void showModel(bool draftAfter = false);
  void onMetrics();
  void onPhaseChanged();
  void updateStatus();
  void showError(const QString& title, const QString& text, const QString& detail);
  void remember(AppFolders::Recent kind, const QString& path);
  void rebuildFileMenus();  // recent files and bundled models
  void retranslate();

  WindowState m_shown;
  RunSession* m_session;
  AnalysisRunner* m_runner;
  ModelInfoView* m_info;
  TimelineWidget* m_timeline;
  TrainingView* m_training;
  RunSetupView* m_setup;
  RunsView* m_runs;
  HeadsPane* m_heads;
  QList<AnalysisPane*> m_panes;
  DockLayout* m_layout;
  WindowActions* m_actions;
  RunStatusBar* m_status;
  std::unique_ptr<FigureExport> m_figures;
  NextRun m_next;  // the run Start begins: the opened model, its draft, the datasets
  QTranslator m_translator;
  QString m_language;
  int64_t m_lastAutoRefresh = 0;
};
