#include "views/RunsView.h"

#include <QCheckBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStringList>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <optional>

#include "run/metrics_log.h"
#include "run/run_directory.h"
#include "train/settings.h"

namespace {

// One colour per overlaid run, none of them the shown run's (its curves are blue, green and orange).
const QColor kRunColours[] = {QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2),
                              QColor(0xbcbd22), QColor(0x17becf), QColor(0x7f7f7f)};

enum Column { Name, Mode, Preset, Steps, LearningRate, FinalLoss, FinalEval, Status, Columns };

QString number(double value, int precision = 4) {
  return std::isfinite(value) ? QString::number(value, 'g', precision) : QStringLiteral("–");
}

// The run folders in `folder` (with a config.json and a metrics.jsonl), by name.
QStringList runFolders(const QString& folder) {
  QStringList dirs;
  if (folder.isEmpty()) return dirs;
  for (const QFileInfo& entry : QDir(folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
    if (QFileInfo::exists(entry.filePath() + "/config.json") &&
        QFileInfo::exists(QString::fromStdString(nf::run::metricsPath(entry.filePath().toStdString()))))
      dirs << QDir::cleanPath(entry.absoluteFilePath());
  return dirs;
}

}  // namespace

RunsView::RunsView(QWidget* parent) : QWidget(parent) {
  m_heading = new QLabel(this);
  m_heading->setWordWrap(true);
  m_choose = new QPushButton(this);
  m_refresh = new QPushButton(this);
  m_table = new QTableWidget(0, Columns, this);
  m_table->verticalHeader()->hide();
  m_table->setSelectionMode(QAbstractItemView::NoSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (item->column() == Name) Q_EMIT overlayChanged();
  });
  connect(m_refresh, &QPushButton::clicked, this, &RunsView::refresh);
  connect(m_choose, &QPushButton::clicked, this, [this] {
    const QString chosen = QFileDialog::getExistingDirectory(this, tr("Folder of runs to compare"), m_folder);
    if (!chosen.isEmpty()) setFolder(chosen);
  });
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_choose);
  buttons->addWidget(m_refresh);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_heading);
  layout->addLayout(buttons);
  layout->addWidget(m_table, 1);
  // Often enough that a sibling's curves keep pace with the run shown's; each look is a stat of a few files.
  m_followTimer.setInterval(1000);
  connect(&m_followTimer, &QTimer::timeout, this, &RunsView::follow);
  m_followTimer.start();
  retranslate();
}

RunsView::~RunsView() = default;

void RunsView::setShownRun(const QString& runDir) {
  const QString shown = runDir.isEmpty() ? QString() : QDir::cleanPath(QDir(runDir).absolutePath());
  if (shown == m_shown && m_listed) return;  // the window's state changed, not the run it shows
  m_shown = shown;
  setFolder(m_shown.isEmpty() ? QString() : QFileInfo(m_shown).absolutePath());
}

void RunsView::setFolder(const QString& folder) {
  m_folder = folder;
  refresh();
}

void RunsView::refresh() {
  m_listed = true;
  // What was ticked stays ticked; a run new to the list starts ticked — unless the folder holds many (the
  // workbench's own folder of runs): then the user picks.
  QStringList unticked;
  for (int row = 0; row < m_table->rowCount(); ++row)
    if (m_rows[row].run && !m_rows[row].shown && m_table->item(row, Name)->checkState() == Qt::Unchecked)
      unticked << m_rows[row].run->dir;
  const QSignalBlocker block(m_table);
  m_table->setRowCount(0);
  m_rows.clear();
  const QStringList dirs = runFolders(m_folder);
  const bool tickNew = dirs.size() <= 4;
  const QStringList wasListed = m_runsBefore;
  int colour = 0;
  for (const QString& dir : dirs) {
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    for (int column = 0; column < Columns; ++column) m_table->setItem(row, column, new QTableWidgetItem);
    m_table->item(row, Name)->setText(QFileInfo(dir).fileName());
    Row listed;
    listed.dir = dir;
    std::optional<nf::RunConfig> config;
    try {
      config = nf::readRunConfig(dir.toStdString());
      listed.run = std::make_shared<ComparedRun>();
      listed.run->name = QFileInfo(dir).fileName();
      listed.run->dir = dir;
      listed.follower = std::make_unique<nf::MetricsFollower>(dir.toStdString());
      for (const std::string& line : listed.follower->read().lines) listed.run->metrics.ingest(line);
    } catch (const std::exception& e) {  // a run being made, or damaged: listed, with why it cannot be read
      listed = Row();
      listed.dir = dir;
      m_table->item(row, Status)->setText(tr("cannot be read: %1").arg(QString::fromUtf8(e.what())));
    }
    m_rows.push_back(std::move(listed));
    if (m_rows.back().run) {
      showSettings(row, *config);
      showFigures(row);
    }
    Row& r = m_rows.back();
    QTableWidgetItem* name = m_table->item(row, Name);
    if (dir == m_shown) {
      name->setText(tr("%1 (shown)").arg(QFileInfo(dir).fileName()));
      QFont bold = name->font();
      bold.setBold(true);
      name->setFont(bold);
      r.shown = true;  // plotted as itself, not overlaid; its figures are in the table too
    } else if (r.run) {
      r.run->colour = kRunColours[colour++ % std::size(kRunColours)];
      name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
      const bool tick = wasListed.contains(dir) ? !unticked.contains(dir) : tickNew;
      name->setCheckState(tick ? Qt::Checked : Qt::Unchecked);
      name->setForeground(r.run->colour);
      name->setToolTip(tr("overlay %1 on the training plots").arg(dir));
    }
  }
  m_runsBefore = dirs;
  m_heading->setText(m_folder.isEmpty() ? tr("No folder of runs: open a run, or choose a folder.")
                                        : tr("Runs in %1 — ticked runs are overlaid on the training plots, "
                                             "each in its colour")
                                              .arg(QDir::toNativeSeparators(m_folder)));
  Q_EMIT overlayChanged();
}

