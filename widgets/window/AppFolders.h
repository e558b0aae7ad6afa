// Where the workbench keeps and finds things on disk: the bundled models, the user's runs and synthetic
// datasets under the application's data folder, the recently opened model folders and runs, and the
// language chosen (with its translation).
#pragma once
#include <QCoreApplication>
#include <QList>
#include <QString>
#include <QStringList>
#include <utility>

class QTranslator;

class AppFolders {
  Q_DECLARE_TR_FUNCTIONS(AppFolders)

 public:
  static QString dataFolder(const QString& sub);  // a folder under the user's application data
  // A model shipped in resources/ (tiny-gpt2, tiny-llama); empty if not installed.
  static QString bundledModel(const QString& name);
  // The bundled models installed, each with a line saying what it is: (label, folder).
  static QList<std::pair<QString, QString>> bundledModels();
  // What the first launch opens: the tiny GPT-2, or NF_BUNDLED_MODEL's folder.
  static QString defaultModel();
  // What a launch opens: the model opened last where it is still there, else the default ("": none).
  static QString startModel();
  // Where the synthetic datasets of a model folder live (its tokenizer makes them): one folder per model.
  static QString datasetsFolder(const QString& modelFolder);
  // A new run's folder when the user chose none: runs/<date-time>-<mode>.
  static QString newRunFolder(const QString& mode);

  // Installs the German translation for "de" (removes it for anything else) and makes numbers follow the
  // language; remembered for the next launch. Returns the language now in use, "en" or "de".
  static QString applyLanguage(const QString& language, QTranslator* translator);

  enum class Recent { Models, Runs };
  static QStringList recent(Recent kind);  // newest first, at most 8
  static void remember(Recent kind, const QString& path);
};
