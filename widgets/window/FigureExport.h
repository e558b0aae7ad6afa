// The window's figures as File › Export sees them: the training plots once a run has data (the tracked
// analyses' while it tracks some), and each analysis pane's once computed (the rest named as not computed
// yet); every plot exported to PNG, SVG, PDF and CSV into a folder, each carrying its provenance
// (views/Plots.h), and the figures a pane paints by hand (the Tokens pane's) to PNG, SVG and CSV.
#pragma once
#include <QCoreApplication>
#include <QList>
#include <QStringList>

class AnalysisPane;
class QCustomPlot;
class QMenu;
class QWidget;
class TrainingView;

class FigureExport {
  Q_DECLARE_TR_FUNCTIONS(FigureExport)

 public:
  FigureExport(TrainingView* training, QList<AnalysisPane*> panes) : m_training(training), m_panes(panes) {}
  // The plots that show results; the panes (and the training plots) not computed yet in *notComputed.
  QList<QCustomPlot*> resultPlots(bool runShown, QStringList* notComputed) const;
  // File › Export Figure: one entry per result plot, then what is not computed yet.
  void fillMenu(QMenu* menu, bool runShown, QWidget* dialogParent) const;

  struct Written {
    int files = 0;
    QStringList failures, notComputed;
    QString summary(const QString& folder) const;  // how many written, what failed or was not computed
  };
  Written exportAll(const QString& folder, bool runShown) const;

 private:
  TrainingView* m_training;
  QList<AnalysisPane*> m_panes;
};
