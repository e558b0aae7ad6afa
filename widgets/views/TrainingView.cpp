#include "views/TrainingView.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QSlider>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/TrackedPlot.h"

namespace {
enum LossGraph { CeRaw, AuxRaw, TotalRaw, Ce, Aux, Total };
const QColor kCe(0x1f77b4), kAux(0xff7f0e), kTotal(0x2ca02c);
const QColor kEvalColors[] = {QColor(0xd62728), QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2)};
constexpr int kMinPlotHeight = 80;  // pixels: title, axis and a few ticks still read
// The stacked plots' shares of the column: the scales plot needs room for its legend and 13 sites.
const std::vector<int> kStackedShares = {4, 2, 4, 4};

// The sites' kinds, in the timeline's colours; within a kind, deeper layers are drawn darker.
const char* const kSiteKinds[] = {"LN_mlp", "LN_qk", "LN_v", "LN_f"};
const QColor kKindColors[] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728)};

QColor siteColor(const std::string& site) {
  const std::string kind = site.substr(0, site.find('.'));
  const size_t dot = site.find('.');
  const int layer = dot == std::string::npos ? 0 : std::atoi(site.c_str() + dot + 1);
  for (int k = 0; k < 4; ++k)
    if (kind == kSiteKinds[k]) return kKindColors[k].lighter(std::max(55, 140 - 22 * layer));
  return QColor(0x7f7f7f);
}

void addGraph(QCustomPlot* plot, const QColor& color, double width, Qt::PenStyle style = Qt::SolidLine,
              QCPAxis* valueAxis = nullptr) {
  QCPGraph* g = valueAxis ? plot->addGraph(plot->xAxis, valueAxis) : plot->addGraph();
  g->setPen(QPen(color, width, style));
}
}  // namespace

