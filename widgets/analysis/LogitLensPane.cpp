#include "analysis/LogitLensPane.h"

#include <QComboBox>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "views/ModelInfoView.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
const QColor kModeColours[nf::kLensModes] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c)};
constexpr int kWindow = 16;  // positions the grid shows at once (its scroll bar moves them)
// The grid's height: its title, rotated token labels and colour scale, and a row per layer for the
// 7-point token texts.
constexpr int kGridChrome = 230, kGridRow = 16;

// The grid's rows run from the final residual (top) down to the first block's input.
int pointOfRow(int row, int points) { return points - 1 - row; }

QString shortened(QString text) {
  text.replace('\n', "⏎");
  return text.size() > 7 ? text.left(6) + "…" : text;
}
}  // namespace

LogitLensPane::LogitLensPane(AnalysisRunner* runner, QWidget* parent)
    : AnalysisPane(runner, "logit-lens", parent) {
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_mode = new QComboBox(this);
  m_mode->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // may narrow
  m_mode->setMinimumContentsLength(8);
  for (int m = 0; m < nf::kLensModes; ++m) m_mode->addItem(QString(), m);
  m_model = new QComboBox(this);
  m_model->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // may narrow
  m_model->setMinimumContentsLength(8);
  m_model->addItem(QString());
  m_model->addItem(QString());
  m_sequence = new QSpinBox(this);
  m_sequence->setRange(0, 4095);  // until a result says how many sequences there are
  m_sequence->setKeyboardTracking(false);
  connect(m_mode, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { drawGrid(); });
  connect(m_model, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { drawGrid(); });
  connect(m_sequence, qOverload<int>(&QSpinBox::valueChanged), this, [this] { refresh(); });
  // Another model or run: its grid shows the model now first (the starting model was the one before's
  // choice).
  connect(runner, &AnalysisRunner::modelReplaced, this, [this] { m_model->setCurrentIndex(0); });
  auto* controls = new QHBoxLayout;
  controls->addWidget(m_sequence);
  controls->addWidget(m_mode, 1);  // as wide as their longest entry where there is room (retranslate)
  controls->addWidget(m_model, 1);
  controls->addStretch(1);
  body()->addLayout(controls);
  body()->addWidget(m_summary);

  m_curves = makePlot(this, "logit_lens_loss");
  m_curves->setMinimumHeight(200);
  for (int m = 0; m < nf::kLensModes; ++m)
    for (bool start : {false, true}) {
      QCPGraph* g = m_curves->addGraph();
      g->setPen(QPen(kModeColours[m], start ? 1.5 : 2, start ? Qt::DashLine : Qt::SolidLine));
      if (!start) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    }
  placeLegendBelowTitle(m_curves, 3);
  enableHoverLabels(m_curves);

  m_grid = makePlot(this, "logit_lens_top_tokens");
  m_grid->setMinimumHeight(kGridChrome + 5 * kGridRow);
  m_map = makeHeatMapRow(m_grid, {magnitudeGradient()})[0];
  m_map->keyAxis()->setTickLabelRotation(90);
  m_grid->setMouseTracking(true);
  connect(m_grid, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    int row, column;
    const nf::LogitLensResult* r = gridModel();
    if (!r || !heatMapCellAt({m_map}, event->pos(), &row, &column)) {
      QToolTip::hideText();
      return;
    }
    QToolTip::showText(
        event->globalPosition().toPoint(),
        cellText(pointOfRow(row, static_cast<int>(r->points.size())), firstPosition() + column), m_grid);
  });
  m_positions = new QScrollBar(Qt::Horizontal, this);
  m_positions->setRange(0, 0);
  connect(m_positions, &QScrollBar::valueChanged, this, [this] { drawGrid(); });
  // The plots scroll where the pane is short: the grid keeps a readable height per layer (at 720 pixels
  // its rows had been crushed to a few pixels each).
  auto* plots = new QWidget(this);
  auto* plotsLayout = new QVBoxLayout(plots);
  plotsLayout->setContentsMargins(0, 0, 0, 0);
  plotsLayout->addWidget(m_curves, 2);
  plotsLayout->addWidget(m_grid, 3);
  plotsLayout->addWidget(m_positions);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(plots);
  body()->addWidget(scroll, 1);
  retranslate();
}

