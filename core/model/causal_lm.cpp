#include "model/causal_lm.h"

#include <torch/torch.h>

#include "model/gpt2.h"
#include "model/norm.h"
#include "model/torch_compat.h"

namespace nf {

NormParamsImpl::NormParamsImpl(int64_t d) {
  weight = register_parameter("weight", torch::ones({d}));
  bias = register_parameter("bias", torch::zeros({d}));
}

EmbeddingImpl::EmbeddingImpl(int64_t rows, int64_t d) {
  weight = register_parameter("weight", torch::empty({rows, d}));
}

// Activation checkpointing of one block, the reentrant scheme of torch.utils.checkpoint: the forward pass
// records no graph and keeps only the block's input; the backward pass runs the block again with
// gradients on and backpropagates through that, which also accumulates the parameters' gradients.
struct CheckpointedBlock : torch::autograd::Function<CheckpointedBlock> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& tokens, CausalLMImpl* model, int64_t layer) {
    ctx->save_for_backward({x, tokens});
    ctx->saved_data["model"] = reinterpret_cast<int64_t>(model);
    ctx->saved_data["layer"] = layer;
    torch::NoGradGuard noGrad;
    return model->block(static_cast<int>(layer), x, tokens, nullptr);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list outputGrads) {
    auto* model = reinterpret_cast<CausalLMImpl*>(ctx->saved_data["model"].toInt());
    const auto saved = ctx->get_saved_variables();
    torch::Tensor x = saved[0].detach().requires_grad_(true);
    {
      // Backward may run on another thread (CUDA's), which has neither grad mode nor autocast on, and
      // the recomputation must not report σ a second time.
      torch::AutoGradMode gradients(true);
      CudaBf16Autocast autocast(model->m_bf16Autocast && model->device().is_cuda());
      NormObserver* observer = std::exchange(model->m_observer, nullptr);
      torch::Tensor out;
      try {
        out = model->block(static_cast<int>(ctx->saved_data["layer"].toInt()), x, saved[1], nullptr);
      } catch (...) {
        model->m_observer = observer;
        throw;
      }
      model->m_observer = observer;
      torch::autograd::backward({out}, {outputGrads[0]});
    }
    return {x.grad(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

CausalLMImpl::CausalLMImpl(const ModelShape& shape) : m_config(shape), m_norms(shape.nLayer) {
  shape.validate("model shape");
}

torch::Tensor CausalLMImpl::visit(HookSet* hooks, const HookPoint& point, torch::Tensor value) {
  return hooks && hooks->touches(point) ? hooks->visit(point, std::move(value)) : value;
}

void CausalLMImpl::checkTokens(const torch::Tensor& tokens) const {
  if (tokens.dim() != 2) throw std::invalid_argument("token ids must have shape [batch, positions]");
  if (tokens.scalar_type() != torch::kLong && tokens.scalar_type() != torch::kInt)
    throw std::invalid_argument("token ids must be integers");
  if (tokens.size(1) > m_config.nPositions)
    throw std::invalid_argument("sequence of " + std::to_string(tokens.size(1)) +
                                " tokens is longer than the model's " + std::to_string(m_config.nPositions) +
                                " positions");
  if (tokens.numel() == 0) throw std::invalid_argument("no token ids given");
  auto [lo, hi] = torch::aminmax(tokens);
  const int64_t minId = lo.item<int64_t>(), maxId = hi.item<int64_t>();
  if (minId < 0 || maxId >= m_config.vocabSize) {
    const int64_t bad = minId < 0 ? minId : maxId;
    auto where = (tokens == bad).nonzero()[0];
    throw std::invalid_argument(
        "token id " + std::to_string(bad) + " at [" + std::to_string(where[0].item<int64_t>()) + ", " +
        std::to_string(where[1].item<int64_t>()) + "] is outside the vocabulary (0.." +
        std::to_string(m_config.vocabSize - 1) + ")");
  }
}

torch::Tensor CausalLMImpl::norm(SiteId site, const NormParams& params, const torch::Tensor& x,
                                 const torch::Tensor& tokens, HookSet* hooks, std::optional<SiteId> twin) {
  const int depth = site.kind == SiteKind::Final ? 1 : site.layer + 1;
  const SiteNorm& state = m_norms.at(site);
  NormInputs in{x,     params->weight, params->bias,       m_config.layerNormEpsilon,
                depth, &tokens,        m_config.eotTokenId};
  const HookPoint point = HookPoint::normScale(site);
  const bool observed = m_observer && state.kind == NormKind::LayerNorm;
  auto report = [&](const torch::Tensor& sigma) {
    m_observer->sigma(site, sigma);
    if (twin && m_norms.at(*twin).kind == NormKind::LayerNorm) m_observer->sigma(*twin, sigma);
  };
  if (!hooks || !hooks->touches(point)) {
    if (!observed) return applyNorm(state, in);
    // The fused kernel computes 1/σ anyway: training reads it from there instead of a second pass.
    auto [y, mean, rstd] = torch::native_layer_norm(x, {x.size(-1)}, params->weight, params->bias, in.eps);
    report(rstd.detach().reciprocal().squeeze(-1).to(torch::kFloat32));
    return y;
  }
  // Hooked: the divisor is materialized so it can be cached, and an intervention may replace it.
  const torch::Tensor divisor = hooks->visit(point, normDivisor(state, in));
  if (observed) report(divisor.detach().to(torch::kFloat32));
  return normalizeBy(state, in, divisor);
}

torch::Tensor CausalLMImpl::forward(const torch::Tensor& tokensIn, HookSet* hooks, int64_t logitPosition) {
  torch::Tensor tokens = tokensIn.dim() == 1 ? tokensIn.unsqueeze(0) : tokensIn;
  checkTokens(tokens);
  tokens = tokens.to(device(), torch::kLong, /*non_blocking=*/true);
  CudaBf16Autocast autocast(m_bf16Autocast && device().is_cuda());

  torch::Tensor x = embed(tokens, hooks);
  const bool checkpointing = m_activationCheckpointing && !hooks && torch::GradMode::is_enabled();
  for (int l = 0; l < m_config.nLayer; ++l)
    x = checkpointing ? CheckpointedBlock::apply(x, tokens, this, static_cast<int64_t>(l))
                      : block(l, x, tokens, hooks);
  if (m_observer) m_observer->finalInput(x);
  x = norm({SiteKind::Final, -1}, finalNorm(), x, tokens, hooks);
  if (logitPosition >= 0) x = x.slice(1, logitPosition, logitPosition + 1);
  const torch::Tensor logits = torch::matmul(x, unembedding().t());
  return logits.scalar_type() == torch::kFloat64 ? logits : logits.to(torch::kFloat32);
}

CausalLM makeModel(const ModelShape& shape, bool initialize) {
  if (shape.family == "gpt2")
    return CausalLM(std::shared_ptr<CausalLMImpl>(std::make_shared<GPT2Impl>(shape, initialize)));
  throw std::invalid_argument("no model family is called '" + shape.family + "'");
}

CausalLM copyModel(CausalLMImpl& source, const ModelShape& shape) {
  CausalLM copy = makeModel(shape, /*initialize=*/false);
  copy->to(source.device(), source.tokenEmbedding().scalar_type());
  torch::NoGradGuard noGrad;
  auto from = source.named_parameters();
  for (auto& p : copy->named_parameters()) {
    if (from.contains(p.key()))
      p.value().copy_(from[p.key()]);
    else if (p.key() == "lm_head.weight")
      p.value().copy_(source.unembedding());
  }
  copy->norms() = source.norms();
  return copy;
}

}  // namespace nf
