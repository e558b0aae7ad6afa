// Causal attention of one head in float32 on the CPU, forward and backward, as loops the compiler
// vectorizes: only the T·(T+1)/2 scores a query can see are computed, in the cache, with no call per
// product. Plain C++ (no torch); model/attention.cpp runs it over the heads.
#pragma once
#include <cstdint>

namespace nf::attention_kernel {

// A [T, dh] matrix of one head: row t starts at data + t·rowStride; dh elements follow contiguously.
struct HeadRows {
  float* data;
  int64_t rowStride;
};

// The head sizes the kernel is compiled for (every GPT-2, Pythia and LLaMA size: 16, 32, 64, 80, 128).
bool supportsHeadSize(int64_t dh);

// T rounded up to the kernel's blocks: the pattern of one head is stored as patternLength(T)² floats.
int64_t patternLength(int64_t T);

// z = softmax(q·kᵀ·scale + causal mask)·v for one head; `pattern` receives the softmax (patternLength(T)²
// floats, row-major; zeros beyond each row's query and beyond T), which backward reads.
void forward(int64_t T, int64_t dh, float scale, HeadRows q, HeadRows k, HeadRows v, float* pattern,
             HeadRows z);

// The gradients of q, k and v for one head, given z's gradient and forward's pattern.
void backward(int64_t T, int64_t dh, float scale, HeadRows q, HeadRows k, HeadRows v, const float* pattern,
              HeadRows gradZ, HeadRows gradQ, HeadRows gradK, HeadRows gradV);

}  // namespace nf::attention_kernel