TrainingView::TrainingView(QWidget* parent) : QWidget(parent) {
  m_loss = makePlot(this, "training_loss");
  m_optimizer = makePlot(this, "training_optimizer");
  m_scales = makePlot(this, "training_scales");
  for (QCustomPlot* plot : {m_loss, m_optimizer, m_scales}) useStepTicks(plot->xAxis);
  m_tracked = new TrackedPlot(this);
  m_tracked->hide();  // until the run shown tracks an analysis (showTracked)
  // Four plots share the central column's height: with makePlot's minimum each, a run that tracks an
  // analysis pushed the timeline and the status bar below a 720-pixel screen. Where there is room, the
  // splitter's proportions (below) decide.
  for (QCustomPlot* plot : {m_loss, m_optimizer, m_scales, m_tracked->plot()})
    plot->setMinimumHeight(kMinPlotHeight);
  m_logScale = new QCheckBox(this);
  m_logScale->setChecked(false);
  m_smoothing = new QSlider(Qt::Horizontal, this);
  m_smoothing->setRange(0, 99);
  m_smoothing->setValue(static_cast<int>(std::lround(100 * Smoother().smoothing)));
  m_smoothing->setMaximumWidth(160);
  m_smoothing->setMinimumWidth(50);  // the central column may be narrow (1280-pixel screens)
  m_smoothingLabel = new QLabel(this);
  connect(m_smoothing, &QSlider::valueChanged, this, [this] { resmooth(); });

  for (int i = 0; i < 3; ++i) {
    QColor faint = (i == 0 ? kCe : i == 1 ? kAux : kTotal);
    faint.setAlpha(70);
    addGraph(m_loss, faint, 1);
  }
  addGraph(m_loss, kCe, 2);
  addGraph(m_loss, kAux, 2);
  addGraph(m_loss, kTotal, 2);
  for (int i = CeRaw; i <= TotalRaw; ++i) m_loss->graph(i)->removeFromLegend();  // named for the CSV
  placeLegendBelowTitle(m_loss, 4);

  addGraph(m_optimizer, QColor(0x17becf), 2);
  m_optimizer->yAxis2->setVisible(true);
  addGraph(m_optimizer, QColor(0x555555), 1.2, Qt::SolidLine, m_optimizer->yAxis2);
  m_optimizer->legend->setVisible(false);  // too short for a legend: the axis labels take the curves' colours
  // Each axis in its curve's colour, its numbers too: a short plot leaves the side labels out.
  m_optimizer->yAxis->setLabelColor(QColor(0x17becf));
  m_optimizer->yAxis->setTickLabelColor(QColor(0x17becf));
  m_optimizer->yAxis2->setLabelColor(QColor(0x555555));
  m_optimizer->yAxis2->setTickLabelColor(QColor(0x555555));
  placeLegendBelowTitle(m_scales, 5);  // one entry per kind of site; hovering a curve names its site
  addSiteKindLegend();

  for (QCustomPlot* plot : {m_loss, m_optimizer, m_scales}) {
    enableHoverLabels(plot);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
  }
  for (QCustomPlot* plot : plots()) {
    plot->setProperty("xRangeOwner", QVariant::fromValue<QObject*>(this));
    connect(plot, &QCustomPlot::afterReplot, this, &TrainingView::alignSteps);
    connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this](const QCPRange& r) {
      if (m_settingRange) return;
      setXRange(r.lower, r.upper);
      Q_EMIT xRangeChanged(r.lower, r.upper);
    });
  }
  connect(m_logScale, &QCheckBox::toggled, this, [this](bool on) {
    if (on) {
      useLogScaleTicks(m_loss->yAxis);  // a loss spans a decade or so: 1, 2, 5, not one label
    } else {
      m_loss->yAxis->setScaleType(QCPAxis::stLinear);
      m_loss->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    replotAll();
  });

  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->addWidget(m_loss);
  m_splitter->addWidget(m_optimizer);
  m_splitter->addWidget(m_scales);
  m_splitter->addWidget(m_tracked);
  m_splitter->installEventFilter(this);
  connect(m_splitter, &QSplitter::splitterMoved, this, [this] { m_sizedByHand = true; });
  proportion(kStackedShares);
  m_tabs = new QTabWidget(this);
  m_tabs->setDocumentMode(true);
  m_tabs->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* header = new QHBoxLayout;
  header->addWidget(m_logScale);
  header->addStretch(1);
  header->addWidget(m_smoothingLabel);
  header->addWidget(m_smoothing);
  layout->addLayout(header);
  layout->addWidget(m_splitter);
  retranslate();
}

// The splitter's widgets in these proportions, now and whenever it is resized, until the user drags a
// handle: sizes set before the first layout (the splitter 30 px tall) were not kept as it grew (a
// 2:1 compact column came out 157:268).
void TrainingView::proportion(const std::vector<int>& shares) {
  m_shares = shares;
  m_sizedByHand = false;
  for (std::size_t i = 0; i < shares.size(); ++i)
    m_splitter->setStretchFactor(static_cast<int>(i), shares[i]);
  applyShares();
}

void TrainingView::applyShares() {
  int total = 0;
  for (int share : m_shares) total += share;
  const int height = std::max(m_splitter->height(), total);
  QList<int> sizes;
  for (int share : m_shares) sizes << height * share / total;
  m_splitter->setSizes(sizes);
}

bool TrainingView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_splitter && event->type() == QEvent::Resize && !m_sizedByHand) applyShares();
  return QWidget::eventFilter(watched, event);
}

void TrainingView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  arrange();
}

