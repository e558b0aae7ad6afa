#include "analysis/snapshot.h"

#include <torch/torch.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "data/token_file.h"
#include "eval/loss_summary.h"
#include "io/atomic_file.h"
#include "io/hf_checkpoint.h"
#include "model/gpt2.h"
#include "train/run_directory.h"

namespace nf {

struct ModelSnapshot::Holder {
  GPT2 model{nullptr};
};

ModelSnapshot::~ModelSnapshot() = default;

namespace {

// Analyses take gradients with respect to activations only (attribution patching).
void freeze(GPT2Impl& model) {
  for (auto& p : model.parameters()) p.set_requires_grad(false);
}

}  // namespace

SnapshotPtr ModelSnapshot::load(const std::string& path, const std::string& device) {
  const std::string folder = run::modelFolder(path);
  std::shared_ptr<ModelSnapshot> s(new ModelSnapshot());
  s->m_model = std::make_unique<Holder>();
  s->m_model->model = loadModel(folder, torch::Device(device));
  freeze(*s->m_model->model);
  s->m_config = loadConfigFile(folder + "/config.json");
  s->m_source = folder;
  const std::string state = folder + "/state.json";
  if (std::filesystem::exists(state)) {
    const nlohmann::json j = nlohmann::json::parse(readTextFile(state), nullptr, false);
    if (j.is_object() && j.contains("steps_done") && j["steps_done"].is_number_integer())
      s->m_step = j["steps_done"].get<int64_t>();
  }
  return s;
}

SnapshotPtr ModelSnapshot::copyOf(GPT2Impl& model, int64_t step, const std::string& source) {
  std::shared_ptr<ModelSnapshot> s(new ModelSnapshot());
  s->m_model = std::make_unique<Holder>();
  s->m_model->model = copyModel(model);
  s->m_model->model->setCudaBf16Autocast(false);  // analyses compare against float references
  freeze(*s->m_model->model);
  s->m_config.shape = model.config();
  s->m_config.norms = model.norms();
  s->m_step = step;
  s->m_source = source;
  return s;
}

GPT2Impl& ModelSnapshot::model() const { return *m_model->model; }

std::string ModelSnapshot::label() const {
  return m_step >= 0 ? m_source + " at step " + std::to_string(m_step) : m_source;
}

std::string ModelSnapshot::normSummary() const {
  const std::vector<SiteId> sites = m_config.norms.sites();
  int fake = 0, layerNorm = 0;
  for (const SiteId& site : sites) {
    const NormKind kind = m_config.norms.at(site).kind;
    fake += kind == NormKind::FakeLN;
    layerNorm += kind == NormKind::LayerNorm;
  }
  const std::string total = std::to_string(sites.size());
  if (m_config.folded) return "LN-free (folded)";
  if (layerNorm == static_cast<int>(sites.size())) return "LayerNorm";
  if (fake == static_cast<int>(sites.size())) return "LN-free (FakeLN at all " + total + " sites)";
  if (m_config.norms.isLayerNormFree()) return "LN-free";
  return std::to_string(fake) + " of " + total + " sites FakeLN";
}

TokenSequences readSequences(const std::string& tokenFile, int64_t count, int64_t length) {
  if (count < 1 || length < 2) throw std::invalid_argument("need at least one sequence of at least 2 tokens");
  const TokenFile file = TokenFile::open(tokenFile);
  const int64_t available = static_cast<int64_t>(file.size()) / length;
  if (available < 1)
    throw FileError(tokenFile, "holds " + std::to_string(file.size()) +
                                   " tokens, fewer than one sequence of " + std::to_string(length));
  TokenSequences s;
  s.count = std::min(count, available);
  s.length = length;
  s.tokens.resize(static_cast<size_t>(s.count * length));
  // No vocabulary check here: the model checks every id against its own vocabulary.
  file.read(0, s.count * length, s.tokens.data(), std::numeric_limits<int64_t>::max());
  s.source = std::filesystem::path(tokenFile).filename().string() + ": " + std::to_string(s.count) +
             " chunks × " + std::to_string(length) + " tokens from the start";
  return s;
}

AnalysisHeader makeHeader(const std::string& analysis, const ModelSnapshot& snapshot, const std::string& data,
                          int64_t sequences, int64_t length) {
  return {analysis, snapshot.source(), snapshot.step(), snapshot.normSummary(), data, sequences, length};
}

nlohmann::json toJson(const AnalysisHeader& h) {
  return {{"analysis", h.analysis}, {"model", h.model},         {"step", h.step},    {"norms", h.norms},
          {"data", h.data},         {"sequences", h.sequences}, {"length", h.length}};
}

Spread spreadOf(std::vector<float> values) {
  Spread s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (float v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.median = quantile(values, 0.5);
  s.p10 = quantile(values, 0.1);
  s.p90 = quantile(std::move(values), 0.9);
  return s;
}

nlohmann::json toJson(const Spread& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p10", s.p10}, {"p90", s.p90}};
}

}  // namespace nf
