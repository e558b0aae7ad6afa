// Torch-level pieces the analyses share, exposed for the engine's tests.
#pragma once
#include <torch/types.h>

#include <functional>

#include "analysis/analysis_header.h"
#include "util/progress.h"

namespace nf {

// Rows [first, first + n) of the sequences as an int64 tensor [n, length] on `device`.
torch::Tensor sequenceBatch(const TokenSequences& sequences, int64_t first, int64_t n, torch::Device device);

// Calls visit(batch, first) for consecutive batches of at most batchSize sequences, under NoGradGuard, and
// reports the sequences done after each batch to `progress` (if any) as `task`.
void forEachBatch(const TokenSequences& sequences, int64_t batchSize, torch::Device device,
                  const std::function<void(const torch::Tensor& tokens, int64_t first)>& visit,
                  const ProgressFn& progress = {}, const std::string& task = {});

// Per (batch, head): the attention position 0 receives, averaged over query positions. pattern [B, H, T, T].
torch::Tensor positionZeroAttention(const torch::Tensor& pattern);

// For each row of `vectors` [F, D], the unbiased variance over the rows of `rows` [R, D] (none all zero) of
// their cosine with it; 0 for an all-zero vector. Computed a chunk of vectors at a time, holding at most
// `maxCosines` cosines: the whole [R, F] matrix is 6 GB in float64 for Qwen2's vocabulary and last MLP.
torch::Tensor cosineVariances(const torch::Tensor& rows, const torch::Tensor& vectors,
                              int64_t maxCosines = int64_t{1} << 25);

// Values of a tensor (any device, any float dtype) as a std::vector.
std::vector<float> toVector(const torch::Tensor& t);
std::vector<double> toDoubles(const torch::Tensor& t);

}  // namespace nf