// Compact below ~150 px a plot: a title, a legend row, the axis and its labels leave a plot shorter than
// that a strip of 10–30 px for its curves (the four plots on a 720-pixel screen).
void TrainingView::arrange() {
  constexpr int kComfortablePlotHeight = 150, kHeader = 30;
  const int needed = (3 + (m_showsTracked ? 1 : 0)) * kComfortablePlotHeight + kHeader;
  // Back to stacked only with room to spare, so that a resize by a few pixels does not flip it to and fro.
  const bool compact = m_compact ? height() < needed + 60 : height() < needed;
  if (compact == m_compact) return;
  m_compact = compact;
  QWidget* lower[] = {m_optimizer, m_scales, m_tracked};
  if (compact) {
    for (QWidget* w : lower) m_tabs->addTab(w, QString());  // takes them from the splitter
    m_splitter->addWidget(m_tabs);
    proportion({2, 1});  // the loss plot first: its legend (German, runs compared) takes rows of its own
    m_tabs->show();
  } else {
    m_tabs->clear();  // removes the tabs; the splitter takes the plots back
    for (int i = 0; i < 3; ++i) {
      m_splitter->insertWidget(1 + i, lower[i]);
      lower[i]->show();  // the tabs had hidden those not in front (the tracked plot: showTracked below)
    }
    m_tabs->hide();
    m_tabs->setParent(this);
    proportion(kStackedShares);
  }
  showTracked(m_showsTracked);
  titleTabs();
}

void TrainingView::titleTabs() {
  if (!m_compact) return;
  m_tabs->setTabText(m_tabs->indexOf(m_optimizer), tr("Learning rate"));
  m_tabs->setTabText(m_tabs->indexOf(m_scales), tr("Norm scales"));
  m_tabs->setTabText(m_tabs->indexOf(m_tracked), tr("Tracked"));
}

// The tracked plot shown while the run shown (or one compared) tracks something; a fourth plot may make
// the column too short for them one under another.
void TrainingView::showTrackedIfAny() {
  showTracked(m_tracked->hasData());
  arrange();
}

void TrainingView::showTracked(bool shown) {
  m_showsTracked = shown;
  if (m_compact) {
    m_tabs->setTabVisible(m_tabs->indexOf(m_tracked), shown);
  } else {
    m_tracked->setVisible(shown);
  }
}

void TrainingView::addSiteKindLegend() {
  // Legend-only graphs without data: the kinds' colours (a legend of 2 × 13 site curves would not fit).
  for (int k = 0; k < 4; ++k) {
    addGraph(m_scales, kKindColors[k], 2);
    m_scales->graph(m_scales->graphCount() - 1)->setName(QString::fromLatin1(kSiteKinds[k]));
  }
  addGraph(m_scales, QColor(0x555555), 2, Qt::DashLine);
  m_frozenLegend = m_scales->graph(m_scales->graphCount() - 1);
  m_frozenLegend->setName(tr("frozen"));
}

std::vector<QCustomPlot*> TrainingView::plots() const {
  return {m_loss, m_optimizer, m_scales, m_tracked->plot()};
}

int TrainingView::plottedSteps() const { return m_loss->graph(CeRaw)->dataCount(); }

