#include "analysis/AnalysisRunner.h"

#include <QMetaObject>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "data/default_datasets.h"
#include "io/file_format.h"
#include "train/trainer.h"
#include "util/progress.h"

namespace {
constexpr int64_t kIoiPrompts = 96;  // enough for stable grids, few enough to patch in seconds
}

nlohmann::json AnalysisInputs::run(const nf::AnalysisRequest& request, const std::string& which,
                                   const nf::ProgressFn& progress, const nf::SnapshotPtr& pinned) const {
  if (server) return server(request, which, progress);
  const nf::ModelSnapshot& snapshot = pinned ? *pinned : which == "start" ? *reference : *model;
  return nf::runAnalysis(request, snapshot, sources, progress).result;
}

std::optional<nlohmann::json> AnalysisInputs::runStart(const nf::AnalysisRequest& request,
                                                       const nf::ProgressFn& progress) const {
  if (!server && ((model && model == reference) || !startingModelHere)) return std::nullopt;
  return run(request, "start", progress);
}

nf::AnalysisRequest AnalysisInputs::request(const std::string& kind) const {
  nf::AnalysisRequest request;
  request.kind = kind;
  request.sequences = sequences;
  request.length = length;
  return request;
}

std::vector<std::string> AnalysisInputs::sentTexts(const nlohmann::json& answer, const std::string& key,
                                                   const std::vector<int32_t>& ids) {
  const auto it = answer.is_object() ? answer.find(key) : answer.end();
  std::vector<std::string> texts;
  for (size_t i = 0; i < ids.size(); ++i) {
    const bool sent = it != answer.end() && it->is_array() && i < it->size() && (*it)[i].is_string();
    texts.push_back(sent ? (*it)[i].get<std::string>() : "#" + std::to_string(ids[i]));
  }
  return texts;
}

AnalysisRunner::AnalysisRunner(QObject* parent) : QObject(parent), m_worker(new QObject) {
  m_worker->moveToThread(&m_thread);
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.setObjectName("analysis");
  m_thread.start(QThread::LowPriority);  // training keeps the priority it had
}

AnalysisRunner::~AnalysisRunner() {
  m_closing = true;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pending.clear();
  }
  m_thread.quit();
  m_thread.wait();
}

void AnalysisRunner::changeSource() {
  ++m_source;
  QMetaObject::invokeMethod(
      this, [this] { Q_EMIT sourceChanged(); }, Qt::QueuedConnection);
}

bool AnalysisSetup::operator==(const AnalysisSetup& o) const {
  return modelFolder == o.modelFolder && validationData == o.validationData &&
         datasetsFolder == o.datasetsFolder && ioiPrompts == o.ioiPrompts && device == o.device &&
         startingModelHere == o.startingModelHere && sequences == o.sequences && length == o.length;
}

void AnalysisRunner::setSetup(const AnalysisSetup& setup) {
  bool otherModel;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (setup == m_setup) return;  // (a training file chosen: nothing the analyses read)
    otherModel = setup.modelFolder != m_setup.modelFolder;
    m_pending.clear();  // asked of the model or data before: not to be computed on these
    m_setup = setup;
    ++m_setupGeneration;
    if (otherModel)
      changeSource();
    else
      ++m_source;  // results on their way are of the data before: dropped (the model has not changed)
  }
  if (otherModel)
    Q_EMIT modelReplaced();
  else
    Q_EMIT inputsChanged();
}

bool AnalysisSource::operator==(const AnalysisSource& o) const {
  return trainer == o.trainer && currentFolder == o.currentFolder && server == o.server &&
         serverContext == o.serverContext;
}

void AnalysisRunner::setSource(AnalysisSource source) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (source == m_from) return;
  m_from = std::move(source);
  changeSource();
}

void AnalysisRunner::forgetModel() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_setup = AnalysisSetup{};
    m_from = AnalysisSource{};
    m_pending.clear();  // asked of the model or run before
    ++m_setupGeneration;
    changeSource();
  }
  Q_EMIT modelReplaced();
}

void AnalysisRunner::setAvailability(AnalysesCan can) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_availability == can) return;
    m_availability = can;
  }
  Q_EMIT availabilityChanged();
}

AnalysesCan AnalysisRunner::availability() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_availability;
}

AnalysisSource AnalysisRunner::source() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_from;
}

bool AnalysisRunner::computesBesideTraining() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_from.trainer != nullptr && !m_from.server;
}

void AnalysisRunner::request(const QString& key, AnalysisWork work) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_availability != AnalysesCan::Compute) return;  // a server gone, a model elsewhere: nothing asks
    const int64_t number = ++m_requests;
    m_pending[key] = {number, std::move(work)};
    m_latest[key] = number;
  }
  QMetaObject::invokeMethod(
      m_worker, [this] { runNext(); }, Qt::QueuedConnection);
}

