// MainWindow's actions, menus and dialogs: file choosers, recent files, figure export, settings, the
// first-ten-minutes guide. The window's layout, runs and status are in MainWindow.cpp.
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
#include "run/run_directory.h"
#include "serve/steering_client.h"
#include "timeline/TimelineWidget.h"
#include "train/trainer.h"
#include "views/ModelInfoView.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/RunSetupView.h"
#include "views/TrainingView.h"
#include "window/MainWindow.h"

void MainWindow::buildActions() {
  m_openAction = new QAction(this);
  m_openAction->setShortcut(QKeySequence::Open);
  connect(m_openAction, &QAction::triggered, this, &MainWindow::chooseModelFolder);
  m_openRunAction = new QAction(this);
  connect(m_openRunAction, &QAction::triggered, this, &MainWindow::chooseRun);
  m_connectAction = new QAction(this);
  connect(m_connectAction, &QAction::triggered, this, &MainWindow::chooseServedRun);
  m_openScheduleAction = new QAction(this);
  connect(m_openScheduleAction, &QAction::triggered, this, &MainWindow::chooseSchedule);
  m_datasetsAction = new QAction(this);
  connect(m_datasetsAction, &QAction::triggered, this, &MainWindow::chooseDatasets);
  m_runFolderAction = new QAction(this);
  connect(m_runFolderAction, &QAction::triggered, this, &MainWindow::chooseRunFolder);
  m_exportAllAction = new QAction(this);
  connect(m_exportAllAction, &QAction::triggered, this, &MainWindow::chooseExportAll);
  m_settingsAction = new QAction(this);
  m_settingsAction->setShortcut(QKeySequence::Preferences);
  connect(m_settingsAction, &QAction::triggered, this, &MainWindow::showSettings);
  m_quitAction = new QAction(this);
  m_quitAction->setShortcut(QKeySequence::Quit);
  connect(m_quitAction, &QAction::triggered, this, &QWidget::close);
  m_undoAction = m_timeline->undoStack()->createUndoAction(this);
  m_undoAction->setShortcut(QKeySequence::Undo);
  m_redoAction = m_timeline->undoStack()->createRedoAction(this);
  m_redoAction->setShortcut(QKeySequence::Redo);
  m_deleteAction = new QAction(this);
  connect(m_deleteAction, &QAction::triggered, m_timeline, &TimelineWidget::deleteSelected);
  m_fitAction = new QAction(this);
  connect(m_fitAction, &QAction::triggered, m_timeline, &TimelineWidget::zoomToFit);

  const QStyle* s = style();
  m_startAction = new QAction(s->standardIcon(QStyle::SP_MediaPlay), QString(), this);
  connect(m_startAction, &QAction::triggered, this, [this] { startRun(); });
  m_pauseAction = new QAction(s->standardIcon(QStyle::SP_MediaPause), QString(), this);
  connect(m_pauseAction, &QAction::triggered, m_session, &RunSession::pause);
  m_stopAction = new QAction(s->standardIcon(QStyle::SP_MediaStop), QString(), this);
  connect(m_stopAction, &QAction::triggered, m_session, &RunSession::stop);
  m_resumeAction = new QAction(s->standardIcon(QStyle::SP_MediaSeekForward), QString(), this);
  connect(m_resumeAction, &QAction::triggered, this, [this] {
    if (m_session->remote())
      m_session->continueRun();  // the connected run goes on (a paused one; a stopped one ends serving)
    else if (m_session->state() == RunSession::State::Following || !m_session->trainer())
      m_session->resume(m_session->runDir(), m_layers, m_setup->workers());
    else
      m_session->continueRun();
  });
  m_refreshAction = new QAction(s->standardIcon(QStyle::SP_BrowserReload), QString(), this);
  m_refreshAction->setShortcut(QKeySequence::Refresh);
  connect(m_refreshAction, &QAction::triggered, this, [this] { refreshAnalyses(false); });
  m_guideAction = new QAction(this);
  connect(m_guideAction, &QAction::triggered, this, &MainWindow::showGuide);
  m_aboutAction = new QAction(this);
  connect(m_aboutAction, &QAction::triggered, this, [this] {
    QMessageBox::about(
        this, tr("About NormFree Workbench"),
        tr("<b>NormFree Workbench %1</b><br>Removes LayerNorm from GPT-2, Pythia and LLaMA-family models "
           "by fine-tuning and shows the circuits of the result.")
            .arg(QApplication::applicationVersion()));
  });

  m_toolbar = addToolBar(QString());
  m_toolbar->setObjectName("runToolBar");
  m_toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_toolbar->addActions({m_startAction, m_pauseAction, m_stopAction, m_resumeAction});
  m_toolbar->addSeparator();
  m_toolbar->addAction(m_refreshAction);
}