void TrainingView::showMetrics(const MetricsStore& m) {
  // Only what arrived since the last call is added (a long GPT-2 run has ~10⁵ points per site): the
  // plots are rebuilt only when the store was (a followed run rolled back or resumed from an earlier step).
  const bool rebuilt = m.generation != m_generation;
  if (rebuilt) {
    m_generation = m.generation;
    for (int i = CeRaw; i <= Total; ++i) m_loss->graph(i)->data()->clear();
    for (int i = 0; i < 2; ++i) m_optimizer->graph(i)->data()->clear();
    m_scales->clearGraphs();
    addSiteKindLegend();
    m_scaleGraphs.clear();
    m_plotted = 0;
    m_smoothers.fill(Smoother{smoothing()});
    m_hasAux = false;
    for (QCustomPlot* plot : plots()) {
      plot->axisRect()->setMinimumMargins(QMargins());  // aligned again for the new labels
      if (m.steps.step.empty())                         // no run: no value range of an earlier one
        for (QCPAxis* axis : {plot->yAxis, plot->yAxis2}) axis->setRange(0, 1);
    }
  }
  const MetricsStore::Steps& t = m.steps;
  for (size_t i = m_plotted; i < t.step.size(); ++i) {
    const double x = t.step[i];
    m_loss->graph(CeRaw)->addData(x, t.ce[i]);
    m_loss->graph(AuxRaw)->addData(x, t.aux[i]);
    m_loss->graph(TotalRaw)->addData(x, t.loss[i]);
    m_loss->graph(Ce)->addData(x, m_smoothers[0].next(t.ce[i]));
    m_loss->graph(Aux)->addData(x, m_smoothers[1].next(t.aux[i]));
    m_loss->graph(Total)->addData(x, m_smoothers[2].next(t.loss[i]));
    m_optimizer->graph(0)->addData(x, t.lr[i]);
    m_optimizer->graph(1)->addData(x, t.gradNorm[i]);
    m_hasAux = m_hasAux || t.aux[i] > 0;
  }
  m_plotted = t.step.size();
  for (int g : {Aux, AuxRaw, Total, TotalRaw}) m_loss->graph(g)->setVisible(m_hasAux);

  // One scatter graph per evaluation set, created as sets appear (a handful of points: set whole).
  std::size_t i = 0;
  for (const auto& [name, points] : m.evals) {
    if (m_evalGraphs.size() <= i) {
      // Evaluations as markers (joined by a dashed line) on the training loss's own axis, so the two compare
      // by eye (a set far above the training loss is the finding, not a scale problem: the log axis shows
      // both).
      QCPGraph* g = m_loss->addGraph();
      g->setLineStyle(QCPGraph::lsLine);
      const QColor c = kEvalColors[i % 4];
      g->setPen(QPen(c, 1, Qt::DashLine));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, c, Qt::white, 7));
      m_evalGraphs.push_back(g);
    }
    QCPGraph* g = m_evalGraphs[i];
    g->setName(tr("eval %1").arg(QString::fromStdString(name)));
    QVector<double> x, y;
    for (const auto& p : points) {
      x << p.step;
      y << p.loss;
    }
    g->setData(x, y, true);
    ++i;
  }
  for (; m_evalGraphs.size() > i; m_evalGraphs.pop_back()) m_loss->removeGraph(m_evalGraphs.back());

  // Applied events: a dashed vertical line each.
  if (rebuilt || m.events.size() < m_eventsDrawn) {
    for (QCustomPlot* plot : {m_loss, m_scales}) plot->clearItems();
    m_eventsDrawn = 0;
    drawComparison();  // its events went with the items
  }
  for (; m_eventsDrawn < m.events.size(); ++m_eventsDrawn) {
    const double x = static_cast<double>(m.events[m_eventsDrawn].step);
    for (QCustomPlot* plot : {m_loss, m_scales}) markStep(plot, x, eventPen());
  }

  // Scales: per site a tracked and a frozen graph, made when the site first appears.
  for (const auto& [name, points] : m.scales) {
    SiteGraphs& graphs = m_scaleGraphs[name];
    if (!graphs.tracked) {
      addGraph(m_scales, siteColor(name), 1);
      graphs.tracked = m_scales->graph(m_scales->graphCount() - 1);
      addGraph(m_scales, siteColor(name), 2, Qt::DashLine);
      graphs.frozen = m_scales->graph(m_scales->graphCount() - 1);
      graphs.tracked->removeFromLegend();
      graphs.frozen->removeFromLegend();
    }
    graphs.tracked->setName(tr("%1 (tracked)").arg(QString::fromStdString(name)));
    graphs.frozen->setName(tr("%1 (frozen)").arg(QString::fromStdString(name)));
    for (size_t k = graphs.plotted; k < points.size(); ++k) {
      if (!std::isnan(points[k].tracked)) graphs.tracked->addData(points[k].step, points[k].tracked);
      if (!std::isnan(points[k].frozen)) graphs.frozen->addData(points[k].step, points[k].frozen);
    }
    graphs.plotted = points.size();
  }
  // No run: the loss plot says so instead of showing bare axes.
  if (t.step.empty() && !m_noRun) {
    m_noRun = new QCPItemText(m_loss);
    m_noRun->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_noRun->position->setCoords(0.5, 0.45);
    m_noRun->setColor(QColor(0x777777));
    m_noRun->setSelectable(false);
    m_noRun->setClipToAxisRect(false);     // a narrow plot (German, a 1280-pixel screen) had cut its lines
    m_noRun->setBrush(QBrush(Qt::white));  // legible where it reaches over the axis labels
    m_noRun->setPadding(QMargins(4, 2, 4, 2));
    m_noRun->setFont(QFont(m_loss->font().family(), 8));
    m_noRun->setText(noRunText());
  } else if (!t.step.empty() && m_noRun) {
    m_loss->removeItem(m_noRun);
  }
  m_tracked->showMetrics(m);
  showTrackedIfAny();
  replotAll();
}

