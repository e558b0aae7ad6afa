// Removal-site tracking (PROTOCOL §2–4): per LN site, the EMA of the batch-mean σ (and of σ at position 0)
// measured during training forward passes; freezing it into a FakeLN when an event says so; the special
// treatments and the interpolation ramp; and ln_f's input for the auxiliary loss. Engine-internal (torch).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <utility>
#include <vector>

#include "model/causal_lm.h"
#include "schedule/schedule.h"
#include "train/settings.h"

namespace nf {

// Removal bookkeeping of one site.
struct SiteTracker {
  bool hasValue = false;
  double tracked = 0, trackedPos0 = 0;  // EMA of the batch-mean σ, and of σ at position 0
  int64_t fakeSince = -1;               // step the site turned fake; -1 while real
  int64_t rampFrom = -1;                // step its interpolation ramp started; -1: no ramp
  bool pos0Ended = false, eotEnded = false;
};

class RemovalTracker : public NormObserver {
 public:
  // Sites the model already has as FakeLN count as frozen since step 0.
  RemovalTracker(CausalLMImpl& model, const RemovalSettings& settings);

  // Installed as the model's observer, the tracker keeps each site's σ and ln_f's input of the forward
  // passes made while collecting.
  void setCollecting(bool collecting) { m_collecting = collecting; }
  // Reduces the σ collected since the last call to per-site statistics on the device (no waiting for
  // it); tokens are the inputs, for the end-of-text treatment's mask. One call per micro-batch.
  void update(const torch::Tensor& tokens);
  // The statistics of every update() not folded yet, float64 on the device, as sums and counts (so that
  // a multi-worker run can sum them over the workers' shares of the batch): the training step copies them
  // to the host together with its losses, one device → host copy per step.
  torch::Tensor pendingStatistics() const;
  // Folds them into the EMAs, micro-batch by micro-batch: `values` is pendingStatistics() on the host.
  void fold(const double* values);
  // Copies pendingStatistics() itself, first summed over the workers of a multi-worker run when given.
  void fold(const std::function<void(torch::Tensor&)>& sumOverWorkers);
  // ln_f's input of the last collected forward pass (the auxiliary loss's), and forgets it.
  torch::Tensor takeFinalInput();
  void discardCollected();  // what a failed step left behind

  // Applies an event at the start of `step`; returns each touched site's new norm for the metrics log.
  nlohmann::json apply(const ScheduleEvent& event, int64_t step);
  // Moves every interpolation ramp to `step`.
  void advanceRamps(int64_t step);
  // What a finished removal left that export refuses, for its norms_left warning ("" when nothing): sites
  // still dividing by each token's scale ("LN_mlp.4, LN_f (its ramp 25 % real)": short of LayerNorm-free),
  // and sites with a treatment on ("LN_v.0 (its position-0 treatment on)": LayerNorm-free — constant
  // divisors — but no export form writes a treatment).
  std::string leftUndone() const;

  nlohmann::json scalesJson() const;  // per site: tracked and frozen scale (metrics "step" records)
  nlohmann::json toJson() const;      // for a checkpoint's state.json
  void restore(const nlohmann::json& trackers);  // throws on malformed state

 private:
  void sigma(SiteId site, const torch::Tensor& s) override;
  void finalInput(const torch::Tensor& x) override;
  void makeFake(const SiteId& site, int64_t step);

  CausalLMImpl& m_model;
  RemovalSettings m_settings;
  std::map<SiteId, SiteTracker> m_trackers;
  bool m_collecting = false;
  std::vector<std::pair<SiteId, torch::Tensor>> m_sigmas;
  // Per update(): the sites measured, and their [Σ weighted σ, Σ weight, Σ σ at position 0, count at
  // position 0] on the device.
  std::vector<std::pair<std::vector<SiteId>, torch::Tensor>> m_pending;
  torch::Tensor m_finalInput;
};

}  // namespace nf