std::shared_ptr<const AnalysisInputs> AnalysisRunner::inputs() {
  AnalysisSetup setup;
  int64_t generation;
  AnalysisSource from;
  int64_t source = 0;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    setup = m_setup;
    generation = m_setupGeneration;
    from = m_from;
    source = m_source;
  }
  const std::string& current = from.currentFolder;
  if (const std::optional<nf::ServeAddress>& server = from.server) {
    auto remote = std::make_shared<AnalysisInputs>();
    remote->sequences = setup.sequences;
    remote->length = std::min(setup.length, from.serverContext);
    auto client = std::make_shared<nf::SteeringClient>(*server);
    remote->server = [this, client, source](const nf::AnalysisRequest& request, const std::string& model,
                                            const nf::ProgressFn& progress) {
      return client->awaitAnalysis(client->analyze(request, model), progress, [this, source] {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_closing || m_source != source;
      });
    };
    return remote;
  }
  if (setup.modelFolder.empty()) throw std::runtime_error("no model is open");
  if (generation != m_cachedGeneration) {
    auto in = std::make_shared<AnalysisInputs>();
    in->reference = nf::ModelSnapshot::load(setup.modelFolder, setup.device);
    // A tokenizer we cannot read only costs what needs one (token texts, the default datasets, IOI sets).
    std::string noTokenizer =
        setup.modelFolder + " has no tokenizer (tokenizer.json, vocab.json + merges.txt or tokenizer.model)";
    if (nf::hasTokenizer(setup.modelFolder)) {
      try {
        in->sources.tokenizer = nf::loadTokenizer(setup.modelFolder);
      } catch (const std::exception& e) {
        noTokenizer = e.what();
      }
    }
    in->encodesText = in->sources.tokenizer != nullptr;
    in->startingModelHere = setup.startingModelHere;
    std::string validation = setup.validationData, ioi = setup.ioiPrompts;
    if (validation.empty()) {
      if (!in->sources.tokenizer)
        throw std::runtime_error(noTokenizer + ": choose a validation token file in File › Choose Datasets");
      const nf::Datasets made = nf::prepareSyntheticDatasets(setup.datasetsFolder, setup.modelFolder);
      validation = made.val;
      if (ioi.empty()) ioi = made.ioi;
    }
    in->sources.tokenFile = validation;
    in->datasetsFolder = setup.datasetsFolder;
    in->length = std::min<int64_t>(setup.length, in->reference->config().shape.nPositions);
    in->sequences = nf::readSequences(validation, setup.sequences, in->length).count;  // as many as it holds
    nf::IoiPromptSet set;
    if (!ioi.empty()) {
      set = nf::ioiPromptSetFromJson(nf::readJsonFile(ioi), ioi);
    } else if (in->sources.tokenizer) {
      nf::IoiOptions options;
      options.count = kIoiPrompts;
      set = nf::makeIoiPromptSet(*in->sources.tokenizer, options);
    }
    if (static_cast<int64_t>(set.prompts.size()) > kIoiPrompts) set.prompts.resize(kIoiPrompts);
    if (!set.prompts.empty()) in->sources.prompts = std::make_shared<const nf::IoiPromptSet>(std::move(set));
    m_cached = in;
    m_cachedGeneration = generation;
  }
  auto now = std::make_shared<AnalysisInputs>(*m_cached);
  if (from.trainer) {
    now->model = from.trainer->snapshot();
  } else if (!current.empty()) {
    // The path and its config.json's time: a run's final/ is written again by a resume that trains on, and a
    // folder deleted and trained into anew holds another model under the same path.
    std::error_code noTime;
    const auto written = std::filesystem::last_write_time(current + "/config.json", noTime);
    if (current != m_loadedFolder || written != m_loadedWritten) {
      m_loaded = nf::ModelSnapshot::load(current, setup.device);
      m_loadedFolder = current;
      m_loadedWritten = written;
    }
    now->model = m_loaded;
  } else {
    now->model = m_cached->reference;
  }
  return now;
}

// Whether request `number` for `key`, made for source `source`, is still the one to show: else a newer
// model or request won.
bool AnalysisRunner::isNewest(const QString& key, int64_t number, int64_t source) {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_latest[key] == number && m_source == source;
}

bool AnalysisRunner::sourceIs(int64_t source) {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_source == source;
}

void AnalysisRunner::runNext() {
  QString key;
  int64_t number = 0, source = 0;
  AnalysisWork work;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_pending.empty()) return;
    source = m_source;
    auto oldest = m_pending.begin();
    for (auto it = m_pending.begin(); it != m_pending.end(); ++it)
      if (it->second.first < oldest->second.first) oldest = it;
    key = oldest->first;
    number = oldest->second.first;
    work = std::move(oldest->second.second);
    m_pending.erase(oldest);
  }
  // Said on the GUI thread, and only while the model (or run) is still the one asked of: a job of the model
  // before runs on after a switch (it cannot be cut short), and had shown the new one's pane computing.
  auto sayIfCurrent = [this, source](std::function<void()> say) {
    QMetaObject::invokeMethod(
        this,
        [this, source, say] {
          if (sourceIs(source)) say();
        },
        Qt::QueuedConnection);
  };
  sayIfCurrent([this, key] { Q_EMIT started(key); });
  try {
    const std::shared_ptr<const AnalysisInputs> in = inputs();
    std::function<void()> deliver = work(*in, [this, key, sayIfCurrent](const nf::Progress& p) {
      sayIfCurrent([this, key, p] { Q_EMIT progress(key, p.done, p.total); });
    });
    QMetaObject::invokeMethod(
        this,
        [this, key, number, source, deliver] {
          if (isNewest(key, number, source) && deliver) deliver();
          Q_EMIT finished(key);
        },
        Qt::QueuedConnection);
  } catch (const nf::Cancelled&) {
    Q_EMIT finished(key);
  } catch (const std::exception& e) {
    // Like a result, a failure is shown only for the model and request it was for.
    QMetaObject::invokeMethod(
        this,
        [this, key, number, source, why = QString::fromStdString(e.what())] {
          if (isNewest(key, number, source))
            Q_EMIT failed(key, why);
          else
            Q_EMIT finished(key);
        },
        Qt::QueuedConnection);
  }
}
