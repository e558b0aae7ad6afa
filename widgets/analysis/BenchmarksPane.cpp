#include "analysis/BenchmarksPane.h"

#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <filesystem>

#include "analysis/analysis_header.h"
#include "analysis/benchmark_scores.h"
#include "data/synthetic_benchmarks.h"
#include "io/json_read.h"
#include "views/Plots.h"
#include "views/QCustomPlotInclude.h"

namespace {
// A cell shown as its text, sorted as a number where it is one: line 9 before line 10 (a number in the
// display role would be shown with the locale's thousands separators, "10,042").
class SortedItem : public QTableWidgetItem {
 public:
  using QTableWidgetItem::QTableWidgetItem;
  bool operator<(const QTableWidgetItem& other) const override {
    bool mine = false, theirs = false;
    const qlonglong a = text().toLongLong(&mine), b = other.text().toLongLong(&theirs);
    return mine && theirs ? a < b : QTableWidgetItem::operator<(other);
  }
};

const QColor kNow(0x1f77b4), kStart(0xaaaaaa), kControl(0xff7f0e);
// The bars' series, in the plot's order (each a QCPBars and its QCPErrorBars): the test reads them so.
enum Series { kStartSeries, kNowSeries, kControlSeries, kSeries };
constexpr double kBarWidth = 0.26;
constexpr int kSyntheticItems = 500;

// The score a task is judged by: acc_norm where the harness reports it, else acc (LAMBADA: greedy acc).
// Its standard error is null over one item: no error bar (NaN) then.
std::pair<double, double> headline(const nlohmann::json& task) {
  const char* score = task.contains("acc_norm") ? "acc_norm" : "acc";
  const nlohmann::json& error = task.at(std::string(score) + "_stderr");
  return {task.at(score).get<double>(), error.is_null() ? std::nan("") : error.get<double>()};
}

// Whether the headline score counted item i right.
bool right(const nlohmann::json& task, std::size_t i) {
  const nlohmann::json& item = task.at("items").at(i);
  if (item.contains("greedy")) return item.at("greedy").get<bool>();
  const char* pick = task.contains("acc_norm") ? "predicted_norm" : "predicted";
  return item.at(pick).get<int>() == item.at("gold").get<int>();
}

// A result, perhaps a served run's, is drawn on the GUI thread, where a missing or mistyped field would end
// the window: every field draw() reads is read here first, on the job's thread, whose errors are reported.
void requireDrawable(const nlohmann::json& task, const nlohmann::json& now) {
  nf::analysisHeaderFromJson(task.at("header"));  // a newer build's result is refused
  (void)task.at("task").get<std::string>();
  (void)task.at("n").get<int64_t>();
  (void)headline(task);
  if (task.at("items").size() != now.at("items").size())
    throw std::runtime_error("a benchmark result holds " + std::to_string(task.at("items").size()) +
                             " items, the model now's " + std::to_string(now.at("items").size()));
  for (std::size_t i = 0; i < task.at("items").size(); ++i) {
    (void)right(task, i);
    const nlohmann::json& item = task.at("items").at(i);
    (void)item.at("line").get<int64_t>();
    if (!item.contains("greedy")) (void)item.at("gold").get<int>();
  }
}
}  // namespace

