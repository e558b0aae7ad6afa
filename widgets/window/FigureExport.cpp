#include "window/FigureExport.h"

#include <QDir>
#include <QMenu>

#include "analysis/AnalysisPane.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/TrackedPlot.h"
#include "views/TrainingView.h"

QList<QCustomPlot*> FigureExport::resultPlots(bool runShown, QStringList* notComputed) const {
  QList<QCustomPlot*> plots;
  if (runShown && m_training->plottedSteps() > 0) {  // the training plots once a run has data
    plots = {m_training->lossPlot(), m_training->optimizerPlot(), m_training->scalesPlot()};
    if (m_training->trackedPlot()->hasData()) plots << m_training->trackedPlot()->plot();
  } else if (notComputed) {
    *notComputed << tr("Training (no run)");
  }
  for (AnalysisPane* pane : m_panes) {
    plots += pane->resultPlots();
    if (notComputed && !pane->hasResult()) *notComputed << pane->title();
  }
  return plots;
}

void FigureExport::fillMenu(QMenu* menu, bool runShown, QWidget* dialogParent) const {
  menu->clear();
  QStringList notComputed;
  for (QCustomPlot* plot : resultPlots(runShown, &notComputed)) {
    const QString name = plotTitle(plot).isEmpty() ? plot->objectName() : plotTitle(plot);
    menu->addAction(name.left(70), menu,
                    [plot, dialogParent] { exportPlotInteractively(plot, dialogParent); });
  }
  for (const AnalysisPane* pane : m_panes)
    for (const AnalysisPane::PaintedFigure& figure : pane->resultFigures())
      menu->addAction(figure.title, menu,
                      [figure, dialogParent] { AnalysisPane::exportInteractively(figure, dialogParent); });
  if (!notComputed.isEmpty()) {
    menu->addSeparator();
    menu->addAction(tr("Not computed yet: %1").arg(notComputed.join(", ")))->setEnabled(false);
  }
}

FigureExport::Written FigureExport::exportAll(const QString& folder, bool runShown) const {
  Written w;
  QDir().mkpath(folder);
  for (QCustomPlot* plot : resultPlots(runShown, &w.notComputed))
    for (const char* suffix : {"png", "svg", "pdf", "csv"}) {
      QString error;
      if (exportPlot(plot, folder + "/" + plot->objectName() + "." + suffix, &error))
        ++w.files;
      else
        w.failures << error;
    }
  for (const AnalysisPane* pane : m_panes)
    for (const AnalysisPane::PaintedFigure& figure : pane->resultFigures())
      for (const char* suffix : {"png", "svg", "csv"}) {
        QString error;
        if (figure.write(folder + "/" + figure.name + "." + suffix, &error))
          ++w.files;
        else
          w.failures << error;
      }
  return w;
}

QString FigureExport::Written::summary(const QString& folder) const {
  if (!failures.isEmpty())
    return tr("%n file(s) could not be written.", "", static_cast<int>(failures.size()));
  if (notComputed.isEmpty()) return tr("Exported %1 files to %2").arg(files).arg(folder);
  return tr("Exported %1 files to %2; not exported, as not computed yet: %3")
      .arg(files)
      .arg(folder, notComputed.join(", "));
}
