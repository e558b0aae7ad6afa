// The one place where LibTorch 1.13 (Debian) and 2.x (official CUDA builds) differ for us.
#pragma once
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

// Fused scaled-dot-product attention (flash / memory-efficient kernels on CUDA) arrived in LibTorch 2.0.
#if TORCH_VERSION_MAJOR >= 2
#define NF_HAS_FUSED_ATTENTION 1
#else
#define NF_HAS_FUSED_ATTENTION 0
#endif

namespace nf {

// The causal attention pattern softmax(q·kᵀ/√dh + causal mask), [B, H, T, T], for q, k [B, H, T, dh]:
// what hooks read and replace, and LibTorch 1.13's attention.
inline torch::Tensor causalPattern(const torch::Tensor& q, const torch::Tensor& k) {
  const int64_t T = q.size(-2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  auto future = torch::ones({T, T}, q.options().dtype(torch::kBool)).triu(1);
  return torch::softmax(scores.masked_fill(future, -std::numeric_limits<float>::infinity()), -1);
}

// Causal self-attention of q, k, v ([B, H, T, dh]): causalPattern(q, k)·v, [B, H, T, dh].
// LibTorch 2.x: one fused kernel that never materializes the T×T pattern; 1.13: the math path.
inline torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#if NF_HAS_FUSED_ATTENTION
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
  return torch::matmul(causalPattern(q, k), v);
#endif
}

// bf16 autocast on CUDA for the lifetime of the guard; does nothing when disabled.
class CudaBf16Autocast {
 public:
  explicit CudaBf16Autocast(bool enable) : m_enabled(enable) {
    if (!m_enabled) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    m_wasEnabled = at::autocast::is_autocast_enabled(at::kCUDA);
    m_oldDtype = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
#else
    m_wasEnabled = at::autocast::is_enabled();
    m_oldDtype = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
#endif
    at::autocast::increment_nesting();
  }
  ~CudaBf16Autocast() {
    if (!m_enabled) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, m_wasEnabled);
    at::autocast::set_autocast_dtype(at::kCUDA, m_oldDtype);
#else
    at::autocast::set_enabled(m_wasEnabled);
    at::autocast::set_autocast_gpu_dtype(m_oldDtype);
#endif
  }
  CudaBf16Autocast(const CudaBf16Autocast&) = delete;
  CudaBf16Autocast& operator=(const CudaBf16Autocast&) = delete;

 private:
  bool m_enabled;
  bool m_wasEnabled = false;
  at::ScalarType m_oldDtype = at::kHalf;
};

}  // namespace nf
