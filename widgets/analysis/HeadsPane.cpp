#include "analysis/HeadsPane.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>
#include <nlohmann/json.hpp>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
constexpr int kBootstrap = 200;    // resamples for the NMAE's interval: enough for its first digits
constexpr int kDetailTokens = 16;  // by default a readable stretch of the sequence: tokens label the axes
constexpr double kNmaeMax = 100;   // the NMAE scale ends here: values above are clipped and marked

// NMAE is an error: white at 0 % (an LN-free model's heads read as blank), dark red at 100 %.
QCPColorGradient errorGradient() {
  return gradientThrough({{0.0, QColor(0xfbfbfb)}, {0.4, QColor(0xfdae6b)}, {1.0, QColor(0x8c2d04)}});
}

QString shortToken(const std::string& token) {
  QString t = QString::fromStdString(token);
  t.replace('\n', "\\n");
  return t.size() > 12 ? t.left(11) + "…" : t;
}

QSharedPointer<QCPAxisTickerText> tokenTicker(const QStringList& tokens) {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int i = 0; i < tokens.size(); ++i) ticker->addTick(i, tokens[i]);
  return ticker;
}
}  // namespace

struct HeadsPane::Detail {
  int layer = 0, head = 0;
  int64_t sequence = 0, step = -1;
  QStringList tokens;
  std::vector<double> dla, de, pattern;
};

// The head's two detail plots side by side where the pane is wide enough for both, else one under the
// other: side by side in a 1280- or 1366-pixel screen's dock they made the whole column scroll sideways,
// cutting off the NMAE map and the titles.
void HeadsPane::arrangeDetail() {
  if (!m_detailPlots || !m_scroll) return;  // still being made
  const int both = m_trace->minimumWidth() + m_pattern->minimumWidth() + 3 * m_detailPlots->spacing();
  // The width with a vertical scroll bar, shown or not: the direction chosen decides whether it shows.
  const int width =
      m_scroll->maximumViewportSize().width() - m_scroll->verticalScrollBar()->sizeHint().width();
  const auto direction = width >= both ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom;
  if (m_detailPlots->direction() != direction) m_detailPlots->setDirection(direction);
}

void HeadsPane::resizeEvent(QResizeEvent* event) {
  AnalysisPane::resizeEvent(event);
  arrangeDetail();
}

