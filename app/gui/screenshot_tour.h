// The screenshots of docs/figures/screenshots.sh: with the window at its size and language, it saves the
// window once before any analysis (the panes' "not computed" state), then refreshes every analysis,
// selects a head, and brings each pane (and the Model view) to the front in turn, saving the window as
// FOLDER/PREFIX-<pane>.png. Quits with 0 once all are written, 1 when one could not be.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

class MainWindow;
class QTimer;
class QWidget;

class ScreenshotTour : public QObject {
  Q_OBJECT
 public:
  ScreenshotTour(MainWindow* window, QString folder, QString prefix);
  void start();

 private:
  enum class Phase { Settle, Computing, Detail, Shooting };
  void poll();
  bool save(const QString& name);
  MainWindow* m_window;
  QString m_folder, m_prefix;
  QTimer* m_timer;
  Phase m_phase = Phase::Settle;
  int m_ticks = 0;  // polls spent in this phase (the window gets a few to lay out and replot)
  QList<std::pair<QString, QWidget*>> m_shots;
  bool m_failed = false;
};
