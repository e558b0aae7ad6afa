// Runs the analysis panes' work on one background thread, on the model as it is when the work starts: a
// snapshot of the running trainer (taken between two optimizer steps) or the opened model folder. Newest
// request wins: a request replaces a pending one of the same pane, and a result that a newer request of
// its pane has overtaken is dropped. The inputs every analysis reads (the validation data, the IOI
// prompt set, the tokenizer, the starting model as a reference) are made once per opened model, on the
// analysis thread, so the GUI thread never loads or computes anything. Every pane asks for its analysis as
// an nf::AnalysisRequest (AnalysisInputs::run): computed here as `normfree-cli analyze` computes it, or
// for a run served elsewhere as a job on its server, waited for here — one request path, one JSON.
#pragma once
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/analysis_header.h"
#include "analysis/analysis_request.h"
#include "data/ioi.h"
#include "logic/WindowState.h"
#include "serve/steering_client.h"
#include "text/tokenizer.h"
#include "util/progress.h"

namespace nf {
class Trainer;
}

struct AnalysisInputs {
  // The one path of every pane: the analysis `request` (docs/ANALYSES.md) on the model now ("now") or as
  // the run started ("start"), answered as its JSON — computed here (nf::runAnalysis on the snapshot,
  // with the validation data, tokenizer and IOI prompts) or, for a run served elsewhere, as a job on its
  // server. `pinned`: this snapshot instead of "now" (here only: a server computes on its model now).
  nlohmann::json run(const nf::AnalysisRequest& request, const std::string& model,
                     const nf::ProgressFn& progress = {}, const nf::SnapshotPtr& pinned = nullptr) const;
  // The starting model's answer to `request`, or none where the model now is the starting model's very
  // snapshot (a model folder opened; a run preparing, or followed before its first checkpoint), or where the
  // starting model is not here: then there is nothing to set beside the model now, and the panes show it
  // alone.
  std::optional<nlohmann::json> runStart(const nf::AnalysisRequest& request,
                                         const nf::ProgressFn& progress = {}) const;
  nf::AnalysisRequest request(const std::string& kind) const;  // of the validation sequences below
  // The texts of `ids` that an answer holds in answer[key] (the tokenizer's), "#id" where none.
  static std::vector<std::string> sentTexts(const nlohmann::json& answer, const std::string& key,
                                            const std::vector<int32_t>& ids);

  int64_t sequences = 0, length = 0;  // the validation sequences every analysis reads: count, tokens each
  std::string datasetsFolder;         // where the opened model's synthetic datasets live
  bool encodesText = true;            // prompts given as text can be encoded (a server has its run's)
  nf::SnapshotPtr model;              // the model now (null for a run served elsewhere)
  bool startingModelHere = true;      // AnalysisSetup's: false, runStart has no answer

  // How run() computes (set by the runner): on a server, or here on these.
  std::function<nlohmann::json(const nf::AnalysisRequest&, const std::string& model, const nf::ProgressFn&)>
      server;
  nf::SnapshotPtr reference;  // the model the run started from (the opened folder)
  nf::AnalysisSources sources;
};

// Where the inputs come from (set when a model or run is opened).
struct AnalysisSetup {
  std::string modelFolder;     // the starting model; its tokenizer files
  std::string validationData;  // token file ("": the default synthetic datasets, made on first use)
  std::string datasetsFolder;  // where the default datasets live
  std::string ioiPrompts;      // IOI prompt set JSON ("": made from the tokenizer)
  std::string device = "cpu";  // for a model folder (a trainer's snapshots stay on its device)
  // false: modelFolder is the run's own model now (a run copied from the machine it trained on, its starting
  // model not here): read for its tokenizer and shape, never shown as the starting model.
  bool startingModelHere = true;
  int64_t sequences = 16, length = 128;
  bool operator==(const AnalysisSetup& other) const;
};

