// The GPT-2 family: pre-LN blocks, learned positions, GELU (tanh), tied unembedding (or an untied
// lm_head), with the sites LN_qk and LN_v (ln_1 as read by queries/keys and by values), LN_mlp (ln_2) and
// LN_f. Weights are named and laid out exactly as Hugging Face stores them: linear weights are Conv1D
// (in, out) and applied as y = x·W + b, so loading and saving need no transposes.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "model/causal_lm.h"

namespace nf {

// Hugging Face's Conv1D: weight (in, out), bias (out).
class Conv1DImpl : public torch::nn::Module {
 public:
  Conv1DImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
};
TORCH_MODULE(Conv1D);

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

class GPT2Impl : public CausalLMImpl {
 public:
  // initialize = false leaves the weights uninitialised, for loaders that overwrite every parameter.
  explicit GPT2Impl(const ModelShape& shape, bool initialize = true);

  // Hugging Face's initialisation (N(0, 0.02), residual projections scaled by 1/sqrt(2·n_layer)).
  void initWeights(uint64_t seed) override;

  torch::Tensor tokenEmbedding() const override { return wte->weight; }
  torch::Tensor unembedding() const override;
  const NormParams& finalNorm() const override { return ln_f; }
  torch::Tensor attentionOutputBias(int layer) const override {
    return m_blocks.at(layer)->attn->c_proj->bias;
  }
  torch::Tensor mlpOutputWeight(int layer) const override { return m_blocks.at(layer)->mlp->c_proj->weight; }
  NormWeights normWeights(SiteId site) const override;
  std::vector<LinearView> readersOf(SiteId site) const override;
  std::vector<torch::Tensor> residualWriters() const override;
  Block& blockAt(int layer) { return m_blocks.at(layer); }

  Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList h{nullptr};
  NormParams ln_f{nullptr};
  Embedding lm_head{nullptr};  // only when the unembedding is untied

 protected:
  torch::Tensor embed(const torch::Tensor& tokens, HookSet* hooks) override;
  torch::Tensor block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) override;

 private:
  std::vector<Block> m_blocks;  // typed views of h, to avoid a cast per forward
};

}  // namespace nf
