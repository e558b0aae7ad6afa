#include "model/causal_lm.h"

#include <torch/torch.h>

#include "model/attention.h"
#include "model/device_memory.h"
#include "model/family.h"
#include "model/norm.h"
#include "model/torch_compat.h"
#include "util/bytes.h"

namespace nf {

NormParamsImpl::NormParamsImpl(int64_t d, bool withBias) {
  weight = register_parameter("weight", torch::ones({d}));
  if (withBias) bias = register_parameter("bias", torch::zeros({d}));
}

torch::nn::Linear linearLayer(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
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

CausalLMImpl::CausalLMImpl(const ModelShape& shape) : m_config(shape), m_norms(nativeNorms(shape)) {
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
  // The removal tracks the divisor of every site its family still normalizes per token.
  auto tracked = [](NormKind kind) { return kind == NormKind::LayerNorm || kind == NormKind::RMSNorm; };
  const bool observed = m_observer && tracked(state.kind);
  auto report = [&](const torch::Tensor& sigma) {
    m_observer->sigma(site, sigma);
    if (twin && tracked(m_norms.at(*twin).kind)) m_observer->sigma(*twin, sigma);
  };
  if (!hooks || !hooks->touches(point)) {
    if (!observed) return applyNorm(state, in);
    if (state.kind == NormKind::LayerNorm && params->bias.defined()) {
      // The fused kernel computes 1/σ anyway: training reads it from there instead of a second pass.
      auto [y, mean, rstd] = torch::native_layer_norm(x, {x.size(-1)}, params->weight, params->bias, in.eps);
      report(rstd.detach().reciprocal().squeeze(-1).to(torch::kFloat32));
      return y;
    }
  }
  // Hooked (or an RMSNorm that is observed): the divisor is materialized so it can be cached and reported,
  // and an intervention may replace it.
  const torch::Tensor divisor = visit(hooks, point, normDivisor(state, in));
  if (observed) report(divisor.detach().to(torch::kFloat32));
  return normalizeBy(state, in, divisor);
}

bool CausalLMImpl::splitsAttentionInput(int layer, HookSet* hooks) const {
  return hooks && (hooks->touches(HookPoint::qInput(layer)) || hooks->touches(HookPoint::kInput(layer)) ||
                   hooks->touches(HookPoint::vInput(layer)));
}

std::array<torch::Tensor, 3> CausalLMImpl::splitAttentionInputs(int layer, const NormParams& params,
                                                                const torch::Tensor& x,
                                                                const torch::Tensor& tokens, HookSet* hooks,
                                                                const HeadProjection& project) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), dh = m_config.headDim();
  const HookPoint points[] = {HookPoint::qInput(layer), HookPoint::kInput(layer), HookPoint::vInput(layer)};
  const int64_t heads[] = {m_config.nHead, m_config.kvHeads(), m_config.kvHeads()};
  std::array<torch::Tensor, 3> out;
  for (int role = 0; role < 3; ++role) {
    const int64_t n = heads[role];
    const torch::Tensor copies = visit(hooks, points[role], x.unsqueeze(2).expand({B, T, n, D}));
    // Copy h of sequence b is row b·n + h of one batch, with its sequence's tokens (the EOT treatment).
    const torch::Tensor normalized =
        norm({role == 2 ? SiteKind::V : SiteKind::Qk, layer}, params,
             copies.permute({0, 2, 1, 3}).reshape({B * n, T, D}), tokens.repeat_interleave(n, 0), nullptr);
    // Row (b, h) projects every head; head h's own slice is the diagonal over (row head, output head).
    const torch::Tensor projected = project(role, normalized).view({B, n, T, n, dh});
    out[role] = torch::diagonal(projected, 0, 1, 3).permute({0, 1, 3, 2}).reshape({B, T, n * dh});
  }
  return out;
}

bool CausalLMImpl::attentionNormShared(int layer, HookSet* hooks) const {
  const SiteId qk{SiteKind::Qk, layer}, v{SiteKind::V, layer};
  return m_norms.at(qk) == m_norms.at(v) &&
         !(hooks && (hooks->touches(HookPoint::normScale(qk)) || hooks->touches(HookPoint::normScale(v))));
}

std::pair<torch::Tensor, torch::Tensor> CausalLMImpl::rotary(const torch::Tensor& q,
                                                             const torch::Tensor& k) const {
  const int64_t dims = m_config.rotaryDims();
  if (dims == 0) return {q, k};
  // The angles in float32 as Hugging Face computes them (float64 for a float64 model), then q's dtype.
  const auto angleType = q.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  const auto opts = q.options().dtype(angleType);
  const torch::Tensor inverseFrequency =
      1.0 /
      torch::pow(m_config.rotaryBase, torch::arange(0, dims, 2, opts.dtype(torch::kLong)).to(angleType) /
                                          static_cast<double>(dims));
  const torch::Tensor angles = torch::outer(torch::arange(q.size(2), opts), inverseFrequency);  // [T, dims/2]
  const torch::Tensor cos = torch::cat({angles, angles}, -1).cos().to(q.scalar_type());
  const torch::Tensor sin = torch::cat({angles, angles}, -1).sin().to(q.scalar_type());
  auto rotate = [&](const torch::Tensor& x) {
    const torch::Tensor rotated = x.narrow(-1, 0, dims);
    const torch::Tensor halfTurn =
        torch::cat({-rotated.narrow(-1, dims / 2, dims / 2), rotated.narrow(-1, 0, dims / 2)}, -1);
    const torch::Tensor out = rotated * cos + halfTurn * sin;
    return dims == x.size(-1) ? out : torch::cat({out, x.narrow(-1, dims, x.size(-1) - dims)}, -1);
  };
  return {rotate(q), rotate(k)};
}

