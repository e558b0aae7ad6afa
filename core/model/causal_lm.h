// What every model family is to the rest of the engine: a causal language model with a residual stream, a
// normalization per site (model/norm_state.h), hook points (model/hooks.h) and named components. The
// trainer, the removal, the analyses and the CLI speak to this class only; a family (model/gpt2.h) says how
// its blocks compute and how its Hugging Face weights are named, and inherits the rest: the forward pass
// around the blocks, the norm sites with their observer, bf16 autocast and activation checkpointing.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "model/config.h"
#include "model/hooks.h"

namespace nf {

// γ and β of one normalization module; how they are applied is decided per site by the NormState.
// RMSNorm families have no β (bias stays undefined).
class NormParamsImpl : public torch::nn::Module {
 public:
  explicit NormParamsImpl(int64_t d, bool withBias = true);
  torch::Tensor weight, bias;
};
TORCH_MODULE(NormParams);

// nn.Linear (weight [out, in], y = x·Wᵀ + b), the layout of GPT-NeoX's and LLaMA's projections.
torch::nn::Linear linearLayer(int64_t in, int64_t out, bool bias);

class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t rows, int64_t d);
  torch::Tensor weight;
};
TORCH_MODULE(Embedding);

// Training's view into a forward pass (the removal protocol needs both, PROTOCOL §2–3).
class NormObserver {
 public:
  virtual ~NormObserver() = default;
  // σ_t per token, [B, T], float32, detached: sqrt(Var(x_t) + ε) for every site that is a LayerNorm,
  // sqrt(mean(x_t²) + ε) for every RMSNorm. LN_qk and LN_v share one tensor while they share a norm.
  virtual void sigma(SiteId site, const torch::Tensor& sigma) = 0;
  // The input of the final norm, [B, T, D], with its gradient (for the auxiliary loss).
  virtual void finalInput(const torch::Tensor& x) = 0;
};

struct CheckpointedBlock;

class CausalLMImpl : public torch::nn::Module {
 public:
  explicit CausalLMImpl(const ModelShape& shape);

  // tokens: [B, T] (or [T]) integer ids, T ≤ n_positions; returns logits [B, T, vocab] in float32
  // (float64 for a model converted to float64, as exactness tests do).
  // Throws std::invalid_argument for ids outside the vocabulary or a sequence that is too long. Ids on the
  // CPU are checked there and copied to the model's device without waiting for it (pinned: asynchronously).
  // logitPosition ≥ 0 unembeds only that position ([B, 1, vocab]): patching a large batch needs one
  // position, and full logits would not fit in memory (4,320 × 15 × 50,257 floats for GPT-2).
  torch::Tensor forward(const torch::Tensor& tokens, HookSet* hooks = nullptr, int64_t logitPosition = -1);
  // forward() up to the final norm's output, [B, T, D]: what the unembedding reads. Training on the CPU
  // takes the loss from here without the logits (train/cross_entropy.h).
  torch::Tensor finalHidden(const torch::Tensor& tokens, HookSet* hooks = nullptr);

  const ModelShape& config() const { return m_config; }
  NormState& norms() { return m_norms; }
  const NormState& norms() const { return m_norms; }
  // bf16 autocast for forward passes on CUDA (weights stay float32); ignored on CPU.
  void setCudaBf16Autocast(bool on) { m_bf16Autocast = on; }
  bool cudaBf16Autocast() const { return m_bf16Autocast; }
  // Activation checkpointing: training forward passes keep only each block's input and recompute the
  // block in the backward pass (same gradients, less memory, ~1/3 more compute). Off under hooks.
  void setActivationCheckpointing(bool on) { m_activationCheckpointing = on; }
  bool activationCheckpointing() const { return m_activationCheckpointing; }
  // Reports norm statistics of every forward pass to the observer (nullptr: none, no cost).
  void setNormObserver(NormObserver* observer) { m_observer = observer; }

  // The family's initialisation, drawn on the CPU from its own generator so a seed gives the same model on
  // every device.
  virtual void initWeights(uint64_t seed) = 0;
  torch::Device device() const { return tokenEmbedding().device(); }

  // Components, for analyses and export; linear maps in the x·W orientation (rows read, columns write).
  virtual torch::Tensor tokenEmbedding() const = 0;  // [vocab, D]
  virtual torch::Tensor unembedding() const = 0;     // [vocab, D] (the token embedding when tied)
  virtual const NormParams& finalNorm() const = 0;
  virtual torch::Tensor attentionOutputBias(int layer) const = 0;  // [D] (zeros for a family without one)
  virtual torch::Tensor mlpOutputWeight(int layer) const = 0;      // [mlp width, D]: neuron i writes row i

