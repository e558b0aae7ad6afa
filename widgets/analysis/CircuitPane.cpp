#include "analysis/CircuitPane.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QSlider>
#include <QVBoxLayout>
#include <cmath>

#include "io/atomic_file.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
const QColor kPositive(0xd62728), kNegative(0x1f77b4), kNode(0x444444);

// Where a graph's nodes sit: rows bottom to top — embeddings (0), block l's heads (2l + 1) and MLP (2l + 2),
// the logits (2L + 1); a block's heads side by side with the embeddings and logits centred on them, the
// MLPs to their right (so the residual path up the middle does not run through them). A head's query, key
// and value inputs enter it at its left, middle and right.
struct GraphShape {
  int layers = 0, heads = 0, kvHeads = 0;
  explicit GraphShape(const nf::CircuitResult& r) {
    for (const std::string& n : r.upstream)
      layers += n.rfind("MLP ", 0) == 0, heads += n.rfind("L0H", 0) == 0;
    for (const std::string& n : r.downstream)
      kvHeads += n.rfind("L0", 0) == 0 && n.size() > 2 && n.compare(n.size() - 2, 2, ".k") == 0;
  }
  double headX(double head) const { return head - (heads - 1) / 2.0; }
  double mlpX() const { return (heads - 1) / 2.0 + 0.8; }

  // A node's position: a component (upstream names, "logits") or, with `input`, where a reader enters it.
  QPointF position(const QString& name) const {
    static const QRegularExpression head("^L(\\d+)H(\\d+)$"), mlp("^MLP (\\d+)$"),
        input("^L(\\d+)(H|KV)(\\d+)\\.([qkv])$");
    if (name == "embed") return {0, 0};
    if (name == "logits") return {0, 2.0 * layers + 1};
    if (const auto m = mlp.match(name); m.hasMatch()) return {mlpX(), 2.0 * m.captured(1).toInt() + 2};
    if (const auto m = head.match(name); m.hasMatch())
      return {headX(m.captured(2).toInt()), 2.0 * m.captured(1).toInt() + 1};
    if (const auto m = input.match(name); m.hasMatch()) {
      const int index = m.captured(3).toInt(), group = kvHeads > 0 ? heads / kvHeads : 1;
      // A key/value head of grouped-query attention serves `group` query heads: it sits among them.
      const double x = m.captured(2) == "KV" ? headX(index * group + (group - 1) / 2.0) : headX(index);
      const double offset = m.captured(4) == "q" ? -0.2 : m.captured(4) == "v" ? 0.2 : 0.0;
      return {x + offset, 2.0 * m.captured(1).toInt() + 1};
    }
    return {0, 0};
  }
};
}  // namespace

CircuitPane::CircuitPane(AnalysisRunner* runner, QWidget* parent) : AnalysisPane(runner, "circuit", parent) {
  m_method = new QComboBox(this);
  m_method->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // may narrow
  m_method->setMinimumContentsLength(8);
  m_method->addItem(QString(), "eap");
  m_method->addItem(QString(), "eap-ig");
  connect(m_method, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { refresh(); });
  m_edges = new QSlider(Qt::Horizontal, this);
  m_edges->setRange(1, 1);
  m_edgesLabel = new QLabel(this);
  connect(m_edges, &QSlider::valueChanged, this, [this] {
    drawGraph(Starting);
    drawGraph(Now);
  });
  m_save = new QPushButton(this);
  m_save->setEnabled(false);
  connect(m_save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the circuit"), QString(),
                                                      tr("Circuit JSON (*.json);;Edges CSV (*.csv)"));
    QString error;
    if (!path.isEmpty() && !saveCircuit(path, &error)) m_summary->setText(error);
  });
  auto* controls = new QHBoxLayout;
  controls->addWidget(m_method);
  controls->addWidget(m_edgesLabel);
  controls->addWidget(m_edges, 1);
  body()->addLayout(controls);
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  auto* summary = new QHBoxLayout;  // the save button beside the wrapping summary: the pane stays narrow
  summary->addWidget(m_summary, 1);
  summary->addWidget(m_save, 0, Qt::AlignTop);
  body()->addLayout(summary);

  auto* graphs = new QHBoxLayout;
  for (int model : {Starting, Now}) {
    QCustomPlot* plot = makePlot(this, model == Now ? "circuit_now" : "circuit_start");
    plot->setMinimumSize(170, 300);
    plot->xAxis->setTicks(false);
    plot->xAxis->setTickLabels(false);
    plot->addGraph()->setLineStyle(QCPGraph::lsNone);
    plot->graph(0)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kNode, Qt::white, 9));
    connect(plot, &QCustomPlot::mousePress, this,
            [this, model](QMouseEvent* event) { chooseNode(Model(model), event->pos()); });
    m_graphs[model] = plot;
    graphs->addWidget(plot, 1);
  }
  body()->addLayout(graphs, 3);
  m_curve = makePlot(this, "circuit_faithfulness");
  m_curve->setMinimumHeight(160);
  for (bool start : {true, false}) {
    QCPGraph* g = m_curve->addGraph();
    g->setPen(QPen(QColor(0x2ca02c), start ? 1.5 : 2, start ? Qt::DashLine : Qt::SolidLine));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  }
  m_curve->xAxis->setScaleType(QCPAxis::stLogarithmic);
  m_curve->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  placeLegendBelowTitle(m_curve, 2);
  enableHoverLabels(m_curve);
  body()->addWidget(m_curve, 2);
  retranslate();
}

