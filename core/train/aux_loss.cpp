#include "train/aux_loss.h"

#include <torch/torch.h>

#include "model/norm.h"

namespace nf {

torch::Tensor auxiliaryLoss(const torch::Tensor& finalInput, const torch::Tensor& tokens, int64_t eotTokenId,
                            double eps, bool centred,
                            const std::function<void(torch::Tensor&)>& sumOverWorkers) {
  const torch::Tensor x = finalInput.to(torch::kFloat32);
  const torch::Tensor sigma = tokenScale(x, centred, eps);
  torch::Tensor mask = tokens.ne(eotTokenId);
  mask.select(1, 0).fill_(false);
  const torch::Tensor weight = mask.to(sigma.scalar_type());
  torch::Tensor moments = torch::stack({(sigma.detach() * weight).sum(), weight.sum()});
  if (sumOverWorkers) sumOverWorkers(moments);
  const torch::Tensor target = moments[0] / moments[1].clamp_min(1);
  return (sigma - target).pow(2).mean();
}

}  // namespace nf
