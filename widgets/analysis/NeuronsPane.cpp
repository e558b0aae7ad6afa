#include "analysis/NeuronsPane.h"

#include <QFontMetrics>
#include <QPointer>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
constexpr int kTopK = 10, kCosineCurves = 3;
const QColor kCosineColors[] = {QColor(0xd62728), QColor(0x2ca02c), QColor(0x9467bd)};
}  // namespace

NeuronsPane::NeuronsPane(AnalysisRunner* runner, QWidget* parent) : AnalysisPane(runner, "neurons", parent) {
  m_scatter = makePlot(this, "confidence_neurons_scatter");
  for (int i = 0; i < 2; ++i) {
    QCPGraph* g = m_scatter->addGraph();
    g->setLineStyle(QCPGraph::lsNone);
    const QColor c = i == 0 ? QColor(120, 120, 120, 120) : QColor(0xd62728);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, i == 0 ? 3 : 7));
  }
  useLogScaleTicks(m_scatter->yAxis);
  placeLegendBelowTitle(m_scatter, 2);
  enableHoverLabels(m_scatter);
  connect(m_scatter, &QCustomPlot::afterLayout, this, &NeuronsPane::labelTopNeurons);

  m_ablation = makePlot(this, "confidence_neurons_ablation");
  auto* group = new QCPBarsGroup(m_ablation);
  for (int i = 0; i < 2; ++i) {
    auto* bars = new QCPBars(m_ablation->xAxis, m_ablation->yAxis);
    bars->setWidth(0.38);
    bars->setBarsGroup(group);
    const QColor c = i == 0 ? QColor(0x1f77b4) : QColor(0xff7f0e);
    bars->setPen(c.darker(130));
    bars->setBrush(c);
  }
  placeLegendBelowTitle(m_ablation, 2);
  m_ablation->xAxis->setTickLabelRotation(90);  // neuron numbers side by side would run together
  m_ablation->xAxis->setTickLabelFont(QFont(font().family(), 8));

  m_spectrum = makePlot(this, "unembedding_spectrum");
  m_spectrum->addGraph()->setPen(QPen(Qt::black, 2));
  useLogScaleTicks(m_spectrum->yAxis);  // the spectrum spans less than two decades
  m_spectrum->yAxis2->setVisible(true);
  m_spectrum->yAxis2->setRange(0, 1);
  for (int i = 0; i < kCosineCurves; ++i)
    m_spectrum->addGraph(m_spectrum->xAxis, m_spectrum->yAxis2)->setPen(QPen(kCosineColors[i], 1));
  placeLegendBelowTitle(m_spectrum, 2);
  enableHoverLabels(m_spectrum);

  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->addWidget(m_ablation);
  lower->addWidget(m_spectrum);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_scatter);
  split->addWidget(lower);
  body()->addWidget(split, 1);
  retranslate();
}

QString NeuronsPane::description() const {
  return tr(
      "The last MLP layer's confidence neurons: output norm against logit variance, the effect of "
      "ablating the top ones on loss and entropy, and their alignment with the unembedding's singular "
      "directions.");
}

AnalysisWork NeuronsPane::makeWork() {
  QPointer<NeuronsPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    nf::AnalysisRequest request = in.request("neurons");
    request.sequences = std::max<int64_t>(1, in.sequences / 2);  // ablations run 2·k + 1 passes: half suffice
    request.top = kTopK;
    auto result = std::make_shared<const nf::ConfidenceNeuronsResult>(
        nf::confidenceNeuronsResultFromJson(in.run(request, "now", progress)));
    return [self, result] {
      if (!self) return;
      self->draw(result);
      self->showHeader(result->header.step, result->header.model, result->header.norms, result->header.data);
    };
  };
}

void NeuronsPane::draw(std::shared_ptr<const nf::ConfidenceNeuronsResult> result) {
  m_result = std::move(result);
  const nf::ConfidenceNeuronsResult& r = *m_result;
  QVector<double> x, y, topX, topY;
  for (const nf::NeuronScore& n : r.neurons) {
    x << n.outputNorm;
    y << n.logitVar;
  }
  m_scatter->graph(0)->setData(x, y);
  const int top = std::min<int>(kTopK, static_cast<int>(r.ranking.size()));
  for (int i = 0; i < top; ++i) {
    const nf::NeuronScore& n = r.neurons[static_cast<size_t>(r.ranking[static_cast<size_t>(i)])];
    topX << n.outputNorm;
    topY << n.logitVar;
  }
  m_scatter->graph(1)->setData(topX, topY);
  m_scatter->rescaleAxes();
  m_scatter->xAxis->scaleRange(1.1);
  m_scatter->yAxis->scaleRange(1.3);
  m_scatter->replot();

  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys, loss, entropy;
  for (size_t i = 0; i < r.ablations.size(); ++i) {
    keys << static_cast<double>(i);
    loss << r.ablations[i].deltaLoss;
    entropy << r.ablations[i].deltaEntropy;
    ticker->addTick(static_cast<double>(i), QString::number(r.ablations[i].neuron));
  }
  qobject_cast<QCPBars*>(m_ablation->plottable(0))->setData(keys, loss);
  qobject_cast<QCPBars*>(m_ablation->plottable(1))->setData(keys, entropy);
  m_ablation->xAxis->setTicker(ticker);
  m_ablation->rescaleAxes();
  m_ablation->xAxis->setRange(-0.6, static_cast<double>(keys.size()) - 0.4);
  m_ablation->yAxis->scaleRange(1.2);
  m_ablation->replot();

  QVector<double> index, values;
  for (size_t i = 0; i < r.singularValues.size(); ++i) {
    index << static_cast<double>(i);
    values << r.singularValues[i];
  }
  m_spectrum->graph(0)->setData(index, values, true);
  for (int c = 0; c < kCosineCurves; ++c) {
    QCPGraph* g = m_spectrum->graph(1 + c);
    if (c >= static_cast<int>(r.singularCosines.size())) {
      g->data()->clear();
      g->setVisible(false);
      continue;
    }
    g->setVisible(true);
    g->setName(tr("|cos| of neuron %1").arg(r.ranking[static_cast<size_t>(c)]));
    g->setData(index,
               QVector<double>(r.singularCosines[static_cast<size_t>(c)].begin(),
                               r.singularCosines[static_cast<size_t>(c)].end()),
               true);
  }
  m_spectrum->graph(0)->rescaleAxes();
  m_spectrum->replot();
}

