#include "model/attention.h"

#include <cmath>
#include <limits>

#include "model/attention_kernel.h"
#include "model/cpu_threads.h"
#include "model/torch_compat.h"

namespace nf {

namespace {

// Where a score is masked: the key's position comes after the query's. Masked scores become −∞.
torch::Tensor futurePositions(int64_t T, const torch::TensorOptions& options) {
  return torch::ones({T, T}, options.dtype(torch::kBool)).triu(1);
}
constexpr double kMasked = -std::numeric_limits<double>::infinity();

double scoreScale(const torch::Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(q.size(-1))); }

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Head (b, h) of a [B, H, T, dh] tensor, or of the [B, T, H, dh] tensor `tokenMajor`: its [T, dh] matrix.
torch::Tensor head(const torch::Tensor& t, int64_t b, int64_t h) { return t.select(0, b).select(0, h); }
torch::Tensor headOfTokenMajor(const torch::Tensor& tokenMajor, int64_t b, int64_t h) {
  return tokenMajor.select(0, b).select(1, h);
}

// out = alpha · a·b, BLAS's beta = 0: out's previous contents are never read.
void product(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b, double alpha = 1.0) {
  at::addmm_out(out, out, a, b, /*beta=*/0, alpha);
}

// Where attention_kernel runs: float32 heads of a size it is compiled for, contiguous along dh.
bool kernelApplies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  return q.scalar_type() == torch::kFloat && attention_kernel::supportsHeadSize(q.size(3)) &&
         q.stride(3) == 1 && k.stride(3) == 1 && v.stride(3) == 1;
}

// Head (b, h) of a [B, H, T, dh] tensor, or of a [B, T, H, dh] tensor, as the kernel reads it.
attention_kernel::HeadRows rowsOf(const torch::Tensor& t, int64_t b, int64_t h) {
  return {t.data_ptr<float>() + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}
attention_kernel::HeadRows rowsOfTokenMajor(const torch::Tensor& t, int64_t b, int64_t h) {
  return {t.data_ptr<float>() + b * t.stride(0) + h * t.stride(2), t.stride(1)};
}

// Runs `head(b, h)` for every head, spread over the cores.
template <typename Head>
void forEachHead(int64_t B, int64_t H, const Head& head) {
  forEachPart(B * H, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) head(i / H, i % H);
  });
}

struct CausalAttentionByHead : torch::autograd::Function<CausalAttentionByHead> {
  // q, k, v [B, H, T, dh]; returns z [B, T, H, dh], contiguous.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v) {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), dh = q.size(3);
    const double scale = scoreScale(q);
    if (kernelApplies(q, k, v)) {
      const int64_t Tp = attention_kernel::patternLength(T);
      torch::Tensor pattern = at::empty({B, H, Tp, Tp}, q.options());
      torch::Tensor z = at::empty({B, T, H, dh}, q.options());
      forEachHead(B, H, [&](int64_t b, int64_t h) {
        attention_kernel::forward(T, dh, static_cast<float>(scale), rowsOf(q, b, h), rowsOf(k, b, h),
                                  rowsOf(v, b, h), rowsOf(pattern, b, h).data, rowsOfTokenMajor(z, b, h));
      });
      ctx->save_for_backward({q, k, v, pattern});
      return z;
    }
    torch::Tensor pattern = at::empty({B, H, T, T}, q.options());
    torch::Tensor z = at::empty({B, T, H, dh}, q.options());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) product(head(pattern, b, h), head(q, b, h), head(k, b, h).t(), scale);
    pattern.masked_fill_(futurePositions(T, q.options()), kMasked);
    at::_softmax_out(pattern, pattern, -1, /*half_to_float=*/false);  // in place: each row read, then written
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) product(headOfTokenMajor(z, b, h), head(pattern, b, h), head(v, b, h));
    ctx->save_for_backward({q, k, v, pattern});
    return z;
  }

  static variable_list backward(AutogradContext* ctx, variable_list outputGrads) {
    TORCH_CHECK(!torch::GradMode::is_enabled(),
                "causalAttentionByHead has no double backward (create_graph): use causalPattern(q, k)·v");
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &pattern = saved[3];
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), dh = q.size(3);
    const double scale = scoreScale(q);
    const torch::Tensor gradZ = outputGrads[0].contiguous();  // [B, T, H, dh]
    torch::Tensor gradQ = at::empty({B, T, H, dh}, q.options()), gradK = at::empty_like(gradQ),
                  gradV = at::empty_like(gradQ);
    if (kernelApplies(q, k, v)) {
      forEachHead(B, H, [&](int64_t b, int64_t h) {
        attention_kernel::backward(T, dh, static_cast<float>(scale), rowsOf(q, b, h), rowsOf(k, b, h),
                                   rowsOf(v, b, h), rowsOf(pattern, b, h).data, rowsOfTokenMajor(gradZ, b, h),
                                   rowsOfTokenMajor(gradQ, b, h), rowsOfTokenMajor(gradK, b, h),
                                   rowsOfTokenMajor(gradV, b, h));
      });
      return {gradQ.transpose(1, 2), gradK.transpose(1, 2), gradV.transpose(1, 2)};
    }
    torch::Tensor gradPattern = at::empty_like(pattern);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const torch::Tensor gz = headOfTokenMajor(gradZ, b, h);
        product(headOfTokenMajor(gradV, b, h), head(pattern, b, h).t(), gz);
        product(head(gradPattern, b, h), gz, head(v, b, h).t());
      }
    // The scores' gradient, in place: each row's Σ grad·pattern is taken before the row is written.
    at::_softmax_backward_data_out(gradPattern, gradPattern, pattern, -1, pattern.scalar_type());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const torch::Tensor gs = head(gradPattern, b, h);
        product(headOfTokenMajor(gradQ, b, h), gs, head(k, b, h), scale);
        product(headOfTokenMajor(gradK, b, h), gs.t(), head(q, b, h), scale);
      }
    return {gradQ.transpose(1, 2), gradK.transpose(1, 2), gradV.transpose(1, 2)};
  }
};

}  // namespace

torch::Tensor causalPattern(const torch::Tensor& q, const torch::Tensor& k) {
  const torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scoreScale(q);
  return torch::softmax(scores.masked_fill(futurePositions(q.size(-2), q.options()), kMasked), -1);
}

torch::Tensor causalAttentionByHead(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  TORCH_CHECK(q.dim() == 4 && q.sizes() == k.sizes() && q.sizes() == v.sizes() && q.is_cpu() && k.is_cpu() &&
                  v.is_cpu() && q.is_floating_point() && q.scalar_type() == k.scalar_type() &&
                  q.scalar_type() == v.scalar_type(),
              "causalAttentionByHead: q, k, v of one shape [B, H, T, dh] and one floating dtype on the CPU "
              "expected, got ",
              q.sizes(), ", ", k.sizes(), ", ", v.sizes(), " of ", q.scalar_type(), ", ", k.scalar_type(),
              ", ", v.scalar_type());
  return CausalAttentionByHead::apply(q, k, v).transpose(1, 2);
}

torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#if NF_HAS_FUSED_ATTENTION
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
  if (q.is_cpu()) return causalAttentionByHead(q, k, v);
  return torch::matmul(causalPattern(q, k), v);
#endif
}

}  // namespace nf
