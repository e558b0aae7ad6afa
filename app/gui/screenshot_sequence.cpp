#include "screenshot_sequence.h"

#include <QApplication>
#include <QDir>
#include <QScreen>
#include <QTimer>
#include <cstdio>

#include "analysis/AnalysisPane.h"
#include "analysis/HeadsPane.h"
#include "run/RunSession.h"
#include "save_png.h"
#include "views/TrainingView.h"
#include "window/MainWindow.h"

namespace {
constexpr int kPollMs = 200;
constexpr int kSettleTicks = 5;  // ~1 s for layouts and queued replots before a grab
}  // namespace

ScreenshotSequence::ScreenshotSequence(MainWindow* window, QString folder, QString prefix, bool wholeScreen,
                                       QList<Stage> stages)
    : QObject(window),
      m_window(window),
      m_folder(std::move(folder)),
      m_prefix(std::move(prefix)),
      m_wholeScreen(wholeScreen),
      m_stages(std::move(stages)) {
  m_timer = new QTimer(this);
  connect(m_timer, &QTimer::timeout, this, &ScreenshotSequence::poll);
}

void ScreenshotSequence::start() {
  QDir().mkpath(m_folder);
  m_timer->start(kPollMs);
}

void ScreenshotSequence::poll() {
  if (m_stages.isEmpty()) {
    m_timer->stop();
    QApplication::exit(m_failed ? 1 : 0);
    return;
  }
  Stage& stage = m_stages.first();
  if (m_readyTicks == 0 && !stage.ready()) return;
  if (!stage.shot.isEmpty() && ++m_readyTicks < kSettleTicks) return;
  if (!stage.shot.isEmpty()) {
    const QString path = m_folder + "/" + m_prefix + "-" + stage.shot + ".png";
    const QPixmap image = m_wholeScreen ? m_window->screen()->grabWindow(0) : m_window->grab();
    const bool saved = savePng(image, path);
    std::fprintf(saved ? stdout : stderr, "%s %s\n", saved ? "wrote" : "cannot write", qPrintable(path));
    m_failed = m_failed || !saved;
  }
  m_readyTicks = 0;
  const std::function<void()> then = stage.then;
  m_stages.removeFirst();
  if (then) then();
}

QList<ScreenshotSequence::Stage> ScreenshotSequence::openAnotherModel(MainWindow* w,
                                                                      const QString& otherModel) {
  RunSession* session = w->session();
  return {
      {[] { return true; }, QString(), [w] { w->startRun(); }},
      {[session] { return session->stepsDone() >= 10; }, "running", [session] { session->stop(); }},
      {[session] { return session->phase() == RunPhase::Stopped; }, "stopped",
       [w, otherModel] { w->openModelFolder(otherModel); }},
      {[] { return true; }, "other-model", {}},
  };
}

QList<ScreenshotSequence::Stage> ScreenshotSequence::connectAfterOpen(MainWindow* w,
                                                                      const nf::ServeAddress& address) {
  RunSession* session = w->session();
  auto analysed = [w] {
    for (AnalysisPane* pane : w->analysisPanes())
      if (!pane->hasResult() && !pane->hasFailed()) return false;
    return true;
  };
  return {
      {[] { return true; }, "model", [w, address] { w->connectToRun(address); }},
      {[w, session] {
         return session->remote() && session->phase() == RunPhase::Running &&
                w->trainingView()->plottedSteps() > 0;
       },
       "connected", [w] { w->refreshAnalyses(false); }},
      {analysed, QString(),
       [w] {
         w->raisePane(w->headsPane());
         w->headsPane()->selectHead(1, 2);
       }},
      {[w] { return !w->headsPane()->isDetailStale(); }, "analysed", {}},
  };
}
