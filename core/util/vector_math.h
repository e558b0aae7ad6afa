// Float32 math for hand-written CPU kernels that the compiler vectorizes: the per-instruction-set clone
// attribute and a branch-free e^x. Plain C++ (no torch).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

// Compiles the function once per x86-64 level (AVX-512, AVX2 + FMA, baseline) and picks one when the
// program loads (GCC's target_clones): the build stays portable, and plain loops get the machine's vectors.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define NF_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NF_VECTOR_CLONES
#endif

namespace nf {

// e^x in float32, about one ulp, branch-free so that loops calling it vectorize: x = n·ln 2 + r with
// |r| ≤ ln2/2, e^r by Cephes' expf polynomial, 2ⁿ written into the exponent bits. x is clamped to where e^x
// is a normal float (so e^(−∞) is 1.6e−38, not 0); NaN passes through.
[[gnu::always_inline]] inline float exponential(float x) {
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
  // n ∈ [−126, 127] after the clamp; NaN's n is replaced before the conversion (undefined for NaN), and
  // p carries the NaN through.
  const int32_t exponentBits = (static_cast<int32_t>(n == n ? n : 0.0f) + 127) << 23;
  float twoToN;
  std::memcpy(&twoToN, &exponentBits, sizeof twoToN);
  return p * twoToN;
}

}  // namespace nf
