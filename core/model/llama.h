// The LLaMA family (LlamaForCausalLM; Qwen2ForCausalLM is the same model with q/k/v biases): pre-norm blocks
// with RMSNorm (no β, no centring), rotary embeddings on every dimension of a head (rope_theta),
// grouped-query attention (num_key_value_heads), a SwiGLU MLP (down(silu(gate(x)) ⊙ up(x))), a tied or
// untied lm_head. Sites: LN_qk and LN_v (input_layernorm as read by queries/keys and by values), LN_mlp
// (post_attention_layernorm), LN_f (model.norm); the removal makes them FakeRMSNorm. Parameters are named as
// Hugging Face stores them ("model.layers.0.self_attn.q_proj.weight", "lm_head.weight"), linear weights in
// nn.Linear's (out, in) layout. The MLP hook points: mlp.pre is the gate's pre-activation, mlp.post the
// product silu(gate) ⊙ up that down_proj reads, so a neuron is a column of down_proj.
#pragma once
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "model/causal_lm.h"

namespace nf {

class LlamaAttentionImpl : public torch::nn::Module {
 public:
  explicit LlamaAttentionImpl(const ModelShape& shape);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
};
TORCH_MODULE(LlamaAttention);

class LlamaMlpImpl : public torch::nn::Module {
 public:
  explicit LlamaMlpImpl(const ModelShape& shape);
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(LlamaMlp);

class LlamaLayerImpl : public torch::nn::Module {
 public:
  explicit LlamaLayerImpl(const ModelShape& shape);
  // Declared in Hugging Face's order so named_parameters() matches parameterShapes().
  LlamaAttention self_attn{nullptr};
  LlamaMlp mlp{nullptr};
  NormParams input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(LlamaLayer);

// Everything but the unembedding, under LlamaForCausalLM's "model." prefix.
class LlamaBodyImpl : public torch::nn::Module {
 public:
  explicit LlamaBodyImpl(const ModelShape& shape);
  Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  NormParams norm{nullptr};
};
TORCH_MODULE(LlamaBody);

class LlamaImpl : public CausalLMImpl {
 public:
  // shape.family is "llama" or "qwen2".
  explicit LlamaImpl(const ModelShape& shape, bool initialize = true);

  // Hugging Face's initialisation: N(0, initializer_range = 0.02) for every matrix, zero biases, unit γ.
  void initWeights(uint64_t seed) override;

  torch::Tensor tokenEmbedding() const override { return model->embed_tokens->weight; }
  torch::Tensor unembedding() const override;
  const NormParams& finalNorm() const override { return model->norm; }
  torch::Tensor attentionOutputBias(int layer) const override;
  torch::Tensor mlpOutputWeight(int layer) const override;
  NormWeights normWeights(SiteId site) const override;
  std::vector<LinearView> readersOf(SiteId site) const override;
  std::vector<torch::Tensor> residualWriters() const override;

  LlamaBody model{nullptr};
  Embedding lm_head{nullptr};  // only when the unembedding is untied

 protected:
  torch::Tensor embed(const torch::Tensor& tokens, HookSet* hooks) override;
  torch::Tensor block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) override;

 private:
  std::vector<LlamaLayer> m_layers;  // typed views of model->layers
};

}  // namespace nf
