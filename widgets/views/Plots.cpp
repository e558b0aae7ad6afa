#include "views/Plots.h"

#include <QBuffer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTemporaryDir>
#include <QTextStream>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "views/QCustomPlotInclude.h"

namespace {
constexpr int kExportWidth = 900, kExportHeight = 560;

QCPTextElement* titleElement(QCustomPlot* plot) {
  return qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
}

QSize exportSize(const QCustomPlot* plot) {
  // The on-screen size when it is a reasonable figure, else a standard one (e.g. a hidden dock).
  if (plot->isVisible() && plot->width() >= 400 && plot->height() >= 250) return plot->size();
  return {kExportWidth, kExportHeight};
}

}  // namespace

QCustomPlot* makePlot(QWidget* parent, const QString& exportName) {
  auto* plot = new QCustomPlot(parent);
  plot->setObjectName(exportName);
  // QCustomPlot's own minimum is its layout's (every legend entry in a row, every colour bar's labels),
  // which would widen a dock past a small screen; the legend wraps instead (below).
  plot->setMinimumSize(160, 140);
  plot->plotLayout()->insertRow(0);
  auto* title = new QCPTextElement(plot, QString(), QFont(plot->font().family(), 10, QFont::Bold));
  plot->plotLayout()->addElement(0, 0, title);
  // QCPTextElement does not wrap: before each replot, break the full title into lines that fit the width
  // (German titles run long; a narrow dock would cut them off).
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot, title] {
    const QString full = plot->property("fullTitle").toString();
    const QFontMetrics metrics(title->font());
    const int width = std::max(100, plot->width() - 40);  // margins, and rendering a little wider
    QString wrapped, line;
    for (const QString& word : full.split(' ', Qt::SkipEmptyParts)) {
      const QString candidate = line.isEmpty() ? word : line + ' ' + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(candidate) > width) {
        wrapped += line + '\n';
        line = word;
      } else {
        line = candidate;
      }
    }
    wrapped += line;
    if (title->text() != wrapped) title->setText(wrapped);
    // As many ticks as fit (~28 px a label up the side, ~70 px along the bottom; the title, legend and
    // margins take ~110 px and ~90 px): a plot squeezed by a small window must not overprint its numbers.
    // From the widget's size, which is current here (the axis rect's is the last replot's). Heat-map rows
    // keep theirs: one label per layer and head.
    if (plot->axisRectCount() == 1) {
      QCPAxisRect* rect = plot->axisRect();
      for (QCPAxis* axis : {rect->axis(QCPAxis::atLeft), rect->axis(QCPAxis::atRight)}) {
        axis->ticker()->setTickCount(std::clamp((plot->height() - 110) / 28, 2, 5));
        // A side label longer than its axis runs into the title and the axis below (a short plot's "gradient
        // norm"): left out while it does not fit — the title names both — and shown again when it does.
        if (!axis->label().isEmpty()) axis->setProperty("fullLabel", axis->label());
        const QString label = axis->property("fullLabel").toString();
        const bool fits = QFontMetrics(axis->labelFont()).horizontalAdvance(label) <= plot->height() - 110;
        axis->setLabel(fits ? label : QString());
      }
      // Along the bottom, room for the widest label the range can have ("100000" of a long run's steps),
      // and a tick count the ticker keeps to: its readable steps had put five such labels in 250 px.
      QCPAxis* bottom = rect->axis(QCPAxis::atBottom);
      const QCPRange range = bottom->range();
      const double widest = std::max(std::abs(range.lower), std::abs(range.upper));
      const int label =
          QFontMetrics(bottom->tickLabelFont()).horizontalAdvance(QString::number(widest, 'g', 6));
      bottom->ticker()->setTickCount(std::clamp((plot->width() - 90) / std::max(70, label + 24), 2, 6));
      bottom->ticker()->setTickStepStrategy(QCPAxisTicker::tssMeetTickCount);
    }
    // A legend under the title: as many entries side by side as fit the width, up to its column count.
    const int columns = plot->property("legendColumns").toInt();
    if (columns > 0) {
      QCPLegend* legend = plot->legend;
      // Entries are clipped to their text's height, which leaves out underscores (LN_mlp): 2 px more.
      for (int i = 0; i < legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i)) item->setMargins(QMargins(0, 0, 0, 2));
      auto arrange = [legend](int wrap) {
        if (legend->wrap() == wrap) return;
        legend->setWrap(wrap);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
      };
      int fit = columns;
      for (; fit > 1; --fit) {
        arrange(fit);
        if (legend->minimumOuterSizeHint().width() <= plot->width() - 8) break;
      }
      arrange(fit);
    }
  });
  plot->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(plot, &QWidget::customContextMenuRequested, plot, [plot](const QPoint& pos) {
    QMenu menu(plot);
    menu.addAction(QCustomPlot::tr("Export Figure…"), plot, [plot] { exportPlotInteractively(plot, plot); });
    menu.addAction(QCustomPlot::tr("Reset View"), plot, [plot] {
      plot->rescaleAxes();
      // A plot whose step range its view owns (the training plots: the timeline's automatic range, which
      // follows the run) has it reset there.
      if (QObject* owner = plot->property("xRangeOwner").value<QObject*>()) {
        QMetaObject::invokeMethod(owner, "resetXRange");
        plot->replot();
        return;
      }
      plot->replot();
    });
    menu.exec(plot->mapToGlobal(pos));
  });
  return plot;
}

