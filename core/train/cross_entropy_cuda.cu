// One thread block per row of logits: an online maximum and sum of exponentials over the row (one read),
// the loss from them, and the gradient softmax − one-hot written over the logits (a second read, one
// write). The same idea as the CPU's row kernel in cross_entropy.cpp; llm.c fuses its classifier likewise.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>
#include <stdexcept>
#include <string>

#include "train/cross_entropy_cuda.h"

namespace nf::cuda {
namespace {

constexpr int kThreads = 512;  // per row: GPT-2's 50,257 logits are ~98 a thread
constexpr int kWarps = kThreads / 32;

__device__ inline float toFloat(float x) { return x; }
__device__ inline float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float toFloat(__half x) { return __half2float(x); }
template <typename T>
__device__ inline T fromFloat(float x);
template <>
__device__ inline float fromFloat<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);  // round to nearest even, as LibTorch's cast
}
template <>
__device__ inline __half fromFloat<__half>(float x) {
  return __float2half(x);
}

// The maximum of the values seen and the sum of exp(value − maximum) over them. Nothing seen is
// {−FLT_MAX, 0}: never −∞, whose difference with itself would be NaN; a −∞ logit then adds exp(−∞) = 0.
struct MaxSum {
  float max;
  float sum;
};
__device__ inline MaxSum nothing() { return {-FLT_MAX, 0.0f}; }

__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__device__ inline MaxSum mergeWarp(MaxSum a) {
  for (int offset = 16; offset > 0; offset /= 2)
    a = merge(a, {__shfl_xor_sync(0xffffffffu, a.max, offset), __shfl_xor_sync(0xffffffffu, a.sum, offset)});
  return a;
}

// Each thread takes kUnroll logits kThreads apart per round, all loaded before any is used, so that several
// loads are in flight at once (the passes are bound by memory latency otherwise). Past the row's end: −∞.
constexpr int kUnroll = 4;

template <typename T>
__device__ inline void loadRound(const T* __restrict__ row, int base, int V, float (&x)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int v = base + u * kThreads;
    x[u] = v < V ? toFloat(row[v]) : -INFINITY;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    softmaxCrossEntropyKernel(T* __restrict__ z, int V, const int64_t* __restrict__ targets, bool gradient,
                              float* __restrict__ losses) {
  T* row = z + static_cast<int64_t>(blockIdx.x) * V;
  const int64_t target = targets[blockIdx.x];
  const bool targetInRow = target >= 0 && target < V;
  // Read before any thread of the block writes the row (the writes follow the reduction's barriers).
  const float targetLogit = threadIdx.x == 0 && targetInRow ? toFloat(row[target]) : NAN;

  MaxSum mine = nothing();
  for (int base = threadIdx.x; base < V; base += kThreads * kUnroll) {
    float x[kUnroll];
    loadRound(row, base, V, x);
    float roundMax = x[0];
#pragma unroll
    for (int u = 1; u < kUnroll; ++u) roundMax = fmaxf(roundMax, x[u]);  // fmaxf passes over a NaN…
    if (roundMax > mine.max) {
      mine.sum *= expf(mine.max - roundMax);
      mine.max = roundMax;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) mine.sum += expf(x[u] - mine.max);  // …which makes the sum NaN here
  }
  __shared__ MaxSum warps[kWarps];
  __shared__ MaxSum whole;
  mine = mergeWarp(mine);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = mine;
  __syncthreads();
  if (threadIdx.x < 32) {
    const MaxSum all = mergeWarp(threadIdx.x < kWarps ? warps[threadIdx.x] : nothing());
    if (threadIdx.x == 0) whole = all;
  }
  __syncthreads();
  const MaxSum total = whole;
  if (threadIdx.x == 0) losses[blockIdx.x] = logf(total.sum) + total.max - targetLogit;
  if (!gradient) return;

  const float inverse = 1.0f / total.sum;
  for (int base = threadIdx.x; base < V; base += kThreads * kUnroll) {
    float x[kUnroll];
    loadRound(row, base, V, x);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int v = base + u * kThreads;
      if (v >= V) break;
      float p = expf(x[u] - total.max) * inverse;
      if (v == target) p -= 1.0f;
      row[v] = fromFloat<T>(p);
    }
  }
}

template <typename T>
void launch(void* z, int64_t rows, int64_t V, const int64_t* targets, bool gradient, float* losses,
            cudaStream_t stream) {
  softmaxCrossEntropyKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<T*>(z), static_cast<int>(V), targets, gradient, losses);
}

}  // namespace

void softmaxCrossEntropyRows(void* z, LogitType type, int64_t rows, int64_t V, const int64_t* targets,
                             bool gradient, float* losses, void* stream) {
  if (rows < 0 || rows > INT_MAX || V <= 0 || V > INT_MAX - kThreads * kUnroll)
    throw std::invalid_argument("softmaxCrossEntropyRows: " + std::to_string(rows) + " rows of " +
                                std::to_string(V) + " logits (up to 2³¹ − 1 rows, 1 to ~2³¹ logits each)");
  if (rows == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case LogitType::Float32:
      launch<float>(z, rows, V, targets, gradient, losses, s);
      break;
    case LogitType::BFloat16:
      launch<__nv_bfloat16>(z, rows, V, targets, gradient, losses, s);
      break;
    case LogitType::Float16:
      launch<__half>(z, rows, V, targets, gradient, losses, s);
      break;
  }
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    throw std::runtime_error(std::string("the cross-entropy kernel did not start: ") +
                             cudaGetErrorString(error));
}

}  // namespace nf::cuda
