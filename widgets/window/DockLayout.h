// The main window's docks: the removal timeline under the plots, the run setup, model and runs tabbed on
// the left, the analysis panes tabbed on the right at full height; sized on first launch, their layout and
// the window's geometry remembered between sessions and brought onto the screen the window opens on; dock tab
// titles whole, never elided.
#pragma once
#include <QList>
#include <QObject>

class AnalysisPane;
class QDockWidget;
class QMainWindow;
class QWidget;

class DockLayout : public QObject {
  Q_OBJECT
 public:
  DockLayout(QMainWindow* window, QWidget* timeline, QWidget* setup, QWidget* model,
             const QList<AnalysisPane*>& panes, QWidget* runs);
  const QList<QDockWidget*>& docks() const { return m_docks; }
  void restore();  // the remembered geometry (fitted to this screen, or the first launch's) and layout
  void save();
  void shown();  // the window is shown: on first launch the docks get their sizes
  void setTitles(const QString& timeline, const QString& setup, const QString& model, const QString& runs);
  void showWholeTabTitles();
  void raise(QWidget* docked);  // brings the dock tab holding it to the front

 private:
  QDockWidget* addDock(QWidget* widget, const QString& objectName, Qt::DockWidgetArea area);
  QMainWindow* m_window;
  QWidget* m_timeline;
  QList<AnalysisPane*> m_panes;
  QList<QDockWidget*> m_docks;  // timeline, setup, model, the panes, then the runs
  bool m_firstShow = true;
};