// What the analyses read, one thing at a time: a run served elsewhere (they run there), else a trainer in
// this process (snapshots between steps), else a folder holding the model as it is now (a followed run's
// newest checkpoint or final model), else the setup's model folder ({}: that one).
struct AnalysisSource {
  std::shared_ptr<nf::Trainer> trainer;
  std::string currentFolder;
  std::optional<nf::ServeAddress> server;
  int64_t serverContext = 0;  // the served run's context, in tokens
  bool operator==(const AnalysisSource& other) const;
  static AnalysisSource folder(std::string currentFolder) {
    AnalysisSource s;
    s.currentFolder = std::move(currentFolder);
    return s;
  }
};

// Work runs on the analysis thread; what it returns runs on the GUI thread (unless overtaken).
using AnalysisWork = std::function<std::function<void()>(const AnalysisInputs&, const nf::ProgressFn&)>;

class AnalysisRunner : public QObject {
  Q_OBJECT
 public:
  explicit AnalysisRunner(QObject* parent = nullptr);
  ~AnalysisRunner() override;

  // Another setup (nothing where it is the same): drops the cached inputs, the requests not yet started and
  // the results on their way (of the model or data before); modelReplaced for another model, else
  // inputsChanged (the figures shown are of the data before).
  void setSetup(const AnalysisSetup& setup);
  // Another source, as one change: every figure shown is out of date once (nothing if it is the same).
  void setSource(AnalysisSource source);
  AnalysisSource source() const;
  // No model at all (an analysis asked for says so): while a run is being connected to, the model opened
  // before is not what the window shows. The requests not yet started are dropped.
  void forgetModel();
  // Whether the panes can compute now (the window's view of what it shows); a request while they cannot is
  // dropped, and each pane says why instead of offering its button.
  void setAvailability(AnalysesCan can);
  AnalysesCan availability() const;
  void request(const QString& key, AnalysisWork work);
  // Analyses compute beside a run trained in this process (they share its processor or GPU).
  bool computesBesideTraining() const;

 Q_SIGNALS:
  void started(const QString& key);
  void finished(const QString& key);
  void progress(const QString& key, qint64 done, qint64 total);
  void failed(const QString& key, const QString& message);
  void sourceChanged();  // another model now (a run's newer step): every figure shown is out of date
  // Another model altogether (another folder opened, a run of another model, a connection): the figures
  // shown are of a model the window no longer shows, and go.
  void modelReplaced();
  void inputsChanged();  // the same model, other validation data: every figure shown is of the data before
  void availabilityChanged();

 private:
  void runNext();                                                     // on the analysis thread
  bool isNewest(const QString& key, int64_t number, int64_t source);  // its answer is still wanted
  bool sourceIs(int64_t source);                   // the model (or run) asked of is still the one shown
  void changeSource();                             // caller holds m_mutex
  std::shared_ptr<const AnalysisInputs> inputs();  // on the analysis thread

  QThread m_thread;
  QObject* m_worker;
  mutable std::mutex m_mutex;  // guards everything below
  AnalysisSetup m_setup;
  int64_t m_setupGeneration = 0;
  AnalysisSource m_from;
  AnalysesCan m_availability = AnalysesCan::Compute;  // the window says otherwise where it cannot
  std::atomic<bool> m_closing{false};                 // the destructor: a job being waited for is abandoned
  std::map<QString, std::pair<int64_t, AnalysisWork>> m_pending;  // key → (request number, work)
  std::map<QString, int64_t> m_latest;                            // key → newest request number
  int64_t m_requests = 0;
  int64_t m_source = 0;  // bumped whenever what "the model now" means changes; results of older ones drop
  // Cached on the analysis thread for m_cachedGeneration.
  int64_t m_cachedGeneration = -1;
  std::shared_ptr<AnalysisInputs> m_cached;
  std::string m_loadedFolder;  // m_loaded is the model of this folder, as its config.json was written then
  std::filesystem::file_time_type m_loadedWritten;
  nf::SnapshotPtr m_loaded;
};
