#include "model/norm_state.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nf {
namespace {
const std::pair<NormKind, const char*> kKindNames[] = {
    {NormKind::LayerNorm, "layernorm"}, {NormKind::FakeLN, "fakeln"},
    {NormKind::RMSNorm, "rmsnorm"},     {NormKind::LayerNormScaling, "layernorm_scaling"},
    {NormKind::Identity, "identity"},   {NormKind::FakeRMSNorm, "fakerms"},
};
const std::pair<SiteKind, const char*> kSitePrefixes[] = {
    {SiteKind::Qk, "LN_qk"}, {SiteKind::V, "LN_v"}, {SiteKind::Mlp, "LN_mlp"}, {SiteKind::Final, "LN_f"}};
}  // namespace

NormState::NormState(int nLayer, NormKind native) : m_qk(nLayer), m_v(nLayer), m_mlp(nLayer) {
  SiteNorm initial;
  initial.kind = native;
  setAll(initial);
}

SiteNorm& NormState::at(SiteId site) {
  return const_cast<SiteNorm&>(static_cast<const NormState&>(*this).at(site));
}

const SiteNorm& NormState::at(SiteId site) const {
  if (site.kind == SiteKind::Final) return m_final;
  if (site.layer < 0 || site.layer >= layerCount())
    throw std::out_of_range("site " + siteName(site) + ": layer out of range (model has " +
                            std::to_string(layerCount()) + " blocks)");
  switch (site.kind) {
    case SiteKind::Qk:
      return m_qk[site.layer];
    case SiteKind::V:
      return m_v[site.layer];
    default:
      return m_mlp[site.layer];
  }
}

std::vector<SiteId> allSites(int nLayer) {
  std::vector<SiteId> out;
  for (int l = 0; l < nLayer; ++l)
    for (SiteKind k : {SiteKind::Qk, SiteKind::V, SiteKind::Mlp}) out.push_back({k, l});
  out.push_back({SiteKind::Final, -1});
  return out;
}

bool NormState::isLayerNormFree() const {
  for (SiteId s : sites())
    if (dividesPerToken(at(s))) return false;
  return true;
}

void NormState::setAll(const SiteNorm& norm) {
  for (SiteId s : sites()) at(s) = norm;
}

void NormState::validate() const {
  for (SiteId s : sites()) {
    const SiteNorm& n = at(s);
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument("site " + siteName(s) + ": " + what);
    };
    // Scales are float32 in the model: 1e-320 would divide by zero there, 1e39 by infinity.
    auto positiveFloat = [](double x) {
      const float f = static_cast<float>(x);
      return f > 0 && std::isfinite(f) && std::isfinite(x);
    };
    auto number = [](double x) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", x);
      return std::string(text);
    };
    if (isFakeNorm(n.kind) && !positiveFloat(n.scale))
      fail(normKindName(n.kind) + " scale must be a positive float32 number, got " + number(n.scale));
    if (isFakeNorm(n.kind) && (n.pos0Treatment || n.eotTreatment) && !positiveFloat(n.scalePos0))
      fail(normKindName(n.kind) + " position-0 scale must be a positive float32 number, got " +
           number(n.scalePos0));
    if (!(n.realMix >= 0 && n.realMix <= 1)) fail("real_mix must lie in [0, 1], got " + number(n.realMix));
    if (n.eotTreatment && s.kind != SiteKind::V) fail("the end-of-text treatment exists only on LN_v");
  }
}

bool NormState::operator==(const NormState& o) const {
  return m_qk == o.m_qk && m_v == o.m_v && m_mlp == o.m_mlp && m_final == o.m_final;
}

std::string normKindName(NormKind kind) {
  for (auto& [k, n] : kKindNames)
    if (k == kind) return n;
  return "?";
}

NormKind parseNormKind(const std::string& name) {
  for (auto& [k, n] : kKindNames)
    if (name == n) return k;
  throw std::invalid_argument(
      "unknown normalization '" + name +
      "' (expected layernorm, fakeln, rmsnorm, fakerms, layernorm_scaling or identity)");
}

bool isFakeNorm(NormKind kind) { return kind == NormKind::FakeLN || kind == NormKind::FakeRMSNorm; }

NormKind fakeNormOf(NormKind kind) {
  return kind == NormKind::RMSNorm || kind == NormKind::FakeRMSNorm ? NormKind::FakeRMSNorm
                                                                    : NormKind::FakeLN;
}

bool centresInput(NormKind kind) {
  return kind != NormKind::RMSNorm && kind != NormKind::FakeRMSNorm && kind != NormKind::Identity;
}

bool dividesByTokenStatistic(NormKind kind) {
  return kind == NormKind::LayerNorm || kind == NormKind::RMSNorm || kind == NormKind::LayerNormScaling;
}

bool dividesPerToken(const SiteNorm& norm) { return dividesByTokenStatistic(norm.kind) || norm.realMix > 0; }

std::string siteName(SiteId site) {
  for (auto& [k, prefix] : kSitePrefixes)
    if (k == site.kind)
      return site.kind == SiteKind::Final ? prefix : std::string(prefix) + "." + std::to_string(site.layer);
  return "?";
}

SiteId parseSiteName(const std::string& name, int nLayer) {
  if (name == "LN_f") return {SiteKind::Final, -1};
  for (auto& [k, prefix] : kSitePrefixes) {
    std::string p = std::string(prefix) + ".";
    if (k == SiteKind::Final || name.rfind(p, 0) != 0) continue;
    std::string digits = name.substr(p.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) break;
    int layer = std::stoi(digits);
    if (layer >= nLayer)
      throw std::invalid_argument("site '" + name + "': layer out of range (model has " +
                                  std::to_string(nLayer) + " blocks)");
    return {k, layer};
  }
  throw std::invalid_argument("unknown site '" + name +
                              "' (expected LN_qk.<layer>, LN_v.<layer>, LN_mlp.<layer> or LN_f)");
}

}  // namespace nf
