// The window as it moves from one thing to another (issue 36), for docs/figures/screenshots.sh: each stage
// waits for what it needs, saves the window (or the whole screen) as FOLDER/PREFIX-<stage>.png, and does
// the next step; the program quits with 0 once every stage is written, 1 when one could not be.
//   open-another-model: a run of the opened model trains ("running"), is stopped ("stopped"), and another
//     model is opened ("other-model": nothing of the run may remain on screen, Resume off).
//   connect-after-open: a model is open ("model"); the served run is connected to ("connected": the title,
//     Model pane and Run setup name that run); its analyses computed by its server ("analysed").
#pragma once
#include <QList>
#include <QObject>
#include <QString>
#include <functional>

#include "serve/serve_address.h"

class MainWindow;
class QTimer;

class ScreenshotSequence : public QObject {
  Q_OBJECT
 public:
  struct Stage {
    std::function<bool()> ready;  // polled until true
    QString shot;                 // "": none
    std::function<void()> then;
  };
  ScreenshotSequence(MainWindow* window, QString folder, QString prefix, bool wholeScreen,
                     QList<Stage> stages);
  void start();

  static QList<Stage> openAnotherModel(MainWindow* window, const QString& otherModel);
  static QList<Stage> connectAfterOpen(MainWindow* window, const nf::ServeAddress& address);

 private:
  void poll();
  MainWindow* m_window;
  QString m_folder, m_prefix;
  bool m_wholeScreen;
  QList<Stage> m_stages;
  QTimer* m_timer;
  int m_readyTicks = 0;  // polls since the current stage became ready (the window lays out and replots)
  bool m_failed = false;
};
