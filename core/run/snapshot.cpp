#include "run/snapshot.h"

#include <torch/torch.h>

#include <map>

#include "model/causal_lm.h"
#include "model/hf_checkpoint.h"
#include "run/run_directory.h"

namespace nf {

struct ModelSnapshot::Holder {
  CausalLM model{nullptr};
};

ModelSnapshot::~ModelSnapshot() = default;

namespace {

// Analyses take gradients with respect to activations only (attribution patching).
void freeze(CausalLMImpl& model) {
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
  s->m_step = run::checkpointStep(folder);  // -1 for a model folder
  return s;
}

SnapshotPtr ModelSnapshot::copyOf(CausalLMImpl& model, int64_t step, const std::string& source) {
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

CausalLMImpl& ModelSnapshot::model() const { return *m_model->model; }

std::string ModelSnapshot::label() const {
  return m_step >= 0 ? m_source + " at step " + std::to_string(m_step) : m_source;
}

std::string ModelSnapshot::normSummary() const { return nf::normSummary(m_config); }

}  // namespace nf
