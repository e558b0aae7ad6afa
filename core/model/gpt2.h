// GPT-2 in LibTorch: pre-LN blocks, learned positions, GELU (tanh), tied unembedding, with a pluggable
// normalization per site (model/norm_state.h) and hook points (model/hooks.h).
// Weights are named and laid out exactly as Hugging Face stores them: linear weights are Conv1D (in, out)
// and applied as y = x·W + b, so loading and saving need no transposes.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>

#include "model/config.h"
#include "model/hooks.h"

namespace nf {

// Hugging Face's Conv1D: weight (in, out), bias (out).
class Conv1DImpl : public torch::nn::Module {
 public:
  Conv1DImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
};
TORCH_MODULE(Conv1D);

// γ and β of one LayerNorm module; how they are applied is decided per site by the NormState.
class NormParamsImpl : public torch::nn::Module {
 public:
  explicit NormParamsImpl(int64_t d);
  torch::Tensor weight, bias;
};
TORCH_MODULE(NormParams);

class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t rows, int64_t d);
  torch::Tensor weight;
};
TORCH_MODULE(Embedding);

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(int64_t d);
  Conv1D c_attn, c_proj;
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(int64_t d);
  Conv1D c_fc, c_proj;
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(int64_t d);
  // Declared in Hugging Face's order so named_parameters() matches parameterShapes().
  NormParams ln_1;
  Attention attn;
  NormParams ln_2;
  Mlp mlp;
};
TORCH_MODULE(Block);

struct CheckpointedBlock;

// Training's view into a forward pass (the removal protocol needs both, PROTOCOL §2–3).
class NormObserver {
 public:
  virtual ~NormObserver() = default;
  // σ_t = sqrt(Var(x_t) + ε) per token, [B, T], float32, detached: reported for every site that is a
  // LayerNorm. LN_qk and LN_v share one tensor while they share a normalization.
  virtual void sigma(SiteId site, const torch::Tensor& sigma) = 0;
  // The input of ln_f, [B, T, D], with its gradient (for the auxiliary loss).
  virtual void finalInput(const torch::Tensor& x) = 0;
};

class GPT2Impl : public torch::nn::Module {
 public:
  // initialize = false leaves the weights uninitialised, for loaders that overwrite every parameter.
  explicit GPT2Impl(const GPT2Config& config, bool initialize = true);

  // tokens: [B, T] (or [T]) integer ids, T ≤ n_positions; returns logits [B, T, vocab] in float32
  // (float64 for a model converted to float64, as exactness tests do).
  // Throws std::invalid_argument for ids outside the vocabulary or a sequence that is too long. Ids on the
  // CPU are checked there and copied to the model's device without waiting for it (pinned: asynchronously).
  // logitPosition ≥ 0 unembeds only that position ([B, 1, vocab]): patching a large batch needs one
  // position, and full logits would not fit in memory (4,320 × 15 × 50,257 floats for GPT-2).
  torch::Tensor forward(const torch::Tensor& tokens, HookSet* hooks = nullptr, int64_t logitPosition = -1);

  const GPT2Config& config() const { return m_config; }
  NormState& norms() { return m_norms; }
  const NormState& norms() const { return m_norms; }
  // bf16 autocast for forward passes on CUDA (weights stay float32); ignored on CPU.
  void setCudaBf16Autocast(bool on) { m_bf16Autocast = on; }
  bool cudaBf16Autocast() const { return m_bf16Autocast; }
  // Activation checkpointing: training forward passes keep only each block's input and recompute the
  // block in the backward pass (same gradients, less memory, ~1/3 more compute). Off under hooks.
  void setActivationCheckpointing(bool on) { m_activationCheckpointing = on; }
  bool activationCheckpointing() const { return m_activationCheckpointing; }
  // Reports LN statistics of every forward pass to the observer (nullptr: none, no cost).
  void setNormObserver(NormObserver* observer) { m_observer = observer; }

  // Hugging Face's initialisation (N(0, 0.02), residual projections scaled by 1/sqrt(2·n_layer)),
  // drawn on the CPU from its own generator so a seed gives the same model on every device.
  void initWeights(uint64_t seed);
  torch::Device device() const { return wte->weight.device(); }
  // The unembedding matrix, [vocab, D] (wte for a tied model).
  torch::Tensor unembedding() const;

  Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList h{nullptr};
  NormParams ln_f{nullptr};
  Embedding lm_head{nullptr};  // only when the unembedding is untied

 private:
  friend struct CheckpointedBlock;
  torch::Tensor block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks);
  // twin: LN_v when LN_qk's normalization also serves it (both in the same state).
  torch::Tensor norm(SiteId site, const NormParams& params, const torch::Tensor& x,
                     const torch::Tensor& tokens, HookSet* hooks, std::optional<SiteId> twin = std::nullopt);
  void checkTokens(const torch::Tensor& tokens) const;

  std::vector<Block> m_blocks;  // typed views of h, to avoid a cast per forward
  GPT2Config m_config;
  NormState m_norms;
  bool m_bf16Autocast = false;
  bool m_activationCheckpointing = false;
  NormObserver* m_observer = nullptr;
};
TORCH_MODULE(GPT2);

// A copy of source's weights and norm state on its device and in its dtype, shaped by `config` (source's
// shape, possibly with an untied unembedding, which then starts as a copy of the tied one).
GPT2 copyModel(GPT2Impl& source, const GPT2Config& config);
inline GPT2 copyModel(GPT2Impl& source) { return copyModel(source, source.config()); }

}  // namespace nf
