// What every plot of the workbench shares: a title (part of the figure, so exports carry it), a context
// menu to export it, and export to PNG, SVG, PDF (figures for papers) and CSV (the plotted data).
#pragma once
#include <QColor>
#include <QPen>
#include <QString>
#include <QStringList>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPColorGradient;
class QCPColorMap;
class QPoint;
class QWidget;

// A plot with a title row; objectName (the file name "Export all figures" uses) is `exportName`.
QCustomPlot* makePlot(QWidget* parent, const QString& exportName);
void setPlotTitle(QCustomPlot* plot, const QString& title);
QString plotTitle(const QCustomPlot* plot);

// A colour map through these (position in [0, 1], colour) stops, interpolated in RGB.
QCPColorGradient gradientThrough(std::initializer_list<std::pair<double, QColor>> stops);
// The diverging colour map of signed values (blue, white at zero, red): give it a range symmetric about 0.
QCPColorGradient divergingGradient();
// Sets the maps' colour range to ±(the largest |value| in any of them), so that one colour means one value
// across a comparison (DLA vs DE; activation vs attribution vs error) and white is zero.
void setSharedSymmetricRange(const std::vector<QCPColorMap*>& maps);
// The sequential colour map of magnitudes (never negative: white at zero, dark blue at the top), and one
// range [0, the largest value in any of the maps] for them all.
QCPColorGradient magnitudeGradient();
void setSharedMagnitudeRange(const std::vector<QCPColorMap*>& maps);
// Shows, while the mouse is over a cell of one of the maps, its map's name, the cell and its value; `label`
// names a cell by (row, column), e.g. "L3H5" (default "[row, column]").
using HeatMapLabel = std::function<QString(int row, int column)>;
void enableHeatMapHoverValues(QCustomPlot* plot, const std::vector<QCPColorMap*>& maps,
                              HeatMapLabel label = {});
// At most ~4 ticks on a colour bar: its labels must not run into each other under a narrow map.
void limitColorBarTicks(QCPColorMap* map);

// Moves the plot's legend out of the data, into a row of its own under the title, entries side by side.
void placeLegendBelowTitle(QCustomPlot* plot, int columns = 3);
// The legend lists exactly these, in this order (a series left out, such as a starting model that is the
// model now, is not announced).
void setLegendEntries(QCustomPlot* plot, const std::vector<class QCPAbstractPlottable*>& entries);
// Shows, while the mouse is over a plot, the nearest point of any visible named graph as a tooltip: the
// series' name, x and y (a multi-series plot then needs no legend to tell its curves apart).
void enableHoverLabels(QCustomPlot* plot);

// Replaces the plot's axis rect (below its title) by heat maps side by side, one per gradient, each with a
// horizontal colour bar below it; the value axis runs down, so row 0 is on top.
std::vector<QCPColorMap*> makeHeatMapRow(QCustomPlot* plot, const std::vector<QCPColorGradient>& gradients);
// The (row, column) cell of one of `maps` under a pixel; false when there is none.
bool heatMapCellAt(const std::vector<QCPColorMap*>& maps, const QPoint& pos, int* row, int* column);
// Outlines cell (row, column) in every map, replacing the previous outline; row < 0: no outline.
void outlineCell(QCustomPlot* plot, const std::vector<QCPColorMap*>& maps, int row, int column);

// What a figure is of — the model or run, its step, the analysis settings — as lines "key: value"; every
// export carries them (CSV: comment lines before the header; PNG: a "Source" text chunk; SVG: its
// description; PDF: its creator field).
void setPlotProvenance(QCustomPlot* plot, const QStringList& lines);
QStringList plotProvenance(const QCustomPlot* plot);
// A plot's property "xRangeOwner" (a QObject with an invokable resetXRange()): Reset View asks it for the
// x range instead of fitting the data (the training plots: the timeline's automatic range).
// A vertical line at `step` across the plot (a removal event), not selectable; the plot owns it.
class QCPItemStraightLine* markStep(QCustomPlot* plot, double step, const QPen& pen);
// The pen of the run shown's removal events in every training plot.
QPen eventPen();
// An axis of optimizer steps: ticks at whole steps only (a tick at 3.5 names no step).
void useStepTicks(class QCPAxis* axis);
// A logarithmic axis labelled at 1, 2 and 5 × each power of ten, or fewer where the plot is short: over a
// decade or two QCustomPlot's log ticker labels one power of ten only, and an evenly stepped one crowds the
// top decade (0.01, 0.0125, 0.015).
void useLogScaleTicks(class QCPAxis* axis);

// Writes the plot in the format the suffix names: .png (title in its text chunk), .svg (title element),
// .pdf (title in its metadata), .csv (series,x,y,value rows for every graph, bar set and colour map,
// after '#' lines with the title and provenance).
// Atomic: a failed export leaves no partial file. On failure returns false and says why in *error.
bool exportPlot(const QCustomPlot* plot, const QString& path, QString* error);
QString plotCsv(const QCustomPlot* plot);
// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break.
QString csvField(const QString& text);

// Asks for a file and exports (the context menu's and File › Export's action).
void exportPlotInteractively(QCustomPlot* plot, QWidget* dialogParent);