void MainWindow::buildMenus() {
  m_fileMenu = menuBar()->addMenu(QString());
  m_fileMenu->addActions({m_openAction, m_openRunAction, m_connectAction});
  m_recentMenu = m_fileMenu->addMenu(QString());
  m_bundledMenu = m_fileMenu->addMenu(QString());
  m_fileMenu->addSeparator();
  m_fileMenu->addActions({m_openScheduleAction, m_datasetsAction, m_runFolderAction});
  m_fileMenu->addSeparator();
  m_exportMenu = m_fileMenu->addMenu(QString());
  connect(m_exportMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildExportMenu);
  m_fileMenu->addAction(m_exportAllAction);
  m_fileMenu->addSeparator();
  m_fileMenu->addAction(m_quitAction);

  m_editMenu = menuBar()->addMenu(QString());
  m_editMenu->addActions({m_undoAction, m_redoAction, m_deleteAction});
  m_editMenu->addSeparator();
  m_editMenu->addAction(m_settingsAction);

  m_runMenu = menuBar()->addMenu(QString());
  m_runMenu->addActions({m_startAction, m_pauseAction, m_stopAction, m_resumeAction});
  m_runMenu->addSeparator();
  m_runMenu->addAction(m_refreshAction);

  m_viewMenu = menuBar()->addMenu(QString());
  for (QDockWidget* dock : m_docks) m_viewMenu->addAction(dock->toggleViewAction());
  m_viewMenu->addAction(m_toolbar->toggleViewAction());
  m_viewMenu->addSeparator();
  m_viewMenu->addAction(m_fitAction);

  m_helpMenu = menuBar()->addMenu(QString());
  m_helpMenu->addActions({m_guideAction, m_aboutAction});
}

void MainWindow::chooseModelFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Model Folder"), m_folder);
  if (!folder.isEmpty()) openModelFolder(folder);
}

void MainWindow::chooseRun() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Open Run Directory"), appDataFolder("runs"));
  if (!folder.isEmpty()) openRun(folder);
}

void MainWindow::chooseServedRun() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Connect to Run"));
  auto* form = new QFormLayout(&dialog);
  auto* explanation = new QLabel(
      tr("A run started with <tt>normfree-cli … --serve PORT</tt> on a server. From another machine, open "
         "an SSH tunnel first: <tt>ssh -N -L PORT:127.0.0.1:PORT server</tt>. Address and token are in the "
         "run's serve.json."),
      &dialog);
  explanation->setWordWrap(true);
  form->addRow(explanation);
  auto* address = new QLineEdit(QSettings().value("connect/address", "127.0.0.1:").toString(), &dialog);
  address->setPlaceholderText("127.0.0.1:40213");
  auto* token = new QLineEdit(&dialog);
  token->setEchoMode(QLineEdit::Password);
  auto* fromFile = new QPushButton(tr("Read serve.json…"), &dialog);
  connect(fromFile, &QPushButton::clicked, &dialog, [&] {
    const QString file =
        QFileDialog::getOpenFileName(&dialog, tr("A Run's serve.json"), appDataFolder("runs"),
                                     tr("serve.json (serve.json);;All files (*)"));
    if (file.isEmpty()) return;
    try {
      const nf::ServeAddress a = nf::readServeFile(file.toStdString());
      address->setText(QString::fromStdString(a.text()));
      token->setText(QString::fromStdString(a.token));
    } catch (const std::exception& e) {
      showError(tr("Cannot read serve.json"), tr("The file is not a run's serve.json."), e.what());
    }
  });
  form->addRow(tr("Address (host:port)"), address);
  form->addRow(tr("Token"), token);
  form->addRow(QString(), fromFile);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  dialog.resize(520, dialog.sizeHint().height());
  if (dialog.exec() != QDialog::Accepted) return;
  const QString text = address->text().trimmed();
  nf::ServeAddress a;
  try {
    a = nf::serveAddressOf(text.toStdString(), token->text().trimmed().toStdString());
  } catch (const std::invalid_argument& e) {
    showError(tr("Cannot connect"), tr("Give the address as host:port and the run's token."), e.what());
    return;
  }
  QSettings().setValue("connect/address", text);
  connectToRun(a);
}

