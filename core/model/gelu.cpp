#include "model/gelu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nf {

namespace {

// Written as plain loops the compiler vectorizes, once per instruction set, chosen at load time (GCC's
// target_clones): the build itself stays portable.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define NF_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NF_VECTOR_CLONES
#endif

// e^x in float32 for the sigmoid below, branch-free so that it vectorizes: x = n·ln 2 + r with |r| ≤ ln2/2,
// e^r by Cephes' expf polynomial (about one ulp), 2ⁿ written into the exponent bits. x is clamped to where
// e^x is a normal float; NaN passes through.
inline float exponential(float x) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  constexpr float kRoundToInteger = 12582912.0f;  // 1.5·2²³: adding and subtracting it rounds to an integer
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = (x * kLog2e + kRoundToInteger) - kRoundToInteger;
  const float r = x - n * kLn2High - n * kLn2Low;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t exponentBits = (static_cast<int32_t>(n) + 127) << 23;
  float twoToN;
  std::memcpy(&twoToN, &exponentBits, sizeof twoToN);
  return p * twoToN;
}

// 2u = x·(kLinear + kCubic·x²).
constexpr float kLinear = 1.5957691216057308f;  // 2·√(2/π)
constexpr float kCubic = kLinear * 0.044715f;

NF_VECTOR_CLONES void geluForward(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v / (1.0f + exponential(-v * (kLinear + kCubic * v * v)));
  }
}

// d/dx x·σ(2u) = σ + x·σ·(1 − σ)·2u′, with σ·(1 − σ) written as e·σ² (e = e^(−2u)), which keeps its
// precision where σ is near 1.
NF_VECTOR_CLONES void geluBackward(const float* __restrict grad, const float* __restrict x,
                                   float* __restrict gradX, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], v2 = v * v;
    const float e = exponential(-v * (kLinear + kCubic * v2));
    const float s = 1.0f / (1.0f + e);
    gradX[i] = grad[i] * (s + v * (e * s * s) * (kLinear + 3.0f * kCubic * v2));  // e·s ≤ 1: no overflow
  }
}

// Runs `kernel(begin, end)` over [0, n) on ATen's intra-op threads, in chunks that stream through the cache.
template <typename Kernel>
void inChunks(int64_t n, const Kernel& kernel) {
  at::parallel_for(0, n, int64_t{1} << 15, kernel);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GeluTanhCpu : torch::autograd::Function<GeluTanhCpu> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input) {
    const torch::Tensor x = input.contiguous();
    torch::Tensor y = at::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    inChunks(x.numel(),
             [&](int64_t begin, int64_t end) { geluForward(in + begin, out + begin, end - begin); });
    ctx->save_for_backward({input});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list outputGrads) {
    const torch::Tensor input = ctx->get_saved_variables()[0];
    // Under create_graph, LibTorch's backward, which is differentiable itself.
    if (torch::GradMode::is_enabled()) return {at::gelu_backward(outputGrads[0], input, "tanh")};
    const torch::Tensor x = input.contiguous(), grad = outputGrads[0].contiguous();
    torch::Tensor gradX = at::empty_like(x);
    const float *g = grad.data_ptr<float>(), *in = x.data_ptr<float>();
    float* out = gradX.data_ptr<float>();
    inChunks(x.numel(), [&](int64_t begin, int64_t end) {
      geluBackward(g + begin, in + begin, out + begin, end - begin);
    });
    return {gradX};
  }
};

}  // namespace

torch::Tensor geluTanh(const torch::Tensor& x) {
  if (x.is_cpu() && x.scalar_type() == torch::kFloat && x.layout() == torch::kStrided)
    return GeluTanhCpu::apply(x);
  return torch::gelu(x, "tanh");
}

}  // namespace nf