torch::Tensor CausalLMImpl::attend(int layer, const torch::Tensor& q, torch::Tensor k, torch::Tensor v,
                                   HookSet* hooks) {
  const int64_t groups = q.size(1) / k.size(1);
  if (groups > 1) k = k.repeat_interleave(groups, 1), v = v.repeat_interleave(groups, 1);
  torch::Tensor z;  // [B, H, T, dh]
  if (hooks && hooks->touches(HookPoint::pattern(layer))) {
    // The pattern is materialized only when a hook reads or replaces it (the same numbers within float32
    // rounding as causalAttention's, not bit for bit).
    z = torch::matmul(hooks->visit(HookPoint::pattern(layer), causalPattern(q, k)), v);
  } else {
    z = causalAttention(q, k, v);
  }
  return z.transpose(1, 2);
}

torch::Tensor CausalLMImpl::attentionOutput(int layer, const torch::Tensor& z,
                                            const torch::Tensor& outputWeight,
                                            const torch::Tensor& outputBias, HookSet* hooks) {
  const int64_t B = z.size(0), T = z.size(1), H = z.size(2), dh = z.size(3), D = outputWeight.size(1);
  torch::Tensor out;
  if (hooks && hooks->touches(HookPoint::headOut(layer))) {
    // Per-head writes to the residual: z_h · W_O[h·dh:(h+1)·dh, :].
    auto headOut = torch::einsum("bthd,hde->bthe", {z, outputWeight.reshape({H, dh, D}).to(z.scalar_type())});
    out = hooks->visit(HookPoint::headOut(layer), headOut).sum(2);
    if (outputBias.defined()) out = out + outputBias;
  } else {
    const torch::Tensor flat = z.reshape({-1, H * dh});
    out =
        (outputBias.defined() ? torch::addmm(outputBias, flat, outputWeight) : torch::mm(flat, outputWeight))
            .view({B, T, D});
  }
  return visit(hooks, HookPoint::attnOut(layer), out);
}

torch::Tensor CausalLMImpl::finalHidden(const torch::Tensor& tokensIn, HookSet* hooks) {
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
  return norm({SiteKind::Final, -1}, finalNorm(), x, tokens, hooks);
}

torch::Tensor CausalLMImpl::forward(const torch::Tensor& tokens, HookSet* hooks, int64_t logitPosition) {
  CudaBf16Autocast autocast(m_bf16Autocast && device().is_cuda());  // also over the unembedding
  torch::Tensor x = finalHidden(tokens, hooks);
  if (logitPosition >= 0) x = x.slice(1, logitPosition, logitPosition + 1);
  const torch::Tensor logits = torch::matmul(x, unembedding().t());
  return logits.scalar_type() == torch::kFloat64 ? logits : logits.to(torch::kFloat32);
}

void initLikeHuggingFace(CausalLMImpl& model, uint64_t seed, double std) {
  torch::NoGradGuard noGrad;
  auto gen = at::detail::createCPUGenerator(seed);
  auto endsWith = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (auto& item : model.named_parameters()) {
    torch::Tensor value = torch::empty(item.value().sizes(), torch::kFloat32);
    if (endsWith(item.key(), "norm.weight"))
      value.fill_(1.0);
    else if (endsWith(item.key(), ".bias"))
      value.zero_();
    else
      value.normal_(0.0, std, gen);
    item.value().copy_(value);
  }
}

CausalLM makeModel(const ModelShape& shape, bool initialize) {
  // A model that cannot fit is refused with its size, before the allocator fails with a bare bad_alloc.
  const int64_t bytes = shape.parameterCount() * int64_t{sizeof(float)};
  const DeviceMemory ram = deviceMemory("cpu");
  if (ram.freeBytes > 0 && bytes > ram.freeBytes)
    throw std::runtime_error("a " + shape.family + " model of this shape (" + std::to_string(shape.nLayer) +
                             " layers, width " + std::to_string(shape.nEmbd) + ") has " +
                             std::to_string(shape.parameterCount()) + " parameters, " + formatBytes(bytes) +
                             " in float32, but this machine has " + formatBytes(ram.freeBytes) +
                             " of memory available");
  return CausalLM(familyNamed(shape.family).make(shape, initialize));
}

CausalLM copyModel(CausalLMImpl& source, const ModelShape& shape) {
  CausalLM copy = makeModel(shape, /*initialize=*/false);
  copy->to(source.device(), source.tokenEmbedding().scalar_type());
  torch::NoGradGuard noGrad;
  auto from = source.named_parameters();
  const torch::Tensor unembedding = copy->unembedding();
  for (auto& p : copy->named_parameters()) {
    if (from.contains(p.key()))
      p.value().copy_(from[p.key()]);
    else if (p.value().is_same(unembedding))  // untied here, tied in the source
      p.value().copy_(source.unembedding());
    else  // a bias the source lacks (an export's fold gives it one): nothing added yet
      p.value().zero_();
  }
  copy->norms() = source.norms();
  return copy;
}

}  // namespace nf
