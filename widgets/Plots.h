// What every plot of the workbench shares: a title (part of the figure, so exports carry it), a context
// menu to export it, and export to PNG, SVG, PDF (figures for papers) and CSV (the plotted data).
#pragma once
#include <QString>

class QCustomPlot;
class QCPTextElement;
class QWidget;

// A plot with a title row; objectName (the file name "Export all figures" uses) is `exportName`.
QCustomPlot* makePlot(QWidget* parent, const QString& exportName);
void setPlotTitle(QCustomPlot* plot, const QString& title);
QString plotTitle(const QCustomPlot* plot);

// Writes the plot in the format the suffix names: .png (title in its text chunk), .svg (title element),
// .pdf (title in its metadata), .csv (series,x,y,value rows for every graph, bar set and colour map).
// Atomic: a failed export leaves no partial file. On failure returns false and says why in *error.
bool exportPlot(const QCustomPlot* plot, const QString& path, QString* error);
QString plotCsv(const QCustomPlot* plot);

// Asks for a file and exports (the context menu's and File › Export's action).
void exportPlotInteractively(QCustomPlot* plot, QWidget* dialogParent);
