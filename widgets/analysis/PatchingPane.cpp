#include "analysis/PatchingPane.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QSplitter>
#include <QVBoxLayout>
#include <cmath>
#include <optional>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
// Rows and columns labelled by name ("2 name1", "10 S2", "14 end", "L3"); of plain position numbers only
// every fifth, and none beside a named one, so that labels under a narrow map do not run into each other
// (clicking names any cell).
QSharedPointer<QCPAxisTickerText> labelTicker(const std::vector<std::string>& labels) {
  auto numberOf = [&labels](size_t i) -> std::optional<int> {
    bool number = false;
    const int value = QString::fromStdString(labels[i]).toInt(&number);
    return number ? std::optional<int>(value) : std::nullopt;
  };
  auto isNumber = [&](size_t i) { return numberOf(i).has_value(); };
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool named = !isNumber(i);
    const bool besideNamed = (i > 0 && !isNumber(i - 1)) || (i + 1 < labels.size() && !isNumber(i + 1));
    if (named || (*numberOf(i) % 5 == 0 && !besideNamed))
      ticker->addTick(static_cast<double>(i), QString::fromStdString(labels[i]));
  }
  return ticker;
}

QString highlighted(const QStringList& tokens, int position) {
  QString html;
  for (int i = 0; i < tokens.size(); ++i) {
    const QString t = tokens[i].toHtmlEscaped().replace(' ', "&nbsp;");
    if (i > 0) html += "&#8203;";  // a line may break between tokens (never inside one): narrow panes
    html += i == position ? "<span style='background:#ffd54f;color:#000'><b>" + t + "</b></span>" : t;
  }
  return html;
}
}  // namespace

PatchingPane::PatchingPane(AnalysisRunner* runner, QWidget* parent)
    : AnalysisPane(runner, "patching", parent) {
  m_gridChoice = new QComboBox(this);
  m_gridChoice->addItem(QString(), "resid_pre");
  m_gridChoice->addItem(QString(), "heads");
  connect(m_gridChoice, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    m_row = m_column = -1;
    draw();
  });
  // Another model or run: the cell chosen was of the one before's grid.
  connect(runner, &AnalysisRunner::modelReplaced, this, [this] { m_row = m_column = -1; });
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_plot = makePlot(this, "ioi_patching");
  m_plot->setMinimumHeight(260);
  m_maps = makeHeatMapRow(m_plot, std::vector<QCPColorGradient>(3, divergingGradient()));
  enableHeatMapHoverValues(m_plot, m_maps);
  for (QCPColorMap* map : m_maps) map->keyAxis()->setTickLabelRotation(90);  // positions are tokens
  connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
    int row, column;
    if (grid() && heatMapCellAt(m_maps, event->pos(), &row, &column)) selectCell(row, column);
  });
  m_prompt = new QLabel(this);
  m_prompt->setWordWrap(true);
  m_prompt->setTextFormat(Qt::RichText);
  auto* top = new QHBoxLayout;
  top->addWidget(m_summary, 1);
  top->addWidget(m_gridChoice);
  body()->addLayout(top);
  body()->addWidget(m_plot, 1);
  body()->addWidget(m_prompt);
  retranslate();
}

QString PatchingPane::description() const {
  return tr(
      "Activation patching and attribution patching on the indirect-object prompts, layer by "
      "position and layer by head, and their difference: how far the linear estimate is from the "
      "real effect.");
}

AnalysisWork PatchingPane::makeWork() {
  QPointer<PatchingPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    // The IOI prompts: the opened model's set here, made with the run's tokenizer on a server.
    nf::AnalysisRequest request = in.request("patching");
    request.headPositions = false;
    const nlohmann::json answer = in.run(request, "now", progress);
    auto result = std::make_shared<const nf::PatchingResult>(nf::patchingResultFromJson(answer));
    QStringList clean, corrupted;
    for (const std::string& t :
         AnalysisInputs::sentTexts(answer, "example_clean_texts", result->exampleClean))
      clean << QString::fromStdString(t);
    for (const std::string& t :
         AnalysisInputs::sentTexts(answer, "example_corrupted_texts", result->exampleCorrupted))
      corrupted << QString::fromStdString(t);
    return [self, result, clean, corrupted] {
      if (!self) return;
      self->m_result = result;
      self->m_cleanTokens = clean;
      self->m_corruptedTokens = corrupted;
      self->draw();
      self->showHeader(result->header.step, result->header.model, result->header.norms, result->header.data);
    };
  };
}