void MainWindow::chooseSchedule() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Open Schedule"), QString(),
                                                    tr("Schedules (*.json);;All files (*)"));
  if (!file.isEmpty()) loadSchedule(file);
}

void MainWindow::chooseRunFolder() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Folder for the Next Run"), appDataFolder("runs"));
  m_setup->setRunFolder(folder);
}

void MainWindow::chooseDatasets() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Choose Datasets"));
  auto* form = new QFormLayout(&dialog);
  QLineEdit* edits[3];
  const QString labels[] = {tr("Training tokens"), tr("Validation tokens"), tr("Second eval set (optional)")};
  const QString values[] = {m_train, m_validation, m_alternative};
  for (int i = 0; i < 3; ++i) {
    edits[i] = new QLineEdit(values[i], &dialog);
    auto* browse = new QPushButton(tr("Browse…"), &dialog);
    connect(browse, &QPushButton::clicked, &dialog, [this, edit = edits[i]] {
      const QString f =
          QFileDialog::getOpenFileName(this, tr("Token File"), edit->text(), tr("Token files (*.bin)"));
      if (!f.isEmpty()) edit->setText(f);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edits[i], 1);
    row->addWidget(browse);
    form->addRow(labels[i], row);
  }
  form->addRow(new QLabel(tr("Token files as `normfree-cli tokenize` writes them. Leave all empty to use the "
                             "synthetic corpus made for the model."),
                          &dialog));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return;
  if (edits[0]->text().isEmpty() && edits[1]->text().isEmpty() && edits[2]->text().isEmpty()) {
    m_train = m_validation = m_alternative = QString();
    m_setup->setDataDescription(QString());
    return;
  }
  setDatasets(edits[0]->text(), edits[1]->text(), edits[2]->text());
}

QList<QCustomPlot*> MainWindow::resultPlots(QStringList* notComputed) const {
  QList<QCustomPlot*> plots;
  if (!m_session->metrics().steps.step.empty())  // the training plots once a run has data
    plots = {m_training->lossPlot(), m_training->optimizerPlot(), m_training->scalesPlot()};
  else if (notComputed)
    *notComputed << tr("Training (no run)");
  for (AnalysisPane* pane : m_panes) {
    plots += pane->resultPlots();
    if (notComputed && !pane->hasResult()) *notComputed << pane->title();
  }
  return plots;
}

void MainWindow::rebuildExportMenu() {
  m_exportMenu->clear();
  QStringList notComputed;
  for (QCustomPlot* plot : resultPlots(&notComputed)) {
    const QString name = plotTitle(plot).isEmpty() ? plot->objectName() : plotTitle(plot);
    m_exportMenu->addAction(name.left(70), this, [this, plot] { exportPlotInteractively(plot, this); });
  }
  if (!notComputed.isEmpty()) {
    m_exportMenu->addSeparator();
    m_exportMenu->addAction(tr("Not computed yet: %1").arg(notComputed.join(", ")))->setEnabled(false);
  }
}

void MainWindow::exportAllFigures(const QString& folder) {
  QDir().mkpath(folder);
  QStringList failures, notComputed;
  int written = 0;
  for (QCustomPlot* plot : resultPlots(&notComputed))
    for (const char* suffix : {"png", "svg", "pdf", "csv"}) {
      QString error;
      if (exportPlot(plot, folder + "/" + plot->objectName() + "." + suffix, &error))
        ++written;
      else
        failures << error;
    }
  if (!failures.isEmpty())
    showError(tr("Export incomplete"),
              tr("%n file(s) could not be written.", "", static_cast<int>(failures.size())),
              failures.join("\n"));
  else if (notComputed.isEmpty())
    statusBar()->showMessage(tr("Exported %1 files to %2").arg(written).arg(folder), 8000);
  else
    statusBar()->showMessage(tr("Exported %1 files to %2; not exported, as not computed yet: %3")
                                 .arg(written)
                                 .arg(folder, notComputed.join(", ")),
                             15000);
}

void MainWindow::raisePane(QWidget* paneOrView) {
  if (auto* dock = qobject_cast<QDockWidget*>(paneOrView->parentWidget())) {
    dock->show();
    dock->raise();
  }
}

