// normfree: the desktop workbench. Usage: normfree [model-folder]
#include <QApplication>
#include <QCommandLineParser>
#include <QLibraryInfo>
#include <QLocale>
#include <QTimer>
#include <QTranslator>

#include "MainWindow.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("NormFree");
  QApplication::setApplicationName("NormFree Workbench");
  QApplication::setApplicationVersion("0.1.0");

  QTranslator translator;
  if (translator.load(QLocale(), "normfree", "_", ":/i18n")) QApplication::installTranslator(&translator);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QApplication::translate("main", "Remove LayerNorm from GPT-2 and inspect the result."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "model-folder",
      QApplication::translate("main", "Model folder to open (config.json + model.safetensors)."));
  QCommandLineOption screenshot(
      "screenshot",
      QApplication::translate("main", "Save a PNG of the main window to <file> once shown, then quit."),
      "file");
  parser.addOption(screenshot);
  parser.process(app);

  MainWindow window;
  window.show();
  if (!parser.positionalArguments().isEmpty()) window.openModelFolder(parser.positionalArguments().first());
  if (parser.isSet(screenshot)) {
    QTimer::singleShot(1500, &window, [&] {
      const bool saved = window.grab().save(parser.value(screenshot));
      QApplication::exit(saved ? 0 : 1);
    });
  }
  return app.exec();
}