void setPlotTitle(QCustomPlot* plot, const QString& title) {
  plot->setProperty("fullTitle", title);  // wrapped to the plot's width before each replot
  if (QCPTextElement* element = titleElement(plot)) element->setText(title);
}

QString plotTitle(const QCustomPlot* plot) { return plot->property("fullTitle").toString(); }

QCPColorGradient gradientThrough(std::initializer_list<std::pair<double, QColor>> stops) {
  QCPColorGradient g;
  g.setColorInterpolation(QCPColorGradient::ciRGB);
  for (const auto& [position, color] : stops) g.setColorStopAt(position, color);
  return g;
}

QCPColorGradient divergingGradient() {
  return gradientThrough({{0.0, QColor(0x2166ac)},
                          {0.25, QColor(0x92c5de)},
                          {0.5, QColor(0xf7f7f7)},
                          {0.75, QColor(0xf4a582)},
                          {1.0, QColor(0xb2182b)}});
}

void setSharedSymmetricRange(const std::vector<QCPColorMap*>& maps) {
  double extent = 0;
  for (QCPColorMap* map : maps) {
    QCPColorMapData* d = map->data();
    for (int x = 0; x < d->keySize(); ++x)
      for (int y = 0; y < d->valueSize(); ++y) extent = std::max(extent, std::abs(d->cell(x, y)));
  }
  if (!(extent > 0)) extent = 1;  // all zero: any range shows white
  for (QCPColorMap* map : maps) map->setDataRange(QCPRange(-extent, extent));
}

QCPColorGradient magnitudeGradient() {
  return gradientThrough({{0.0, QColor(0xfbfbfb)}, {0.5, QColor(0x6baed6)}, {1.0, QColor(0x08306b)}});
}

void setSharedMagnitudeRange(const std::vector<QCPColorMap*>& maps) {
  double top = 0;
  for (QCPColorMap* map : maps) {
    QCPColorMapData* d = map->data();
    for (int x = 0; x < d->keySize(); ++x)
      for (int y = 0; y < d->valueSize(); ++y) top = std::max(top, d->cell(x, y));
  }
  for (QCPColorMap* map : maps) map->setDataRange(QCPRange(0, top > 0 ? top : 1));
}