double TrainingView::smoothing() const { return m_smoothing->value() / 100.0; }
void TrainingView::setSmoothing(double weight) {
  m_smoothing->setValue(static_cast<int>(std::lround(100 * weight)));
}

void TrainingView::setComparison(std::vector<std::shared_ptr<const ComparedRun>> runs) {
  m_compared = std::move(runs);
  m_tracked->setComparison(m_compared);
  showTrackedIfAny();
  drawComparison();
  replotAll();
}

void TrainingView::drawComparison() {
  for (QCPGraph* g : m_comparisonGraphs) m_loss->removeGraph(g);
  m_comparisonGraphs.clear();
  for (const QPointer<QCPAbstractItem>& item : m_comparisonItems)
    if (item) item->parentPlot()->removeItem(item);
  m_comparisonItems.clear();
  for (const auto& run : m_compared) {
    const MetricsStore& m = run->metrics;
    QCPGraph* ce = m_loss->addGraph();
    ce->setPen(QPen(run->colour, 1.6));
    ce->setName(tr("%1: cross-entropy").arg(run->name));
    Smoother smoother{smoothing()};  // smoothed as the run shown is, so the two compare
    for (std::size_t k = 0; k < m.steps.step.size(); ++k)
      ce->addData(m.steps.step[k], smoother.next(m.steps.ce[k]));
    m_comparisonGraphs.push_back(ce);
    for (const auto& [file, points] : m.evals) {
      QCPGraph* g = m_loss->addGraph();
      g->setPen(QPen(run->colour, 1, Qt::DashLine));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, run->colour, Qt::white, 7));
      g->setName(tr("%1: eval %2").arg(run->name, QString::fromStdString(file)));
      g->removeFromLegend();  // the loss plot's legend is full already: hover names it
      for (const auto& p : points) g->addData(p.step, p.loss);
      m_comparisonGraphs.push_back(g);
    }
    QColor colour = run->colour;
    colour.setAlpha(150);
    for (const MetricsStore::AppliedEvent& e : m.events)
      for (QCustomPlot* plot : {m_loss, m_scales})
        m_comparisonItems.emplace_back(
            markStep(plot, static_cast<double>(e.step), QPen(colour, 1, Qt::DotLine)));
  }
}

void TrainingView::resmooth() {
  m_smoothingLabel->setText(tr("Smoothing %1").arg(smoothing(), 0, 'f', 2));
  for (int i = 0; i < 3; ++i) {
    m_smoothers[i] = Smoother{smoothing()};
    QCPGraph* smoothed = m_loss->graph(Ce + i);
    smoothed->data()->clear();
    for (const QCPGraphData& point : *m_loss->graph(CeRaw + i)->data())
      smoothed->addData(point.key, m_smoothers[i].next(point.value));
  }
  drawComparison();
  replotAll();
}