QString CircuitPane::description() const {
  return tr(
      "The circuit behind the indirect-object prompts, found by edge attribution patching: which heads and "
      "MLPs pass the name to which, drawn as a graph for the starting model and the model now, with the "
      "faithfulness of the top edges measured by patching everything else — does removing LayerNorm make "
      "the circuit sparser or the attribution truer?");
}

AnalysisWork CircuitPane::makeWork() {
  QPointer<CircuitPane> self(this);
  const std::string method = m_method->currentData().toString().toStdString();
  return [self, method](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    nf::AnalysisRequest request = in.request("circuit");
    request.method = method;
    auto nowJson = std::make_shared<const nlohmann::json>(in.run(request, "now", progress));
    auto now = std::make_shared<const nf::CircuitResult>(nf::circuitResultFromJson(*nowJson));
    std::shared_ptr<const nf::CircuitResult> start;
    if (const auto startAnswer = in.runStart(request))
      start = std::make_shared<const nf::CircuitResult>(nf::circuitResultFromJson(*startAnswer));
    return [self, now, start, nowJson] {
      if (!self) return;
      self->m_results = {start, now};
      self->m_nowJson = nowJson;
      {
        const QSignalBlocker block(self->m_edges);
        self->m_edges->setRange(1, static_cast<int>(std::max<size_t>(now->edges.size(), 1)));
        self->m_edges->setValue(static_cast<int>(std::max<int64_t>(2 * now->circuitEdges, 1)));
      }
      self->m_save->setEnabled(true);
      self->m_graphs[Starting]->setVisible(start != nullptr);  // the model now alone, with the room
      self->drawGraph(Starting);
      self->drawGraph(Now);
      self->drawCurve();
      self->showSummary();
      self->showHeader(now->header.step, now->header.model, now->header.norms, now->header.data);
    };
  };
}

QList<QCustomPlot*> CircuitPane::plots() const {
  if (m_results[Now] && !m_results[Starting]) return {m_graphs[Now], m_curve};
  return {m_graphs[Starting], m_graphs[Now], m_curve};
}

void CircuitPane::setMethod(const QString& method) { m_method->setCurrentIndex(m_method->findData(method)); }
void CircuitPane::setShownEdges(int edges) { m_edges->setValue(edges); }
int CircuitPane::shownEdges() const { return m_edges->value(); }

int CircuitPane::drawnEdges(Model model) const {
  int lines = 0;
  for (int i = 0; i < m_graphs[model]->itemCount(); ++i)
    lines += qobject_cast<QCPItemLine*>(m_graphs[model]->item(i)) != nullptr;
  return lines;
}