void enableHeatMapHoverValues(QCustomPlot* plot, const std::vector<QCPColorMap*>& maps, HeatMapLabel label) {
  plot->setMouseTracking(true);
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot, maps, label](QMouseEvent* event) {
    for (size_t i = 0; i < maps.size(); ++i) {
      int row, column;
      if (!maps[i]->keyAxis()->axisRect()->rect().contains(event->pos())) continue;
      if (!heatMapCellAt({maps[i]}, event->pos(), &row, &column)) break;
      const double value = maps[i]->data()->cell(column, row);
      const QString where = label ? label(row, column) : QStringLiteral("[%1, %2]").arg(row).arg(column);
      QToolTip::showText(event->globalPosition().toPoint(),
                         QStringLiteral("%1 · %2: %3").arg(maps[i]->name(), where).arg(value, 0, 'g', 4),
                         plot);
      return;
    }
    QToolTip::hideText();
  });
}

void limitColorBarTicks(QCPColorMap* map) {
  if (QCPColorScale* scale = map->colorScale()) {
    scale->axis()->ticker()->setTickCount(2);  // a bar a third of a pane wide has room for three labels
    scale->axis()->setNumberFormat("g");
    scale->axis()->setNumberPrecision(2);
  }
}

void placeLegendBelowTitle(QCustomPlot* plot, int columns) {
  QCPLegend* legend = plot->legend;
  if (auto* inset = plot->axisRect()->insetLayout(); inset->elements(false).contains(legend))
    inset->take(legend);
  plot->plotLayout()->insertRow(1);
  plot->plotLayout()->addElement(1, 0, legend);
  plot->plotLayout()->setRowStretchFactor(1, 0.001);  // as tall as its entries, the rest to the data
  legend->setVisible(true);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(columns);
  plot->setProperty("legendColumns", columns);  // fewer when the plot is narrow (makePlot's beforeReplot)
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(Qt::NoBrush);
  legend->setFont(QFont(plot->font().family(), 8));
  legend->setMargins(QMargins(4, 0, 4, 3));  // room for underscores (LN_mlp)
  legend->setRowSpacing(0);
  legend->setIconSize(18, 8);  // narrow entries: more side by side
  legend->setIconTextPadding(4);
}

void setLegendEntries(QCustomPlot* plot, const std::vector<QCPAbstractPlottable*>& entries) {
  plot->legend->clearItems();
  for (QCPAbstractPlottable* p : entries) p->addToLegend();
}

namespace {

// The label of a text ticker's tick at `key` ("" for another ticker or no tick there).
QString tickLabel(QCPAxis* axis, double key) {
  const auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
  if (!ticker) return {};
  const auto& ticks = ticker->ticks();
  auto it = ticks.lowerBound(key - 0.5);
  return it != ticks.end() && std::abs(it.key() - key) <= 0.5 ? QString(it.value()).replace('\n', ' ')
                                                              : QString();
}

// The error bars drawn on `bars`, if any.
QCPErrorBars* errorBarsOf(QCustomPlot* plot, QCPBars* bars) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (auto* errors = qobject_cast<QCPErrorBars*>(plot->plottable(i));
        errors && errors->dataPlottable() == bars)
      return errors;
  return nullptr;
}

// "model now · hellaswag (acc_norm) · accuracy (%) 93.8 ± 1.08" for the bar under the mouse.
QString barValueAt(QCustomPlot* plot, const QPointF& mouse) {
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
    if (!bars || !bars->visible() || bars->name().isEmpty()) continue;
    QCPAxis *keyAxis = bars->keyAxis(), *valueAxis = bars->valueAxis();
    const double key = keyAxis->pixelToCoord(mouse.x()), value = valueAxis->pixelToCoord(mouse.y());
    for (int d = 0; d < bars->dataCount(); ++d) {
      const QCPBarsData* point = bars->data()->at(d);
      if (std::abs(key - point->key) > bars->width() / 2 || value < 0 || value > point->value) continue;
      QString text = bars->name();
      if (const QString tick = tickLabel(keyAxis, point->key); !tick.isEmpty()) text += " · " + tick;
      text += QString(" · %1 %2").arg(valueAxis->label(), QString::number(point->value, 'g', 4));
      if (QCPErrorBars* errors = errorBarsOf(plot, bars); errors && d < errors->dataCount())
        text += " ± " + QString::number(errors->data()->at(d).errorPlus, 'g', 3);
      return text;
    }
  }
  return {};
}

}  // namespace

