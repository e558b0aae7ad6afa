// The analysis panes the window shows, and the groups its docks hold them in: one list to extend with a new
// pane, one to place it in a group.
#pragma once
#include <QList>
#include <QString>

class AnalysisPane;
class AnalysisRunner;
class HeadsPane;
class QWidget;

// Every pane, computing on `runner`; *heads receives the Heads pane (other views open heads in it).
QList<AnalysisPane*> makeAnalysisPanes(AnalysisRunner* runner, QWidget* parent, HeadsPane** heads);

// A dock of panes, tabbed inside it: nine panes as tabs of one dock did not fit its tab bar even on a
// 1920-pixel screen; three groups of two to four do, at 1280 pixels and in German.
struct AnalysisGroup {
  QString objectName;  // the dock's (saveState finds docks by it)
  const char* title;   // English; translated in the context "AnalysisGroup"
  QList<AnalysisPane*> panes;
};
// makeAnalysisPanes' panes in their groups, each pane in exactly one.
QList<AnalysisGroup> groupAnalysisPanes(const QList<AnalysisPane*>& panes);

// Brings `widget` into view wherever it sits: each tab holding it made current, each dock shown and raised.
void bringToFront(QWidget* widget);
