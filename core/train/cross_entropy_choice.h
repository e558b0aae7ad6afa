// How the training loss is computed on each device, as far as plain C++ needs to know: which way CUDA takes
// (the memory planner counts it) and how many rows one block of the blocked loss holds. Implemented in
// train/cross_entropy.cpp beside the loss itself (train/cross_entropy.h, torch). No torch here.
#pragma once
#include <cstdint>

namespace nf {

// How CUDA computes the training loss, chosen by NF_CUDA_CROSS_ENTROPY (issue 42's A/B):
//   "logits": cross_entropy over forward()'s logits, the whole micro-batch's at once (unset: the default
//             in a build without the engine's CUDA kernels);
//   "blocks": unembeddedCrossEntropy, its products in bf16 under autocast, the softmax by LibTorch's
//             operations in float32;
//   "kernel": the same blocks with the softmax by the engine's own row kernel (train/cross_entropy_cuda.h),
//             in the logits' type: only in a build with the engine's CUDA kernels (NF_CUDA_KERNELS), where
//             it is the default (measured on an H200 against "logits": GPT-2 Small's removal step 1.11×
//             as fast in 42 % of the memory; docs/BENCHMARKS.md).
// Any other value, or "kernel" in a build without them, is refused (std::invalid_argument naming it).
enum class CudaCrossEntropy { Logits, Blocks, Kernel };
CudaCrossEntropy cudaCrossEntropy();
const char* cudaCrossEntropyName(CudaCrossEntropy how);
bool ownCudaKernelsBuiltIn();  // whether this build has the engine's CUDA kernels (NF_CUDA_KERNELS)

// The rows of one block of the blocked loss over `rows` rows of a `vocab`-wide unembedding: on the CPU about
// 4 Mi logits (within the L3 cache) and at least 256 rows, on a GPU 256 Mi logits (GPT-2: 5,341 rows).
int64_t lossRowsPerBlock(int64_t rows, int64_t vocab, bool cpu);

}  // namespace nf