BenchmarksPane::BenchmarksPane(AnalysisRunner* runner, QWidget* parent)
    : AnalysisPane(runner, "benchmarks", parent) {
  m_folderLabel = new QLabel(this);
  m_folderLabel->setWordWrap(true);
  m_choose = new QPushButton(this);
  m_synthetic = new QPushButton(this);
  m_compare = new QPushButton(this);
  m_noCompare = new QPushButton(this);
  m_compareLabel = new QLabel(this);
  m_compareLabel->setWordWrap(true);
  m_limitLabel = new QLabel(this);
  m_limit = new QSpinBox(this);
  m_limit->setRange(10, 100000);
  m_limit->setSingleStep(100);
  // The task files and the model to compare with, one row each, their buttons in aligned columns, the
  // item limit below: side by side they made the pane too wide for a 1280-pixel screen's right column.
  auto* controls = new QGridLayout;
  controls->addWidget(m_folderLabel, 0, 0);
  controls->addWidget(m_choose, 0, 1);
  controls->addWidget(m_synthetic, 0, 2);
  controls->addWidget(m_compareLabel, 1, 0);
  controls->addWidget(m_compare, 1, 1);
  controls->addWidget(m_noCompare, 1, 2);
  auto* limit = new QHBoxLayout;
  limit->addWidget(m_limitLabel);
  limit->addWidget(m_limit);
  controls->addLayout(limit, 2, 1, 1, 2, Qt::AlignLeft);
  controls->setColumnStretch(0, 1);
  body()->addLayout(controls);

  m_plot = makePlot(this, "benchmarks");
  for (const QColor& c : {kStart, kNow, kControl}) {
    auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    bars->setWidth(kBarWidth);
    bars->setPen(c.darker(130));
    bars->setBrush(c);
    auto* errors = new QCPErrorBars(m_plot->xAxis, m_plot->yAxis);
    errors->removeFromLegend();
    errors->setDataPlottable(bars);
  }
  m_plot->yAxis->setRange(0, 100);
  placeLegendBelowTitle(m_plot, 3);
  enableHoverLabels(m_plot);
  m_table = new QTableWidget(0, 5, this);
  // Each column as wide as its header and cells (German headers were cut in even columns), the last the rest.
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSortingEnabled(true);
  auto* split = new QSplitter(Qt::Vertical, this);
  m_differently = new QLabel(this);
  m_differently->setWordWrap(true);
  auto* listed = new QWidget(this);
  auto* list = new QVBoxLayout(listed);
  list->setContentsMargins(0, 0, 0, 0);
  list->addWidget(m_differently);
  list->addWidget(m_table);
  split->addWidget(m_plot);
  split->addWidget(listed);
  body()->addWidget(split, 1);

  QSettings settings;
  m_folder = settings.value("benchmarks/folder").toString();
  m_limit->setValue(settings.value("benchmarks/limit", kSyntheticItems).toInt());
  connect(m_choose, &QPushButton::clicked, this, &BenchmarksPane::chooseFolder);
  connect(m_synthetic, &QPushButton::clicked, this, [this] { setTaskFolder(QString()); });
  connect(m_compare, &QPushButton::clicked, this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("A model to compare with (the vanilla control's final model, say)"), m_control);
    if (!folder.isEmpty()) setControlFolder(folder);
  });
  connect(m_noCompare, &QPushButton::clicked, this, [this] { setControlFolder(QString()); });
  // Another model or run: the model to compare with was chosen for the one before (its buttons are not
  // in view until a result is).
  connect(runner, &AnalysisRunner::modelReplaced, this, [this] { setControlFolder(QString()); });
  connect(m_limit, qOverload<int>(&QSpinBox::valueChanged), this, [this](int items) {
    markInputsChanged();  // the scores shown are of as many items as before
    QSettings().setValue("benchmarks/limit", items);
  });
  retranslate();
}

QString BenchmarksPane::description() const {
  return tr(
      "Downstream benchmarks — HellaSwag, PIQA, WinoGrande, BoolQ, ARC, LAMBADA — scored as "
      "lm-evaluation-harness scores them, on the model now and on the starting model, from the task files "
      "in a folder you choose (nothing is downloaded). Until you choose one, tasks made from the synthetic "
      "corpus in those formats, which the bundled models can answer.");
}

void BenchmarksPane::setTaskFolder(const QString& folder) {
  if (folder != m_folder) markInputsChanged();
  m_folder = folder;
  QSettings().setValue("benchmarks/folder", folder);
  showFolder();
}

void BenchmarksPane::setControlFolder(const QString& folder) {
  if (folder != m_control) markInputsChanged();  // the bars shown compare with the one before
  m_control = folder;
  showFolder();
}

void BenchmarksPane::setItemLimit(int items) { m_limit->setValue(items); }

void BenchmarksPane::chooseFolder() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Folder of benchmark files (hellaswag_val.jsonl, winogrande_1.1/dev.jsonl, …)"), m_folder);
  if (!folder.isEmpty()) setTaskFolder(folder);
}

void BenchmarksPane::showFolder() {
  m_folderLabel->setText(m_folder.isEmpty() ? tr("Tasks: synthetic, made from the corpus")
                                            : tr("Tasks: the files in %1").arg(m_folder));
  m_synthetic->setEnabled(!m_folder.isEmpty());
  m_compareLabel->setText(m_control.isEmpty() ? m_shownStart ? tr("Compared with: only the starting model")
                                                             : tr("Compared with: no other model")
                          : m_shownStart ? tr("Compared with: the starting model and %1").arg(m_control)
                                              : tr("Compared with: %1").arg(m_control));
  m_noCompare->setEnabled(!m_control.isEmpty());
}

