#include "analysis/NormsPane.h"

#include <QPointer>
#include <QVBoxLayout>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
const QColor kPos0(0xd62728), kRest(0x1f77b4);

// Graph order: for each of (position 0, rest): band low, band high (filled to low), mean, reference mean.
enum { kLow, kHigh, kMean, kReference, kPerSeries };
}  // namespace

NormsPane::NormsPane(AnalysisRunner* runner, QWidget* parent) : AnalysisPane(runner, "norms", parent) {
  m_plot = makePlot(this, "residual_norms");
  body()->addWidget(m_plot);
  for (const QColor& c : {kPos0, kRest}) {
    QColor band = c;
    band.setAlpha(40);
    QCPGraph* low = m_plot->addGraph();
    low->setPen(Qt::NoPen);
    QCPGraph* high = m_plot->addGraph();
    high->setPen(Qt::NoPen);
    high->setBrush(band);
    high->setChannelFillGraph(low);
    QCPGraph* mean = m_plot->addGraph();
    mean->setPen(QPen(c, 2));
    mean->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    QCPGraph* reference = m_plot->addGraph();
    reference->setPen(QPen(c, 1.5, Qt::DashLine));
  }
  m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
  m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  placeLegendBelowTitle(m_plot, 2);
  enableHoverLabels(m_plot);
  retranslate();
}

QString NormsPane::description() const {
  return tr(
      "The residual stream's norm entering each layer, at position 0 and at the other positions, on "
      "validation sequences, against the starting model's: the norm growth that FakeLN freezes.");
}

AnalysisWork NormsPane::makeWork() {
  QPointer<NormsPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    const nf::AnalysisRequest request = in.request("norms");
    const nlohmann::json nowAnswer = in.run(request, "now", progress);
    auto now = std::make_shared<nf::ResidualNormsResult>(nf::residualNormsResultFromJson(nowAnswer));
    std::shared_ptr<nf::ResidualNormsResult> reference;
    if (const auto start = in.runStart(request))
      reference = std::make_shared<nf::ResidualNormsResult>(nf::residualNormsResultFromJson(*start));
    return [self, now, reference] {
      if (self) self->draw(*now, reference.get());
    };
  };
}

void NormsPane::draw(const nf::ResidualNormsResult& now, const nf::ResidualNormsResult* reference) {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (size_t i = 0; i < now.rows.size(); ++i)
    ticker->addTick(static_cast<double>(i), i + 1 == now.rows.size() ? tr("final") : QString::number(i));
  m_plot->xAxis->setTicker(ticker);
  for (int series = 0; series < 2; ++series) {
    QVector<double> x, low, high, mean, ref;
    for (size_t i = 0; i < now.rows.size(); ++i) {
      const nf::Spread& s = series == 0 ? now.rows[i].position0 : now.rows[i].rest;
      x << static_cast<double>(i);
      low << s.p10;
      high << s.p90;
      mean << s.mean;
      if (reference && i < reference->rows.size())
        ref << (series == 0 ? reference->rows[i].position0.mean : reference->rows[i].rest.mean);
    }
    const int base = series * kPerSeries;
    m_plot->graph(base + kLow)->setData(x, low, true);
    m_plot->graph(base + kHigh)->setData(x, high, true);
    m_plot->graph(base + kMean)->setData(x, mean, true);
    m_plot->graph(base + kReference)->setData(x.mid(0, ref.size()), ref, true);
  }
  m_withReference = reference != nullptr;
  showTitleAndLegend();
  m_plot->rescaleAxes();
  m_plot->xAxis->setRange(-0.3, static_cast<double>(now.rows.size()) - 0.7);
  m_plot->yAxis->scaleRange(1.15);
  m_plot->replot();
  showHeader(now.header.step, now.header.model, now.header.norms, now.header.data);
}

void NormsPane::showTitleAndLegend() {
  setPlotTitle(m_plot, m_withReference ? tr("Residual stream norm per layer: position 0 vs the rest (band: "
                                            "10th–90th percentile; dashed: starting model)")
                                       : tr("Residual stream norm per layer: position 0 vs the rest (band: "
                                            "10th–90th percentile)"));
  std::vector<QCPAbstractPlottable*> entries;
  for (int series = 0; series < 2; ++series) {
    entries.push_back(m_plot->graph(series * kPerSeries + kMean));
    if (m_withReference) entries.push_back(m_plot->graph(series * kPerSeries + kReference));
  }
  setLegendEntries(m_plot, entries);
}

void NormsPane::retranslate() {
  showTitleAndLegend();
  m_plot->xAxis->setLabel(tr("layer (resid_pre)"));
  m_plot->yAxis->setLabel(tr("L2 norm of the residual"));
  m_plot->graph(kMean)->setName(tr("position 0"));
  m_plot->graph(kReference)->setName(tr("position 0, starting model"));
  m_plot->graph(kPerSeries + kMean)->setName(tr("other positions"));
  m_plot->graph(kPerSeries + kReference)->setName(tr("other positions, starting model"));
  m_plot->replot();
  AnalysisPane::retranslate();
}