void MainWindow::chooseExportAll() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Export All Figures To"));
  if (!folder.isEmpty()) exportAllFigures(folder);
}

void MainWindow::showSettings() {
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Settings"));
  auto* form = new QFormLayout(&dialog);
  auto* language = new QComboBox(&dialog);
  language->addItem("English", "en");
  language->addItem("Deutsch", "de");
  language->setCurrentIndex(m_language == "de" ? 1 : 0);
  auto* every = new QSpinBox(&dialog);
  every->setRange(0, 1'000'000);
  every->setSpecialValueText(tr("never (refresh by hand)"));
  every->setValue(QSettings().value("analysis/autoRefreshSteps", 0).toInt());
  form->addRow(tr("Language"), language);
  form->addRow(tr("Refresh visible analyses every N steps"), every);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return;
  QSettings().setValue("analysis/autoRefreshSteps", every->value());
  setLanguage(language->currentData().toString());
}

void MainWindow::setLanguage(const QString& language) {
  if (language == m_language) return;
  QApplication::removeTranslator(&m_translator);
  if (language == "de" && m_translator.load(":/i18n/normfree_de.qm"))
    QApplication::installTranslator(&m_translator);
  m_language = language == "de" ? "de" : "en";
  // Numbers formatted through QLocale (parameter counts) follow the language: 1.071.872 in German.
  QLocale::setDefault(m_language == "de" ? QLocale(QLocale::German, QLocale::Germany)
                                         : QLocale(QLocale::English, QLocale::UnitedStates));
  QSettings().setValue("language", m_language);
  // removeTranslator/installTranslator send LanguageChange to every widget: each retranslates itself.
}

void MainWindow::showGuide() {
  QMessageBox box(this);
  box.setWindowTitle(tr("The First Ten Minutes"));
  box.setTextFormat(Qt::RichText);
  box.setText(tr(
      "<ol><li>The bundled tiny GPT-2 is open, with the <b>tiny</b> removal preset on the timeline "
      "(bottom).</li>"
      "<li>Press <b>Start</b>. The first start makes the fine-tuning data (a few seconds), then training "
      "runs; "
      "the loss plot fills and a dashed line marks each removal.</li>"
      "<li>If the loss has not recovered when the next removal comes, <b>drag</b> the next events to the "
      "right "
      "on the timeline (Ctrl-click selects several; Shift-drag the first of a group changes its gap). Ctrl+Z "
      "undoes.</li>"
      "<li>Press <b>Refresh analyses</b> (F5): the panes on the right show the model as it is now, and say "
      "when "
      "they have gone stale.</li>"
      "<li>In <b>Heads</b>, click a head to see its DLA and DE per token and its attention pattern. After "
      "the "
      "last removal DLA equals DE exactly.</li>"
      "<li>Right-click any plot to export it as PNG, SVG, PDF or CSV; File › Export All Figures writes them "
      "all.</li></ol>"));
  box.exec();
}

void MainWindow::rememberRecent(const char* key, const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(key).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(key, recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildBundledMenu() {
  m_bundledMenu->clear();
  const std::pair<QString, QString> models[] = {
      {"tiny-gpt2", tr("Tiny GPT-2 — 4 layers, the default: a removal takes minutes on a laptop")},
      {"tiny-llama",
       tr("Tiny LLaMA — 4 layers with RMSNorm, rotary embeddings, SwiGLU and grouped queries")}};
  for (const auto& [name, label] : models) {
    const QString folder = bundledModelFolder(name);
    if (!folder.isEmpty()) m_bundledMenu->addAction(label, this, [this, folder] { openModelFolder(folder); });
  }
  m_bundledMenu->menuAction()->setVisible(!m_bundledMenu->isEmpty());  // an installation without resources/
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  QSettings settings;
  const QStringList models = settings.value(kRecentModels).toStringList(),
                    runs = settings.value(kRecentRuns).toStringList();
  for (const QString& folder : models)
    m_recentMenu->addAction(tr("Model: %1").arg(folder), this, [this, folder] { openModelFolder(folder); });
  if (!models.isEmpty() && !runs.isEmpty()) m_recentMenu->addSeparator();
  for (const QString& run : runs)
    m_recentMenu->addAction(tr("Run: %1").arg(run), this, [this, run] { openRun(run); });
  m_recentMenu->setEnabled((!models.isEmpty() || !runs.isEmpty()) && !m_session->busy());
}
