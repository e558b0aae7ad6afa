#include "train/removal_tracker.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace nf {

using json = nlohmann::json;

RemovalTracker::RemovalTracker(CausalLMImpl& model, const RemovalSettings& settings)
    : m_model(model), m_settings(settings) {
  for (const SiteId& site : model.norms().sites()) {
    SiteTracker& tracker = m_trackers[site];
    const SiteNorm& n = model.norms().at(site);
    if (isFakeNorm(n.kind)) tracker.fakeSince = 0, tracker.hasValue = true, tracker.tracked = n.scale;
  }
}

void RemovalTracker::sigma(SiteId site, const torch::Tensor& s) {
  if (m_collecting) m_sigmas.emplace_back(site, s);
}

void RemovalTracker::finalInput(const torch::Tensor& x) {
  if (m_collecting) m_finalInput = x;
}

torch::Tensor RemovalTracker::takeFinalInput() { return std::exchange(m_finalInput, torch::Tensor()); }

void RemovalTracker::discardCollected() {
  m_sigmas.clear();
  m_pending.clear();
  m_finalInput = torch::Tensor();
}

void RemovalTracker::update(const torch::Tensor& tokens) {
  // Sites grouped by the positions their statistics leave out, each group reduced in a dozen kernels
  // whatever its size: eight small kernels per site had cost SmolLM2-135M's launch-bound removal step on
  // an H200 8 % (91 sites; docs/BENCHMARKS.md).
  std::map<std::pair<bool, bool>, std::pair<std::vector<SiteId>, std::vector<torch::Tensor>>> groups;
  for (auto& [site, s] : m_sigmas) {
    const SiteTracker& t = m_trackers[site];
    if (t.fakeSince >= 0) continue;  // frozen
    // While a treatment will apply to this site, s describes the other positions only.
    const bool pos0LeftOut = m_settings.pos0Treatment && !t.pos0Ended;
    const bool eotLeftOut = m_settings.eotTreatment && !t.eotEnded && site.kind == SiteKind::V;
    auto& [sites, sigmas] = groups[{pos0LeftOut, eotLeftOut}];
    sites.push_back(site);
    sigmas.push_back(s);
  }
  m_sigmas.clear();
  for (auto& [leftOut, group] : groups) {
    const torch::Tensor s = torch::stack(group.second);  // [sites, B, T]
    const int64_t n = s.size(0);
    torch::Tensor weight = torch::ones_like(s[0]);  // [B, T]
    if (leftOut.first) weight.select(1, 0).zero_();
    if (leftOut.second) weight = weight * tokens.ne(m_model.config().eotTokenId).to(weight.scalar_type());
    // Per site: [Σ weighted σ, Σ weight, Σ σ at position 0, count at position 0].
    const torch::Tensor values =
        torch::stack({(s * weight).sum({1, 2}), weight.sum().expand({n}), s.select(2, 0).sum(1),
                      torch::full({n}, static_cast<double>(s.size(1)), s.options())},
                     1);
    m_pending.emplace_back(std::move(group.first), values.flatten().to(torch::kFloat64));
  }
}

torch::Tensor RemovalTracker::pendingStatistics() const {
  std::vector<torch::Tensor> all;
  for (const auto& entry : m_pending) all.push_back(entry.second);
  if (all.empty())
    return torch::empty({0}, torch::TensorOptions().dtype(torch::kFloat64).device(m_model.device()));
  return torch::cat(all);
}

void RemovalTracker::fold(const std::function<void(torch::Tensor&)>& sumOverWorkers) {
  torch::Tensor statistics = pendingStatistics();
  if (sumOverWorkers) sumOverWorkers(statistics);
  const torch::Tensor host = statistics.to(torch::kCPU).contiguous();
  fold(host.data_ptr<double>());
}

void RemovalTracker::fold(const double* v) {
  const double k = m_settings.emaMomentum;
  for (const auto& [sites, values] : m_pending) {
    for (const SiteId& site : sites) {
      SiteTracker& t = m_trackers[site];
      const double mean = v[0] / std::max(v[1], 1.0), meanPos0 = v[2] / std::max(v[3], 1.0);
      if (!t.hasValue) {
        t.tracked = mean, t.trackedPos0 = meanPos0, t.hasValue = true;
      } else {
        t.tracked = k * t.tracked + (1 - k) * mean;
        t.trackedPos0 = k * t.trackedPos0 + (1 - k) * meanPos0;
      }
      v += 4;
    }
  }
  m_pending.clear();
}

void RemovalTracker::makeFake(const SiteId& site, int64_t step) {
  SiteTracker& t = m_trackers[site];
  if (t.fakeSince >= 0) return;
  if (!t.hasValue) throw std::logic_error(siteName(site) + " turns fake before its scale was ever measured");
  if (!std::isfinite(t.tracked) || t.tracked <= 0)
    throw std::runtime_error("step " + std::to_string(step) + ": " + siteName(site) + "'s tracked scale is " +
                             std::to_string(t.tracked) + "; refusing to freeze it (did training diverge?)");
  SiteNorm& n = m_model.norms().at(site);
  n.kind = fakeNormOf(n.kind);
  n.scale = t.tracked;
  n.scalePos0 = t.trackedPos0;
  n.pos0Treatment = m_settings.pos0Treatment && !t.pos0Ended;
  n.eotTreatment = m_settings.eotTreatment && site.kind == SiteKind::V && !t.eotEnded;
  n.realMix = m_settings.interpolationSteps > 0 ? 1.0 : 0.0;
  t.fakeSince = step;
  t.rampFrom = m_settings.interpolationSteps > 0 ? step : -1;
}

