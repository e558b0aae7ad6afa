// What the GUI tests share: a tiny model folder made by the CLI, random token files, and a trainer of the
// tiny model with a known schedule. Plain engine headers only (no torch in a Qt test).
#pragma once
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "data/token_file.h"
#include "run/run_directory.h"
#include "train/trainer.h"

namespace fixtures {

// How long a test waits for an event before failing (QTRY_*_WITH_TIMEOUT). The wait ends as soon as the
// event comes, so this bound never makes a correct program fail on a loaded machine; a hung one still fails
// inside CTest's limit.
constexpr int kEventuallyMs = 600000;

inline QString makeModel(const QString& folder, int layers, int vocab = 50, int context = 16) {
  QProcess cli;
  cli.start(NF_CLI,
            {"init", "--out", folder, "--overwrite", "--layers", QString::number(layers), "--heads", "2",
             "--d-model", "16", "--context", QString::number(context), "--vocab", QString::number(vocab)});
  if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
    qFatal("normfree-cli init failed: %s", cli.readAllStandardError().constData());
  return folder;
}

inline QString writeRandomTokens(const QString& path, int64_t count, int vocab, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (auto& id : ids) id = static_cast<int32_t>(random() % static_cast<unsigned>(vocab));
  nf::TokenFileMeta meta;
  meta.dtype = nf::tokenDTypeFor(vocab);
  meta.vocabSize = vocab;
  nf::TokenFileWriter writer(path.toStdString(), meta);
  writer.append(ids.data(), ids.size());
  writer.finish();
  return path;
}

// Sets sites of a model folder's normalization (config.json's normfree.sites), e.g.
// {"LN_v.1": {"kind": "fakeln", "scale": 2.5}}: the others stay as they are.
inline void setNormSites(const QString& folder, const QJsonObject& sites) {
  QFile file(folder + "/config.json");
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
  QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
  file.close();
  QJsonObject normfree = config["normfree"].toObject();
  QJsonObject all = normfree["sites"].toObject();
  for (auto it = sites.begin(); it != sites.end(); ++it) all[it.key()] = it.value();
  normfree["sites"] = all;
  config["normfree"] = normfree;
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    qFatal("cannot write %s", qPrintable(file.fileName()));
  file.write(QJsonDocument(config).toJson());
}

// A removal run of a 2-layer model over 40 steps: LN_mlp.0 at 10, LN_mlp.1 at 20, LN_qk.0 at 30,
// LN_qk.1 at 32 (ids 1–4).
inline nf::RunConfig smallRemoval(const QString& model, const QString& train) {
  nf::RunConfig c;
  c.mode = nf::TrainingMode::Remove;
  c.model = model.toStdString();
  c.trainData = train.toStdString();
  c.optimizer.microBatch = 2;
  c.optimizer.context = 16;
  c.optimizer.maxSteps = 40;
  c.optimizer.warmupSteps = 2;
  c.eval.interval = 0;
  c.checkpointInterval = 1000;
  c.schedule.events = {{1, 10, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 0},
                       {2, 20, nf::EventAction::MakeFake, nf::SiteKind::Mlp, 1},
                       {3, 30, nf::EventAction::MakeFake, nf::SiteKind::Qk, 0},
                       {4, 32, nf::EventAction::MakeFake, nf::SiteKind::Qk, 1}};
  return c;
}

// The records of one type in a run's metrics.jsonl, as written so far.
inline std::vector<nlohmann::json> metricsRecords(const QString& runDir, const std::string& type) {
  std::vector<nlohmann::json> out;
  std::ifstream in(nf::run::metricsPath(runDir.toStdString()));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("type", std::string()) == type) out.push_back(std::move(record));
  }
  return out;
}

// Trains until `steps` optimizer steps are done (in the calling thread).
inline void trainUntil(nf::Trainer& trainer, int64_t steps) {
  trainer.run([&](const nf::Progress& p) {
    if (p.done >= steps) trainer.requestStop();
  });
}

}  // namespace fixtures