void RunsView::showSettings(int row, const nf::RunConfig& config) {
  const QSignalBlocker block(m_table);
  m_rows[row].maxSteps = config.optimizer.maxSteps;
  m_rows[row].validation =
      config.evalData.empty()
          ? std::string()
          : QFileInfo(QString::fromStdString(config.evalData.front())).fileName().toStdString();
  m_table->item(row, Mode)->setText(QString::fromStdString(nf::trainingModeName(config.mode)));
  m_table->item(row, Preset)->setText(QString::fromStdString(config.preset));
  m_table->item(row, LearningRate)->setText(number(config.optimizer.lr, 3));
  // What a comparison rests on, on every cell of the row but its name: the model and the data.
  QStringList evaluated;
  for (const std::string& file : config.evalData) evaluated << QString::fromStdString(file);
  const QString rests =
      tr("model: %1\ntrained on: %2\nevaluated on: %3\ntracked on: %4")
          .arg(QString::fromStdString(config.model), QString::fromStdString(config.trainData),
               evaluated.isEmpty()
                   ? tr("nothing")
                   : tr("%1 (%2 tokens each)").arg(evaluated.join(", ")).arg(config.eval.tokens),
               config.tracking.analyses.empty()
                   ? tr("nothing")
                   : tr("%1 (%2 sequences of %3 tokens)")
                         .arg(QString::fromStdString(nf::trackingDataFile(config)))
                         .arg(config.tracking.sequences)
                         .arg(config.tracking.length));
  for (int column = Mode; column < Columns; ++column) m_table->item(row, column)->setToolTip(rests);
}

void RunsView::showFigures(int row) {
  const MetricsStore& m = m_rows[row].run->metrics;
  const QSignalBlocker block(m_table);
  m_table->item(row, Steps)->setText(tr("%1 of %2").arg(m.lastStep()).arg(m_rows[row].maxSteps));
  m_table->item(row, FinalLoss)->setText(m.steps.ce.empty() ? number(NAN) : number(m.steps.ce.back()));
  // The validation set's (the first --eval), not the first file name in order (an out-of-distribution set).
  auto eval = m.evals.find(m_rows[row].validation);
  if (eval == m.evals.end()) eval = m.evals.begin();
  m_table->item(row, FinalEval)
      ->setText(eval == m.evals.end() || eval->second.empty()
                    ? number(NAN)
                    : QString("%1 (%2)").arg(number(eval->second.back().loss),
                                             QString::fromStdString(eval->first)));
  m_table->item(row, Status)->setText(statusWords(m.lastStatus));
}

QString RunsView::statusWords(const std::string& lastStatus) {
  if (lastStatus == "start" || lastStatus == "resume" || lastStatus == "continue") return tr("training");
  if (lastStatus == "pause") return tr("paused");
  if (lastStatus == "stop") return tr("stopped");
  if (lastStatus == "finish") return tr("finished");
  return QString::fromStdString(lastStatus);
}

void RunsView::follow() {
  if (!m_listed || m_folder.isEmpty()) return;
  if (runFolders(m_folder) != m_runsBefore) {  // a run was started (or removed) beside the others
    refresh();
    return;
  }
  bool overlayGrew = false;
  for (int row = 0; row < static_cast<int>(m_rows.size()); ++row) {
    Row& r = m_rows[row];
    try {
      if (!r.run) {  // could not be read when listed: list it again once it can be
        nf::readRunConfig(r.dir.toStdString());
        nf::MetricsFollower(r.dir.toStdString()).read(4096);  // a newer build's log: not yet (nor each tick)
        refresh();
        return;
      }
      const nf::MetricsFollower::NewLines news = r.follower->read();
      if (news.lines.empty() && !news.restarted) continue;
      if (news.restarted) r.run->metrics.clear();  // resumed from a checkpoint: its later records are gone
      for (const std::string& line : news.lines) r.run->metrics.ingest(line);
      showSettings(row, nf::readRunConfig(r.dir.toStdString()));  // a resume may have changed its budget
    } catch (const std::exception&) {
      continue;  // unreadable for now: the table keeps what it last read; Refresh says why
    }
    showFigures(row);
    overlayGrew = overlayGrew || (!r.shown && m_table->item(row, Name)->checkState() == Qt::Checked);
  }
  if (overlayGrew) Q_EMIT overlayChanged();
}

std::vector<std::shared_ptr<const ComparedRun>> RunsView::overlaid() const {
  std::vector<std::shared_ptr<const ComparedRun>> runs;
  for (int row = 0; row < m_table->rowCount(); ++row)
    if (m_rows[row].run && !m_rows[row].shown && m_table->item(row, Name)->checkState() == Qt::Checked)
      runs.push_back(m_rows[row].run);
  return runs;
}

void RunsView::retranslate() {
  m_choose->setText(tr("Choose folder…"));
  m_refresh->setText(tr("Refresh"));
  m_refresh->setToolTip(tr("read every run again from its folder"));
  m_table->setHorizontalHeaderLabels({tr("run"), tr("mode"), tr("preset"), tr("steps"), tr("learning rate"),
                                      tr("last CE"), tr("last evaluation"), tr("status")});
  if (!m_folder.isEmpty() || m_table->rowCount() == 0) refresh();
}

void RunsView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}