QString LogitLensPane::description() const {
  return tr(
      "Each layer's residual stream read through the final norm and the unembedding (the logit lens): its "
      "next-token loss with the norm recomputed on each layer, with the final layer's scale frozen, and with "
      "one scale for all tokens — against the starting model's, and one sequence's top tokens layer by "
      "layer. Without LayerNorm the three readings are one.");
}

AnalysisWork LogitLensPane::makeWork() {
  QPointer<LogitLensPane> self(this);
  const int64_t sequence = m_sequence->value();
  return [self, sequence](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    nf::AnalysisRequest request = in.request("logit-lens");
    request.traceSequence = std::min<int64_t>(sequence, in.sequences - 1);
    request.top = nf::AnalysisRequest::kLensTop;
    const nlohmann::json nowAnswer = in.run(request, "now", progress);
    auto now = std::make_shared<const nf::LogitLensResult>(nf::logitLensResultFromJson(nowAnswer));
    std::shared_ptr<const nf::LogitLensResult> start;
    if (const auto startAnswer = in.runStart(request))
      start = std::make_shared<const nf::LogitLensResult>(nf::logitLensResultFromJson(*startAnswer));
    const int64_t sequences = in.sequences;
    return [self, now, start, sequences] {
      if (!self) return;
      self->m_now = now;
      self->m_start = start;
      self->m_model->setVisible(start != nullptr);  // no other model to show the grid of
      {
        const QSignalBlocker block(self->m_sequence);  // a new range is not a request for a new sequence
        self->m_sequence->setRange(0, static_cast<int>(sequences - 1));
        self->m_sequence->setValue(static_cast<int>(now->trace.sequence));
      }
      self->drawCurves();
      self->drawGrid();
      self->showHeader(now->header.step, now->header.model, now->header.norms, now->header.data);
    };
  };
}

void LogitLensPane::setMode(nf::LensMode mode) { m_mode->setCurrentIndex(static_cast<int>(mode)); }
void LogitLensPane::showStartingModel(bool starting) { m_model->setCurrentIndex(starting ? 1 : 0); }
bool LogitLensPane::startingModelShown() const { return m_model->currentIndex() == 1; }
void LogitLensPane::setSequence(int64_t sequence) { m_sequence->setValue(static_cast<int>(sequence)); }
int LogitLensPane::firstPosition() const { return m_positions->value(); }

const nf::LogitLensResult* LogitLensPane::gridModel() const {
  return (m_model->currentIndex() == 1 && m_start ? m_start : m_now).get();
}

QString LogitLensPane::tokenText(const nf::LogitLensResult& r, int32_t id) const {
  const auto it = r.trace.texts.find(id);
  return it != r.trace.texts.end() ? QString::fromStdString(it->second) : QStringLiteral("#%1").arg(id);
}

