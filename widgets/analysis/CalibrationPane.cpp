#include "analysis/CalibrationPane.h"

#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
constexpr int64_t kNewTokens = 24;
const QColor kNow(0x1f77b4), kStart(0xaaaaaa);
}  // namespace

struct CalibrationPane::Texts {
  QStringList prompts, startGreedy, startSampled, nowGreedy, nowSampled;
};

struct CalibrationPane::Shown {
  nf::ModelBehaviour now, start;
  bool withStart = true;  // false: the starting model is the model now (its texts and `start` are empty)
  Texts texts;
};

CalibrationPane::CalibrationPane(AnalysisRunner* runner, QWidget* parent)
    : AnalysisPane(runner, "calibration", parent) {
  m_reliability = makePlot(this, "reliability_diagram");
  auto* group = new QCPBarsGroup(m_reliability);
  for (const QColor& c : {kStart, kNow}) {
    auto* bars = new QCPBars(m_reliability->xAxis, m_reliability->yAxis);
    bars->setWidth(0.04);
    bars->setBarsGroup(group);
    bars->setPen(c.darker(130));
    bars->setBrush(c);
  }
  QCPGraph* diagonal = m_reliability->addGraph();
  diagonal->setPen(QPen(Qt::black, 1, Qt::DashLine));
  diagonal->setData(QVector<double>{0, 1}, QVector<double>{0, 1});
  m_reliability->xAxis->setRange(0, 1);
  m_reliability->yAxis->setRange(0, 1);
  placeLegendBelowTitle(m_reliability, 3);

  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_samples = new QTableWidget(0, 0, this);  // its columns: draw()
  m_samples->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_samples->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_samples->setWordWrap(true);
  m_samples->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // Rows as tall as their texts at the columns' widths: Qt sizes a row when it is filled (here perhaps while
  // the pane is hidden, 100 pixels wide: rows of 240), not again when a column is resized; queued, as the
  // other columns are resized after the signal.
  connect(m_samples->horizontalHeader(), &QHeaderView::sectionResized, m_samples,
          &QTableWidget::resizeRowsToContents, Qt::QueuedConnection);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_reliability);
  split->addWidget(m_samples);
  body()->addWidget(m_summary);
  body()->addWidget(split, 1);
  retranslate();
}

QString CalibrationPane::description() const {
  return tr(
      "Loss, entropy, accuracy and calibration of the model now and of the starting model, a "
      "reliability diagram, and greedy and sampled continuations of a few prompts.");
}

AnalysisWork CalibrationPane::makeWork() {
  QPointer<CalibrationPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    auto shown = std::make_shared<Shown>(computeShown(in, progress));
    return [self, shown] {
      if (!self) return;
      self->draw(shown);
      const nf::AnalysisHeader& h = shown->now.header;
      self->showHeader(h.step, h.model, h.norms, h.data);
    };
  };
}

// The request's prompts (its default texts) are encoded with the model's tokenizer, and the continuations'
// texts come along; without a tokenizer there are no prompts to continue, only the measures.
CalibrationPane::Shown CalibrationPane::computeShown(const AnalysisInputs& in,
                                                     const nf::ProgressFn& progress) {
  nf::AnalysisRequest request = in.request("calibration");
  request.newTokens = kNewTokens;
  if (!in.encodesText) request.prompts.clear();
  Shown shown;
  Texts& t = shown.texts;
  auto read = [&](const nlohmann::json& answer, nf::ModelBehaviour& behaviour, QStringList& greedy,
                  QStringList& sampled) {
    const nlohmann::json& entry = answer.at("models").at(0);
    behaviour = nf::modelBehaviourFromJson(entry);
    t.prompts.clear();  // the same prompts for both models
    for (const nlohmann::json& c : entry.at("continuations")) {
      t.prompts << QString::fromStdString(c.value("prompt_text", std::string()));
      greedy << QString::fromStdString(c.value("greedy_text", std::string()));
      sampled << QString::fromStdString(c.value("sampled_text", std::string()));
    }
  };
  const nlohmann::json nowAnswer = in.run(request, "now", progress);
  read(nowAnswer, shown.now, t.nowGreedy, t.nowSampled);
  const auto startAnswer = in.runStart(request);
  shown.withStart = startAnswer.has_value();
  if (!shown.withStart) return shown;
  read(*startAnswer, shown.start, t.startGreedy, t.startSampled);
  if (t.nowGreedy.size() != t.startGreedy.size())
    throw std::runtime_error("the two models' answers continue different prompts");
  return shown;
}

