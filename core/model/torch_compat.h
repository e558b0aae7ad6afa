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
