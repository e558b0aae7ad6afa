// The analysis panes the window shows, in the order of their docks: one list to extend with a new pane.
#pragma once
#include <QList>

class AnalysisPane;
class AnalysisRunner;
class HeadsPane;
class QWidget;

// Every pane, computing on `runner`; *heads receives the Heads pane (other views open heads in it).
QList<AnalysisPane*> makeAnalysisPanes(AnalysisRunner* runner, QWidget* parent, HeadsPane** heads);
