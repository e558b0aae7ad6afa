#include "screenshot_tour.h"

#include <QApplication>
#include <QDir>
#include <QTimer>
#include <cstdio>

#include "analysis/AnalysisPane.h"
#include "analysis/HeadsPane.h"
#include "save_png.h"
#include "views/ModelInfoView.h"
#include "window/MainWindow.h"

namespace {
constexpr int kPollMs = 200;
constexpr int kSettleTicks = 5;  // ~1 s for layouts and queued replots before a grab
}  // namespace

ScreenshotTour::ScreenshotTour(MainWindow* window, QString folder, QString prefix)
    : QObject(window), m_window(window), m_folder(std::move(folder)), m_prefix(std::move(prefix)) {
  m_timer = new QTimer(this);
  connect(m_timer, &QTimer::timeout, this, &ScreenshotTour::poll);
  m_shots.append({QStringLiteral("model"), window->modelInfoView()});
  for (AnalysisPane* pane : window->analysisPanes())
    m_shots.append({QString::fromLatin1(pane->metaObject()->className()).remove("Pane").toLower(), pane});
}

void ScreenshotTour::start() {
  QDir().mkpath(m_folder);
  m_timer->start(kPollMs);
}

bool ScreenshotTour::save(const QString& name) {
  const QString path = m_folder + "/" + m_prefix + "-" + name + ".png";
  const bool saved = savePng(m_window->grab(), path);
  std::fprintf(saved ? stdout : stderr, "%s %s\n", saved ? "wrote" : "cannot write", qPrintable(path));
  m_failed = m_failed || !saved;
  return saved;
}

void ScreenshotTour::poll() {
  ++m_ticks;
  switch (m_phase) {
    case Phase::Settle:  // the panes as a first look shows them: nothing computed yet
      if (m_ticks < kSettleTicks) return;
      m_window->raisePane(m_window->headsPane());
      save("not-computed");
      for (AnalysisPane* pane : m_window->analysisPanes()) pane->refresh();
      m_phase = Phase::Computing;
      return;
    case Phase::Computing:
      for (AnalysisPane* pane : m_window->analysisPanes())
        if (!pane->hasResult() && !pane->hasFailed()) return;
      m_window->headsPane()->selectHead(1, 2);
      m_phase = Phase::Detail;
      return;
    case Phase::Detail:
      if (m_window->headsPane()->isDetailStale()) return;  // until it is shown, failed or dropped
      m_phase = Phase::Shooting;
      m_ticks = 0;
      if (!m_shots.isEmpty()) m_window->raisePane(m_shots.first().second);
      return;
    case Phase::Shooting:
      if (m_ticks < kSettleTicks) return;
      save(m_shots.takeFirst().first);
      m_ticks = 0;
      if (!m_shots.isEmpty()) {
        m_window->raisePane(m_shots.first().second);
        return;
      }
      m_timer->stop();
      QApplication::exit(m_failed ? 1 : 0);
  }
}