AnalysisWork BenchmarksPane::makeWork() {
  QPointer<BenchmarksPane> self(this);
  const std::string folder = m_folder.toStdString(), control = m_control.toStdString();
  const int64_t limit = m_limit->value();
  return [self, folder, control, limit](const AnalysisInputs& in,
                                        const nf::ProgressFn& progress) -> std::function<void()> {
    std::string tasks = folder;
    if (tasks.empty()) {  // the synthetic tasks, made once beside the model's synthetic datasets
      tasks =
          (in.datasetsFolder.empty() ? std::filesystem::temp_directory_path().string() + "/normfree-synthetic"
                                     : in.datasetsFolder) +
          "/bench";
      if (!std::filesystem::exists(tasks + "/lambada_test.jsonl"))
        nf::writeSyntheticBenchmarks(tasks, 1, kSyntheticItems);
    }
    auto scores = std::make_shared<Scores>();
    scores->synthetic = folder.empty();
    // The model to compare with, and its own tokenizer where its folder has one.
    const nf::SnapshotPtr compared = control.empty() ? nullptr : nf::ModelSnapshot::load(control);
    nf::AnalysisSources comparedSources = in.sources;
    if (compared && nf::hasTokenizer(control)) comparedSources.tokenizer = nf::loadTokenizer(control);
    for (nf::BenchmarkTask task : nf::benchmarkTasksIn(tasks)) {
      // One request path (AnalysisInputs::run): scored here, or on the server of a run served elsewhere,
      // to which the items travel whole.
      nf::AnalysisRequest request = in.request("benchmark");
      request.benchmark = std::make_shared<const nf::BenchmarkData>(nf::readBenchmark(task, tasks, limit));
      scores->now.push_back(in.run(request, "now", progress));
      if (auto start = in.runStart(request, progress)) scores->start.push_back(std::move(*start));
      if (compared)
        scores->control.push_back(nf::runAnalysis(request, *compared, comparedSources, progress).result);
    }
    if (scores->now.empty())
      throw std::runtime_error(tasks +
                               " holds no benchmark file under its distributed name (docs/DOWNSTREAM.md)");
    for (std::size_t t = 0; t < scores->now.size(); ++t)
      for (const auto* results : {&scores->now, &scores->start, &scores->control})
        if (!results->empty()) requireDrawable(results->at(t), scores->now[t]);
    const nf::AnalysisHeader header = nf::analysisHeaderFromJson(scores->now.front().at("header"));
    return [self, scores, tasks, header] {
      if (!self) return;
      self->draw(*scores);
      self->showHeader(header.step, header.model, header.norms, tasks);
    };
  };
}

