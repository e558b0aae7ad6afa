// normfree: the desktop workbench. Usage: normfree [model-folder | run-directory]
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QScreen>
#include <QSettings>
#include <QTimer>
#include <cstdio>

#include "analysis/AnalysisPane.h"
#include "analysis/HeadsPane.h"
#include "run/RunSession.h"
#include "run/run_directory.h"
#include "save_png.h"
#include "screenshot_sequence.h"
#include "screenshot_tour.h"
#include "serve/steering_client.h"
#include "util/allocator.h"
#include "util/blas_threads.h"
#include "window/AppFolders.h"
#include "window/MainWindow.h"

int main(int argc, char** argv) {
  nf::keepFreedMemoryForReuse();  // before any thread starts
  nf::letIdleBlasThreadsSleep();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("NormFree");
  QApplication::setApplicationName("NormFree Workbench");
  QApplication::setApplicationVersion("0.1.0");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QApplication::translate("main", "Remove LayerNorm from GPT-2 and inspect the result."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "folder", QApplication::translate("main",
                                        "A model folder (config.json + model.safetensors) or a run directory "
                                        "to open (default: the last model, first time the bundled one)."));
  QCommandLineOption start("start",
                           QApplication::translate("main", "Start a run of the default setup at once."));
  QCommandLineOption screenshot(
      "screenshot", QApplication::translate("main", "Save a PNG of the main window to <file>, then quit."),
      "file");
  QCommandLineOption screenshotStep(
      "screenshot-step",
      QApplication::translate("main",
                              "With --start: refresh the analyses at step <n> and take the screenshot once "
                              "they are shown."),
      "n", "0");
  QCommandLineOption wholeScreen(
      "whole-screen",
      QApplication::translate("main",
                              "With --screenshot: grab the whole screen, not the window (what a user sees, "
                              "and whether the window fits it)."));
  QCommandLineOption exportFigures(
      "export-figures",
      QApplication::translate("main",
                              "With --screenshot: also export every plot (PNG, SVG, PDF, CSV) to <dir>."),
      "dir");
  QCommandLineOption connectTo(
      "connect",
      QApplication::translate(
          "main",
          "Connect to a run served with --serve (File › Connect to Run): its run directory, "
          "a copy of its serve.json, or HOST:PORT with the token in NF_STEER_TOKEN."),
      "run");
  QCommandLineOption size(
      "size", QApplication::translate("main", "Open the window at this size, e.g. 1366x768."), "WxH");
  QCommandLineOption language("language", QApplication::translate("main", "Use this language: en or de."),
                              "lang");
  QCommandLineOption screenshotPanes(
      "screenshot-panes",
      QApplication::translate(
          "main",
          "Save a PNG of the window with each pane in front (after computing every "
          "analysis) to <dir>/<prefix>-<pane>.png, then quit (docs/figures/screenshots.sh)."),
      "dir");
  QCommandLineOption prefix("prefix",
                            QApplication::translate("main", "The file-name prefix of --screenshot-panes."),
                            "prefix", "workbench");
  QCommandLineOption sequence(
      "screenshot-sequence",
      QApplication::translate(
          "main",
          "Save the window at each stage of a sequence to <dir>/<prefix>-<stage>.png, then quit: "
          "open-another-model (a run trains, stops, then the bundled tiny LLaMA is opened) or "
          "connect-after-open (the model open, then the run of --connect; docs/figures/screenshots.sh)."),
      "name");
  QCommandLineOption sequenceDir(
      "screenshot-dir", QApplication::translate("main", "Where --screenshot-sequence writes."), "dir", ".");
  parser.addOptions({start, screenshot, screenshotStep, wholeScreen, exportFigures, connectTo, size, language,
                     screenshotPanes, prefix, sequence, sequenceDir});
  parser.process(app);

  // The language before the window: it opens the start model as it is made and says so in the status bar
  // ("Opened …" stayed English at a --language de launch). Chosen in the menu, a language is kept too.
  if (parser.isSet(language)) QSettings().setValue("language", parser.value(language));
  MainWindow window;
  if (parser.isSet(size)) {
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() != 2 || wh[0].toInt() < 200 || wh[1].toInt() < 200) {
      std::fprintf(stderr, "normfree: --size: expected WIDTHxHEIGHT, e.g. 1366x768 (got '%s')\n",
                   qPrintable(parser.value(size)));
      return 2;
    }
    window.resize(wh[0].toInt(), wh[1].toInt());
  }
  window.show();
  if (!parser.positionalArguments().isEmpty()) {
    const QString folder = parser.positionalArguments().first();
    if (nf::run::isRunDirectory(folder.toStdString()))
      window.openRun(folder);
    else
      window.openModelFolder(folder);
  }
  if (parser.isSet(start)) window.startRun();
  std::optional<nf::ServeAddress> served;
  if (parser.isSet(connectTo)) {
    try {
      served = nf::serveAddressOf(parser.value(connectTo).toStdString(),
                                  qEnvironmentVariable("NF_STEER_TOKEN").toStdString());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "normfree: --connect: %s\n", e.what());
      return 2;
    }
  }
  if (parser.isSet(sequence)) {
    const QString name = parser.value(sequence);
    QList<ScreenshotSequence::Stage> stages;
    if (name == "open-another-model") {
      stages = ScreenshotSequence::openAnotherModel(&window, AppFolders::bundledModel("tiny-llama"));
    } else if (name == "connect-after-open" && served) {
      stages = ScreenshotSequence::connectAfterOpen(&window, *served);
      served.reset();  // the sequence connects, after its first shot
    } else {
      std::fprintf(stderr,
                   "normfree: --screenshot-sequence: '%s' is not open-another-model or connect-after-open "
                   "(which needs --connect)\n",
                   qPrintable(name));
      return 2;
    }
    (new ScreenshotSequence(&window, parser.value(sequenceDir), parser.value(prefix),
                            parser.isSet(wholeScreen), stages))
        ->start();
  }
  if (served) window.connectToRun(*served);
  if (parser.isSet(screenshotPanes))
    (new ScreenshotTour(&window, parser.value(screenshotPanes), parser.value(prefix)))->start();
  if (parser.isSet(screenshot)) {
    const QString file = parser.value(screenshot), figures = parser.value(exportFigures);
    const int step = parser.value(screenshotStep).toInt();
    const bool screenOnly = parser.isSet(wholeScreen);
    auto grab = [&window, file, figures, screenOnly] {
      if (!figures.isEmpty()) window.exportAllFigures(figures);
      const QPixmap image = screenOnly ? window.screen()->grabWindow(0) : window.grab();
      QApplication::exit(savePng(image, file) ? 0 : 1);
    };
    if (step <= 0) {
      QTimer::singleShot(1500, &window, grab);
    } else {
      // At the step: refresh the analyses; once every pane shows a result, wait a moment for the last
      // redraw and grab the window while training goes on.
      auto* poll = new QTimer(&window);
      QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, step, grab] {
        static bool requested = false;
        if (!requested && window.session()->stepsDone() >= step) {
          requested = true;
          for (AnalysisPane* pane : window.analysisPanes()) pane->refresh();
        }
        if (!requested) return;
        for (AnalysisPane* pane : window.analysisPanes())
          if (!pane->hasResult()) return;
        // Show the heads pane with a head's detail, the view people would rather look at.
        static bool selected = false;
        if (!selected) {
          selected = true;
          window.raisePane(window.headsPane());
          window.headsPane()->selectHead(1, 2);
        }
        if (!window.headsPane()->hasDetail()) return;
        poll->stop();
        QTimer::singleShot(1000, &window, grab);
      });
      poll->start(200);
    }
  }
  return app.exec();
}
