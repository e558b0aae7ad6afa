#include "window/DockLayout.h"

#include <QCoreApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QScreen>
#include <QSettings>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <algorithm>

#include "analysis/AnalysisPane.h"
#include "logic/WindowPlacement.h"

DockLayout::DockLayout(QMainWindow* window, QWidget* timeline, QWidget* setup, QWidget* model,
                       const QList<AnalysisGroup>& analyses, QWidget* runs)
    : QObject(window), m_window(window), m_timeline(timeline), m_analyses(analyses) {
  window->setDockNestingEnabled(true);
  // The analysis groups' tabs above their panes' own tabs: outer over inner, read top down.
  window->setTabPosition(Qt::RightDockWidgetArea, QTabWidget::North);
  // The analysis panes take the window's full height (their heat maps and head detail need it); the
  // timeline runs under the setup and the loss plots, whose steps it shares.
  window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  addDock(timeline, "timelineDock", Qt::BottomDockWidgetArea);
  QDockWidget* setupDock = addDock(setup, "runSetupDock", Qt::LeftDockWidgetArea);
  window->tabifyDockWidget(setupDock, addDock(model, "modelDock", Qt::LeftDockWidgetArea));
  QDockWidget* first = nullptr;
  for (const AnalysisGroup& group : analyses) {
    auto* tabs = new QTabWidget;
    tabs->setDocumentMode(true);  // the dock is the frame
    for (AnalysisPane* pane : group.panes) tabs->addTab(pane, pane->title());
    m_analysisTabs << tabs;
    QDockWidget* dock = addDock(tabs, group.objectName, Qt::RightDockWidgetArea);
    if (first)
      window->tabifyDockWidget(first, dock);
    else
      first = dock;
  }
  first->raise();
  window->tabifyDockWidget(setupDock,
                           addDock(runs, "runsDock", Qt::LeftDockWidgetArea));  // last: m_docks.last()
  setupDock->raise();
}

QDockWidget* DockLayout::addDock(QWidget* widget, const QString& objectName, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(m_window);
  dock->setObjectName(objectName);  // saveState/restoreState find docks by name
  dock->setWidget(widget);
  m_window->addDockWidget(area, dock);
  m_docks << dock;
  return dock;
}

void DockLayout::restore() {
  // On the screen it opens on: a first launch no larger than it, a remembered geometry (from a larger
  // screen, or one no longer attached) brought back onto it.
  QSettings settings;
  const QRect screenArea = m_window->screen()->availableGeometry();
  const ScreenRect available{screenArea.x(), screenArea.y(), screenArea.width(), screenArea.height()};
  const bool restored = m_window->restoreGeometry(settings.value("mainWindow/geometry").toByteArray());
  const QRect remembered = m_window->geometry();
  const ScreenRect placed =
      restored ? fitWindowRect({remembered.x(), remembered.y(), remembered.width(), remembered.height()},
                               available)
               : firstWindowRect(available);
  m_window->setGeometry(placed.x, placed.y, placed.width, placed.height);
  m_layoutRestored = m_window->restoreState(settings.value("mainWindow/state").toByteArray(), kLayoutVersion);
}

void DockLayout::save() {
  QSettings settings;
  settings.setValue("mainWindow/geometry", m_window->saveGeometry());
  settings.setValue("mainWindow/state", m_window->saveState(kLayoutVersion));
}

void DockLayout::shown() {
  // First launch (no saved layout, or one of an older version): a narrow setup column, the room to the plots.
  // Docks can only be sized once the window has its geometry.
  if (m_firstShow && !m_layoutRestored)
    QTimer::singleShot(0, this, [this] {
      // Setup column ~a fifth, analyses ~45 % of the width; the timeline as tall as its rows.
      const int w = m_window->width();
      m_window->resizeDocks({m_docks[1], m_docks[3]}, {std::clamp(w / 5, 250, 340), w * 45 / 100},
                            Qt::Horizontal);
      m_window->resizeDocks({m_docks[0]}, {m_timeline->sizeHint().height() + 28}, Qt::Vertical);
    });
  QTimer::singleShot(0, this, &DockLayout::showWholeTabTitles);
  m_firstShow = false;
}

void DockLayout::setTitles(const QString& timeline, const QString& setup, const QString& model,
                           const QString& runs) {
  m_docks.last()->setWindowTitle(runs);
  const QString titles[] = {timeline, setup, model};
  for (int i = 0; i < 3; ++i) m_docks[i]->setWindowTitle(titles[i]);
  for (int g = 0; g < m_analyses.size(); ++g) {
    m_docks[3 + g]->setWindowTitle(QCoreApplication::translate("AnalysisGroup", m_analyses[g].title));
    for (int i = 0; i < m_analyses[g].panes.size(); ++i)
      m_analysisTabs[g]->setTabText(i, m_analyses[g].panes[i]->title());
  }
  showWholeTabTitles();
}

void DockLayout::showWholeTabTitles() {
  // The docks' tab bars are made by QMainWindow as docks are tabified; by default they elide titles to
  // "He…" when the area is narrow. Whole titles, with scroll buttons when they do not all fit.
  for (QTabBar* bar : m_window->findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly)) {
    bar->setElideMode(Qt::ElideNone);
    bar->setUsesScrollButtons(true);
    bar->setExpanding(false);
  }
}