void enableHoverLabels(QCustomPlot* plot) {
  plot->setMouseTracking(true);
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot](QMouseEvent* event) {
    constexpr double kReachPixels = 14;
    double best = kReachPixels;
    QString text;
    const QPointF mouse = event->position();
    for (int i = 0; i < plot->graphCount(); ++i) {
      QCPGraph* g = plot->graph(i);
      if (!g->visible() || g->name().isEmpty() || g->dataCount() == 0) continue;
      QCPAxis *keyAxis = g->keyAxis(), *valueAxis = g->valueAxis();
      if (!keyAxis->axisRect()->rect().contains(mouse.toPoint())) continue;
      // The points around the mouse's x (keys are sorted), nearest in pixels.
      const QCPRange near(keyAxis->pixelToCoord(mouse.x() - kReachPixels),
                          keyAxis->pixelToCoord(mouse.x() + kReachPixels));
      auto it = g->data()->findBegin(std::min(near.lower, near.upper));
      const auto end = g->data()->findEnd(std::max(near.lower, near.upper));
      for (; it != end; ++it) {
        const double distance = std::hypot(keyAxis->coordToPixel(it->key) - mouse.x(),
                                           valueAxis->coordToPixel(it->value) - mouse.y());
        if (distance >= best) continue;
        best = distance;
        text = QString("%1\n%2 %3 · %4 %5")
                   .arg(g->name(), keyAxis->label(), QString::number(it->key, 'g', 5), valueAxis->label(),
                        QString::number(it->value, 'g', 4));
      }
    }
    if (text.isEmpty()) text = barValueAt(plot, mouse);
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(event->globalPosition().toPoint(), text, plot);
  });
}

std::vector<QCPColorMap*> makeHeatMapRow(QCustomPlot* plot, const std::vector<QCPColorGradient>& gradients) {
  plot->plotLayout()->remove(plot->plotLayout()->element(1, 0));
  auto* grid = new QCPLayoutGrid;
  plot->plotLayout()->addElement(1, 0, grid);
  std::vector<QCPColorMap*> maps;
  for (size_t i = 0; i < gradients.size(); ++i) {
    const int column = static_cast<int>(i);
    auto* rect = new QCPAxisRect(plot);
    grid->addElement(0, column, rect);
    rect->axis(QCPAxis::atLeft)->setRangeReversed(true);
    auto* map = new QCPColorMap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    auto* scale = new QCPColorScale(plot);
    grid->addElement(1, column, scale);
    scale->setType(QCPAxis::atBottom);
    scale->setBarWidth(8);
    map->setColorScale(scale);
    map->setGradient(gradients[i]);
    map->setInterpolate(false);
    limitColorBarTicks(map);
    auto* group = new QCPMarginGroup(plot);  // the bar as wide as its map
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    scale->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    maps.push_back(map);
  }
  return maps;
}

bool heatMapCellAt(const std::vector<QCPColorMap*>& maps, const QPoint& pos, int* row, int* column) {
  for (QCPColorMap* map : maps) {
    if (!map->keyAxis()->axisRect()->rect().contains(pos)) continue;
    const int c = static_cast<int>(std::lround(map->keyAxis()->pixelToCoord(pos.x())));
    const int r = static_cast<int>(std::lround(map->valueAxis()->pixelToCoord(pos.y())));
    if (r < 0 || r >= map->data()->valueSize() || c < 0 || c >= map->data()->keySize()) return false;
    *row = r;
    *column = c;
    return true;
  }
  return false;
}