HeadsPane::HeadsPane(AnalysisRunner* runner, QWidget* parent) : AnalysisPane(runner, "heads", parent) {
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_maps = makePlot(this, "heads_dla_de_nmae");
  m_maps->setMinimumHeight(210);
  // Mean |DLA| and |DE| (magnitudes, never negative) on one scale from zero, NMAE on its own 0–100 % one.
  m_colorMaps = makeHeatMapRow(m_maps, {magnitudeGradient(), magnitudeGradient(), errorGradient()});
  enableHeatMapHoverValues(m_maps, m_colorMaps,
                           [](int layer, int head) { return QStringLiteral("L%1H%2").arg(layer).arg(head); });
  m_colorMaps[2]->setDataRange(QCPRange(0, kNmaeMax));
  connect(m_maps, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
    int layer, head;
    if (heatMapCellAt(m_colorMaps, event->pos(), &layer, &head)) selectHead(layer, head);
  });

  m_detailLabel = new QLabel(this);
  m_detailLabel->setWordWrap(true);
  m_sequence = new QSpinBox(this);
  m_sequence->setRange(0, 0);
  connect(m_sequence, qOverload<int>(&QSpinBox::valueChanged), this, [this] { requestDetail(); });
  m_detailTokens = new QSpinBox(this);
  m_detailTokens->setRange(2, 4096);  // capped by the sequences' length when computed
  m_detailTokens->setValue(kDetailTokens);
  connect(m_detailTokens, qOverload<int>(&QSpinBox::valueChanged), this, [this] { requestDetail(); });
  m_trace = makePlot(this, "head_dla_de_trace");
  m_trace->setMinimumSize(260, 280);
  m_trace->addGraph();
  m_trace->graph(0)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  m_trace->addGraph();
  m_trace->graph(1)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, 5));
  placeLegendBelowTitle(m_trace, 2);
  enableHoverLabels(m_trace);
  m_trace->xAxis->setTickLabelRotation(90);
  m_trace->xAxis->setTickLabelFont(QFont(font().family(), 8));
  m_pattern = makePlot(this, "head_attention_pattern");
  m_pattern->setMinimumSize(260, 280);
  m_pattern->setMouseTracking(true);
  connect(m_pattern, &QCustomPlot::mouseMove, this,
          [this](QMouseEvent* event) { showPatternTooltip(event->pos()); });
  m_pattern->yAxis->setRangeReversed(true);
  m_pattern->xAxis->setTickLabelRotation(90);
  for (QCPAxis* axis : {m_pattern->xAxis, m_pattern->yAxis})
    axis->setTickLabelFont(QFont(font().family(), 7));
  m_patternMap = new QCPColorMap(m_pattern->xAxis, m_pattern->yAxis);
  m_patternMap->setInterpolate(false);
  auto* patternScale = new QCPColorScale(m_pattern);
  patternScale->setBarWidth(8);
  // The axis rect and its colour bar in one cell of the plot's layout, so the title above spans both.
  auto* patternRow = new QCPLayoutGrid;
  QCPAxisRect* patternRect = m_pattern->axisRect();
  m_pattern->plotLayout()->take(patternRect);
  m_pattern->plotLayout()->addElement(1, 0, patternRow);
  patternRow->addElement(0, 0, patternRect);
  patternRow->addElement(0, 1, patternScale);
  m_patternMap->setColorScale(patternScale);  // takes the scale's gradient: ours is set after
  colourDetail(/*stale=*/false);
  m_patternMap->setDataRange(QCPRange(0, 1));
  limitColorBarTicks(m_patternMap);

  // Everything in one scrolling column: the detail keeps its size under a small window instead of being
  // squeezed to nothing, and clicking a head scrolls it into view.
  auto* detailHeader = new QHBoxLayout;
  detailHeader->addWidget(m_detailLabel, 1);
  detailHeader->addWidget(m_sequence);
  detailHeader->addWidget(m_detailTokens);
  m_detailPlots = new QBoxLayout(QBoxLayout::LeftToRight);
  m_detailPlots->addWidget(m_trace, 1);
  m_detailPlots->addWidget(m_pattern, 1);
  auto* column = new QWidget(this);
  auto* columnLayout = new QVBoxLayout(column);
  columnLayout->setContentsMargins(0, 0, 0, 0);
  columnLayout->addWidget(m_summary);
  columnLayout->addWidget(m_maps, 2);
  m_detailBox = new QWidget(column);
  auto* detailLayout = new QVBoxLayout(m_detailBox);
  detailLayout->setContentsMargins(0, 0, 0, 0);
  detailLayout->addLayout(detailHeader);
  detailLayout->addLayout(m_detailPlots, 1);
  columnLayout->addWidget(m_detailBox, 3);
  m_scroll = new QScrollArea(this);
  m_scroll->setWidgetResizable(true);
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_scroll->setWidget(column);
  body()->addWidget(m_scroll, 1);
  // The model moved on, or the validation data changed: a head of the maps shown is traced once they are
  // refreshed (its trace would stand beside the numbers of another model or data).
  auto mapsOutOfDate = [this] {
    m_mapsModel.reset();
    m_mapsOfOldSource = hasResult();
    if (!m_detailPending) return;  // a detail being computed for the old model is dropped by the runner
    m_detailPending = false;
    showDetailNote([this] {
      return tr("The model or its data changed before the detail was computed: click a head again.");
    });
  };
  connect(runner, &AnalysisRunner::sourceChanged, this, mapsOutOfDate);
  connect(runner, &AnalysisRunner::inputsChanged, this, mapsOutOfDate);
  // Another model or run shown: its heads are not this detail's (which had stayed below the new maps, and
  // gone into their export), nor need the selected head exist.
  connect(runner, &AnalysisRunner::modelReplaced, this, [this] {
    m_detail.reset();
    m_detailPending = false;
    m_detailNote = nullptr;
    m_layer = m_head = -1;
    for (int g = 0; g < m_trace->graphCount(); ++g) m_trace->graph(g)->data()->clear();
    m_patternMap->data()->clear();
    retranslate();  // the empty detail's titles and label
    m_trace->replot();
    m_pattern->replot();
  });
  connect(runner, &AnalysisRunner::failed, this, [this](const QString& key, const QString& message) {
    if (key != "heads-detail") return;
    m_detailPending = false;
    showDetailNote([this, message] {
      return "<span style='color:#c0392b'>" + tr("Failed: %1").arg(message.toHtmlEscaped()) + "</span>";
    });
  });
  retranslate();
}

