// The auxiliary loss on the input of the final norm (PROTOCOL §3), unweighted:
//   mean over all b, s of (σ_{b,s} − σ̂)²,  σ_{b,s} = sqrt(Var_d(x_{b,s}) + ε) with its gradient
//   (an RMSNorm family, centred = false: sqrt(mean_d(x_{b,s}²) + ε), the statistic its norm divides by),
//   σ̂ = mean σ over positions that are neither 0 nor end-of-text, without gradient.
// In a multi-worker run each worker has its share of the batch: sumOverWorkers sums σ̂'s [sum, count] over
// them, so σ̂ is the whole batch's, and the mean of the workers' losses is the one-process loss.
#pragma once
#include <torch/types.h>

#include <functional>

namespace nf {

torch::Tensor auxiliaryLoss(const torch::Tensor& finalInput, const torch::Tensor& tokens, int64_t eotTokenId,
                            double eps, bool centred = true,
                            const std::function<void(torch::Tensor&)>& sumOverWorkers = {});

}  // namespace nf