void outlineCell(QCustomPlot* plot, const std::vector<QCPColorMap*>& maps, int row, int column) {
  for (int i = plot->itemCount() - 1; i >= 0; --i)  // the previous outline; other marks stay
    if (plot->item(i)->objectName() == QLatin1String("cellOutline")) plot->removeItem(i);
  if (row < 0) return;
  for (QCPColorMap* map : maps) {
    auto* box = new QCPItemRect(plot);
    box->setObjectName(QStringLiteral("cellOutline"));
    box->setClipAxisRect(map->keyAxis()->axisRect());
    for (QCPItemPosition* p : {box->topLeft, box->bottomRight}) p->setAxes(map->keyAxis(), map->valueAxis());
    box->topLeft->setCoords(column - 0.5, row - 0.5);
    box->bottomRight->setCoords(column + 0.5, row + 0.5);
    box->setPen(QPen(QColor(0x00c0ff), 3));
    box->setSelectable(false);
  }
}

void setPlotProvenance(QCustomPlot* plot, const QStringList& lines) {
  plot->setProperty("provenance", lines);
}

QStringList plotProvenance(const QCustomPlot* plot) { return plot->property("provenance").toStringList(); }

QCPItemStraightLine* markStep(QCustomPlot* plot, double step, const QPen& pen) {
  auto* line = new QCPItemStraightLine(plot);
  line->point1->setCoords(step, 0);
  line->point2->setCoords(step, 1);
  line->setPen(pen);
  line->setSelectable(false);
  return line;
}

QString csvField(const QString& s) {
  if (!s.contains(',') && !s.contains('"') && !s.contains('\n')) return s;
  QString quoted = s;
  quoted.replace('"', "\"\"");
  return '"' + quoted + '"';
}

QPen eventPen() { return QPen(QColor(120, 120, 120, 150), 1, Qt::DashLine); }

namespace {
// Meeting a tick count, QCustomPlot steps by 1.5, 2.5 or 3.5 below ten (at and above, its steps are whole).
class StepTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override {
    const double step = QCPAxisTicker::getTickStep(range);
    return step < 10 ? std::max(1.0, std::ceil(step)) : step;
  }
};
}  // namespace

void useStepTicks(QCPAxis* axis) { axis->setTicker(QSharedPointer<StepTicker>::create()); }

namespace {
// The densest of 1-2-5, 1-3 or 1 per decade, then every 2nd, 4th … power of ten, whose closest two labels
// are a label's height apart on the axis as last laid out.
class LogScaleTicker : public QCPAxisTicker {
 public:
  explicit LogScaleTicker(QCPAxis* axis) : m_axis(axis) {}

 protected:
  int getSubTickCount(double) override { return 0; }  // evenly spaced sub-ticks mean nothing on a log axis
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
    if (range.lower <= 0) return QCPAxisTicker::createTickVector(tickStep, range);
    const int first = static_cast<int>(std::floor(std::log10(range.lower))),
              last = static_cast<int>(std::ceil(std::log10(range.upper)));
    const bool vertical = m_axis->orientation() == Qt::Vertical;
    const QRect rect = m_axis->axisRect()->rect();
    const double perDecade =
        (vertical ? rect.height() : rect.width()) / std::log10(range.upper / range.lower);
    const double label = QFontMetrics(m_axis->tickLabelFont()).height() * (vertical ? 1.2 : 3.5);
    // Each choice: its mantissas, every how many decades, and its closest two ticks' distance in decades.
    struct Choice {
      std::vector<double> mantissas;
      int every;
      double closest;
    };
    std::vector<Choice> choices = {{{1, 2, 5}, 1, std::log10(2.0)}, {{1, 3}, 1, std::log10(3.0)}};
    for (int every = 1; every <= 64; every *= 2) choices.push_back({{1}, every, double(every)});
    const Choice* chosen = perDecade > 0 ? &choices.back() : &choices.front();  // not laid out yet: all
    for (const Choice& c : choices)
      if (c.closest * perDecade >= label) {
        chosen = &c;
        break;
      }
    QVector<double> ticks;
    for (int e = first; e <= last; ++e)
      if (e % chosen->every == 0)
        for (double m : chosen->mantissas)
          if (const double t = m * std::pow(10.0, e); range.contains(t)) ticks << t;
    // A range narrower than the chosen steps (a loss from 2.1 to 4.9 holds no 1, 2, 5 or 10): evenly
    // stepped ticks, which over so little of a decade are evenly spaced too.
    return ticks.size() >= 2 ? ticks : QCPAxisTicker::createTickVector(tickStep, range);
  }