QString HeadsPane::description() const {
  return tr(
      "Per head, the mean |direct logit attribution| with the cached final-norm scale (DLA), the mean "
      "|direct effect| with the final norm recomputed (DE), and their normalized error (NMAE), which "
      "is zero once the model is norm-free. Click a head for its values per position and its "
      "attention pattern.");
}

QList<QCustomPlot*> HeadsPane::resultPlots() const {
  if (!hasResult()) return {};
  if (!m_detail) return {m_maps};
  return {m_maps, m_trace, m_pattern};
}

int64_t HeadsPane::detailStep() const { return m_detail ? m_detail->step : -1; }

std::pair<double, double> HeadsPane::nmaeRange() const {
  const QCPRange r = m_colorMaps[2]->dataRange();
  return {r.lower, r.upper};
}

AnalysisWork HeadsPane::makeWork() {
  QPointer<HeadsPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    nf::AnalysisRequest request = in.request("dla");
    request.bootstrap = kBootstrap;
    // Both on the same snapshot (here: the one taken now; a server's model now).
    auto attribution = std::make_shared<const nf::AttributionResult>(
        nf::attributionResultFromJson(in.run(request, "now", progress, in.model)));
    auto sinks = std::make_shared<const nf::AttentionSinksResult>(
        nf::attentionSinksResultFromJson(in.run(in.request("sinks"), "now", {}, in.model)));
    const int64_t sequences = in.sequences;
    return [self, attribution, sinks, sequences, model = in.model] {
      if (!self) return;
      self->m_mapsModel = model;  // the detail is computed on this model too
      self->m_mapsOfOldSource = false;
      self->m_sequence->setMaximum(static_cast<int>(std::max<int64_t>(0, sequences - 1)));
      self->draw(attribution, sinks);
    };
  };
}

