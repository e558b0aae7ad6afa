// The status bar's permanent fields for what the window shows: what the run is doing, step / budget,
// tokens/s (each worker's too), ETA, the next removal event (only where one will fire), the device, a
// connected run's address; a progress bar for long preparations. And its messages for what a run's
// records announce: a checkpoint written, a warning (a checkpoint that failed, a disk filling up).
#pragma once
#include <QObject>
#include <QString>
#include <cstdint>
#include <string>

#include "logic/WindowState.h"

class QLabel;
class QProgressBar;
class QStatusBar;
class AnalysisRunner;
class RunSession;
class TimelineWidget;
class ScheduleEditor;

class RunStatusBar : public QObject {
  Q_OBJECT
 public:
  explicit RunStatusBar(QStatusBar* bar);

  // What the fields show when no run is shown: the next run's budget and device.
  struct NextRun {
    int64_t maxSteps = 0;
    QString device;
  };
  void update(const RunSession& session, const WindowState& shown, const NextRun& next,
              const ScheduleEditor* timeline);
  // What the run is doing now: "Evaluating the starting model…", "Paused at step 40", "" for a model.
  QString phaseText(const RunSession& session, const WindowState& shown) const;
  QString text() const;  // the permanent fields, joined (for tests)
  void showProgress(const QString& task, qint64 done, qint64 total);  // task "": hidden
  // Shows the session's progress, a connected run's notices and the edits it refused, the timeline's edits
  // made and refused, and the analyses that failed.
  void watch(RunSession* session, TimelineWidget* timeline, AnalysisRunner* runner);
  // Says what the run's phase now means for the user: paused with its checkpoint, stopped (how to go on),
  // finished (where its model is); for a connected run, on which machine.
  void sayPhase(const RunSession& session, const WindowState& shown);
  // Says, once each, a checkpoint the run wrote and the warning it gave last.
  void announce(const RunSession& session);
  void forgetAnnounced();  // a new run: its first checkpoint and warning are new

 private:
  QStatusBar* m_bar;
  QLabel *m_phase, *m_step, *m_speed, *m_eta, *m_next, *m_device, *m_connection;
  QProgressBar* m_progress;
  QString m_phaseText;
  std::string m_shownWarning;      // the run's latest warning, once shown
  int64_t m_shownCheckpoint = -1;  // the step of the run's latest checkpoint, once said
};
