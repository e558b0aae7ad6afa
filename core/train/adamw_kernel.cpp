#include "train/adamw_kernel.h"

#include <cmath>

#include "util/vector_math.h"

namespace nf {

// Built with -fno-math-errno (core/CMakeLists.txt): otherwise √ keeps a branch for errno and the loop
// stays scalar. v is never negative, so errno could never be set anyway.
NF_VECTOR_CLONES void adamWUpdate(float* __restrict p, const float* __restrict g, float* __restrict m,
                                  float* __restrict v, int64_t begin, int64_t end,
                                  const AdamWCoefficients& c) {
  const AdamWCoefficients k = c;  // a local copy the compiler can keep in registers
  for (int64_t i = begin; i < end; ++i) {
    const float gi = g[i] * k.gradientScale;
    const float pi = p[i] * k.decay;
    const float mi = m[i] * k.beta1 + k.oneMinusBeta1 * gi;
    const float vi = v[i] * k.beta2 + k.oneMinusBeta2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + k.stepSize * mi / (std::sqrt(vi) / k.sqrtBiasCorrection2 + k.eps);
  }
}

}  // namespace nf
