#include "views/TrackedPlot.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"
#include "views/TrackedAnalysisText.h"

namespace {
const QColor kValue(0x1f77b4);
}  // namespace

TrackedPlot::TrackedPlot(QWidget* parent) : QWidget(parent) {
  m_choice = new QComboBox(this);
  m_choice->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_choice->setMinimumContentsLength(12);  // the central column may be narrow: the list shows whole titles
  m_choice->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  m_cost = new QLabel(this);
  m_plot = makePlot(this, "training_tracked");
  useStepTicks(m_plot->xAxis);
  enableHoverLabels(m_plot);
  placeLegendBelowTitle(m_plot, 3);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
  m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
  connect(m_choice, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { rebuild(); });
  auto* header = new QHBoxLayout;
  header->setContentsMargins(0, 0, 0, 0);
  header->addWidget(m_choice, 1);
  header->addWidget(m_cost);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(header);
  layout->addWidget(m_plot, 1);
  retranslate();
}

bool TrackedPlot::hasData() const {
  return !m_metrics.tracked.empty() || std::any_of(m_compared.begin(), m_compared.end(), [](const auto& run) {
    return !run->metrics.tracked.empty();
  });
}
std::string TrackedPlot::analysis() const { return m_choice->currentData().toString().toStdString(); }
int TrackedPlot::plottedPoints() const { return m_value ? m_value->dataCount() : 0; }

void TrackedPlot::setAnalysis(const std::string& name) {
  const int index = m_choice->findData(QString::fromStdString(name));
  if (index >= 0) m_choice->setCurrentIndex(index);
}

void TrackedPlot::showMetrics(const MetricsStore& m) {
  // Called with every batch of a run's records, nearly all of them steps: the plot is rebuilt only when
  // what it draws changed (a measurement, an event, or the store rebuilt after a rewind).
  std::size_t points = 0;
  for (const auto& [name, series] : m.tracked) points += series.points.size();
  const Drawn drawn{m.generation, points, m.events.size()};
  if (drawn == m_drawn) return;
  m_drawn = drawn;
  m_metrics.tracked = m.tracked;
  m_metrics.events = m.events;
  updateChoices();
  rebuild();
}

void TrackedPlot::setComparison(std::vector<std::shared_ptr<const ComparedRun>> runs) {
  m_compared = std::move(runs);
  updateChoices();
  rebuild();
}

void TrackedPlot::updateChoices() {
  // The analyses the run shown or an overlaid one tracks, keeping the one chosen.
  std::set<std::string> names;
  for (const auto& [name, series] : m_metrics.tracked) names.insert(name);
  for (const auto& run : m_compared)
    for (const auto& [name, series] : run->metrics.tracked) names.insert(name);
  const std::string chosen = analysis();
  const QSignalBlocker block(m_choice);
  m_choice->clear();
  for (const std::string& name : names)
    m_choice->addItem(TrackedAnalysisText::title(name), QString::fromStdString(name));
  const int index = m_choice->findData(QString::fromStdString(chosen.empty() ? "nmae" : chosen));
  m_choice->setCurrentIndex(index >= 0 ? index : 0);
}

void TrackedPlot::rebuild() {
  m_plot->clearGraphs();
  m_value = nullptr;
  m_plot->clearItems();
  const std::string name = analysis();
  const auto found = m_metrics.tracked.find(name);
  const std::string ours = found != m_metrics.tracked.end() ? found->second.data : std::string();
  // The overlaid runs first, so the run shown is drawn over them; one measured on other data says so.
  for (const auto& run : m_compared) {
    const auto theirs = run->metrics.tracked.find(name);
    if (theirs == run->metrics.tracked.end()) continue;
    QCPGraph* g = m_plot->addGraph();
    const std::string& data = theirs->second.data;
    g->setName(ours.empty() || data.empty() || data == ours
                   ? run->name
                   : tr("%1 (other data: %2)").arg(run->name, QString::fromStdString(data)));
    g->setPen(QPen(run->colour, 1.6));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, run->colour, Qt::white, 6));
    for (const auto& p : theirs->second.points) g->addData(p.step, p.value);
  }
  const QString title = TrackedAnalysisText::title(name);
  setPlotTitle(m_plot, name.empty() ? tr("Tracked analyses") : tr("Tracked: %1").arg(title));
  m_cost->clear();
  if (found != m_metrics.tracked.end()) {  // the run shown tracks it
    const MetricsStore::TrackedSeries& series = found->second;
    m_cost->setText(tr("%1 s each").arg(series.secondsPerMeasurement(), 0, 'f', 2));
    m_cost->setToolTip(tr("one measurement took %1 s on average; %2 measured")
                           .arg(series.secondsPerMeasurement(), 0, 'f', 3)
                           .arg(series.measured));
    // The value: a line with a marker per measurement, filled where removal events fired.
    QCPGraph* value = m_value = m_plot->addGraph();
    value->setName(m_compared.empty() ? tr("overall") : tr("overall (run shown)"));
    value->setPen(QPen(kValue, 2));
    value->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kValue, Qt::white, 6));
    QCPGraph* atEvents = m_plot->addGraph();
    atEvents->setName(tr("at a removal"));
    atEvents->setLineStyle(QCPGraph::lsNone);
    atEvents->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kValue, kValue, 6));
    std::size_t layers = 0;
    for (const auto& p : series.points) {
      value->addData(p.step, p.value);
      if (p.atEvent) atEvents->addData(p.step, p.value);
      layers = std::max(layers, p.perLayer.size());
    }
    // Per layer: thin, light for the first layers, dark for the deepest (as the scales plot draws depth).
    for (std::size_t l = 0; l < layers; ++l) {
      QCPGraph* g = m_plot->addGraph();
      const int shade = layers > 1 ? static_cast<int>(200 - 150 * l / (layers - 1)) : 120;
      g->setPen(QPen(QColor(shade, shade, shade), 1));
      g->setName(TrackedAnalysisText::layer(name, static_cast<int>(l), static_cast<int>(layers)));
      g->removeFromLegend();  // hover names each; the legend keeps the value and the event marker
      for (const auto& p : series.points)
        if (l < p.perLayer.size() && std::isfinite(p.perLayer[l])) g->addData(p.step, p.perLayer[l]);
    }
    if (layers > 0) {
      // One legend entry, without data, says what the thin curves are.
      QCPGraph* legendOnly = m_plot->addGraph();
      legendOnly->setPen(QPen(QColor(120, 120, 120), 1));
      legendOnly->setName(tr("per layer (darker: deeper)"));
    }
  }
  for (const MetricsStore::AppliedEvent& e : m_metrics.events)
    markStep(m_plot, static_cast<double>(e.step), eventPen());
  m_plot->yAxis->setLabel(QString());  // the title names it; a narrow plot has no room for both
  bool first = true;
  for (int i = 0; i < m_plot->graphCount(); ++i) {
    if (m_plot->graph(i)->dataCount() == 0) continue;
    m_plot->graph(i)->rescaleValueAxis(!first, true);
    first = false;
  }
  m_plot->yAxis->scaleRange(1.1);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TrackedPlot::retranslate() {
  m_plot->xAxis->setLabel(tr("optimizer step"));
  m_choice->setToolTip(
      tr("the analysis plotted: the run measures each on its model every few steps and at "
         "each removal event (normfree-cli … --track)"));
  for (int i = 0; i < m_choice->count(); ++i)
    m_choice->setItemText(i, TrackedAnalysisText::title(m_choice->itemData(i).toString().toStdString()));
  rebuild();
}

void TrackedPlot::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}