void HeadsPane::draw(std::shared_ptr<const nf::AttributionResult> attribution,
                     std::shared_ptr<const nf::AttentionSinksResult> sinks) {
  m_attribution = std::move(attribution);
  m_sinks = std::move(sinks);
  const nf::AttributionResult& a = *m_attribution;
  m_layers = a.layers;
  m_heads = a.heads;
  m_nmae.clear();
  m_maps->clearItems();
  for (int i = 0; i < 3; ++i) {
    QCPColorMapData* d = m_colorMaps[i]->data();
    d->setSize(a.heads, a.layers);
    d->setRange(QCPRange(0, a.heads - 1), QCPRange(0, a.layers - 1));
    for (int l = 0; l < a.layers; ++l)
      for (int h = 0; h < a.heads; ++h) {
        const nf::ComponentAttribution& c = a.headAttributions[static_cast<size_t>(l * a.heads + h)];
        const double value = i == 0 ? c.meanAbsDla : i == 1 ? c.meanAbsDe : std::min(c.nmae, kNmaeMax);
        d->setCell(h, l, value);
        if (i != 2) continue;
        m_nmae.push_back(c.nmae);
        if (c.nmae > kNmaeMax) {  // clipped: say so in the cell
          auto* mark = new QCPItemText(m_maps);
          mark->setClipAxisRect(m_colorMaps[2]->keyAxis()->axisRect());
          mark->position->setAxes(m_colorMaps[2]->keyAxis(), m_colorMaps[2]->valueAxis());
          mark->position->setCoords(h, l);
          mark->setText(QStringLiteral(">"));
          mark->setColor(Qt::white);
          mark->setSelectable(false);
        }
      }
    m_colorMaps[i]->keyAxis()->setRange(-0.5, a.heads - 0.5);
    m_colorMaps[i]->valueAxis()->setRange(-0.5, a.layers - 0.5);
  }
  setSharedMagnitudeRange({m_colorMaps[0], m_colorMaps[1]});
  showSummary();
  markSelection();
  m_maps->replot();
  showHeader(a.header.step, a.header.model, a.header.norms, a.header.data);
  if (m_layer >= 0 && m_layer < m_layers && m_head < m_heads) requestDetail();  // the detail follows
}

void HeadsPane::showSummary() {
  const nf::AttributionResult& a = *m_attribution;
  // No interval from too few sequences: every resample is about the same few.
  const QString interval =
      std::isnan(a.overallLow)
          ? tr("no bootstrap interval: fewer than %1 sequences, or no resamples")
                .arg(nf::kMinIntervalSequences)
          : tr("95 % bootstrap interval %1–%2 %").arg(a.overallLow, 0, 'g', 3).arg(a.overallHigh, 0, 'g', 3);
  m_summary->setText(tr("Mean NMAE over heads: <b>%1 %</b> (%2) · decomposition check max |Σ DLA + β·u − "
                        "logit| = %3 · attention sink rate %4 (per query %5)")
                         .arg(a.overallNmae, 0, 'g', 3)
                         .arg(interval)
                         .arg(a.decompositionError, 0, 'g', 2)
                         .arg(m_sinks->sinkRate, 0, 'g', 3)
                         // An older build's served result has no per-query rate.
                         .arg(std::isnan(m_sinks->querySinkRate)
                                  ? QStringLiteral("–")
                                  : QString::number(m_sinks->querySinkRate, 'g', 3)));
}

QPoint HeadsPane::cellCenter(int map, int layer, int head) const {
  const QCPColorMap* m = m_colorMaps[map];
  return {static_cast<int>(m->keyAxis()->coordToPixel(head)),
          static_cast<int>(m->valueAxis()->coordToPixel(layer))};
}

void HeadsPane::selectHead(int layer, int head) {
  m_layer = layer;
  m_head = head;
  markSelection();
  m_maps->replot();
  Q_EMIT headSelected(layer, head);
  requestDetail();
  // Its first plot, not the whole detail: with the plots one under the other, showing all of it scrolled
  // the maps just clicked out of view.
  m_scroll->ensureWidgetVisible(m_trace);
}

void HeadsPane::markSelection() { outlineCell(m_maps, m_colorMaps, m_layer, m_head); }

void HeadsPane::requestDetail() {
  if (m_layer < 0) return;
  if (const AnalysesCan can = runner()->availability(); !whyNotComputable(can).isEmpty()) {
    showDetailNote([can] { return whyNotComputable(can).toHtmlEscaped(); });
    return;
  }
  if (m_mapsOfOldSource) {  // a trace of the model now would sit under another model's numbers
    showDetailNote([this] {
      return tr("The maps above are of the model or data before: refresh them, then click a head.");
    });
    return;
  }
  const int layer = m_layer, head = m_head;
  const int64_t sequence = m_sequence->value(), tokens = m_detailTokens->value();
  markDetailStale();
  QPointer<HeadsPane> self(this);
  runner()->request("heads-detail",
                    [self, layer, head, sequence, tokens, pinned = m_mapsModel](
                        const AnalysisInputs& in, const nf::ProgressFn&) -> std::function<void()> {
                      // On the heat maps' model where it is here (a server computes on its model now).
                      auto detail =
                          std::make_shared<Detail>(traceDetail(in, pinned, layer, head, sequence, tokens));
                      return [self, detail] {
                        if (self) self->drawDetail(detail);
                      };
                    });
}

