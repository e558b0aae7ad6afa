// AdamW's update of float32 parameters, as a loop the compiler vectorizes. Plain C++ (no torch);
// train/optimizer.cpp's FusedAdamW spreads it over the cores.
#pragma once
#include <cstdint>

namespace nf {

// One step's constants for every element of a parameter (float32, as LibTorch's step rounds them).
struct AdamWCoefficients {
  float gradientScale;  // the clipping factor folded in (1: none)
  float decay;          // 1 − lr·λ (1: no weight decay)
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2;
  float sqrtBiasCorrection2;  // √(1 − β₂ᵗ)
  float eps;
  float stepSize;  // −lr / (1 − β₁ᵗ)
};

// Elements [begin, end) of LibTorch's AdamW update, with its float operations in its order:
// g ← g·scale; p ← p·decay; m ← β₁m + (1 − β₁)g; v ← β₂v + (1 − β₂)g²; p ← p + stepSize·m / (√v / √c₂ + ε).
// Multiplying by a scale or decay of 1 is exact, so no case needs a branch.
void adamWUpdate(float* p, const float* g, float* m, float* v, int64_t begin, int64_t end,
                 const AdamWCoefficients& c);

}  // namespace nf
