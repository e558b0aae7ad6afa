// Responsiveness of the GUI while training runs on every core: a 10 ms timer on the GUI thread, and the
// longest gap between its ticks over the measured window (target ≤ 100 ms). The same timer with nothing
// running first, as the reference. Optionally the analysis panes refresh every 10 s meanwhile (they run on
// their own thread and take snapshots of the training model).
//   QT_QPA_PLATFORM=offscreen build/tests/bench_gui [--seconds 60] [--analyses] [--model DIR] [--remote]
// Starts a run of the default setup on the bundled model (its fine-tuning data are made first if missing).
// With --remote the run is a `normfree-cli remove … --serve 0` process instead, which the window connects
// to (File › Connect to Run): its metrics stream in and the analyses are computed by that process.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "analysis/AnalysisPane.h"
#include "data/default_datasets.h"
#include "run/RunSession.h"
#include "run/run_directory.h"
#include "serve/steering_client.h"
#include "window/MainWindow.h"

namespace {
struct Gaps {
  std::vector<double> ms;
  double quantile(double q) const {
    if (ms.empty()) return 0;
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
  }
  double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

// Runs the event loop for `seconds` with a 10 ms timer and returns the gaps between its ticks.
Gaps measure(double seconds, const std::function<void(double)>& everySecond = {}) {
  Gaps gaps;
  QElapsedTimer clock;
  clock.start();
  double last = 0, lastSecond = 0;
  QTimer timer;
  timer.setTimerType(Qt::PreciseTimer);
  timer.setInterval(10);
  QEventLoop loop;
  QObject::connect(&timer, &QTimer::timeout, [&] {
    const double now = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    gaps.ms.push_back(now - last);
    last = now;
    if (everySecond && now - lastSecond >= 1000) {
      lastSecond = now;
      everySecond(now / 1000);
    }
    if (now >= seconds * 1000) loop.quit();
  });
  timer.start();
  loop.exec();
  return gaps;
}

void print(const char* name, const Gaps& g) {
  std::printf(
      "  \"%s\": {\"ticks\": %zu, \"median_gap_ms\": %.2f, \"p99_gap_ms\": %.2f, \"max_gap_ms\": %.2f}", name,
      g.ms.size(), g.quantile(0.5), g.quantile(0.99), g.max());
}
}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("NormFree");
  QApplication::setApplicationName("NormFree Workbench");
  QCommandLineParser parser;
  QCommandLineOption seconds("seconds", "measured seconds while training", "s", "60");
  QCommandLineOption analyses("analyses", "refresh every analysis pane every 10 s while measuring");
  QCommandLineOption model("model", "model folder (default: the bundled one)", "dir");
  QCommandLineOption remote("remote", "train in a normfree-cli process serving the run, connected to");
  QCommandLineOption cli("cli", "the normfree-cli for --remote", "path", NF_CLI);
  parser.addHelpOption();
  parser.addOptions({seconds, analyses, model, remote, cli});
  parser.process(app);

  MainWindow window;
  window.resize(1600, 1000);
  window.show();
  if (parser.isSet(model)) window.openModelFolder(parser.value(model));
  std::fprintf(stderr, "bench_gui: reference (idle) 10 s…\n");
  const Gaps idle = measure(10);

  QTemporaryDir runs;
  QProcess served;
  if (parser.isSet(remote)) {
    std::fprintf(stderr, "bench_gui: starting a served CLI run (makes the default data on first use)…\n");
    const std::string folder = window.currentFolder().toStdString();
    const nf::Datasets data = nf::prepareSyntheticDatasets(runs.filePath("data").toStdString(), folder);
    const QString run = runs.filePath("run");
    served.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    served.start(parser.value(cli), {"remove", run, "--model", window.currentFolder(), "--train",
                                     QString::fromStdString(data.train), "--eval",
                                     QString::fromStdString(data.val), "--preset", "tiny", "--serve", "0"});
    const QString serveFile = QString::fromStdString(nf::run::servePath(run.toStdString()));
    while (!QFileInfo::exists(serveFile)) {
      if (served.waitForFinished(50) || served.state() == QProcess::NotRunning) {
        std::fprintf(stderr, "bench_gui: the served run ended before serving\n");
        return 1;
      }
    }
    window.connectToRun(nf::readServeFile(serveFile.toStdString()));
  } else {
    window.startRun(runs.filePath("run"));
  }
  std::fprintf(stderr, "bench_gui: waiting for training to start (makes the default data on first use)…\n");
  QElapsedTimer wait;
  wait.start();
  while (window.session()->stepsDone() < 5 && wait.elapsed() < 15 * 60 * 1000) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (window.session()->phase() == RunPhase::Failed) {
      std::fprintf(stderr, "bench_gui: the run failed\n");
      return 1;
    }
  }
  const int64_t firstStep = window.session()->stepsDone();
  std::fprintf(stderr, "bench_gui: measuring %s s while training%s…\n", qPrintable(parser.value(seconds)),
               parser.isSet(analyses) ? " and refreshing analyses" : "");
  int refreshes = 0, results = 0;
  for (AnalysisPane* pane : window.analysisPanes())
    QObject::connect(pane, &AnalysisPane::resultShown, [&results] { ++results; });
  const Gaps training = measure(parser.value(seconds).toDouble(), [&](double t) {
    if (parser.isSet(analyses) && static_cast<int>(t) % 10 == 0) {
      for (AnalysisPane* pane : window.analysisPanes()) pane->refresh();
      ++refreshes;
    }
  });
  const int64_t steps = window.session()->stepsDone() - firstStep;
  if (parser.isSet(remote)) {
    window.session()->stop();
    served.waitForFinished(-1);
  }
  window.session()->shutdown();
  std::printf("{\n");
  print("idle", idle);
  std::printf(",\n");
  print("training", training);
  std::printf(
      ",\n  \"run\": \"%s\", \"steps_during_measurement\": %lld, \"analysis_refreshes\": %d, "
      "\"analysis_results_shown\": %d, \"seconds\": %s,\n",
      parser.isSet(remote) ? "served by a normfree-cli process, connected to" : "trained in the window",
      static_cast<long long>(steps), refreshes, results, qPrintable(parser.value(seconds)));
  std::printf("  \"max_gap_ratio_training_vs_idle\": %.2f\n}\n", training.max() / std::max(1e-9, idle.max()));
  return 0;
}