// Instead of the detail's own label: why no detail (or no new one) is shown, kept to be made again in
// another language.
void HeadsPane::showDetailNote(DetailNote note) {
  m_detailNote = std::move(note);
  m_detailLabel->setText(m_detailNote());
}

// At once, before the new detail is computed (seconds on a large model): the plots still up are greyed
// and titled as the old head's, and the label says what is being computed.
void HeadsPane::markDetailStale() {
  m_detailPending = true;
  m_detailNote = nullptr;
  m_detailLabel->setText(
      "<span style='color:#d35400'><b>" +
      tr("Computing L%1H%2 on sequence %3…").arg(m_layer).arg(m_head).arg(m_sequence->value()) +
      "</b></span>" +
      (m_detail
           ? " " + tr("(the plots below still show L%1H%2: stale)").arg(m_detail->layer).arg(m_detail->head)
           : QString()));
  if (!m_detail) return;
  colourDetail(/*stale=*/true);
  m_trace->replot();
  m_pattern->replot();
}

// The detail: the traced head on the whole sequence, with its pattern, cut to the first `tokens` (attention
// is causal: the values there are those of that prefix alone).
HeadsPane::Detail HeadsPane::traceDetail(const AnalysisInputs& in, const nf::SnapshotPtr& pinned, int layer,
                                         int head, int64_t sequence, int64_t tokens) {
  nf::AnalysisRequest request = in.request("dla");
  request.sequences = std::min(sequence, in.sequences - 1) + 1;
  request.traceLayer = layer;
  request.traceHead = head;
  request.traceSequence = request.sequences - 1;
  request.tracePattern = true;
  request.bootstrap = 0;
  const nlohmann::json answer = in.run(request, "now", {}, pinned);
  const nf::AttributionResult a = nf::attributionResultFromJson(answer);
  const nlohmann::json& trace = answer.at("trace");
  const std::vector<double> pattern = trace.at("pattern").get<std::vector<double>>();
  const size_t length = a.trace.tokens.size(), n = std::min<size_t>(static_cast<size_t>(tokens), length);
  if (pattern.size() != length * length || a.trace.dla.size() + 1 != length ||
      a.trace.de.size() + 1 != length)
    throw std::runtime_error("the head trace came back with inconsistent lengths");
  Detail d;
  d.layer = layer;
  d.head = head;
  d.sequence = sequence;
  d.step = a.header.step;
  const std::vector<std::string> texts = AnalysisInputs::sentTexts(trace, "token_texts", a.trace.tokens);
  for (size_t i = 0; i < n; ++i) d.tokens << shortToken(texts[i]);
  d.dla.assign(a.trace.dla.begin(), a.trace.dla.begin() + static_cast<std::ptrdiff_t>(n - 1));
  d.de.assign(a.trace.de.begin(), a.trace.de.begin() + static_cast<std::ptrdiff_t>(n - 1));
  for (size_t q = 0; q < n; ++q)
    for (size_t k = 0; k < n; ++k) d.pattern.push_back(pattern[q * length + k]);
  return d;
}