void TrainingView::setProvenance(const QStringList& lines) {
  for (QCustomPlot* plot : plots()) setPlotProvenance(plot, lines);
}

void TrainingView::resetXRange() { Q_EMIT xRangeResetRequested(); }

void TrainingView::setXRange(double first, double last) {
  m_settingRange = true;
  for (QCustomPlot* plot : plots()) plot->xAxis->setRange(first, last);
  m_settingRange = false;
  replotAll();
}

void TrainingView::alignSteps() {
  // The three plots share the step axis: one step at one x in each. Their axis labels differ in width (and
  // only the optimizer plot has a right axis), so each takes the widest left and right margins of the three.
  int left = 0, right = 0;
  for (QCustomPlot* plot : plots()) {
    left = std::max(left, plot->axisRect()->margins().left());
    right = std::max(right, plot->axisRect()->margins().right());
  }
  for (QCustomPlot* plot : plots()) {
    const QMargins aligned(left, 0, right, 0);
    if (plot->axisRect()->minimumMargins() == aligned) continue;
    plot->axisRect()->setMinimumMargins(aligned);  // margins only grow to it: this settles after one pass
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void TrainingView::replotAll() {
  // The y-axes follow the visible steps.
  for (QCustomPlot* plot : plots()) {
    for (QCPAxis* axis : {plot->yAxis, plot->yAxis2}) {
      bool first = true;
      for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph* g = plot->graph(i);
        if (!g->visible() || g->dataCount() == 0 || g->valueAxis() != axis) continue;
        g->rescaleValueAxis(!first, true);
        first = false;
      }
      // A little room above and below: a point on the edge (an evaluation far above the training loss)
      // keeps its whole marker.
      if (!first && axis->scaleType() == QCPAxis::stLinear) axis->scaleRange(1.08);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

QString TrainingView::noRunText() {
  return tr("No run yet.\nStart trains the setup on the left;\nFile › Open Run follows a run.");
}

void TrainingView::retranslate() {
  if (m_noRun) m_noRun->setText(noRunText());
  setPlotTitle(m_loss, tr("Training loss"));
  setPlotTitle(m_optimizer, tr("Learning rate and gradient norm"));
  setPlotTitle(m_scales, tr("Norm scale per site"));
  if (m_frozenLegend) m_frozenLegend->setName(tr("frozen"));
  m_loss->xAxis->setLabel(tr("optimizer step"));
  m_loss->yAxis->setLabel(tr("loss (nats)"));
  m_loss->graph(CeRaw)->setName(tr("cross-entropy (raw)"));
  m_loss->graph(AuxRaw)->setName(tr("auxiliary loss (raw)"));
  m_loss->graph(TotalRaw)->setName(tr("total (raw)"));
  m_loss->graph(Ce)->setName(tr("cross-entropy"));
  m_loss->graph(Aux)->setName(tr("auxiliary loss"));
  m_loss->graph(Total)->setName(tr("total"));
  m_optimizer->xAxis->setLabel(tr("optimizer step"));
  m_optimizer->yAxis->setLabel(tr("learning rate"));
  m_optimizer->yAxis2->setLabel(tr("gradient norm"));
  m_optimizer->graph(0)->setName(tr("learning rate"));
  m_optimizer->graph(1)->setName(tr("gradient norm (before clipping)"));
  m_scales->xAxis->setLabel(tr("optimizer step"));
  m_scales->yAxis->setLabel(tr("scale s"));
  titleTabs();
  m_logScale->setText(tr("Logarithmic loss axis"));
  m_smoothingLabel->setText(tr("Smoothing %1").arg(smoothing(), 0, 'f', 2));
  m_smoothing->setToolTip(
      tr("how much the loss curves are smoothed (an exponential moving average, as "
         "TensorBoard's); the raw values stay as faint curves, hover shows them"));
  replotAll();
}

void TrainingView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}