void BenchmarksPane::draw(const Scores& scores) {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const bool withControl = !scores.control.empty(), withStart = !scores.start.empty();
  const int shownSeries = 1 + withControl + withStart;
  for (int series = 0; series < kSeries; ++series) {
    const std::vector<nlohmann::json>& results = series == kStartSeries ? scores.start
                                                 : series == kNowSeries ? scores.now
                                                                        : scores.control;
    auto* bars = qobject_cast<QCPBars*>(m_plot->plottable(2 * series));
    auto* errors = qobject_cast<QCPErrorBars*>(m_plot->plottable(2 * series + 1));
    // Side by side: [starting model,] [control,] model now.
    const int place = series == kStartSeries     ? 0
                      : series == kControlSeries ? withStart
                                                 : withStart + withControl;
    const double offset = (place - (shownSeries - 1) / 2.0) * kBarWidth;
    QVector<double> x, value, error;
    for (std::size_t t = 0; t < results.size(); ++t) {
      const auto [score, stderror] = headline(results[t]);
      x << static_cast<double>(t) + offset;
      value << 100 * score;
      error << 100 * stderror;
    }
    bars->setData(x, value);
    errors->setData(error);
    bars->setVisible(!results.empty());
    errors->setVisible(!results.empty());
  }
  std::vector<QCPAbstractPlottable*> shown;  // the legend in the bars' order
  for (int series : {kStartSeries, kControlSeries, kNowSeries})
    if (m_plot->plottable(2 * series)->visible()) shown.push_back(m_plot->plottable(2 * series));
  setLegendEntries(m_plot, shown);
  // Synthetic tasks score near 100 % on models trained on the corpus they come from: never to be read as
  // the real benchmark whose format (and name) they borrow.
  m_shownSynthetic = scores.synthetic;
  m_shownStart = withStart;
  showFolder();
  for (std::size_t t = 0; t < scores.now.size(); ++t) {
    // One line per part: side by side the tasks' labels ran together in a dock of a 1366-pixel screen.
    QString task = QString::fromStdString(scores.now[t]["task"].get<std::string>()) +
                   (scores.now[t].contains("acc_norm") ? "\n(acc_norm)" : "");
    ticker->addTick(static_cast<double>(t), scores.synthetic ? tr("%1\n(synthetic)").arg(task) : task);
  }
  setPlotTitle(m_plot, chartTitle());
  m_plot->xAxis->setTicker(ticker);
  m_plot->xAxis->setRange(-0.6, static_cast<double>(scores.now.size()) - 0.4);
  m_plot->replot();

  // The items the model now answers differently from the one it is judged against (the control when there
  // is one, else the starting model; none where neither is shown).
  const std::vector<nlohmann::json>& against = withControl ? scores.control : scores.start;
  m_table->setSortingEnabled(false);
  m_table->setColumnCount(4 + withStart + withControl);
  retranslateTable();
  m_table->setRowCount(0);
  for (std::size_t t = 0; t < against.size(); ++t) {
    const nlohmann::json& now = scores.now[t];
    auto said = [this](bool ok) { return ok ? tr("right") : tr("wrong"); };
    for (std::size_t i = 0; i < now["items"].size(); ++i) {
      if (right(now, i) == right(against[t], i)) continue;
      const int row = m_table->rowCount();
      m_table->insertRow(row);
      QStringList cells = {QString::fromStdString(now["task"].get<std::string>()),
                           QString::number(now["items"][i]["line"].get<int64_t>()),
                           // LAMBADA has one continuation: no choice to name
                           now["items"][i].contains("greedy")
                               ? QStringLiteral("—")
                               : QString::number(now["items"][i]["gold"].get<int>())};
      if (withStart) cells << said(right(scores.start[t], i));
      if (withControl) cells << said(right(scores.control[t], i));
      cells << said(right(now, i));
      for (int c = 0; c < cells.size(); ++c) m_table->setItem(row, c, new SortedItem(cells[c]));
    }
  }
  m_table->setSortingEnabled(true);
  int64_t items = 0;
  for (const nlohmann::json& task : scores.now) items += task["n"].get<int64_t>();
  m_differently->setText(
      !withControl && !withStart
          ? tr("%1 items; compare with a model to list those the two answer differently").arg(items)
          : (withControl ? tr("Items the model now and the compared model answer differently: %1 of %2")
                         : tr("Items the model now and the starting model answer differently: %1 of %2"))
                .arg(m_table->rowCount())
                .arg(items));
}

QString BenchmarksPane::disagreementsText() const { return m_differently->text(); }

void BenchmarksPane::retranslateTable() {
  QStringList headers = {tr("task"), tr("line in the file"), tr("right choice")};
  if (m_shownStart) headers << tr("starting model");
  if (m_table->columnCount() == static_cast<int>(headers.size()) + 2) headers << tr("compared model");
  m_table->setHorizontalHeaderLabels(headers << tr("model now"));
}

QString BenchmarksPane::chartTitle() const {
  if (!m_shownStart)
    return m_shownSynthetic
               ? tr("Accuracy per synthetic task (made from the corpus; not the real benchmarks), "
                    "± standard error")
               : tr("Accuracy per task (± standard error)");
  return m_shownSynthetic
             ? tr("Accuracy per synthetic task (made from the corpus; not the real benchmarks), the "
                  "starting model against the model now (± standard error)")
             : tr("Accuracy per task, the starting model against the model now (± standard error)");
}

void BenchmarksPane::retranslate() {
  setPlotTitle(m_plot, chartTitle());
  m_plot->yAxis->setLabel(tr("accuracy (%)"));
  m_plot->plottable(0)->setName(tr("starting model"));
  m_plot->plottable(2 * kNowSeries)->setName(tr("model now"));
  m_plot->plottable(2 * kControlSeries)->setName(tr("compared model"));
  m_compare->setText(tr("Compare With…"));
  m_noCompare->setText(tr("No Comparison"));
  m_choose->setText(tr("Choose Task Files…"));
  m_synthetic->setText(tr("Synthetic Tasks"));
  m_limitLabel->setText(tr("items per task:"));
  retranslateTable();
  showFolder();
  m_plot->replot();
  AnalysisPane::retranslate();
}
