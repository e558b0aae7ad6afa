#include "model/hooks.h"

#include <stdexcept>
#include <tuple>

namespace nf {
namespace {
const std::pair<HookKind, const char*> kBlockHookNames[] = {
    {HookKind::ResidPre, "resid_pre"},    {HookKind::ResidMid, "resid_mid"},
    {HookKind::ResidPost, "resid_post"},  {HookKind::AttnPattern, "attn.pattern"},
    {HookKind::HeadOut, "attn.head_out"}, {HookKind::AttnOut, "attn.out"},
    {HookKind::MlpPre, "mlp.pre"},        {HookKind::MlpPost, "mlp.post"},
    {HookKind::MlpOut, "mlp.out"},        {HookKind::QInput, "attn.q_input"},
    {HookKind::KInput, "attn.k_input"},   {HookKind::VInput, "attn.v_input"},
    {HookKind::MlpInput, "mlp.input"},
};
const std::pair<SiteKind, const char*> kScaleNames[] = {
    {SiteKind::Qk, "ln_qk.scale"}, {SiteKind::V, "ln_v.scale"}, {SiteKind::Mlp, "ln_mlp.scale"}};
}  // namespace

std::string HookPoint::name() const {
  if (kind == HookKind::EmbedTok) return "embed.tok";
  if (kind == HookKind::EmbedPos) return "embed.pos";
  if (kind == HookKind::NormScale && site == SiteKind::Final) return "ln_f.scale";
  std::string prefix = "blocks." + std::to_string(layer) + ".";
  if (kind == HookKind::NormScale) {
    for (auto& [s, n] : kScaleNames)
      if (s == site) return prefix + n;
  }
  for (auto& [k, n] : kBlockHookNames)
    if (k == kind) return prefix + n;
  return "?";
}

HookPoint HookPoint::parse(const std::string& name, int nLayer) {
  for (const HookPoint& p : allHookPoints(nLayer))
    if (p.name() == name) return p;
  throw std::invalid_argument("unknown hook point '" + name + "' for a model with " + std::to_string(nLayer) +
                              " blocks (e.g. blocks.0.resid_pre, blocks.0.attn.pattern, ln_f.scale)");
}

bool HookPoint::operator<(const HookPoint& o) const {
  auto key = [](const HookPoint& p) {
    return std::make_tuple(p.layer, static_cast<int>(p.kind),
                           p.kind == HookKind::NormScale ? static_cast<int>(p.site) : 0);
  };
  return key(*this) < key(o);
}

std::vector<HookPoint> allHookPoints(int nLayer) {
  std::vector<HookPoint> points = {{HookKind::EmbedTok}, {HookKind::EmbedPos}};
  for (int l = 0; l < nLayer; ++l) {
    points.push_back(HookPoint::residPre(l));
    for (HookKind k : {HookKind::QInput, HookKind::KInput, HookKind::VInput}) points.push_back({k, l});
    points.push_back(HookPoint::normScale({SiteKind::Qk, l}));
    points.push_back(HookPoint::normScale({SiteKind::V, l}));
    for (HookKind k : {HookKind::AttnPattern, HookKind::HeadOut, HookKind::AttnOut, HookKind::ResidMid})
      points.push_back({k, l});
    points.push_back(HookPoint::mlpInput(l));
    points.push_back(HookPoint::normScale({SiteKind::Mlp, l}));
    for (HookKind k : {HookKind::MlpPre, HookKind::MlpPost, HookKind::MlpOut, HookKind::ResidPost})
      points.push_back({k, l});
  }
  points.push_back(HookPoint::normScale({SiteKind::Final, -1}));
  return points;
}

void HookSet::cacheAll(int nLayer) {
  // The per-head inputs change how attention computes (and cost H× its projections): asked for by name only.
  for (const HookPoint& p : allHookPoints(nLayer))
    if (p.kind != HookKind::QInput && p.kind != HookKind::KInput && p.kind != HookKind::VInput)
      m_cached.insert(p);
}

void HookSet::patch(const HookPoint& point, torch::Tensor replacement) {
  edit(point, [replacement](const torch::Tensor& value, const HookPoint& p) {
    if (!replacement.sizes().equals(value.sizes()))
      throw std::invalid_argument("patch for " + p.name() +
                                  ": replacement shape does not match the activation");
    return replacement.to(value.device(), value.scalar_type());
  });
}

void HookSet::zeroAblate(const HookPoint& point) {
  edit(point, [](const torch::Tensor& value, const HookPoint&) { return torch::zeros_like(value); });
}

torch::Tensor HookSet::visit(const HookPoint& point, torch::Tensor value) {
  auto edit = m_edits.find(point);
  if (edit != m_edits.end()) value = edit->second(value, point);
  if (m_cached.count(point)) m_activations[point] = value;
  return value;
}

const torch::Tensor& HookSet::at(const HookPoint& point) const {
  auto it = m_activations.find(point);
  if (it == m_activations.end()) throw std::out_of_range("hook point " + point.name() + " was not cached");
  return it->second;
}

}  // namespace nf