json RemovalTracker::apply(const ScheduleEvent& e, int64_t step) {
  json sites = json::array();
  for (const SiteId& site : Schedule::sitesOf(e, m_model.config().nLayer)) {
    SiteTracker& t = m_trackers[site];
    SiteNorm& n = m_model.norms().at(site);
    if (e.action == EventAction::MakeFake) {
      makeFake(site, step);
    } else if (e.action == EventAction::EndPos0Treatment) {
      t.pos0Ended = true;
      n.pos0Treatment = false;
    } else {
      t.eotEnded = true;
      n.eotTreatment = false;
    }
    json entry{{"site", siteName(site)}, {"scale", n.scale}, {"kind", normKindName(n.kind)}};
    if (n.pos0Treatment || n.eotTreatment) entry["scale_pos0"] = n.scalePos0;
    sites.push_back(entry);
  }
  return sites;
}

void RemovalTracker::advanceRamps(int64_t step) {
  // The share of σ_t falls linearly to 0 over interpolationSteps.
  const int64_t ramp = m_settings.interpolationSteps;
  if (ramp <= 0) return;
  for (auto& [site, t] : m_trackers) {
    if (t.rampFrom < 0) continue;
    m_model.norms().at(site).realMix =
        std::max(0.0, 1.0 - static_cast<double>(step - t.rampFrom) / static_cast<double>(ramp));
  }
}

std::string RemovalTracker::leftUndone() const {
  std::string perToken, treated;
  for (const SiteId& site : m_model.norms().sites()) {
    const SiteNorm& n = m_model.norms().at(site);
    if (dividesPerToken(n))
      perToken +=
          (perToken.empty() ? "" : ", ") + siteName(site) +
          (isFakeNorm(n.kind)
               ? " (its ramp " + std::to_string(static_cast<int>(std::lround(n.realMix * 100))) + " % real)"
               : "");
    else if (n.pos0Treatment || n.eotTreatment)
      treated += (treated.empty() ? "" : ", ") + siteName(site) + " (its " +
                 (n.pos0Treatment ? "position-0" : "end-of-text") + " treatment on)";
  }
  std::string said;
  if (!perToken.empty())
    said =
        "the removal finished with " + perToken +
        " short of LayerNorm-free: export refuses the result (resume with more --steps, or a schedule that "
        "makes every site fake in time)";
  if (!treated.empty())
    said +=
        (said.empty() ? "the removal finished LayerNorm-free but with " : "; and with ") + treated +
        ": export refuses a model with a treatment on, which its forms cannot write (a schedule that ends "
        "the treatments in time)";
  return said;
}

json RemovalTracker::scalesJson() const {
  json scales = json::object();
  for (const auto& [site, t] : m_trackers) {
    const SiteNorm& n = m_model.norms().at(site);
    scales[siteName(site)] = {{"tracked", t.hasValue ? json(t.tracked) : json()},
                              {"frozen", isFakeNorm(n.kind) ? json(n.scale) : json()}};
  }
  return scales;
}

json RemovalTracker::toJson() const {
  json state = json::object();
  for (const auto& [site, t] : m_trackers)
    state[siteName(site)] = {{"has_value", t.hasValue},       {"tracked", t.tracked},
                             {"tracked_pos0", t.trackedPos0}, {"fake_since", t.fakeSince},
                             {"ramp_from", t.rampFrom},       {"pos0_ended", t.pos0Ended},
                             {"eot_ended", t.eotEnded}};
  return state;
}

void RemovalTracker::restore(const json& trackers) {
  const int nLayer = m_model.config().nLayer;
  for (auto& [name, v] : trackers.items()) {
    SiteTracker& t = m_trackers[parseSiteName(name, nLayer)];
    t.hasValue = v.at("has_value");
    t.tracked = v.at("tracked");
    t.trackedPos0 = v.at("tracked_pos0");
    t.fakeSince = v.at("fake_since");
    t.rampFrom = v.value("ramp_from", int64_t{-1});
    t.pos0Ended = v.at("pos0_ended");
    t.eotEnded = v.at("eot_ended");
    // A scale divides the residual: a value edited or corrupted to ≤ 0 would be frozen into the model.
    if (t.hasValue &&
        !(std::isfinite(t.tracked) && t.tracked > 0 && std::isfinite(t.trackedPos0) && t.trackedPos0 >= 0))
      throw std::invalid_argument(name + "'s tracked scale (" + std::to_string(t.tracked) + ", position 0 " +
                                  std::to_string(t.trackedPos0) + ") is not a positive number");
  }
}

}  // namespace nf
