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
  m_samples = new QTableWidget(0, 3, this);
  m_samples->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_samples->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_samples->setWordWrap(true);
  m_samples->setEditTriggers(QAbstractItemView::NoEditTriggers);
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
  read(in.runStart(request, nowAnswer), shown.start, t.startGreedy, t.startSampled);
  if (t.nowGreedy.size() != t.startGreedy.size())
    throw std::runtime_error("the two models' answers continue different prompts");
  return shown;
}

void CalibrationPane::draw(std::shared_ptr<const Shown> shown) {
  m_shown = std::move(shown);
  const nf::ModelBehaviour &now = m_shown->now, &start = m_shown->start;
  const Texts& t = m_shown->texts;
  const nf::ModelBehaviour* models[] = {&start, &now};
  for (int m = 0; m < 2; ++m) {
    QVector<double> centers, accuracy;
    for (const nf::CalibrationBin& b : models[m]->summary.bins) {
      if (b.count == 0) continue;
      centers << (b.lower + b.upper) / 2;
      accuracy << b.accuracy;
    }
    qobject_cast<QCPBars*>(m_reliability->plottable(m))->setData(centers, accuracy);
  }
  m_reliability->replot();
  const nf::LossSummary &a = start.summary, &b = now.summary;
  m_summary->setText(
      tr("<table cellspacing='0' "
         "cellpadding='3'><tr><th></th><th>loss</th><th>entropy</th><th>top-1</th><th>ECE</th></tr>"
         "<tr><td>starting model</td><td>%1</td><td>%2</td><td>%3</td><td>%4</td></tr>"
         "<tr><td><b>now</b></td><td><b>%5</b></td><td><b>%6</b></td><td><b>%7</b></td>"
         "<td><b>%8</b></td></tr></table>")
          .arg(a.meanLoss, 0, 'f', 4)
          .arg(a.meanEntropy, 0, 'f', 3)
          .arg(a.accuracy, 0, 'f', 3)
          .arg(a.ece, 0, 'f', 4)
          .arg(b.meanLoss, 0, 'f', 4)
          .arg(b.meanEntropy, 0, 'f', 3)
          .arg(b.accuracy, 0, 'f', 3)
          .arg(b.ece, 0, 'f', 4) +
      "<small>" +
      tr("On the sequences the header names; the loss plot's evaluations read the run's own evaluation "
         "tokens, so the two losses differ.") +
      "</small>");
  m_samples->setRowCount(static_cast<int>(t.prompts.size()) * 2);
  for (int i = 0; i < t.prompts.size(); ++i)
    for (int kind = 0; kind < 2; ++kind) {
      const int row = 2 * i + kind;
      m_samples->setItem(
          row, 0, new QTableWidgetItem((kind == 0 ? tr("greedy") : tr("sampled")) + ": " + t.prompts[i]));
      m_samples->setItem(row, 1, new QTableWidgetItem(kind == 0 ? t.startGreedy[i] : t.startSampled[i]));
      m_samples->setItem(row, 2, new QTableWidgetItem(kind == 0 ? t.nowGreedy[i] : t.nowSampled[i]));
    }
}

void CalibrationPane::retranslate() {
  setPlotTitle(m_reliability, tr("Reliability diagram: accuracy per confidence bin"));
  m_reliability->xAxis->setLabel(tr("confidence (top-1 probability)"));
  m_reliability->yAxis->setLabel(tr("accuracy"));
  m_reliability->plottable(0)->setName(tr("starting model"));
  m_reliability->plottable(1)->setName(tr("now"));
  m_reliability->graph(0)->setName(tr("perfect calibration"));
  m_samples->setHorizontalHeaderLabels({tr("prompt"), tr("starting model"), tr("now")});
  if (m_shown) draw(m_shown);  // the table's text in the new language
  m_reliability->replot();
  AnalysisPane::retranslate();
}
