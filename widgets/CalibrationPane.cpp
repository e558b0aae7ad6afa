#include "CalibrationPane.h"

#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "Plots.h"
#include "QCustomPlotInclude.h"

namespace {
constexpr int64_t kPromptTokens = 16;
const QColor kNow(0x1f77b4), kStart(0xaaaaaa);
}  // namespace

struct CalibrationPane::Texts {
  QStringList prompts, startGreedy, startSampled, nowGreedy, nowSampled;
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
  m_reliability->legend->setVisible(true);
  m_reliability->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

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

AnalysisWork CalibrationPane::makeWork() {
  QPointer<CalibrationPane> self(this);
  return [self](const AnalysisInputs& in, const nf::ProgressFn& progress) -> std::function<void()> {
    std::vector<std::vector<int32_t>> prompts;
    if (in.ioi) {
      const auto& clean = in.ioi->prompts.front().clean;
      prompts.push_back(clean);
    }
    for (int64_t s = 0; s < std::min<int64_t>(2, in.sequences.count); ++s) {
      const int32_t* row = in.sequences.row(s);
      prompts.emplace_back(row, row + std::min(kPromptTokens, in.sequences.length));
    }
    nf::BehaviourOptions options;
    options.newTokens = 24;
    auto now = std::make_shared<nf::ModelBehaviour>(nf::modelBehaviour(*in.model, in.sequences, prompts, options, progress));
    auto start = std::make_shared<nf::ModelBehaviour>(nf::modelBehaviour(*in.reference, in.sequences, prompts, options));
    auto texts = std::make_shared<Texts>();
    for (size_t i = 0; i < prompts.size(); ++i) {
      texts->prompts << QString::fromStdString(in.text(prompts[i]));
      texts->startGreedy << QString::fromStdString(in.text(start->continuations[i].greedy));
      texts->startSampled << QString::fromStdString(in.text(start->continuations[i].sampled));
      texts->nowGreedy << QString::fromStdString(in.text(now->continuations[i].greedy));
      texts->nowSampled << QString::fromStdString(in.text(now->continuations[i].sampled));
    }
    return [self, now, start, texts] {
      if (self) self->draw(*now, *start, *texts);
    };
  };
}

void CalibrationPane::draw(const nf::ModelBehaviour& now, const nf::ModelBehaviour& start, const Texts& t) {
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
  m_summary->setText(tr("<table><tr><th></th><th>loss</th><th>entropy</th><th>top-1</th><th>ECE</th></tr>"
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
                         .arg(b.ece, 0, 'f', 4));
  m_samples->setRowCount(static_cast<int>(t.prompts.size()) * 2);
  for (int i = 0; i < t.prompts.size(); ++i)
    for (int kind = 0; kind < 2; ++kind) {
      const int row = 2 * i + kind;
      m_samples->setItem(row, 0, new QTableWidgetItem((kind == 0 ? tr("greedy") : tr("sampled")) + ": " + t.prompts[i]));
      m_samples->setItem(row, 1, new QTableWidgetItem(kind == 0 ? t.startGreedy[i] : t.startSampled[i]));
      m_samples->setItem(row, 2, new QTableWidgetItem(kind == 0 ? t.nowGreedy[i] : t.nowSampled[i]));
    }
  showHeader(now.header.step, now.header.model, now.header.norms, now.header.data);
}

void CalibrationPane::retranslate() {
  setPlotTitle(m_reliability, tr("Reliability diagram: accuracy per confidence bin"));
  m_reliability->xAxis->setLabel(tr("confidence (top-1 probability)"));
  m_reliability->yAxis->setLabel(tr("accuracy"));
  m_reliability->plottable(0)->setName(tr("starting model"));
  m_reliability->plottable(1)->setName(tr("now"));
  m_reliability->graph(0)->setName(tr("perfect calibration"));
  m_samples->setHorizontalHeaderLabels({tr("prompt"), tr("starting model"), tr("now")});
  m_reliability->replot();
  AnalysisPane::retranslate();
}
