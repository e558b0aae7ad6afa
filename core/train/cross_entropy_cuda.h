// The training loss's own CUDA kernel (issue 42; cross_entropy_cuda.cu): a row's softmax cross-entropy and
// its gradient in two passes over its logits, in their own type. Compiled in when CMake finds a CUDA
// compiler beside a CUDA LibTorch (NF_CUDA_KERNELS); train/cross_entropy.cpp calls it. Plain C++, no torch:
// nvcc compiles the kernel without LibTorch's headers.
#pragma once
#include <cstdint>

namespace nf::cuda {

enum class LogitType { Float32, BFloat16, Float16 };

// For each row r of the contiguous logits z [rows, V] on the current device: losses[r] =
// log Σ_v exp(z[r, v]) − z[r, targets[r]], in float32 (NaN for a target outside [0, V), whose row is then
// left without the one-hot), and where `gradient`, z[r] replaced by softmax(z[r]) − onehot(targets[r]) in
// z's type. Where LibTorch's operations cast the logits to float32 and pass over them six times, this reads
// them twice (an online maximum and sum; the scaling) and writes them once. Asynchronous on `stream` (a
// cudaStream_t); a launch that fails throws std::runtime_error.
void softmaxCrossEntropyRows(void* z, LogitType type, int64_t rows, int64_t V, const int64_t* targets,
                             bool gradient, float* losses, void* stream);

}  // namespace nf::cuda
