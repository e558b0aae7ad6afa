// Hook points of every family's forward pass: what an analysis can cache, replace or ablate.
// Shapes (B batch, T positions, D d_model, H heads, F the MLP's width):
//   embed.tok, embed.pos                        [B, T, D]   (embed.pos is broadcast over the batch; only
//                                                            families with learned positions visit it)
//   blocks.L.resid_pre / resid_mid / resid_post [B, T, D]   (resid_mid = resid_pre + attn.out; with a
//                                                            parallel residual the MLP reads resid_pre)
//   blocks.L.attn.q_input / k_input / v_input   [B, T, H, D] each head's own copy of resid_pre for its
//                                                            query, key, value (H_kv heads for k and v).
//                                                            Opt-in (cacheAll skips them): hooking one makes
//                                                            every head of the block read its own copy
//                                                            through its own norm, at H× the projections'
//                                                            cost
//   blocks.L.attn.pattern                       [B, H, T, T] (query, key), rows sum to 1
//   blocks.L.attn.head_out                      [B, T, H, D] each head's write to the residual, without b_O
//   blocks.L.attn.out                           [B, T, D]   the attention block's write, with b_O
//   blocks.L.mlp.input                          [B, T, D]   the residual the MLP reads (resid_mid, or
//                                                            resid_pre with a parallel residual): an edit
//                                                            here changes the MLP's input only
//   blocks.L.mlp.pre / mlp.post                 [B, T, F]   before / after the activation (SwiGLU: the
//                                                            gate's pre-activation / silu(gate) ⊙ up)
//   blocks.L.mlp.out                            [B, T, D]
//   blocks.L.ln_qk.scale, ln_v.scale, ln_mlp.scale, ln_f.scale [B, T]  the divisor each site applied per
//   token
// A visited point is first edited (if an intervention is set) and then cached, so the cache holds what the
// model actually used.
#pragma once
#include <torch/types.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "model/norm_state.h"

namespace nf {

enum class HookKind {
  EmbedTok,
  EmbedPos,
  ResidPre,
  ResidMid,
  ResidPost,
  AttnPattern,
  HeadOut,
  AttnOut,
  MlpPre,
  MlpPost,
  MlpOut,
  NormScale,
  QInput,
  KInput,
  VInput,
  MlpInput,
};

struct HookPoint {
  HookKind kind = HookKind::ResidPre;
  int layer = -1;                   // block index; -1 for embed.* and ln_f.scale
  SiteKind site = SiteKind::Final;  // which site, for NormScale only

  static HookPoint residPre(int l) { return {HookKind::ResidPre, l}; }
  static HookPoint residMid(int l) { return {HookKind::ResidMid, l}; }
  static HookPoint residPost(int l) { return {HookKind::ResidPost, l}; }
  static HookPoint pattern(int l) { return {HookKind::AttnPattern, l}; }
  static HookPoint headOut(int l) { return {HookKind::HeadOut, l}; }
  static HookPoint attnOut(int l) { return {HookKind::AttnOut, l}; }
  static HookPoint mlpPre(int l) { return {HookKind::MlpPre, l}; }
  static HookPoint mlpPost(int l) { return {HookKind::MlpPost, l}; }
  static HookPoint mlpOut(int l) { return {HookKind::MlpOut, l}; }
  static HookPoint normScale(SiteId s) { return {HookKind::NormScale, s.layer, s.kind}; }
  static HookPoint qInput(int l) { return {HookKind::QInput, l}; }
  static HookPoint kInput(int l) { return {HookKind::KInput, l}; }
  static HookPoint vInput(int l) { return {HookKind::VInput, l}; }
  static HookPoint mlpInput(int l) { return {HookKind::MlpInput, l}; }

  std::string name() const;                                     // "blocks.3.resid_pre", "ln_f.scale", ...
  static HookPoint parse(const std::string& name, int nLayer);  // throws std::invalid_argument
  bool operator<(const HookPoint& o) const;
  bool operator==(const HookPoint& o) const { return !(*this < o) && !(o < *this); }
};

// Every hook point of a model with nLayer blocks, in forward order.
std::vector<HookPoint> allHookPoints(int nLayer);

using ActivationCache = std::map<HookPoint, torch::Tensor>;
// Returns the value the model continues with; may return its argument unchanged.
using Intervention = std::function<torch::Tensor(const torch::Tensor& value, const HookPoint& point)>;

// What one forward pass should record and change. Pass nullptr to the model when nothing is hooked:
// the forward pass then does no hook work at all.
class HookSet {
 public:
  void cache(const HookPoint& point) { m_cached.insert(point); }
  void cacheAll(int nLayer);  // every point but the per-head attention inputs
  void edit(const HookPoint& point, Intervention intervention) { m_edits[point] = std::move(intervention); }
  void patch(const HookPoint& point, torch::Tensor replacement);  // replace the whole activation
  void zeroAblate(const HookPoint& point);
  void clearEdits() { m_edits.clear(); }

  bool touches(const HookPoint& point) const { return m_cached.count(point) || m_edits.count(point); }
  torch::Tensor visit(const HookPoint& point, torch::Tensor value);

  const ActivationCache& activations() const { return m_activations; }
  const torch::Tensor& at(const HookPoint& point) const;  // throws std::out_of_range naming the point
  ActivationCache takeActivations() { return std::move(m_activations); }

 private:
  std::set<HookPoint> m_cached;
  std::map<HookPoint, Intervention> m_edits;
  ActivationCache m_activations;
};

}  // namespace nf
