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

// A norm kind as the headers name it (as the GUI's grid does: widgets' normKindLabel).
std::string displayName(NormKind kind) {
  switch (kind) {
    case NormKind::LayerNorm:
      return "LayerNorm";
    case NormKind::FakeLN:
      return "FakeLN";
    case NormKind::RMSNorm:
      return "RMSNorm";
    case NormKind::FakeRMSNorm:
      return "FakeRMSNorm";
    case NormKind::LayerNormScaling:
      return "LN Scaling";
    case NormKind::Identity:
      break;
  }
  return "Identity";
}

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

std::string ModelSnapshot::normSummary() const {
  const std::vector<SiteId> sites = m_config.norms.sites();
  // Each kind's sites, but for fake sites still mixing in their real norm (an interpolation ramp): they
  // divide per token, so are not fake yet, and are counted apart.
  std::map<NormKind, int> kinds;
  int ramping = 0;
  for (const SiteId& site : sites) {
    const SiteNorm& norm = m_config.norms.at(site);
    if (isFakeNorm(norm.kind) && dividesPerToken(norm))
      ++ramping;
    else
      ++kinds[norm.kind];
  }
  const int layerNorm = kinds[NormKind::LayerNorm], rmsNorm = kinds[NormKind::RMSNorm];
  const int fake = kinds[NormKind::FakeLN] + kinds[NormKind::FakeRMSNorm];
  const int all = static_cast<int>(sites.size());
  const std::string total = std::to_string(all);
  // LayerNorm families remove into FakeLN, RMSNorm families into FakeRMSNorm.
  const std::string fakeName =
      rmsNorm > 0 || m_config.norms.at(sites.back()).kind == NormKind::FakeRMSNorm ? "FakeRMSNorm" : "FakeLN";
  if (m_config.folded) return "LN-free (folded)";
  if ((layerNorm == all || rmsNorm == all) && m_config.shape.layerNormEpsilon >= kLayerNormFreeEpsilon)
    return "LN-free (standard form: " + std::string(layerNorm == all ? "LayerNorm" : "RMSNorm") +
           " with a huge ε)";
  if (layerNorm == all) return "LayerNorm";
  if (rmsNorm == all) return "RMSNorm";
  if (fake == all) return "LN-free (" + fakeName + " at all " + total + " sites)";
  if (m_config.norms.isLayerNormFree()) return "LN-free";
  const std::string ramps = ramping > 0 ? ", " + std::to_string(ramping) + " ramping" : "";
  // The family's norm with some sites fake: a removal under way.
  if (fake + ramping + layerNorm == all || fake + ramping + rmsNorm == all)
    return std::to_string(fake) + " of " + total + " sites " + fakeName + ramps;
  // Any other mix (sites edited by hand, a scaling treatment): each kind with its count.
  std::string mix;
  for (const auto& [kind, count] : kinds)
    if (count > 0) mix += (mix.empty() ? "" : ", ") + std::to_string(count) + " " + displayName(kind);
  return mix + ramps;
}

}  // namespace nf
