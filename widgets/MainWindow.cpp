#include "MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

#include "ModelInfoView.h"
#include "io/model_folder.h"

namespace {
constexpr int kMaxRecent = 8;
const char* kRecentKey = "recentModelFolders";
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  m_info = new ModelInfoView(this);
  setCentralWidget(m_info);
  setWindowIcon(QIcon(":/normfree.svg"));

  m_fileMenu = menuBar()->addMenu(QString());
  m_openAction = m_fileMenu->addAction(QString(), this, &MainWindow::chooseModelFolder);
  m_openAction->setShortcut(QKeySequence::Open);
  m_recentMenu = m_fileMenu->addMenu(QString());
  m_fileMenu->addSeparator();
  m_quitAction = m_fileMenu->addAction(QString(), this, &QWidget::close);
  m_quitAction->setShortcut(QKeySequence::Quit);

  retranslate();
  rebuildRecentMenu();
  QSettings settings;
  if (!restoreGeometry(settings.value("mainWindow/geometry").toByteArray())) resize(900, 640);
}

bool MainWindow::openModelFolder(const QString& folder) {
  try {
    nf::ModelSummary summary = nf::inspectModelFolder(QDir::cleanPath(folder).toStdString());
    m_info->setSummary(summary);
    m_folder = folder;
    setWindowTitle(tr("%1 — NormFree Workbench").arg(QDir(folder).dirName()));
    statusBar()->showMessage(tr("Opened %1").arg(folder), 5000);
    rememberRecent(folder);
    return true;
  } catch (const std::exception& e) {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open model folder"),
                                tr("The model folder could not be opened."), QMessageBox::Ok, this);
    box->setInformativeText(QString::fromStdString(e.what()));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();  // window-modal, does not block the event loop
    statusBar()->showMessage(QString::fromStdString(e.what()), 10000);
    return false;
  }
}

void MainWindow::chooseModelFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Model Folder"), m_folder);
  if (!folder.isEmpty()) openModelFolder(folder);
}

void MainWindow::rememberRecent(const QString& folder) {
  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  recent.removeAll(folder);
  recent.prepend(folder);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(kRecentKey, recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = QSettings().value(kRecentKey).toStringList();
  for (const QString& folder : recent)
    m_recentMenu->addAction(folder, this, [this, folder] { openModelFolder(folder); });
  m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings().setValue("mainWindow/geometry", saveGeometry());
  event->accept();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QMainWindow::changeEvent(event);
}

void MainWindow::retranslate() {
  if (m_folder.isEmpty())
    setWindowTitle(tr("NormFree Workbench"));
  else
    setWindowTitle(tr("%1 — NormFree Workbench").arg(QDir(m_folder).dirName()));
  m_fileMenu->setTitle(tr("&File"));
  m_openAction->setText(tr("&Open Model Folder…"));
  m_recentMenu->setTitle(tr("Open &Recent"));
  m_quitAction->setText(tr("&Quit"));
}