 private:
  QCPAxis* m_axis;
};
}  // namespace

void useLogScaleTicks(QCPAxis* axis) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  axis->setTicker(QSharedPointer<LogScaleTicker>::create(axis));
}

QString plotCsv(const QCustomPlot* constPlot) {
  auto* plot = const_cast<QCustomPlot*>(constPlot);  // QCustomPlot's accessors are not const; nothing changes
  QString out;
  QTextStream s(&out);
  // Every number as it is (a step of 1,250,001, a loss to the last digit), not rounded to 6 digits as
  // QTextStream writes doubles.
  const auto n = [](double v) { return QString::number(v, 'g', QLocale::FloatingPointShortest); };
  // What the figure is of, as comment lines a reader skips (pandas: comment="#").
  s << "# " << plotTitle(plot).replace('\n', ' ') << '\n';
  for (const QString& line : plotProvenance(plot)) s << "# " << line << '\n';
  // A text ticker's categories, so that a reader can name the x values.
  if (const auto ticker = plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
      ticker && !ticker->ticks().isEmpty()) {
    QStringList categories;
    for (auto it = ticker->ticks().constBegin(); it != ticker->ticks().constEnd(); ++it)
      categories << QString("%1 = %2").arg(it.key()).arg(QString(it.value()).replace('\n', ' '));  // one line
    s << "# x: " << categories.join("; ") << '\n';
  }
  s << "series,x,y,value\n";
  for (int i = 0; i < plot->graphCount(); ++i) {
    const QCPGraph* g = plot->graph(i);
    if (!g->visible() || g->dataCount() == 0) continue;
    const QString name = g->name().isEmpty() ? QStringLiteral("series %1").arg(i + 1) : g->name();
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
      s << csvField(name) << ',' << n(it->key) << ',' << n(it->value) << ",\n";
  }
  for (int i = 0; i < plot->plottableCount(); ++i) {
    const QCPAbstractPlottable* p = plot->plottable(i);
    if (const auto* bars = qobject_cast<const QCPBars*>(p)) {
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
        s << csvField(bars->name()) << ',' << n(it->key) << ',' << n(it->value) << ",\n";
    } else if (const auto* errors = qobject_cast<const QCPErrorBars*>(p)) {
      QCPAbstractPlottable* on = const_cast<QCPErrorBars*>(errors)->dataPlottable();
      if (!on || !on->visible() || !on->interface1D()) continue;
      for (int d = 0; d < errors->dataCount() && d < on->interface1D()->dataCount(); ++d)
        s << csvField(on->name() + " ± error") << ',' << n(on->interface1D()->dataMainKey(d)) << ','
          << n(errors->data()->at(d).errorPlus) << ",\n";
    } else if (const auto* map = qobject_cast<const QCPColorMap*>(p)) {
      QCPColorMapData* d = const_cast<QCPColorMap*>(map)->data();
      for (int y = 0; y < d->valueSize(); ++y)
        for (int x = 0; x < d->keySize(); ++x) {
          double key, value;
          d->cellToCoord(x, y, &key, &value);
          s << csvField(map->name()) << ',' << n(key) << ',' << n(value) << ',' << n(d->cell(x, y)) << '\n';
        }
    }
  }
  return out;
}

