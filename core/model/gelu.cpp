#include "model/gelu.h"

#include <cmath>
#include <cstdint>

#include "model/cpu_threads.h"
#include "util/vector_math.h"

namespace nf {

namespace {

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
// precision where σ is near 1. Beyond |2u| = 80, σ·(1 − σ) is below 1e−34 but e, clamped, is not:
// the term is 0 there, as it is within float32 rounding, however large x·2u′ grows.
NF_VECTOR_CLONES void geluBackward(const float* __restrict grad, const float* __restrict x,
                                   float* __restrict gradX, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], v2 = v * v;
    const float twoU = v * (kLinear + kCubic * v2);
    const float e = exponential(-twoU);
    const float s = 1.0f / (1.0f + e);
    const float slope = v * (e * s * s) * (kLinear + 3.0f * kCubic * v2);  // e·s ≤ 1: no overflow
    gradX[i] = grad[i] * (s + (std::fabs(twoU) < 80.0f ? slope : 0.0f));
  }
}

// Runs `kernel(begin, end)` over [0, n), spread over the cores in chunks of at least 64k values.
template <typename Kernel>
void inChunks(int64_t n, const Kernel& kernel) {
  forEachPart(n, int64_t{1} << 16, kernel);
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
