#include "window/RunStatusBar.h"

#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <algorithm>

#include "analysis/AnalysisRunner.h"
#include "logic/ScheduleEditor.h"
#include "run/RunSession.h"
#include "run/metrics_records.h"
#include "timeline/EditRefusalText.h"
#include "timeline/TimelineNames.h"
#include "timeline/TimelineWidget.h"
#include "util/bytes.h"

namespace {
QString hms(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  return QString("%1:%2:%3")
      .arg(s / 3600)
      .arg((s / 60) % 60, 2, 10, QChar('0'))
      .arg(s % 60, 2, 10, QChar('0'));
}
}  // namespace

RunStatusBar::RunStatusBar(QStatusBar* bar) : QObject(bar), m_bar(bar) {
  for (QLabel** label : {&m_phase, &m_step, &m_speed, &m_eta, &m_next, &m_device, &m_connection})
    *label = new QLabel(bar);
  m_progress = new QProgressBar(bar);
  m_progress->setMaximumWidth(220);
  m_progress->hide();
  for (QWidget* w : std::initializer_list<QWidget*>{m_phase, m_progress, m_step, m_speed, m_eta, m_next,
                                                    m_device, m_connection})
    bar->addPermanentWidget(w);
}

QString RunStatusBar::phaseText(const RunSession& session, const WindowState& shown) const {
  if (shown.subject == Subject::Nothing || shown.subject == Subject::Model) return QString();
  const MetricsStore& m = session.metrics();
  const int64_t step = session.stepsDone();
  if (shown.subject == Subject::FollowedRun) {  // its phase is what its own process last recorded
    if (shown.phase == RunPhase::Finished)
      return m.finishReason.empty() ? tr("Followed run finished")
                                    : tr("Followed run finished early, at step %1").arg(step);
    if (shown.phase == RunPhase::Stopped) return tr("Followed run stopped at step %1").arg(step);
    if (shown.phase == RunPhase::Paused) return tr("Followed run paused at step %1").arg(step);
    return tr("Following a run another process trains");
  }
  switch (shown.phase) {
    case RunPhase::None:
      return QString();
    case RunPhase::Preparing:  // Trainer::start loads the model and evaluates it before the first step
      return shown.subject == Subject::ConnectedRun
                 ? tr("Connecting…")
                 : tr("Preparing the data and the model, evaluating the starting model…");
    case RunPhase::Running:
      return m.steps.step.empty() ? tr("Starting the first step…") : tr("Training");
    case RunPhase::Pausing:
      return tr("Pausing: finishing the step and writing a checkpoint…");
    case RunPhase::Paused:
      return tr("Paused at step %1").arg(step);
    case RunPhase::Stopping:
      return tr("Stopping: finishing the step and writing a checkpoint…");
    case RunPhase::Stopped:
      return tr("Stopped at step %1").arg(step);
    case RunPhase::Finished:
      return m.finishReason.empty() ? tr("Finished") : tr("Finished early, at step %1").arg(step);
    case RunPhase::Failed:
      return shown.subject == Subject::ConnectedRun ? tr("Not connected") : tr("Failed at step %1").arg(step);
  }
  return QString();
}

void RunStatusBar::update(const RunSession& session, const WindowState& shown, const NextRun& next,
                          const ScheduleEditor* timeline) {
  const WindowView view = viewOf(shown);
  m_phaseText = phaseText(session, shown);
  m_phase->setText("<b>" + m_phaseText.toHtmlEscaped() + "</b>");
  // Why a run finished before its budget (the engine's words, in English): on the label, and below.
  m_phase->setToolTip(QString::fromStdString(session.metrics().finishReason));
  const MetricsStore& m = session.metrics();
  const nf::RunConfig& c = session.config();
  const int64_t done = view.runPlots ? session.stepsDone() : 0;
  const int64_t maxSteps = view.runPlots ? session.maxSteps() : next.maxSteps;
  // A connected run's budget and device come with its first answer: none is shown before.
  const bool known = !view.runPlots || session.configKnown();
  m_step->setText(shown.subject == Subject::Nothing || !known ? QString()
                                                              : tr("step %1 / %2").arg(done).arg(maxSteps));
  const double tps = view.runPlots ? m.recentTokensPerSecond() : 0;
  QString speed = tps > 0 ? tr("%1 tok/s").arg(tps, 0, 'f', 0) : QString();
  if (tps > 0 && m.worldSize > 1) {
    // Each worker's own pace: a slow GPU or a busy machine shows here.
    QStringList paces;
    for (double pace : m.workerTokensPerSecond) paces << QString::number(pace, 'f', 0);
    speed += tr(" · %1 workers: %2").arg(m.worldSize).arg(paces.join(QStringLiteral(" / ")));
  }
  m_speed->setText(speed);
  const double tokensPerStep =
      static_cast<double>(c.optimizer.microBatch * c.optimizer.accumulation * c.optimizer.context);
  m_eta->setText(tps > 0 && shown.phase == RunPhase::Running
                     ? tr("ETA %1").arg(hms(static_cast<double>(maxSteps - done) * tokensPerStep / tps))
                     : QString());
  QString nextEvent;
  if (view.nextEvent && timeline)
    for (const nf::ScheduleEvent& e : timeline->schedule().events)
      if (e.step >= done) {
        nextEvent = tr("next: %1").arg(TimelineNames::happeningOf(e));
        break;
      }
  m_next->setText(nextEvent);
  m_device->setText(!view.runPlots ? next.device : known ? QString::fromStdString(c.device) : QString());
  const QString problem = session.connectionProblem();
  m_connection->setVisible(session.remote());
  m_connection->setText(problem.isEmpty() ? tr("connected to %1").arg(session.remoteAddress())
                                          : tr("%1 unreachable: reconnecting").arg(session.remoteAddress()));
  m_connection->setToolTip(problem);
  m_connection->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("color: #c62828"));
  if (!view.runPlots || shown.phase == RunPhase::Finished) m_progress->hide();
}