bool exportPlot(const QCustomPlot* constPlot, const QString& path, QString* error) {
  auto* plot = const_cast<QCustomPlot*>(constPlot);  // rendering needs a non-const plot; nothing changes
  const QString suffix = QFileInfo(path).suffix().toLower();
  const QSize size = exportSize(plot);
  const QString title = plotTitle(plot);
  const QString provenance = plotProvenance(plot).join("; ");
  QSaveFile file(path);
  auto fail = [&](const QString& why) {
    if (error) *error = QCustomPlot::tr("Cannot write %1: %2").arg(path, why);
    return false;
  };
  if (!file.open(QIODevice::WriteOnly)) return fail(file.errorString());
  // The side labels a short plot on screen leaves out belong in the figure; the screen's fit comes back
  // after.
  for (QCPAxisRect* rect : plot->axisRects())
    for (QCPAxis* axis : rect->axes())
      if (const QString full = axis->property("fullLabel").toString(); !full.isEmpty()) axis->setLabel(full);
  struct Refit {
    QCustomPlot* plot;
    ~Refit() { plot->replot(); }
  } refit{plot};
  if (suffix == "png") {
    QImage image = plot->toPixmap(size.width(), size.height(), 2.0).toImage();
    image.setText("Title", title);
    image.setText("Software", "NormFree Workbench");
    if (!provenance.isEmpty()) image.setText("Source", provenance);
    if (!image.save(&file, "PNG")) return fail(QCustomPlot::tr("PNG encoding failed"));
  } else if (suffix == "svg") {
    QBuffer drawing;
    QSvgGenerator svg;
    svg.setOutputDevice(&drawing);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title);
    svg.setDescription(provenance.isEmpty() ? QStringLiteral("NormFree Workbench")
                                            : QStringLiteral("NormFree Workbench: ") + provenance);
    QCPPainter painter;
    if (!painter.begin(&svg)) return fail(QCustomPlot::tr("SVG painter failed"));
    plot->toPainter(&painter, size.width(), size.height());
    painter.end();
    // Heat maps are embedded as images of one pixel block per cell: drawn as blocks, not smoothed (viewers
    // interpolate images unless told otherwise; Qt's image-rendering attribute is not always written).
    QByteArray text = drawing.data();
    text.replace("<image ", "<image style=\"image-rendering:pixelated\" ");
    file.write(text);
  } else if (suffix == "pdf") {
    // QCustomPlot's PDF writer wants a file name: render next to a temporary name, then copy in.
    QTemporaryDir dir;
    const QString temporary = dir.filePath("figure.pdf");
    const QString creator = provenance.isEmpty() ? QStringLiteral("NormFree Workbench")
                                                 : QStringLiteral("NormFree Workbench: ") + provenance;
    if (!dir.isValid() ||
        !plot->savePdf(temporary, size.width(), size.height(), QCP::epAllowCosmetic, creator, title))
      return fail(QCustomPlot::tr("PDF rendering failed"));
    QFile rendered(temporary);
    if (!rendered.open(QIODevice::ReadOnly)) return fail(rendered.errorString());
    file.write(rendered.readAll());
  } else if (suffix == "csv") {
    file.write(plotCsv(plot).toUtf8());
  } else {
    file.cancelWriting();
    return fail(QCustomPlot::tr("unknown format '%1' (png, svg, pdf or csv)").arg(suffix));
  }
  if (!file.commit()) return fail(file.errorString());
  return true;
}

void exportPlotInteractively(QCustomPlot* plot, QWidget* dialogParent) {
  QString filter;
  const QString name = QFileDialog::getSaveFileName(
      dialogParent, QCustomPlot::tr("Export Figure"), plot->objectName() + ".png",
      QCustomPlot::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv)"),
      &filter);
  if (name.isEmpty()) return;
  QString error;
  if (!exportPlot(plot, name, &error))
    QMessageBox::warning(dialogParent, QCustomPlot::tr("Export failed"), error);
}