void CalibrationPane::draw(std::shared_ptr<const Shown> shown) {
  m_shown = std::move(shown);
  const nf::ModelBehaviour &now = m_shown->now, &start = m_shown->start;
  const Texts& t = m_shown->texts;
  const nf::ModelBehaviour* models[] = {m_shown->withStart ? &start : nullptr, &now};
  for (int m = 0; m < 2; ++m) {
    QVector<double> centers, accuracy;
    for (const nf::CalibrationBin& b :
         models[m] ? models[m]->summary.bins : std::vector<nf::CalibrationBin>{}) {
      if (b.count == 0) continue;
      centers << (b.lower + b.upper) / 2;
      accuracy << b.accuracy;
    }
    qobject_cast<QCPBars*>(m_reliability->plottable(m))->setData(centers, accuracy);
  }
  setLegendEntries(
      m_reliability,
      m_shown->withStart
          ? std::vector<QCPAbstractPlottable*>{m_reliability->plottable(0), m_reliability->plottable(1),
                                               m_reliability->graph(0)}
          : std::vector<QCPAbstractPlottable*>{m_reliability->plottable(1), m_reliability->graph(0)});
  m_reliability->replot();
  auto cell = [](const QString& text) { return QStringLiteral("<td>%1</td>").arg(text); };
  auto measures = [&cell](const nf::LossSummary& s, bool bold) {
    const QString open = bold ? "<b>" : "", close = bold ? "</b>" : "";
    QString cells;
    for (const QString& n : {QString::number(s.meanLoss, 'f', 4), QString::number(s.meanEntropy, 'f', 3),
                             QString::number(s.accuracy, 'f', 3), QString::number(s.ece, 'f', 4)})
      cells += cell(open + n + close);
    return cells;
  };
  QString table = "<table cellspacing='0' cellpadding='3'><tr><th></th><th>" + tr("loss") + "</th><th>" +
                  tr("entropy") + "</th><th>" + tr("top-1") + "</th><th>" + tr("ECE") + "</th></tr>";
  if (m_shown->withStart)
    table += "<tr>" + cell(tr("starting model")) + measures(start.summary, false) + "</tr>";
  table += "<tr>" + cell("<b>" + tr("now") + "</b>") + measures(now.summary, true) + "</tr></table>";
  m_summary->setText(
      table + "<small>" +
      tr("On the sequences the header names; the loss plot's evaluations read the run's own evaluation "
         "tokens, so the two losses differ.") +
      "</small>");
  // A column per model shown (a hidden column left the rows as tall as for a narrow one).
  QStringList headers = {tr("prompt")};
  if (m_shown->withStart) headers << tr("starting model");
  m_samples->setColumnCount(static_cast<int>(headers.size()) + 1);
  m_samples->setHorizontalHeaderLabels(headers << tr("now"));
  m_samples->setRowCount(static_cast<int>(t.prompts.size()) * 2);
  for (int i = 0; i < t.prompts.size(); ++i)
    for (int kind = 0; kind < 2; ++kind) {
      const int row = 2 * i + kind;
      QStringList cells = {(kind == 0 ? tr("greedy") : tr("sampled")) + ": " + t.prompts[i]};
      if (m_shown->withStart) cells << (kind == 0 ? t.startGreedy[i] : t.startSampled[i]);
      cells << (kind == 0 ? t.nowGreedy[i] : t.nowSampled[i]);
      for (int c = 0; c < cells.size(); ++c) m_samples->setItem(row, c, new QTableWidgetItem(cells[c]));
    }
}

QString CalibrationPane::summaryText() const { return m_summary->text(); }

void CalibrationPane::retranslate() {
  setPlotTitle(m_reliability, tr("Reliability diagram: accuracy per confidence bin"));
  m_reliability->xAxis->setLabel(tr("confidence (top-1 probability)"));
  m_reliability->yAxis->setLabel(tr("accuracy"));
  m_reliability->plottable(0)->setName(tr("starting model"));
  m_reliability->plottable(1)->setName(tr("now"));
  m_reliability->graph(0)->setName(tr("perfect calibration"));
  if (m_shown) draw(m_shown);  // the table's text in the new language
  m_reliability->replot();
  AnalysisPane::retranslate();
}
