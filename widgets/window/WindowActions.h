// The main window's actions, menus and run toolbar: made once, their texts in the language chosen, and
// enabled for what the window shows (WindowView: the one table of what each action means when). The
// window connects what they do; the menus of recent files and bundled models are filled from lists.
#pragma once
#include <QObject>
#include <QStringList>
#include <functional>

#include "logic/WindowState.h"

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;
class QToolBar;
class QUndoStack;

class WindowActions : public QObject {
  Q_OBJECT
 public:
  WindowActions(QMainWindow* window, QUndoStack* timelineEdits);
  // The View menu's dock toggles (docks are made after the actions).
  void addDockToggles(const QList<QDockWidget*>& docks);
  void retranslate();
  // Enables each action as `view` says (the menus of things to open too) and says what Resume does;
  // the autopilot switch for a removal, checked when it is on.
  void enableFor(const WindowView& view, bool removal = false, bool autopilotOn = false);

  using OpenFn = std::function<void(const QString&)>;
  // Recent model folders and runs (newest first), each opened with its function.
  void setRecent(const QStringList& models, const QStringList& runs, OpenFn openModel, OpenFn openRun);
  // The bundled models found (name → folder), each opened with openModel.
  void setBundled(const QList<std::pair<QString, QString>>& labelledFolders, OpenFn openModel);

  QAction *open, *openRun, *connectRun, *loadSchedule, *datasets, *runFolder, *exportAll, *settings, *quit;
  QAction *undo, *redo, *deleteEvents, *fitTimeline;
  QAction *start, *pause, *stop, *resume, *refresh, *autopilot;
  QAction *guide, *about;
  QMenu *fileMenu, *recentMenu, *bundledMenu, *exportMenu, *editMenu, *viewMenu, *runMenu, *helpMenu;
  QToolBar* toolbar;

 private:
  QMainWindow* m_window;
  bool m_hasRecent = false, m_canOpen = true;
};
