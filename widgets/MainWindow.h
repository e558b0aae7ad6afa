// The workbench's main window: opens a model folder and shows its shape and norm state.
#pragma once
#include <QMainWindow>
#include <QStringList>

class ModelInfoView;
class QMenu;
class QAction;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Opens a model folder; on failure shows a (non-blocking) dialog naming the file and the problem,
  // keeps whatever was open before, and returns false.
  bool openModelFolder(const QString& folder);
  ModelInfoView* modelInfoView() const { return m_info; }
  QString currentFolder() const { return m_folder; }

 protected:
  void closeEvent(QCloseEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void chooseModelFolder();
  void rememberRecent(const QString& folder);
  void rebuildRecentMenu();
  void retranslate();

  ModelInfoView* m_info;
  QString m_folder;
  QMenu* m_fileMenu;
  QMenu* m_recentMenu;
  QAction* m_openAction;
  QAction* m_quitAction;
};
