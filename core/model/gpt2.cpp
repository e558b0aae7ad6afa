#include "model/gpt2.h"

#include <torch/torch.h>

#include <cmath>

#include "model/norm.h"
#include "model/torch_compat.h"

namespace nf {
namespace {

// The value the forward pass continues with at a hook point: untouched unless a HookSet asks for the point.
torch::Tensor visit(HookSet* hooks, const HookPoint& point, torch::Tensor value) {
  return hooks && hooks->touches(point) ? hooks->visit(point, std::move(value)) : value;
}

}  // namespace

// Activation checkpointing of one block, the reentrant scheme of torch.utils.checkpoint: the forward pass
// records no graph and keeps only the block's input; the backward pass runs the block again with
// gradients on and backpropagates through that, which also accumulates the parameters' gradients.
struct CheckpointedBlock : torch::autograd::Function<CheckpointedBlock> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& tokens, GPT2Impl* model, int64_t layer) {
    ctx->save_for_backward({x, tokens});
    ctx->saved_data["model"] = reinterpret_cast<int64_t>(model);
    ctx->saved_data["layer"] = layer;
    torch::NoGradGuard noGrad;
    return model->block(static_cast<int>(layer), x, tokens, nullptr);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list outputGrads) {
    auto* model = reinterpret_cast<GPT2Impl*>(ctx->saved_data["model"].toInt());
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

Conv1DImpl::Conv1DImpl(int64_t in, int64_t out) {
  weight = register_parameter("weight", torch::empty({in, out}));
  bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x) {
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(1);
  return torch::addmm(bias, x.reshape({-1, x.size(-1)}), weight).view(sizes);
}

NormParamsImpl::NormParamsImpl(int64_t d) {
  weight = register_parameter("weight", torch::ones({d}));
  bias = register_parameter("bias", torch::zeros({d}));
}

EmbeddingImpl::EmbeddingImpl(int64_t rows, int64_t d) {
  weight = register_parameter("weight", torch::empty({rows, d}));
}

AttentionImpl::AttentionImpl(int64_t d)
    : c_attn(register_module("c_attn", Conv1D(d, 3 * d))), c_proj(register_module("c_proj", Conv1D(d, d))) {}

MlpImpl::MlpImpl(int64_t d)
    : c_fc(register_module("c_fc", Conv1D(d, 4 * d))), c_proj(register_module("c_proj", Conv1D(4 * d, d))) {}

BlockImpl::BlockImpl(int64_t d)
    : ln_1(register_module("ln_1", NormParams(d))),
      attn(register_module("attn", Attention(d))),
      ln_2(register_module("ln_2", NormParams(d))),
      mlp(register_module("mlp", Mlp(d))) {}

GPT2Impl::GPT2Impl(const GPT2Config& config, bool initialize) : m_config(config), m_norms(config.nLayer) {
  config.validate("GPT2Config");
  wte = register_module("wte", Embedding(config.vocabSize, config.nEmbd));
  wpe = register_module("wpe", Embedding(config.nPositions, config.nEmbd));
  h = register_module("h", torch::nn::ModuleList());
  for (int l = 0; l < config.nLayer; ++l) {
    m_blocks.push_back(Block(config.nEmbd));
    h->push_back(m_blocks.back());
  }
  ln_f = register_module("ln_f", NormParams(config.nEmbd));
  if (!config.tiedUnembedding)
    lm_head = register_module("lm_head", Embedding(config.vocabSize, config.nEmbd));
  if (initialize) initWeights(0);
}

void GPT2Impl::initWeights(uint64_t seed) {
  torch::NoGradGuard noGrad;
  auto gen = at::detail::createCPUGenerator(seed);
  const double std = 0.02, residualStd = 0.02 / std::sqrt(2.0 * m_config.nLayer);
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    torch::Tensor value = torch::empty(p.sizes(), torch::kFloat32);
    const bool isNorm = name.find("ln_") != std::string::npos;
    const bool isBias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (isNorm && !isBias)
      value.fill_(1.0);
    else if (isBias)
      value.zero_();
    else
      value.normal_(0.0, name.find("c_proj.weight") != std::string::npos ? residualStd : std, gen);
    p.copy_(value);
  }
}

torch::Tensor GPT2Impl::unembedding() const {
  return m_config.tiedUnembedding ? wte->weight : lm_head->weight;
}