QString RunStatusBar::text() const {
  return QStringList{m_phaseText,
                     m_step->text(),
                     m_speed->text(),
                     m_eta->text(),
                     m_next->text(),
                     m_device->text(),
                     m_connection->isVisibleTo(m_bar) ? m_connection->text() : QString()}
      .join(" | ");
}

void RunStatusBar::watch(RunSession* session, TimelineWidget* timeline, AnalysisRunner* runner) {
  connect(timeline, &TimelineWidget::editRefused, this,
          [this](const QString& why) { m_bar->showMessage(tr("Edit refused: %1").arg(why), 8000); });
  connect(timeline, &TimelineWidget::editAccepted, this,
          [this](const QString& what) { m_bar->showMessage(what, 8000); });
  connect(runner, &AnalysisRunner::failed, this, [this](const QString&, const QString& message) {
    m_bar->showMessage(tr("Analysis failed: %1").arg(message), 8000);
  });
  connect(session, &RunSession::progress, this, &RunStatusBar::showProgress);
  connect(session, &RunSession::remoteNotice, this,
          [this](const QString& message) { m_bar->showMessage(message, 10000); });
  connect(session, &RunSession::remoteEditRefused, this, [this](const nf::EditResult& result) {
    m_bar->showMessage(tr("The run refused an edit shown as made: %1").arg(EditRefusalText::of(result)),
                       10000);
  });
}

void RunStatusBar::showProgress(const QString& task, qint64 done, qint64 total) {
  m_progress->setVisible(!task.isEmpty());
  m_progress->setRange(0, total > 0 ? 1000 : 0);
  if (total > 0) m_progress->setValue(static_cast<int>(1000 * done / total));
  m_progress->setFormat(task + " %p%");
  m_progress->setTextVisible(true);
}

void RunStatusBar::forgetAnnounced() {
  m_shownWarning.clear();
  m_shownCheckpoint = -1;
}

void RunStatusBar::announce(const RunSession& session) {
  const MetricsStore& m = session.metrics();
  if (m.lastCheckpointStep !=
      m_shownCheckpoint) {  // a periodic checkpoint, said before a warning it may bring
    m_shownCheckpoint = m.lastCheckpointStep;
    if (m.lastCheckpointStep >= 0 && session.phase() == RunPhase::Running && !session.following())
      m_bar->showMessage(
          tr("Checkpoint of step %1 written (%2)")
              .arg(m.lastCheckpointStep)
              .arg(QString::fromStdString(nf::formatBytes(static_cast<int64_t>(m.lastCheckpointBytes)))),
          5000);
  }
  if (m.lastWarning == m_shownWarning) return;  // a checkpoint that could not be written, a disk filling up
  m_shownWarning = m.lastWarning;
  const QString detail = QString::fromStdString(m.lastWarning);
  if (m.lastWarningCode == nf::warning_code::kCheckpointFailed)
    m_bar->showMessage(tr("A checkpoint could not be written; training goes on from memory: %1").arg(detail),
                       30000);
  else if (m.lastWarningCode == nf::warning_code::kLowDiskSpace)
    m_bar->showMessage(tr("The disk is filling up: %1").arg(detail), 30000);
  else if (!m.lastWarning.empty())
    m_bar->showMessage(tr("Warning from the run: %1").arg(detail), 30000);
}

void RunStatusBar::sayPhase(const RunSession& session, const WindowState& shown) {
  const int64_t step = session.stepsDone();
  const QString where = session.remoteAddress(), run = session.runDir();
  // A run the autopilot ended before its budget says why (the reason is the engine's, in English).
  const std::string& reason = session.metrics().finishReason;
  // First, so a narrow window still shows it.
  const QString early = reason.empty() ? QString()
                                       : tr("Ended at step %1 of %2: %3. ")
                                             .arg(step)
                                             .arg(session.maxSteps())
                                             .arg(QString::fromStdString(reason));
  if (shown.subject == Subject::ConnectedRun) {
    if (shown.phase == RunPhase::Finished)
      m_bar->showMessage(
          early + tr("The run at %1 finished: its model is in %2/final on the server").arg(where, run));
    if (shown.phase == RunPhase::Stopped)
      m_bar->showMessage(tr("The run at %1 stopped at step %2 with a checkpoint; resume it on the server "
                            "(normfree-cli resume)")
                             .arg(where)
                             .arg(step));
    if (shown.phase == RunPhase::Paused)
      m_bar->showMessage(tr("The run at %1 is paused at step %2").arg(where).arg(step), 8000);
  } else if (shown.subject == Subject::LocalRun) {
    if (shown.phase == RunPhase::Finished)
      m_bar->showMessage(early + tr("Finished: the trained model is in %1/final").arg(run));
    if (shown.phase == RunPhase::Paused)
      m_bar->showMessage(tr("Paused at step %1; checkpoint written. Resume goes on; edits to the schedule "
                            "apply when it does.")
                             .arg(step),
                         10000);
    if (shown.phase == RunPhase::Stopped)
      m_bar->showMessage(tr("Stopped at step %1 with a checkpoint: Resume continues it").arg(step), 10000);
  } else if (shown.subject == Subject::FollowedRun && shown.phase == RunPhase::Finished && !early.isEmpty()) {
    m_bar->showMessage(early + tr("The followed run finished: its model is in %1/final").arg(run));
  }
}
