// The workbench's main window: the training view in the middle; docks for the removal timeline, the run
// setup, the model and the analysis panes (layout restored from QSettings); toolbar Start / Pause / Stop /
// Resume / Refresh analyses; a status bar with step, tokens/s, ETA, next event and device. On first launch
// it opens the bundled tiny model with its removal preset ready.
#pragma once
#include <QMainWindow>
#include <QStringList>
#include <QTranslator>
#include <memory>
#include <string>

#include "analysis/AnalysisRunner.h"
#include "run/RunSession.h"
#include "serve/steering_client.h"

class AnalysisPane;
class AnalysisRunner;
class CalibrationPane;
class HeadsPane;
class ModelInfoView;
class NeuronsPane;
class NormsPane;
class PatchingPane;
class QAction;
class QCustomPlot;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QToolBar;
class RunSetupView;
class TimelineWidget;
class TrainingView;
class DraftSchedule;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a model folder; on failure shows a (non-blocking) dialog naming the file and the problem,
  // keeps whatever was open before, and returns false.
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
  // A model shipped in resources/ (tiny-gpt2, tiny-llama); empty if not installed.
  static QString bundledModelFolder(const QString& name);
  // What the first launch opens: the tiny GPT-2, or NF_BUNDLED_MODEL's folder.
  static QString defaultModelFolder();

  // Starts a run of the current setup into runDir ("" : a new folder under the app's data folder).
  void startRun(const QString& runDir = QString());
  void exportAllFigures(const QString& folder);
  void raisePane(QWidget* paneOrView);  // brings the dock tab holding it to the front

  ModelInfoView* modelInfoView() const { return m_info; }
  TimelineWidget* timeline() const { return m_timeline; }
  TrainingView* trainingView() const { return m_training; }
  RunSession* session() const { return m_session; }
  RunSetupView* runSetup() const { return m_setup; }
  HeadsPane* headsPane() const { return m_heads; }
  QList<AnalysisPane*> analysisPanes() const { return m_panes; }
  QString currentFolder() const { return m_folder; }
  QString statusText() const;  // the status bar's permanent fields, for tests
  QString phaseText() const;  // what the run is doing now: "Evaluating the starting model…", "Paused at …"

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void buildActions();
  void buildMenus();
  QDockWidget* addDock(QWidget* widget, const QString& objectName, Qt::DockWidgetArea area);
  void resetDraftSchedule();
  nf::Treatments draftTreatments() const;     // those of the setup's preset
  std::string defaultDatasetsFolder() const;  // where the synthetic datasets for m_folder's model live
  AnalysisSetup analysisSetup(const std::string& validationData) const;
  void onMetrics();
  void onStateChanged();
  void updateStatus();
  void refreshAnalyses(bool onlyVisible);
  void chooseModelFolder();
  void chooseRun();
  void chooseServedRun();  // the Connect to Run dialog
  void chooseSchedule();
  void chooseDatasets();
  void chooseRunFolder();
  void chooseExportAll();
  void showSettings();
  void showGuide();
  void showError(const QString& title, const QString& text, const QString& detail);
  void rememberRecent(const char* key, const QString& path);
  // QSettings keys of the recent-files lists, and how long they get.
  static constexpr const char* kRecentModels = "recentModelFolders";
  static constexpr const char* kRecentRuns = "recentRuns";
  static constexpr int kMaxRecent = 8;
  // A folder under the user's application data (runs, datasets).
  static QString appDataFolder(const QString& sub);
  void rebuildRecentMenu();
  void rebuildBundledMenu();
  void rebuildExportMenu();
  // The plots that show results (what Export writes); the panes not computed yet named in *notComputed.
  QList<QCustomPlot*> resultPlots(QStringList* notComputed) const;
  void retranslate();
  void showWholeTabTitles();

  RunSession* m_session;
  AnalysisRunner* m_runner;
  ModelInfoView* m_info;
  TimelineWidget* m_timeline;
  TrainingView* m_training;
  RunSetupView* m_setup;
  NormsPane* m_norms;
  HeadsPane* m_heads;
  PatchingPane* m_patching;
  NeuronsPane* m_neurons;
  CalibrationPane* m_calibration;
  QList<AnalysisPane*> m_panes;
  QList<QDockWidget*> m_docks;
  std::shared_ptr<DraftSchedule> m_draft;
  QTranslator m_translator;
  QString m_language;
  std::string m_shownWarning;      // the run's latest warning, once shown
  int64_t m_shownCheckpoint = -1;  // the step of the run's latest checkpoint, once said

  QString m_folder;  // the model folder open (a run's starting model when a run is open)
  int m_layers = 0;
  QString m_train, m_validation, m_alternative;  // chosen datasets ("" : the default synthetic ones)
  int64_t m_lastAutoRefresh = 0;
  bool m_firstShow = true;

  QMenu *m_fileMenu, *m_recentMenu, *m_bundledMenu, *m_exportMenu, *m_editMenu, *m_viewMenu, *m_runMenu,
      *m_helpMenu;
  QToolBar* m_toolbar;
  QAction *m_openAction, *m_openRunAction, *m_connectAction, *m_openScheduleAction, *m_datasetsAction,
      *m_runFolderAction, *m_exportAllAction, *m_settingsAction, *m_quitAction, *m_undoAction, *m_redoAction,
      *m_deleteAction, *m_fitAction, *m_startAction, *m_pauseAction, *m_stopAction, *m_resumeAction,
      *m_refreshAction, *m_guideAction, *m_aboutAction;
  QLabel *m_phaseLabel, *m_stepLabel, *m_speedLabel, *m_etaLabel, *m_nextLabel, *m_deviceLabel;
  QLabel* m_connectionLabel;  // a connected run's address, or that it cannot be reached
  QProgressBar* m_progress;
};
