// The GPT-NeoX family (Pythia): pre-LN blocks whose attention and MLP may both read the block's input
// (use_parallel_residual), rotary embeddings on a fraction of each head (rotary_pct), exact GELU, an untied
// unembedding (embed_out). Sites: LN_qk and LN_v (input_layernorm as read by queries/keys and by values),
// LN_mlp (post_attention_layernorm), LN_f (final_layer_norm). Parameters are named as
// GPTNeoXForCausalLM stores them ("gpt_neox.layers.0.attention.query_key_value.weight", "embed_out.weight");
// linear weights in nn.Linear's (out, in) layout.
#pragma once
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "model/causal_lm.h"

namespace nf {

class GptNeoXAttentionImpl : public torch::nn::Module {
 public:
  explicit GptNeoXAttentionImpl(const ModelShape& shape);
  // Output features per head, interleaved: head h's q, k, v are rows [3h·dh, (3h+3)·dh).
  torch::nn::Linear query_key_value{nullptr}, dense{nullptr};
};
TORCH_MODULE(GptNeoXAttention);

class GptNeoXMlpImpl : public torch::nn::Module {
 public:
  explicit GptNeoXMlpImpl(const ModelShape& shape);
  torch::nn::Linear dense_h_to_4h{nullptr}, dense_4h_to_h{nullptr};
};
TORCH_MODULE(GptNeoXMlp);

class GptNeoXLayerImpl : public torch::nn::Module {
 public:
  explicit GptNeoXLayerImpl(const ModelShape& shape);
  // Declared in Hugging Face's order so named_parameters() matches parameterShapes().
  NormParams input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  GptNeoXAttention attention{nullptr};
  GptNeoXMlp mlp{nullptr};
};
TORCH_MODULE(GptNeoXLayer);

// Everything but the unembedding, under GPTNeoXForCausalLM's "gpt_neox." prefix.
class GptNeoXBodyImpl : public torch::nn::Module {
 public:
  explicit GptNeoXBodyImpl(const ModelShape& shape);
  Embedding embed_in{nullptr};
  torch::nn::ModuleList layers{nullptr};
  NormParams final_layer_norm{nullptr};
};
TORCH_MODULE(GptNeoXBody);

class GptNeoXImpl : public CausalLMImpl {
 public:
  explicit GptNeoXImpl(const ModelShape& shape, bool initialize = true);

  // Hugging Face's initialisation: N(0, initializer_range = 0.02) for every matrix, zero biases, unit γ.
  void initWeights(uint64_t seed) override;

  torch::Tensor tokenEmbedding() const override { return gpt_neox->embed_in->weight; }
  torch::Tensor unembedding() const override;
  const NormParams& finalNorm() const override { return gpt_neox->final_layer_norm; }
  torch::Tensor attentionOutputBias(int layer) const override;
  torch::Tensor mlpOutputWeight(int layer) const override;
  NormWeights normWeights(SiteId site) const override;
  std::vector<LinearView> readersOf(SiteId site) const override;
  std::vector<torch::Tensor> residualWriters() const override;

  GptNeoXBody gpt_neox{nullptr};
  Embedding embed_out{nullptr};  // only when the unembedding is untied (Pythia's always is)

 protected:
  torch::Tensor embed(const torch::Tensor& tokens, HookSet* hooks) override;
  torch::Tensor block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) override;

 private:
  std::vector<GptNeoXLayer> m_layers;  // typed views of gpt_neox->layers
};

}  // namespace nf