void HeadsPane::drawDetail(std::shared_ptr<const Detail> detail) {
  m_detail = std::move(detail);
  m_detailPending = false;
  m_detailNote = nullptr;
  const Detail& d = *m_detail;
  colourDetail(/*stale=*/false);
  // Position i predicts token i + 1: label each point with the token being predicted.
  QVector<double> x, dla, de;
  QStringList predicted;
  for (size_t i = 0; i < d.dla.size(); ++i) {
    x << static_cast<double>(i);
    dla << d.dla[i];
    de << d.de[i];
    predicted << (static_cast<int>(i) + 1 < d.tokens.size() ? d.tokens[static_cast<int>(i) + 1] : QString());
  }
  m_trace->graph(0)->setData(x, dla, true);
  m_trace->graph(1)->setData(x, de, true);
  m_trace->xAxis->setTicker(tokenTicker(predicted));
  m_trace->rescaleAxes();
  m_trace->xAxis->setRange(-0.5, x.size() - 0.5);
  m_trace->yAxis->scaleRange(1.1);
  m_trace->replot();

  const int n = d.tokens.size();
  QCPColorMapData* p = m_patternMap->data();
  p->setSize(n, n);
  p->setRange(QCPRange(0, n - 1), QCPRange(0, n - 1));
  for (int q = 0; q < n; ++q)
    for (int k = 0; k < n; ++k) p->setCell(k, q, d.pattern[static_cast<size_t>(q * n + k)]);
  m_pattern->xAxis->setTicker(tokenTicker(d.tokens));
  m_pattern->yAxis->setTicker(tokenTicker(d.tokens));
  m_pattern->xAxis->setRange(-0.5, n - 0.5);
  m_pattern->yAxis->setRange(-0.5, n - 0.5);
  setPlotTitle(m_pattern, tr("L%1H%2 attention pattern (hover a cell)").arg(d.layer).arg(d.head));
  setPlotTitle(m_trace, tr("L%1H%2 per position: DLA vs DE, sequence %3, its first %4 tokens")
                            .arg(d.layer)
                            .arg(d.head)
                            .arg(d.sequence)
                            .arg(d.tokens.size()));
  // A long stretch widens the plots (the pane scrolls) rather than crowding the token labels.
  for (QCustomPlot* plot : {m_trace, m_pattern}) plot->setMinimumWidth(std::max(260, 14 * n + 90));
  arrangeDetail();
  m_pattern->replot();
  m_trace->replot();

  const size_t index = static_cast<size_t>(d.layer * m_heads + d.head);
  const QString step = d.step >= 0 ? tr("step %1").arg(d.step) : tr("saved model");
  // The maps' numbers are the maps' step's. A trace of another step (a connected run's is computed on the
  // model as it is now) says which step the maps are of instead of pairing its step with their numbers.
  if (d.step != shownStep()) {
    m_detailLabel->setText(tr("<b>L%1H%2</b> · %3 · the maps above are of %4 · sequence:")
                               .arg(d.layer)
                               .arg(d.head)
                               .arg(step)
                               .arg(shownStep() >= 0 ? tr("step %1").arg(shownStep()) : tr("saved model")));
    Q_EMIT detailShown();
    return;
  }
  m_detailLabel->setText(
      tr("<b>L%1H%2</b> · %6 · sink share %3 (mean attention to position 0: %4) · NMAE %5 % · sequence:")
          .arg(d.layer)
          .arg(d.head)
          .arg(m_sinks && index < m_sinks->sinkShare.size() ? m_sinks->sinkShare[index] : 0.0, 0, 'g', 3)
          .arg(m_sinks && index < m_sinks->meanPositionZero.size() ? m_sinks->meanPositionZero[index] : 0.0,
               0, 'g', 3)
          .arg(index < m_nmae.size() ? m_nmae[index] : 0.0, 0, 'g', 3)
          .arg(step));
  Q_EMIT detailShown();
}