void LogitLensPane::drawCurves() {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const size_t points = m_now->points.size();
  for (size_t p = 0; p < points; ++p)
    ticker->addTick(static_cast<double>(p), p + 1 == points ? tr("final") : QString::number(p));
  m_curves->xAxis->setTicker(ticker);
  for (int m = 0; m < nf::kLensModes; ++m)
    for (int start = 0; start < 2; ++start) {
      const nf::LogitLensResult* r = start ? m_start.get() : m_now.get();
      QVector<double> x, ce;
      for (size_t p = 0; r && p < r->points.size(); ++p) x << double(p), ce << r->points[p].modes[m].ce;
      m_curves->graph(2 * m + start)->setData(x, ce, true);
    }
  showCurvesTitleAndLegend();
  m_curves->rescaleAxes();
  m_curves->xAxis->setRange(-0.3, static_cast<double>(points) - 0.7);
  m_curves->yAxis->scaleRange(1.1);
  m_curves->replot();
  const nf::LensPoint& final = m_now->points.back();
  m_summary->setText(
      tr("Final norm: %1 · model's loss %2 nats · first block's input, recomputed %3 / frozen %4 / linear %5")
          .arg(normKindLabel(m_now->finalNorm))
          .arg(final.modes[0].ce, 0, 'f', 3)
          .arg(m_now->points[0].modes[0].ce, 0, 'f', 2)
          .arg(m_now->points[0].modes[1].ce, 0, 'f', 2)
          .arg(m_now->points[0].modes[2].ce, 0, 'f', 2));
}

void LogitLensPane::showCurvesTitleAndLegend() {
  const bool withStart = !m_now || m_start;  // before any result: as a run shows it
  setPlotTitle(m_curves, withStart ? tr("Logit lens: next-token loss of each layer's residual through the "
                                        "final norm (dashed: starting model)")
                                   : tr("Logit lens: next-token loss of each layer's residual through the "
                                        "final norm"));
  std::vector<QCPAbstractPlottable*> entries;
  for (int m = 0; m < nf::kLensModes; ++m) {
    entries.push_back(m_curves->graph(2 * m));
    if (withStart) entries.push_back(m_curves->graph(2 * m + 1));
  }
  setLegendEntries(m_curves, entries);
}

void LogitLensPane::drawGrid() {
  const nf::LogitLensResult* r = gridModel();
  if (!r) return;
  const int mode = m_mode->currentIndex();
  const int points = static_cast<int>(r->points.size());
  const int positions = static_cast<int>(r->trace.positions);
  {
    const QSignalBlocker block(m_positions);
    m_positions->setRange(0, std::max(0, positions - kWindow));
    m_positions->setPageStep(kWindow);
  }
  m_grid->setMinimumHeight(kGridChrome + points * kGridRow);
  const int first = m_positions->value(), shown = std::min(kWindow, positions - first);
  const int top = r->trace.top;
  QCPColorMapData* d = m_map->data();
  d->setSize(shown, points);
  d->setRange(QCPRange(0, shown - 1), QCPRange(0, points - 1));
  m_grid->clearItems();
  auto columns = QSharedPointer<QCPAxisTickerText>::create();
  for (int c = 0; c < shown; ++c) columns->addTick(c, shortened(tokenText(*r, r->trace.tokens[first + c])));
  m_map->keyAxis()->setLabel(tr("input token at positions %1–%2").arg(first).arg(first + shown - 1));
  auto rows = QSharedPointer<QCPAxisTickerText>::create();
  for (int row = 0; row < points; ++row) {
    const int p = pointOfRow(row, points);
    rows->addTick(row, p + 1 == points ? tr("final") : tr("L%1").arg(p));
    for (int c = 0; c < shown; ++c) {
      const size_t cell = static_cast<size_t>(first + c) * top;
      d->setCell(c, row, r->trace.points[p][mode].topProbabilities[cell]);
      auto* label = new QCPItemText(m_grid);
      label->setClipToAxisRect(true);
      label->position->setAxes(m_map->keyAxis(), m_map->valueAxis());
      label->position->setCoords(c, row);
      label->setText(topTokenText(p, first + c));
      label->setFont(QFont(font().family(), 7));
      const bool dark = r->trace.points[p][mode].topProbabilities[cell] > 0.55;
      label->setColor(dark ? Qt::white : Qt::black);
    }
  }
  m_map->keyAxis()->setTicker(columns);
  m_map->valueAxis()->setTicker(rows);
  m_map->keyAxis()->setRange(-0.5, shown - 0.5);
  m_map->valueAxis()->setRange(-0.5, points - 0.5);
  m_map->setDataRange(QCPRange(0, 1));  // probabilities: one scale for every model and mode
  const QString model = r == m_start.get() ? tr("starting model") : tr("model now");
  setPlotTitle(m_grid, tr("Top token by layer and position of sequence %1 (%2, %3; colour: its probability; "
                          "hover a cell)")
                           .arg(r->trace.sequence)
                           .arg(m_mode->currentText(), model));
  m_grid->replot();
}