void CircuitPane::drawGraph(Model model) {
  QCustomPlot* plot = m_graphs[model];
  const nf::CircuitResult* r = m_results[model].get();
  if (!r) return;
  plot->clearItems();
  const GraphShape shape(*r);
  const size_t shown = std::min<size_t>(static_cast<size_t>(m_edges->value()), r->edges.size());
  double largest = 0;
  for (size_t i = 0; i < shown; ++i) largest = std::max(largest, std::abs(r->edges[i].score));
  // Edges first, so the nodes are drawn over their ends.
  for (size_t i = shown; i-- > 0;) {
    const nf::CircuitEdge& e = r->edges[i];
    auto* line = new QCPItemLine(plot);
    line->start->setCoords(shape.position(QString::fromStdString(r->upstream[e.from])));
    line->end->setCoords(shape.position(QString::fromStdString(r->downstream[e.to])));
    QColor colour = e.score >= 0 ? kPositive : kNegative;
    const bool inCircuit = static_cast<int64_t>(i) < r->circuitEdges;
    if (!inCircuit) colour.setAlpha(120);
    line->setPen(QPen(colour, 0.6 + 4.4 * std::abs(e.score) / std::max(largest, 1e-12),
                      inCircuit ? Qt::SolidLine : Qt::DashLine));
    line->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 6, 8));
  }
  QVector<double> x, y;
  QStringList names{"embed", "logits"};
  for (const std::string& n : r->upstream)
    if (n != "embed") names << QString::fromStdString(n);
  static const QRegularExpression headName("^L\\d+H(\\d+)$");
  for (const QString& name : names) {
    const QPointF p = shape.position(name);
    x << p.x();
    y << p.y();
    // A head by its number alone (its row names the layer); the other nodes' rows name them whole. Over
    // the edges on a pale ground, so that they stay legible where arrows cross them.
    const QRegularExpressionMatch head = headName.match(name);
    if (!head.hasMatch()) continue;
    auto* label = new QCPItemText(plot);
    label->position->setCoords(p.x(), p.y() - 0.34);
    label->setText("H" + head.captured(1));
    label->setFont(QFont(font().family(), 7));
    label->setColor(kNode);
    label->setBrush(QColor(255, 255, 255, 210));
    label->setPadding(QMargins(1, 0, 1, 0));
  }
  plot->graph(0)->setData(x, y);
  plot->xAxis->setRange(-shape.heads / 2.0 - 0.2, shape.mlpX() + 0.6);
  plot->yAxis->setRange(-0.7, 2.0 * shape.layers + 1.5);
  auto rows = QSharedPointer<QCPAxisTickerText>::create();
  rows->addTick(0, tr("embed"));
  for (int l = 0; l < shape.layers; ++l)
    rows->addTick(2 * l + 1, tr("L%1 heads").arg(l)), rows->addTick(2 * l + 2, tr("MLP %1").arg(l));
  rows->addTick(2 * shape.layers + 1, tr("logits"));
  plot->yAxis->setTicker(rows);
  setPlotTitle(plot, tr("%1: %2 of %3 edges keep %4 %")
                         .arg(model == Now ? tr("Model now") : tr("Starting model"))
                         .arg(r->circuitEdges)
                         .arg(r->edges.size())
                         .arg(100 * r->faithfulness, 0, 'f', 0));
  plot->replot();
}

void CircuitPane::drawCurve() {
  for (int model : {Starting, Now}) {
    QVector<double> x, y;
    if (m_results[model])
      for (const nf::FaithfulnessPoint& p : m_results[model]->curve)
        if (p.edges > 0) x << double(p.edges), y << p.faithfulness;
    m_curve->graph(model)->setData(x, y, true);
  }
  showCurveTitleAndLegend();
  m_curve->rescaleAxes();
  m_curve->yAxis->setRange(std::min(0.0, m_curve->yAxis->range().lower), 1.05);
  m_curve->replot();
}

void CircuitPane::showCurveTitleAndLegend() {
  const bool withStart = !m_results[Now] || m_results[Starting];  // before any result: as a run shows it
  setPlotTitle(m_curve, withStart ? tr("Faithfulness of the top edges, measured (dashed: starting model)")
                                  : tr("Faithfulness of the top edges, measured"));
  if (withStart)
    setLegendEntries(m_curve, {m_curve->graph(Starting), m_curve->graph(Now)});
  else
    setLegendEntries(m_curve, {m_curve->graph(Now)});
}

