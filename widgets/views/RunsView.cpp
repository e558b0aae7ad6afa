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
  retranslate();
}

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
    if (m_runs[row] && m_table->item(row, Name)->checkState() == Qt::Unchecked) unticked << m_runs[row]->dir;
  const QSignalBlocker block(m_table);
  m_table->setRowCount(0);
  m_runs.clear();
  QStringList dirs;
  if (!m_folder.isEmpty())
    for (const QFileInfo& entry : QDir(m_folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
      if (QFileInfo::exists(entry.filePath() + "/config.json") &&
          QFileInfo::exists(QString::fromStdString(nf::run::metricsPath(entry.filePath().toStdString()))))
        dirs << QDir::cleanPath(entry.absoluteFilePath());
  const bool tickNew = dirs.size() <= 4;
  const QStringList wasListed = m_runsBefore;
  int colour = 0;
  for (const QString& dir : dirs) {
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto set = [&](int column, const QString& text) {
      m_table->setItem(row, column, new QTableWidgetItem(text));
    };
    set(Name, QFileInfo(dir).fileName());
    const bool shown = dir == m_shown;
    std::shared_ptr<ComparedRun> run;
    try {
      const nf::RunConfig config = nf::readRunConfig(dir.toStdString());
      run = std::make_shared<ComparedRun>();
      run->name = QFileInfo(dir).fileName();
      run->dir = dir;
      for (const std::string& line : nf::MetricsFollower(dir.toStdString()).read().lines)
        run->metrics.ingest(line);
      set(Mode, QString::fromStdString(nf::trainingModeName(config.mode)));
      set(Preset, QString::fromStdString(config.preset));
      set(Steps, tr("%1 of %2").arg(run->metrics.lastStep()).arg(config.optimizer.maxSteps));
      set(LearningRate, number(config.optimizer.lr, 3));
      const auto& ce = run->metrics.steps.ce;
      set(FinalLoss, ce.empty() ? number(NAN) : number(ce.back()));
      const auto& evals = run->metrics.evals;
      set(FinalEval, evals.empty() || evals.begin()->second.empty()
                         ? number(NAN)
                         : QString("%1 (%2)").arg(number(evals.begin()->second.back().loss),
                                                  QString::fromStdString(evals.begin()->first)));
      set(Status, QString::fromStdString(run->metrics.lastStatus));
    } catch (const std::exception& e) {  // a run being made, or damaged: listed, with why it cannot be read
      set(Status, tr("cannot be read: %1").arg(QString::fromUtf8(e.what())));
      run.reset();
    }
    QTableWidgetItem* name = m_table->item(row, Name);
    if (shown) {
      name->setText(tr("%1 (shown)").arg(QFileInfo(dir).fileName()));
      QFont bold = name->font();
      bold.setBold(true);
      name->setFont(bold);
      run.reset();  // the run shown is plotted as itself
    } else if (run) {
      run->colour = kRunColours[colour++ % std::size(kRunColours)];
      name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
      const bool tick = wasListed.contains(dir) ? !unticked.contains(dir) : tickNew;
      name->setCheckState(tick ? Qt::Checked : Qt::Unchecked);
      name->setForeground(run->colour);
      name->setToolTip(tr("overlay %1 on the training plots").arg(dir));
    }
    m_runs.push_back(run);
  }
  m_runsBefore = dirs;
  m_heading->setText(m_folder.isEmpty() ? tr("No folder of runs: open a run, or choose a folder.")
                                        : tr("Runs in %1 — ticked runs are overlaid on the training plots, "
                                             "each in its colour")
                                              .arg(QDir::toNativeSeparators(m_folder)));
  Q_EMIT overlayChanged();
}

std::vector<std::shared_ptr<const ComparedRun>> RunsView::overlaid() const {
  std::vector<std::shared_ptr<const ComparedRun>> runs;
  for (int row = 0; row < m_table->rowCount(); ++row)
    if (m_runs[row] && m_table->item(row, Name)->checkState() == Qt::Checked) runs.push_back(m_runs[row]);
  return runs;
}

void RunsView::retranslate() {
  m_choose->setText(tr("Choose folder…"));
  m_refresh->setText(tr("Refresh"));
  m_refresh->setToolTip(tr("read every run again (one still training has more steps now)"));
  m_table->setHorizontalHeaderLabels({tr("run"), tr("mode"), tr("preset"), tr("steps"), tr("learning rate"),
                                      tr("last CE"), tr("last evaluation"), tr("status")});
  if (!m_folder.isEmpty() || m_table->rowCount() == 0) refresh();
}

void RunsView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslate();
  QWidget::changeEvent(event);
}