  // What export (train/export.h) folds frozen scales into. A site's γ and β (β undefined where the family's
  // norms have none; LN_qk and LN_v share their block's attention norm).
  struct NormWeights {
    torch::Tensor gamma, beta;
  };
  virtual NormWeights normWeights(SiteId site) const = 0;
  // A linear map as views of its parameters with the input dimension last: weight [..., D], bias [...]
  // (undefined without one). Scaling the weight's last dimension scales what the map reads.
  struct LinearView {
    torch::Tensor weight, bias;
  };
  // The maps that read a block site's output (LN_qk: the query and key projections; LN_v: the value
  // projection; LN_mlp: the MLP's input projections).
  virtual std::vector<LinearView> readersOf(SiteId site) const = 0;
  // Every tensor that writes to the residual stream, as views whose last dimension is D: embeddings,
  // output projections (weight and bias). Centring them makes the residual zero-mean.
  virtual std::vector<torch::Tensor> residualWriters() const = 0;

 protected:
  // The residual stream before the first block, [B, T, D] (tokens on the model's device).
  virtual torch::Tensor embed(const torch::Tensor& tokens, HookSet* hooks) = 0;
  // One block: the residual stream after it. Hook points and norm sites are the family's to visit.
  virtual torch::Tensor block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) = 0;

  // The value the forward pass continues with at a hook point: untouched unless a HookSet asks for it.
  static torch::Tensor visit(HookSet* hooks, const HookPoint& point, torch::Tensor value);
  // A site's normalization of x (with its observer report and its hook point). twin: LN_v when LN_qk's
  // normalization also serves it (both in the same state).
  torch::Tensor norm(SiteId site, const NormParams& params, const torch::Tensor& x,
                     const torch::Tensor& tokens, HookSet* hooks, std::optional<SiteId> twin = std::nullopt);
  // Whether LN_qk and LN_v of a block compute the same thing, so one normalization serves q, k and v.
  bool attentionNormShared(int layer, HookSet* hooks) const;
  // Whether a hook reads or edits the block's per-head attention inputs (attn.q_input, k_input, v_input):
  // the family then takes its query, key and value from splitAttentionInputs.
  bool splitsAttentionInput(int layer, HookSet* hooks) const;
  // Each head's query, key and value from its own copy of the residual x [B, T, D], which those hook points
  // may replace: LN_qk (LN_v for values) on each copy — without visiting its scale hook point — then
  // `project(role, normalized)` (role 0 query, 1 key, 2 value; [N, T, D] → [N, T, heads·dh], as the
  // family's own projection) keeping each copy's own head. Returns per role [B, T, heads·dh], what the
  // unsplit projection returns, so the family goes on as usual.
  using HeadProjection = std::function<torch::Tensor(int role, const torch::Tensor& normalized)>;
  std::array<torch::Tensor, 3> splitAttentionInputs(int layer, const NormParams& params,
                                                    const torch::Tensor& x, const torch::Tensor& tokens,
                                                    HookSet* hooks, const HeadProjection& project);

  // The attention building blocks every family shares. Rotary position embeddings (Hugging Face's
  // rotate-half convention) on the first rotaryDims() dimensions of each head of q and k ([B, H, T, dh]
  // and [B, H_kv, T, dh]), from one table of angles.
  std::pair<torch::Tensor, torch::Tensor> rotary(const torch::Tensor& q, const torch::Tensor& k) const;
  // Causal attention of q [B, H, T, dh] over k, v [B, H_kv, T, dh] (grouped-query: each key/value head
  // serves H/H_kv consecutive query heads), with the pattern hook point; returns z [B, T, H, dh].
  torch::Tensor attend(int layer, const torch::Tensor& q, torch::Tensor k, torch::Tensor v, HookSet* hooks);
  // The attention's write to the residual from z [B, T, H, dh]: W_O [H·dh, D] in the x·W orientation and
  // b_O (undefined without one), with the head_out and attn.out hook points.
  torch::Tensor attentionOutput(int layer, const torch::Tensor& z, const torch::Tensor& outputWeight,
                                const torch::Tensor& outputBias, HookSet* hooks);

 private:
  friend struct CheckpointedBlock;
  void checkTokens(const torch::Tensor& tokens) const;

  ModelShape m_config;
  NormState m_norms;
  bool m_bf16Autocast = false;
  bool m_activationCheckpointing = false;
  NormObserver* m_observer = nullptr;
};

// A model handle, as every torch module has one (shared ownership; nullptr allowed).
class CausalLM : public torch::nn::ModuleHolder<CausalLMImpl> {
 public:
  using torch::nn::ModuleHolder<CausalLMImpl>::ModuleHolder;
};

// Hugging Face's default initialisation (GPT-NeoX, LLaMA): N(0, std) for every matrix, zero biases, unit γ
// (norm parameters are the ones named "…norm.weight"), drawn on the CPU from its own generator.
void initLikeHuggingFace(CausalLMImpl& model, uint64_t seed, double std);

// A model of this shape, of the family the shape names; initialize = false leaves the weights
// uninitialised, for loaders that overwrite every parameter.
CausalLM makeModel(const ModelShape& shape, bool initialize = true);

// A copy of source's weights and norm state on its device and in its dtype, shaped by `shape` (source's
// shape, possibly with an untied unembedding, which then starts as a copy of the tied one, or with biases
// the source lacks, which start at zero).
CausalLM copyModel(CausalLMImpl& source, const ModelShape& shape);
inline CausalLM copyModel(CausalLMImpl& source) { return copyModel(source, source.config()); }

}  // namespace nf