void CircuitPane::showSummary() {
  const nf::CircuitResult& now = *m_results[Now];
  const nf::CircuitResult* start = m_results[Starting].get();
  // No error where no edge was checked (a result made with --check 0): null in its JSON.
  auto error = [this](double percent) {
    return std::isfinite(percent) ? QString::number(percent, 'f', 1) + " %" : tr("not checked");
  };
  const QString logitDiff = tr("Logit difference clean %1, corrupted %2.")
                                .arg(now.cleanLogitDiff, 0, 'f', 2)
                                .arg(now.corruptedLogitDiff, 0, 'f', 2);
  m_summary->setText(
      logitDiff + " " +
      (start
           ? tr("Attribution error on the top edges (score against patching each alone): starting model %1, "
                "model now %2.")
                 .arg(error(start->scoreError), error(now.scoreError))
           : tr("Attribution error on the top edges (score against patching each alone): %1.")
                 .arg(error(now.scoreError))));
  m_edgesLabel->setText(tr("edges drawn: %1").arg(m_edges->value()));
}

QString CircuitPane::summaryText() const { return m_summary->text(); }

QPoint CircuitPane::nodeCenter(Model model, const QString& node) const {
  if (!m_results[model]) return {-1, -1};
  const QPointF p = GraphShape(*m_results[model]).position(node);
  const QCustomPlot* plot = m_graphs[model];
  return QPoint(static_cast<int>(plot->xAxis->coordToPixel(p.x())),
                static_cast<int>(plot->yAxis->coordToPixel(p.y())));
}

void CircuitPane::chooseNode(Model model, const QPoint& pixel) {
  if (!m_results[model]) return;
  static const QRegularExpression head("^L(\\d+)H(\\d+)$");
  for (const std::string& name : m_results[model]->upstream) {
    const auto m = head.match(QString::fromStdString(name));
    if (!m.hasMatch()) continue;
    const QPoint centre = nodeCenter(model, QString::fromStdString(name));
    if ((centre - pixel).manhattanLength() <= 12) {
      Q_EMIT headChosen(m.captured(1).toInt(), m.captured(2).toInt());
      return;
    }
  }
}

bool CircuitPane::saveCircuit(const QString& path, QString* error) const {
  if (!m_nowJson) {
    if (error) *error = tr("No circuit has been computed yet.");
    return false;
  }
  try {
    const bool csv = path.endsWith(".csv", Qt::CaseInsensitive);
    nf::writeFileAtomic(
        path.toStdString(),
        csv ? nf::edgesCsv(*m_results[Now])
            : m_nowJson->dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return true;
  } catch (const std::exception& e) {
    if (error) *error = tr("Could not save %1: %2").arg(path, QString::fromStdString(e.what()));
    return false;
  }
}

void CircuitPane::retranslate() {
  m_method->setItemText(0, tr("EAP"));
  m_method->setItemText(1, tr("EAP with integrated gradients"));
  m_method->setToolTip(
      tr("how edges are scored: attribution patching, or its integrated-gradients "
         "version (5 steps from the corrupted to the clean embeddings)"));
  m_save->setText(tr("Save circuit…"));
  m_edges->setToolTip(tr("the top edges drawn (by |score|); the circuit's own are solid"));
  showCurveTitleAndLegend();
  m_curve->xAxis->setLabel(tr("edges kept (by |score|)"));
  m_curve->yAxis->setLabel(tr("faithfulness"));
  m_curve->graph(Starting)->setName(tr("starting model"));
  m_curve->graph(Now)->setName(tr("model now"));
  if (m_results[Now]) {
    drawGraph(Starting);
    drawGraph(Now);
    showSummary();
  } else {
    for (QCustomPlot* plot : m_graphs) setPlotTitle(plot, tr("IOI circuit"));
    m_edgesLabel->setText(tr("edges drawn"));
  }
  m_curve->replot();
  AnalysisPane::retranslate();
}