// The detail's colours: DLA blue, DE orange dashed, attention white (0) to dark blue (1); a stale detail
// washed out to grey.
void HeadsPane::colourDetail(bool stale) {
  m_trace->graph(0)->setPen(stale ? QPen(QColor(190, 190, 190), 1.5) : QPen(QColor(0x1f77b4), 2));
  m_trace->graph(1)->setPen(stale ? QPen(QColor(190, 190, 190), 1.5)
                                  : QPen(QColor(0xff7f0e), 1.5, Qt::DashLine));
  const QCPColorGradient pattern =
      gradientThrough({{0.0, Qt::white}, {1.0, stale ? QColor(0xc8c8c8) : QColor(0x08306b)}});
  m_patternMap->setGradient(pattern);
  m_patternMap->colorScale()->setGradient(pattern);
}

QString HeadsPane::detailText() const { return m_detailLabel->text(); }

void HeadsPane::showPatternTooltip(const QPoint& pos) {
  const int n = m_detail ? static_cast<int>(m_detail->tokens.size()) : 0;
  const int key = static_cast<int>(std::lround(m_pattern->xAxis->pixelToCoord(pos.x())));
  const int query = static_cast<int>(std::lround(m_pattern->yAxis->pixelToCoord(pos.y())));
  if (!m_pattern->axisRect()->rect().contains(pos) || key < 0 || query < 0 || key >= n || query >= n) {
    QToolTip::hideText();
    return;
  }
  const QStringList& t = m_detail->tokens;
  QToolTip::showText(m_pattern->mapToGlobal(pos),
                     tr("query %1 “%2” → key %3 “%4”: weight %5")
                         .arg(QString::number(query), t[query], QString::number(key), t[key],  // one pass:
                              QString::number(m_detail->pattern[static_cast<size_t>(query * n + key)], 'f',
                                              3)),  // a token "%4" stays as it is
                     m_pattern);
}

void HeadsPane::retranslate() {
  setPlotTitle(m_maps, tr("Per head, mean over positions: |DLA|, |DE| (logit units) and NMAE (%)"));
  const QString names[] = {tr("mean |DLA|"), tr("mean |DE|"), tr("NMAE (%)")};
  for (int i = 0; i < 3; ++i) {
    m_colorMaps[i]->setName(names[i]);
    m_colorMaps[i]->keyAxis()->setLabel(tr("head"));
    m_colorMaps[i]->valueAxis()->setLabel(tr("layer"));
    m_colorMaps[i]->colorScale()->axis()->setLabel(names[i]);
  }
  m_trace->graph(0)->setName(tr("DLA (cached scale)"));  // the final norm's; the pane's text says so
  m_trace->graph(1)->setName(tr("DE (recomputed)"));
  m_trace->xAxis->setLabel(tr("token predicted"));
  m_trace->yAxis->setLabel(tr("logit contribution"));
  m_patternMap->setName(tr("attention"));
  m_pattern->xAxis->setLabel(tr("key"));
  m_pattern->yAxis->setLabel(tr("query"));
  m_patternMap->colorScale()->axis()->setLabel(tr("attention weight"));
  if (m_attribution) showSummary();
  const bool pending = m_detailPending;  // drawDetail clears both
  const DetailNote note = m_detailNote;
  if (m_detail) drawDetail(m_detail);  // its titles and label in the new language
  if (!m_detail) {
    setPlotTitle(m_trace, tr("Click a head to see its DLA and DE per position"));
    setPlotTitle(m_pattern, tr("Click a head to see its attention pattern"));
    m_detailLabel->setText(tr("No head selected. Sequence:"));
  }
  if (pending) markDetailStale();
  if (note) showDetailNote(note);  // drawDetail cleared it; it still says why no detail came
  m_sequence->setToolTip(tr("Which validation sequence the detail shows"));
  m_detailTokens->setSuffix(tr(" tokens"));
  m_detailTokens->setToolTip(
      tr("How many of the sequence's first tokens the detail shows (up to the whole "
         "sequence; the plots widen, the pane scrolls)"));
  for (QCustomPlot* p : {m_maps, m_trace, m_pattern}) p->replot();
  AnalysisPane::retranslate();
}
