// Which normalization each LayerNorm site of a GPT-2 uses, as plain data (no torch).
// Sites follow PROTOCOL §1: ln_1 is split into the query/key path (LN_qk) and the value path (LN_v),
// ln_2 is LN_mlp, ln_f is LN_f.
#pragma once
#include <string>
#include <vector>

namespace nf {

enum class NormKind {
  LayerNorm,  // (x − μ) / sqrt(Var + ε) ⊙ γ + β
  FakeLN,     // (x − μ) / s ⊙ γ + β with a frozen scalar s (PROTOCOL §2)
  RMSNorm,    // x / sqrt(mean(x²) + ε) ⊙ γ + β  (β kept so a GPT-2's weights are used unchanged)
  LayerNormScaling,  // LayerNorm output × 1/sqrt(l), l = block index + 1 (seeds/003); ln_f uses l = 1
  Identity,          // no normalization: y = x
};

enum class SiteKind { Qk, V, Mlp, Final };

struct SiteId {
  SiteKind kind = SiteKind::Final;
  int layer = -1;  // block index; -1 for LN_f
  bool operator==(const SiteId& o) const { return kind == o.kind && layer == o.layer; }
  bool operator<(const SiteId& o) const { return kind != o.kind ? kind < o.kind : layer < o.layer; }
};

struct SiteNorm {
  NormKind kind = NormKind::LayerNorm;
  double scale = 1.0;          // FakeLN: the frozen s
  double scalePos0 = 1.0;      // FakeLN: s_0, used where a treatment below is on
  bool pos0Treatment = false;  // FakeLN: divide position 0 by s_0 (blog recipe)
  bool eotTreatment = false;   // FakeLN on LN_v only: divide end-of-text tokens by s_0 (blog recipe)
  double realMix = 0.0;  // FakeLN during an interpolation ramp: divisor = realMix·σ_t + (1 − realMix)·s
  bool operator==(const SiteNorm& o) const {
    return kind == o.kind && scale == o.scale && scalePos0 == o.scalePos0 &&
           pos0Treatment == o.pos0Treatment && eotTreatment == o.eotTreatment && realMix == o.realMix;
  }
  bool operator!=(const SiteNorm& o) const { return !(*this == o); }
};

// The normalization of every site of a model with nLayer blocks.
class NormState {
 public:
  explicit NormState(int nLayer = 0);
  int layerCount() const { return static_cast<int>(m_mlp.size()); }
  SiteNorm& at(SiteId site);
  const SiteNorm& at(SiteId site) const;
  std::vector<SiteId> sites() const;  // LN_qk, LN_v, LN_mlp for each block, then LN_f
  bool isLayerNormFree() const;       // no site divides by a per-token statistic
  void setAll(const SiteNorm& norm);
  void validate() const;  // throws std::invalid_argument with the offending site
  bool operator==(const NormState& o) const;

 private:
  std::vector<SiteNorm> m_qk, m_v, m_mlp;
  SiteNorm m_final;
};

std::string normKindName(NormKind kind);  // "layernorm", "fakeln", "rmsnorm", "layernorm_scaling", "identity"
NormKind parseNormKind(const std::string& name);
std::string siteName(SiteId site);  // "LN_qk.3", "LN_v.0", "LN_mlp.11", "LN_f"
SiteId parseSiteName(const std::string& name, int nLayer);
bool dividesByTokenStatistic(NormKind kind);

}  // namespace nf
