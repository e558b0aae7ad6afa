// One optimizer step's passes (trainer_state.h): the step's micro-batches forward and backward with the aux
// loss when removing, gradients averaged over the workers and clipped, and what the step measured brought
// to the host in one copy; then its "step" record. Also the σ measurement before the first step.
#include <chrono>

#include "run/metrics_records.h"
#include "train/aux_loss.h"
#include "train/cross_entropy.h"
#include "train/trainer_state.h"

namespace nf {

using json = nlohmann::json;

// Measures every site once before training, so an event at step 0 has a scale to freeze. A separate
// sampler keeps the training batches identical to a run without this pass.
void Trainer::Impl::measureScales() {
  const auto& c = config();
  const TokenFile& train = sampler->file();  // its ids already checked
  BatchSampler calibration(train, c.optimizer.microBatch, c.optimizer.context,
                           c.optimizer.seed ^ 0x5eed5eedULL, model->config().vocabSize,
                           batchShare(c.optimizer.microBatch, worker), documentWindows(train));
  torch::NoGradGuard noGrad;
  model->setNormObserver(tracker.get());
  tracker->setCollecting(true);
  const torch::Tensor inputs = calibration.next().inputs.to(device);
  model->forward(inputs);
  tracker->update(inputs);
  tracker->fold(sumOverWorkers("the first measurement of the scales"));
  tracker->setCollecting(false);
}

// Forward and backward over the step's micro-batches (gradients of CE, + λ·aux when removing), then
// clipping. The device is never waited for until the end: losses, gradient norm and the σ statistics
// reach the host in one copy, before the optimizer may update the weights.
Trainer::Impl::StepResult Trainer::Impl::forwardBackwardClip(int64_t step) {
  const auto started = std::chrono::steady_clock::now();
  const std::string stepName = "step " + std::to_string(step + 1);
  const OptimizerSettings& o = config().optimizer;
  const double auxWeight = removing() ? config().removal.auxWeight : 0.0;
  torch::Tensor ceSum = torch::zeros({}, torch::TensorOptions().device(device));
  torch::Tensor auxSum = torch::zeros({}, torch::TensorOptions().device(device));
  for (int64_t micro = 0; micro < o.accumulation; ++micro) {
    const Batch batch = prefetcher->next();
    // The CPU ids go to forward(), which checks them there; the device copies are for the losses.
    const torch::Tensor inputs = batch.inputs.to(device, /*non_blocking=*/true);
    const torch::Tensor targets = batch.targets.to(device, /*non_blocking=*/true);
    tracker->setCollecting(removing());
    const torch::Tensor ce = nextTokenCrossEntropy(*model, batch.inputs, targets);
    const bool centresFinalInput = centresInput(model->norms().at({SiteKind::Final, -1}).kind);
    tracker->setCollecting(false);
    const torch::Tensor finalInput = tracker->takeFinalInput();
    torch::Tensor loss = ce;
    if (auxWeight > 0) {
      const torch::Tensor aux = auxWeight * auxiliaryLoss(finalInput, inputs, model->config().eotTokenId,
                                                          model->config().layerNormEpsilon, centresFinalInput,
                                                          sumOverWorkers(stepName + "'s auxiliary loss"));
      loss = loss + aux;
      auxSum = auxSum + aux.detach();
    }
    (loss / static_cast<double>(o.accumulation)).backward();
    ceSum = ceSum + ce.detach();
    if (removing()) tracker->update(inputs);
  }
  // Until here the worker worked on its own: its share of the batch took it this long (host clock).
  const double ownSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (group) group->averageGradients(parameters, stepName + "'s gradients");
  const torch::Tensor gradNorm = clipGradients();
  // Losses, σ statistics and each worker's seconds, summed over the workers: their sums are the
  // one-process batch's (the losses are means over equal shares, so their sum is W × the batch mean).
  const int workers = group ? group->size() : 1;
  torch::Tensor seconds = torch::zeros({workers}, torch::TensorOptions().dtype(torch::kFloat64));
  seconds[worker.rank] = ownSeconds;
  torch::Tensor shared = torch::cat(
      {torch::stack({ceSum, auxSum}).to(torch::kFloat64), tracker->pendingStatistics(), seconds.to(device)});
  if (group) group->sum(shared, stepName + "'s losses and scales");
  const torch::Tensor host = torch::cat({shared, gradNorm.to(torch::kFloat64).reshape({1})})
                                 .to(torch::kCPU);  // the step's one wait for the device
  const double* v = host.data_ptr<double>();
  tracker->fold(v + 2);
  const double divisor = static_cast<double>(o.accumulation) * workers;
  StepResult result{{v[0] / divisor, v[1] / divisor}, v[host.numel() - 1], {}};
  result.workerSeconds.assign(v + host.numel() - 1 - workers, v + host.numel() - 1);
  return result;
}

// Scales the gradients to a total 2-norm of at most clipNorm (as torch::nn::utils::clip_grad_norm_,
// which waits for the device to return the norm as a double); returns the norm before clipping. On the
// CPU the optimizer's pass scales them (clippingScale), which saves a pass over every gradient.
torch::Tensor Trainer::Impl::clipGradients() {
  std::vector<torch::Tensor> grads, norms;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad()), norms.push_back(p.grad().norm(2));
  if (grads.empty()) return torch::zeros({}, torch::TensorOptions().device(device));
  const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
  const double clip = config().optimizer.clipNorm;
  if (clip > 0 && !device.is_cpu()) {
    const torch::Tensor coefficient = torch::clamp_max(clip / (total + 1e-6), 1.0);
    for (auto& g : grads) g.mul_(coefficient);
  }
  return total;
}

// The factor clipGradients() leaves to the optimizer on the CPU, from the norm before clipping.
double Trainer::Impl::clippingScale(double gradNorm) const {
  const double clip = config().optimizer.clipNorm;
  if (clip <= 0 || !device.is_cpu()) return 1.0;
  return std::min(1.0, static_cast<double>(static_cast<float>(clip / (gradNorm + 1e-6))));
}

void Trainer::Impl::dropGradients() {
  for (auto& p : parameters) p.mutable_grad().reset();  // dropping, not zeroing: 1.13 zeroes
}

void Trainer::Impl::logStep(int64_t done, const StepResult& result, double lr, double tokensPerSecond) {
  const Losses& l = result.losses;
  const double gradNorm = result.gradNorm;
  json r{{record::kType, record::kStep},
         {"step", done},
         {"ce", l.ce},
         {"aux", l.aux},
         {"loss", l.ce + l.aux},
         {"lr", lr},
         {"grad_norm", gradNorm},
         {"tokens_per_second", tokensPerSecond}};
  if (removing()) r["scales"] = tracker->scalesJson();
  if (group) {
    // Each worker's own pace: its share of the step's tokens over the time its passes took.
    const OptimizerSettings& o = config().optimizer;
    const double shareTokens = static_cast<double>(o.microBatch * o.accumulation * o.context) / group->size();
    json perWorker = json::array();
    for (double seconds : result.workerSeconds) perWorker.push_back(shareTokens / std::max(seconds, 1e-9));
    r["world_size"] = group->size();
    r["worker_tokens_per_second"] = perWorker;
  }
  record(r);
}

}  // namespace nf