void GPT2Impl::checkTokens(const torch::Tensor& tokens) const {
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

torch::Tensor GPT2Impl::norm(SiteId site, const NormParams& params, const torch::Tensor& x,
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

torch::Tensor GPT2Impl::block(int layer, torch::Tensor x, const torch::Tensor& tokens, HookSet* hooks) {
  Block& blk = m_blocks[layer];
  const int64_t B = x.size(0), T = x.size(1), D = m_config.nEmbd, H = m_config.nHead, dh = m_config.headDim();

  x = visit(hooks, HookPoint::residPre(layer), x);

  // Attention. LN_qk and LN_v share γ, β; compute once while both paths are in the same state.
  const SiteId qkSite{SiteKind::Qk, layer}, vSite{SiteKind::V, layer};
  torch::Tensor q, k, v;
  const auto& W = blk->attn->c_attn->weight;
  const auto& b = blk->attn->c_attn->bias;
  const bool shared =
      m_norms.at(qkSite) == m_norms.at(vSite) && !(hooks && (hooks->touches(HookPoint::normScale(qkSite)) ||
                                                             hooks->touches(HookPoint::normScale(vSite))));
  if (shared) {
    auto qkv = blk->attn->c_attn(norm(qkSite, blk->ln_1, x, tokens, hooks, vSite)).split(D, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto xqk = norm(qkSite, blk->ln_1, x, tokens, hooks).reshape({-1, D});
    auto xv = norm(vSite, blk->ln_1, x, tokens, hooks).reshape({-1, D});
    auto qk = torch::addmm(b.slice(0, 0, 2 * D), xqk, W.slice(1, 0, 2 * D)).view({B, T, 2 * D}).split(D, -1);
    q = qk[0], k = qk[1];
    v = torch::addmm(b.slice(0, 2 * D), xv, W.slice(1, 2 * D)).view({B, T, D});
  }
  auto heads = [&](const torch::Tensor& t) {
    return t.view({B, T, H, dh}).transpose(1, 2);
  };                // [B, H, T, dh]
  torch::Tensor z;  // [B, H, T, dh]
  if (hooks && hooks->touches(HookPoint::pattern(layer))) {
    // The pattern is materialized only when a hook reads or replaces it.
    auto scores =
        torch::matmul(heads(q), heads(k).transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(dh)));
    auto future = torch::ones({T, T}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(1);
    auto pattern = torch::softmax(scores.masked_fill(future, -std::numeric_limits<float>::infinity()), -1);
    z = torch::matmul(hooks->visit(HookPoint::pattern(layer), pattern), heads(v));
  } else {
    z = causalAttention(heads(q), heads(k), heads(v));
  }
  z = z.transpose(1, 2);  // [B, T, H, dh]

  const auto& Wo = blk->attn->c_proj->weight;
  const auto& bo = blk->attn->c_proj->bias;
  torch::Tensor attnOut;
  if (hooks && hooks->touches(HookPoint::headOut(layer))) {
    // Per-head writes to the residual: z_h · W_O[h·dh:(h+1)·dh, :].
    auto headOut = torch::einsum("bthd,hde->bthe", {z, Wo.view({H, dh, D}).to(z.scalar_type())});
    headOut = hooks->visit(HookPoint::headOut(layer), headOut);
    attnOut = headOut.sum(2) + bo;
  } else {
    attnOut = torch::addmm(bo, z.reshape({-1, D}), Wo).view({B, T, D});
  }
  attnOut = visit(hooks, HookPoint::attnOut(layer), attnOut);
  x = visit(hooks, HookPoint::residMid(layer), x + attnOut);

  // MLP.
  auto pre = visit(hooks, HookPoint::mlpPre(layer),
                   blk->mlp->c_fc(norm({SiteKind::Mlp, layer}, blk->ln_2, x, tokens, hooks)));
  auto post = visit(hooks, HookPoint::mlpPost(layer), torch::gelu(pre, "tanh"));
  auto mlpOut = visit(hooks, HookPoint::mlpOut(layer), blk->mlp->c_proj(post));
  return visit(hooks, HookPoint::residPost(layer), x + mlpOut);
}

torch::Tensor GPT2Impl::forward(const torch::Tensor& tokensIn, HookSet* hooks, int64_t logitPosition) {
  torch::Tensor tokens = tokensIn.dim() == 1 ? tokensIn.unsqueeze(0) : tokensIn;
  checkTokens(tokens);
  tokens = tokens.to(device(), torch::kLong, /*non_blocking=*/true);
  CudaBf16Autocast autocast(m_bf16Autocast && device().is_cuda());

  const int64_t T = tokens.size(1);
  auto tok = visit(hooks, {HookKind::EmbedTok}, torch::embedding(wte->weight, tokens));
  auto pos = visit(hooks, {HookKind::EmbedPos}, wpe->weight.slice(0, 0, T).unsqueeze(0));
  torch::Tensor x = tok + pos;
  const bool checkpointing = m_activationCheckpointing && !hooks && torch::GradMode::is_enabled();
  for (int l = 0; l < m_config.nLayer; ++l)
    x = checkpointing ? CheckpointedBlock::apply(x, tokens, this, static_cast<int64_t>(l))
                      : block(l, x, tokens, hooks);
  if (m_observer) m_observer->finalInput(x);
  x = norm({SiteKind::Final, -1}, ln_f, x, tokens, hooks);
  if (logitPosition >= 0) x = x.slice(1, logitPosition, logitPosition + 1);
  const torch::Tensor logits = torch::matmul(x, unembedding().t());
  return logits.scalar_type() == torch::kFloat64 ? logits : logits.to(torch::kFloat32);
}

GPT2 copyModel(GPT2Impl& source, const GPT2Config& config) {
  GPT2 copy(config, /*initialize=*/false);
  copy->to(source.device(), source.wte->weight.scalar_type());
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