// Each top neuron's number beside its dot, by rank: above right of it, else in the first of the other
// three corners where it overprints no label already placed; one with no free corner is left out (its dot
// stays red; the ablation plot below names every top neuron, in rank order). Placed once the plot is laid
// out, in pixels, so it holds at any size.
void NeuronsPane::labelTopNeurons() {
  m_scatter->clearItems();
  if (!m_result) return;
  const nf::ConfidenceNeuronsResult& r = *m_result;
  const QFont font(this->font().family(), 8);
  const QFontMetrics metrics(font);
  std::vector<QRectF> placed;
  for (int i = 0; i < std::min<int>(kTopK, static_cast<int>(r.ranking.size())); ++i) {
    const nf::NeuronScore& n = r.neurons[static_cast<size_t>(r.ranking[static_cast<size_t>(i)])];
    const QPointF at(m_scatter->xAxis->coordToPixel(n.outputNorm),
                     m_scatter->yAxis->coordToPixel(n.logitVar));
    const QString text = QString::number(n.neuron);
    const double w = metrics.horizontalAdvance(text) + 4, h = metrics.height();
    const std::pair<Qt::Alignment, QRectF> corners[] = {
        {Qt::AlignLeft | Qt::AlignBottom, {at.x() + 2, at.y() - h, w, h}},
        {Qt::AlignLeft | Qt::AlignTop, {at.x() + 2, at.y(), w, h}},
        {Qt::AlignRight | Qt::AlignBottom, {at.x() - w - 2, at.y() - h, w, h}},
        {Qt::AlignRight | Qt::AlignTop, {at.x() - w - 2, at.y(), w, h}}};
    for (const auto& [alignment, rect] : corners) {
      // A gap between labels too: two that touched read as one number ("161228").
      const QRectF spaced = rect.adjusted(-4, -1, 4, 1);
      if (std::any_of(placed.begin(), placed.end(),
                      [&spaced](const QRectF& p) { return p.intersects(spaced); }))
        continue;
      placed.push_back(rect);
      auto* label = new QCPItemText(m_scatter);
      label->position->setCoords(n.outputNorm, n.logitVar);
      label->setPositionAlignment(alignment);
      label->setText(text);
      label->setFont(font);
      label->setColor(QColor(0xd62728));
      break;
    }
  }
}

void NeuronsPane::retranslate() {
  setPlotTitle(m_scatter, tr("Last MLP layer: output norm vs LogitVar (red: top %1 by CN score)").arg(kTopK));
  m_scatter->xAxis->setLabel(tr("‖w_out‖"));
  m_scatter->yAxis->setLabel(tr("LogitVar"));
  m_scatter->graph(0)->setName(tr("neurons"));
  m_scatter->graph(1)->setName(tr("top by CN score = ‖w_out‖ / LogitVar"));
  setPlotTitle(m_ablation, tr("Mean ablation of each top neuron"));
  m_ablation->xAxis->setLabel(tr("neuron (by CN rank)"));
  m_ablation->yAxis->setLabel(tr("change (nats)"));
  m_ablation->plottable(0)->setName(tr("Δ loss"));
  m_ablation->plottable(1)->setName(tr("Δ entropy"));
  setPlotTitle(m_spectrum, tr("W_U singular values and top neurons' |cosine| to each direction"));
  m_spectrum->xAxis->setLabel(tr("singular direction (descending)"));
  m_spectrum->yAxis->setLabel(tr("singular value"));
  m_spectrum->yAxis2->setLabel(tr("|cosine|"));
  m_spectrum->graph(0)->setName(tr("singular value"));
  if (m_result) draw(m_result);  // the curves' names in the new language
  for (QCustomPlot* p : {m_scatter, m_ablation, m_spectrum}) p->replot();
  AnalysisPane::retranslate();
}
