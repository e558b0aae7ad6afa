#include "window/AppFolders.h"

#include <QApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QTranslator>

namespace {
const char* settingsKey(AppFolders::Recent kind) {
  return kind == AppFolders::Recent::Models ? "recentModelFolders" : "recentRuns";
}
constexpr int kMaxRecent = 8;
}  // namespace

QString AppFolders::dataFolder(const QString& sub) {
  // ~/.local/share/normfree/…: short to type and to find (AppLocalDataLocation doubles the organisation and
  // application names, "NormFree/NormFree Workbench").
  return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + "/normfree/" + sub;
}

QString AppFolders::bundledModel(const QString& name) {
  const QStringList candidates = {QApplication::applicationDirPath() + "/../share/normfree/" + name,
                                  QApplication::applicationDirPath() + "/../../resources/" + name,
                                  QStringLiteral(NF_RESOURCES_DIR) + "/" + name};
  for (const QString& c : candidates)
    if (QFileInfo::exists(c + "/config.json")) return QDir::cleanPath(c);
  return QString();
}

QList<std::pair<QString, QString>> AppFolders::bundledModels() {
  QList<std::pair<QString, QString>> found;
  const std::pair<QString, QString> models[] = {
      {"tiny-gpt2", tr("Tiny GPT-2 — 4 layers, the default: a removal takes minutes on a laptop")},
      {"tiny-llama",
       tr("Tiny LLaMA — 4 layers with RMSNorm, rotary embeddings, SwiGLU and grouped queries")}};
  for (const auto& [name, label] : models)
    if (const QString folder = bundledModel(name); !folder.isEmpty()) found.append({label, folder});
  return found;
}

QString AppFolders::defaultModel() {
  // NF_BUNDLED_MODEL overrides what the first launch opens (tests point it elsewhere, or at nothing).
  if (qEnvironmentVariableIsSet("NF_BUNDLED_MODEL")) {
    const QString folder = qEnvironmentVariable("NF_BUNDLED_MODEL");
    return QFileInfo::exists(folder + "/config.json") ? QDir::cleanPath(folder) : QString();
  }
  return bundledModel("tiny-gpt2");
}

QString AppFolders::startModel() {
  const QStringList models = recent(Recent::Models);
  return models.isEmpty() || !QFileInfo::exists(models.first()) ? defaultModel() : models.first();
}

QString AppFolders::datasetsFolder(const QString& modelFolder) {
  // Name plus a hash of the path: two models of one name keep their own.
  const QByteArray key =
      QCryptographicHash::hash(modelFolder.toUtf8(), QCryptographicHash::Sha1).toHex().left(10);
  return dataFolder("datasets/" + QDir(modelFolder).dirName() + "-" + key);
}

QString AppFolders::newRunFolder(const QString& mode) {
  return dataFolder("runs/" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + "-" + mode);
}

QStringList AppFolders::recent(Recent kind) { return QSettings().value(settingsKey(kind)).toStringList(); }

void AppFolders::remember(Recent kind, const QString& path) {
  QStringList list = recent(kind);
  list.removeAll(path);
  list.prepend(path);
  while (list.size() > kMaxRecent) list.removeLast();
  QSettings().setValue(settingsKey(kind), list);
}

QString AppFolders::applyLanguage(const QString& language, QTranslator* translator) {
  QApplication::removeTranslator(translator);
  const bool german = language == "de" && translator->load(":/i18n/normfree_de.qm");
  if (german) QApplication::installTranslator(translator);
  // Qt's own dialogs (the file dialog's sizes and dates) follow the language; the workbench's numbers do
  // not (ModelInfoView's groupedCount: one decimal point in both, as the plots and the run's files have).
  QLocale::setDefault(german ? QLocale(QLocale::German, QLocale::Germany)
                             : QLocale(QLocale::English, QLocale::UnitedStates));
  const QString now = german ? "de" : "en";
  QSettings().setValue("language", now);
  return now;
}
