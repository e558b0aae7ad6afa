// Which normalization each norm site of a model uses, as plain data (no torch).
// Sites follow PROTOCOL §1, the same for every family: a block's attention norm (GPT-2's ln_1, Pythia's and
// LLaMA's input_layernorm) is split into the query/key path (LN_qk) and the value path (LN_v), its MLP norm
// is LN_mlp, the final norm LN_f.
#pragma once
#include <string>
#include <vector>

namespace nf {

enum class NormKind {
  LayerNorm,  // (x − μ) / sqrt(Var + ε) ⊙ γ + β
  FakeLN,     // (x − μ) / s ⊙ γ + β with a frozen scalar s (PROTOCOL §2)
  RMSNorm,    // x / sqrt(mean(x²) + ε) ⊙ γ + β  (β only where the family has one, e.g. a GPT-2's)
  LayerNormScaling,  // LayerNorm output × 1/sqrt(l), l = block index + 1 (seeds/003); ln_f uses l = 1
  Identity,          // no normalization: y = x
  FakeRMSNorm,       // x / s ⊙ γ (+ β) with a frozen scalar s: RMSNorm's removal, no centring
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
  // The fields below apply to the fake kinds (FakeLN, FakeRMSNorm) only.
  double scale = 1.0;          // the frozen s
  double scalePos0 = 1.0;      // s_0, used where a treatment below is on
  bool pos0Treatment = false;  // divide position 0 by s_0 (blog recipe)
  bool eotTreatment = false;   // on LN_v only: divide end-of-text tokens by s_0 (blog recipe)
  double realMix = 0.0;        // during an interpolation ramp: divisor = realMix·σ_t + (1 − realMix)·s
  bool operator==(const SiteNorm& o) const {
    return kind == o.kind && scale == o.scale && scalePos0 == o.scalePos0 &&
           pos0Treatment == o.pos0Treatment && eotTreatment == o.eotTreatment && realMix == o.realMix;
  }
  bool operator!=(const SiteNorm& o) const { return !(*this == o); }
};

// Every site of a model with nLayer blocks: LN_qk, LN_v, LN_mlp for each block, then LN_f.
std::vector<SiteId> allSites(int nLayer);

// The normalization of every site of a model with nLayer blocks.
class NormState {
 public:
  // Every site starts as `native`, the family's own normalization (LayerNorm or RMSNorm).
  explicit NormState(int nLayer = 0, NormKind native = NormKind::LayerNorm);
  int layerCount() const { return static_cast<int>(m_mlp.size()); }
  SiteNorm& at(SiteId site);
  const SiteNorm& at(SiteId site) const;
  std::vector<SiteId> sites() const { return allSites(layerCount()); }
  bool isLayerNormFree() const;  // no site divides by a per-token statistic
  void setAll(const SiteNorm& norm);
  void validate() const;  // throws std::invalid_argument with the offending site
  bool operator==(const NormState& o) const;

 private:
  std::vector<SiteNorm> m_qk, m_v, m_mlp;
  SiteNorm m_final;
};

// "layernorm", "fakeln", "rmsnorm", "layernorm_scaling", "identity", "fakerms"
std::string normKindName(NormKind kind);
NormKind parseNormKind(const std::string& name);
bool isFakeNorm(NormKind kind);      // FakeLN or FakeRMSNorm: divides by a frozen s
NormKind fakeNormOf(NormKind kind);  // what the removal makes of a site: RMSNorm → FakeRMSNorm, else FakeLN
bool centresInput(NormKind kind);    // subtracts the token's mean (all but RMSNorm, FakeRMSNorm, identity)
std::string siteName(SiteId site);   // "LN_qk.3", "LN_v.0", "LN_mlp.11", "LN_f"
SiteId parseSiteName(const std::string& name, int nLayer);
bool dividesByTokenStatistic(NormKind kind);
// Whether the site's divisor depends on each token's values: its kind's statistic, or a fake norm still
// mixing σ_t in during an interpolation ramp.
bool dividesPerToken(const SiteNorm& norm);

}  // namespace nf