const nf::PatchingGrid* PatchingPane::grid() const {
  if (!m_result) return nullptr;
  return m_gridChoice->currentData().toString() == "heads" ? &m_result->heads : &m_result->residPre;
}

void PatchingPane::draw() {
  const nf::PatchingGrid* g = grid();
  if (!g) return;
  if (m_row >= g->rows || m_column >= g->columns) m_row = m_column = -1;  // a cell of an earlier, larger grid
  const std::vector<double> values[] = {g->activation, g->attribution, g->error()};
  for (int i = 0; i < 3; ++i) {
    QCPColorMapData* d = m_maps[i]->data();
    d->setSize(static_cast<int>(g->columns), static_cast<int>(g->rows));
    d->setRange(QCPRange(0, static_cast<double>(g->columns - 1)),
                QCPRange(0, static_cast<double>(g->rows - 1)));
    for (int64_t r = 0; r < g->rows; ++r)
      for (int64_t c = 0; c < g->columns; ++c)
        d->setCell(static_cast<int>(c), static_cast<int>(r),
                   values[i][static_cast<size_t>(r * g->columns + c)]);
    m_maps[i]->keyAxis()->setTicker(labelTicker(g->columnLabels));
    m_maps[i]->valueAxis()->setTicker(labelTicker(g->rowLabels));
    m_maps[i]->keyAxis()->setRange(-0.5, static_cast<double>(g->columns) - 0.5);
    m_maps[i]->valueAxis()->setRange(-0.5, static_cast<double>(g->rows) - 0.5);
    // What the rows and columns are: the first map names the rows for all three, side by side.
    m_maps[i]->keyAxis()->setLabel(g->name == "heads" ? tr("head") : tr("position in the prompt"));
    m_maps[i]->valueAxis()->setLabel(i > 0                         ? QString()
                                     : g->name == "head_positions" ? tr("head")
                                                                   : tr("layer"));
  }
  setSharedSymmetricRange(m_maps);  // one colour, one value in all three; white is "no effect"
  outlineCell(m_plot, m_maps, m_row, m_column);
  m_summary->setText(tr("%1 prompts like the one below · clean logit difference %2, corrupted %3")
                         .arg(m_result->prompts)
                         .arg(m_result->cleanLogitDiff, 0, 'f', 2)
                         .arg(m_result->corruptedLogitDiff, 0, 'f', 2));
  m_plot->replot();
  selectCell(m_row, m_column);
}

void PatchingPane::selectCell(int row, int column) {
  const nf::PatchingGrid* g = grid();
  if (!g) return;
  const bool changed = row != m_row || column != m_column;
  m_row = row;
  m_column = column;
  if (changed) {
    draw();
    return;
  }
  const bool byPosition = g->name == "resid_pre";
  const int position = row < 0 ? -1 : byPosition ? column : static_cast<int>(m_result->endPosition);
  QString text = tr("Clean: %1<br>Corrupted: %2")
                     .arg(highlighted(m_cleanTokens, position), highlighted(m_corruptedTokens, position));
  if (row >= 0) {
    const size_t i = static_cast<size_t>(row * g->columns + column);
    text += "<br>" + tr("<b>%1 × %2</b>: activation %3 · attribution %4 · error %5")
                         .arg(QString::fromStdString(g->rowLabels[static_cast<size_t>(row)]),
                              QString::fromStdString(g->columnLabels[static_cast<size_t>(column)]))
                         .arg(g->activation[i], 0, 'f', 3)
                         .arg(g->attribution[i], 0, 'f', 3)
                         .arg(g->attribution[i] - g->activation[i], 0, 'f', 3);
  } else {
    text += "<br><i>" + tr("Click a cell to mark its position in the prompt.") + "</i>";
  }
  m_prompt->setText(text);
}

QString PatchingPane::promptText() const { return m_prompt->text(); }

void PatchingPane::retranslate() {
  m_gridChoice->setItemText(0, tr("resid_pre: layer × position"));
  m_gridChoice->setItemText(1, tr("heads: layer × head"));
  setPlotTitle(m_plot, tr("IOI patching, normalized logit difference (0 corrupted, 1 clean): activation, "
                          "attribution and their error (attribution − activation)"));
  const QString names[] = {tr("activation patching"), tr("attribution patching"), tr("error")};
  for (int i = 0; i < 3; ++i) {
    m_maps[i]->setName(names[i]);
    m_maps[i]->colorScale()->axis()->setLabel(names[i]);
  }
  if (m_result)
    draw();  // the summary and prompt text in the new language
  else
    m_prompt->setText(tr("Compute to see the prompts."));
  m_plot->replot();
  AnalysisPane::retranslate();
}