QString LogitLensPane::topTokenText(int point, int position) const {
  const nf::LogitLensResult* r = gridModel();
  if (!r) return {};
  const nf::LensGrid& g = r->trace.points[point][m_mode->currentIndex()];
  return shortened(tokenText(*r, g.topIds[static_cast<size_t>(position) * r->trace.top]));
}

QString LogitLensPane::cellText(int point, int position) const {
  const nf::LogitLensResult* r = gridModel();
  if (!r) return {};
  const nf::LensGrid& g = r->trace.points[point][m_mode->currentIndex()];
  const bool final = point + 1 == static_cast<int>(r->points.size());
  QString text = tr("%1, position %2 “%3”")
                     .arg(final ? tr("final residual") : tr("input of block %1").arg(point),
                          QString::number(position), tokenText(*r, r->trace.tokens[position]));
  for (int k = 0; k < r->trace.top; ++k) {
    const size_t i = static_cast<size_t>(position) * r->trace.top + k;
    text += QStringLiteral("\n  %1. “%2” %3")
                .arg(k + 1)
                .arg(tokenText(*r, g.topIds[i]))
                .arg(g.topProbabilities[i], 0, 'f', 3);
  }
  if (position < static_cast<int>(g.targetRank.size()))
    text += "\n" + tr("next token “%1”: probability %2, rank %3")
                       .arg(tokenText(*r, r->trace.tokens[position + 1]))
                       .arg(g.targetProbability[position], 0, 'f', 3)
                       .arg(g.targetRank[position]);
  return text;
}

void LogitLensPane::retranslate() {
  const QString modes[] = {tr("recomputed"), tr("frozen"), tr("linear")};
  for (int m = 0; m < nf::kLensModes; ++m) {
    m_mode->setItemText(m, tr("norm %1").arg(modes[m]));
    m_curves->graph(2 * m)->setName(modes[m]);
    m_curves->graph(2 * m + 1)->setName(tr("%1, starting model").arg(modes[m]));
  }
  m_mode->setToolTip(
      tr("recomputed: the final norm's scale computed on each layer's residual; frozen: the "
         "scale the model used at the final layer; linear: one scale for all tokens"));
  m_model->setItemText(0, tr("model now"));
  m_model->setItemText(1, tr("starting model"));
  for (QComboBox* box : {m_mode, m_model}) {  // room for the whole text, no more: "norm recompu" was cut
    int widest = 0;
    for (int i = 0; i < box->count(); ++i)
      widest = std::max(widest, box->fontMetrics().horizontalAdvance(box->itemText(i)));
    box->setMaximumWidth(widest + 48);  // the arrow and the frame
  }
  m_sequence->setPrefix(tr("sequence "));
  m_sequence->setToolTip(tr("the validation sequence whose top tokens the grid shows"));
  showCurvesTitleAndLegend();
  m_curves->xAxis->setLabel(tr("layer (resid_pre)"));
  m_curves->yAxis->setLabel(tr("cross-entropy (nats)"));
  m_map->colorScale()->axis()->setLabel(tr("probability of the top token"));
  m_map->setName(tr("top-token probability"));
  if (m_now) {
    drawCurves();
    drawGrid();
  } else {
    setPlotTitle(m_grid, tr("Top token by layer and position"));
    m_summary->setText(QString());
  }
  m_curves->replot();
  AnalysisPane::retranslate();
}
