// The main window's docks: the removal timeline under the plots, the run setup, model and runs tabbed on
// the left, the analysis panes on the right at full height, a dock per group (analysis/AnalysisPanes.h)
// tabbed, the group's panes tabs inside it; sized on first launch, their layout and
// the window's geometry remembered between sessions and brought onto the screen the window opens on; dock tab
// titles whole, never elided.
#pragma once
#include <QList>
#include <QObject>

#include "analysis/AnalysisPanes.h"

class QDockWidget;
class QMainWindow;
class QTabWidget;
class QWidget;

class DockLayout : public QObject {
  Q_OBJECT
 public:
  DockLayout(QMainWindow* window, QWidget* timeline, QWidget* setup, QWidget* model,
             const QList<AnalysisGroup>& analyses, QWidget* runs);
  const QList<QDockWidget*>& docks() const { return m_docks; }
  void restore();  // the remembered geometry (fitted to this screen, or the first launch's) and layout
  void save();
  void shown();  // the window is shown: on first launch the docks get their sizes
  void setTitles(const QString& timeline, const QString& setup, const QString& model, const QString& runs);
  void showWholeTabTitles();
  void raise(QWidget* docked) { bringToFront(docked); }

 private:
  QDockWidget* addDock(QWidget* widget, const QString& objectName, Qt::DockWidgetArea area);
  QMainWindow* m_window;
  QWidget* m_timeline;
  QList<AnalysisGroup> m_analyses;
  QList<QTabWidget*> m_analysisTabs;  // one per group
  QList<QDockWidget*> m_docks;        // timeline, setup, model, the analysis groups, then the runs
  bool m_firstShow = true, m_layoutRestored = false;
  // The docks' layout as saveState writes it; version 1: the analyses a dock per group (version 0's layout,
  // a dock per pane, is not restored).
  static constexpr int kLayoutVersion = 1;
};
