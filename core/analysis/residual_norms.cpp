#include "analysis/residual_norms.h"

#include <torch/torch.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "io/json_read.h"
#include "model/causal_lm.h"
#include "model/family.h"
#include "model/norm.h"

namespace nf {
namespace {

void append(std::vector<float>& to, const std::vector<float>& values) {
  to.insert(to.end(), values.begin(), values.end());
}

// Position 0 and the rest of a per-token statistic [B, T].
void split(const torch::Tensor& perToken, std::vector<float>& position0, std::vector<float>& rest) {
  append(position0, toVector(perToken.select(1, 0)));
  append(rest, toVector(perToken.slice(1, 1)));
}

ScaleHistogram histogramOf(const std::vector<float>& position0, const std::vector<float>& rest, int bins) {
  ScaleHistogram h;
  float lo = std::numeric_limits<float>::infinity(), hi = 0;
  for (const auto* values : {&position0, &rest})
    for (float v : *values) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > lo)) hi = lo * 1.01f + 1e-6f;
  const double logLo = std::log(lo), logHi = std::log(hi);
  for (int i = 0; i <= bins; ++i) h.edges.push_back(std::exp(logLo + (logHi - logLo) * i / bins));
  h.counts.assign(bins, 0);
  for (const auto* values : {&position0, &rest})
    for (float v : *values) {
      const int bin = static_cast<int>((std::log(v) - logLo) / (logHi - logLo) * bins);
      ++h.counts[std::clamp(bin, 0, bins - 1)];
    }
  h.position0 = spreadOf(position0);
  h.rest = spreadOf(rest);
  return h;
}

}  // namespace

ResidualNormsResult residualNorms(const ModelSnapshot& snapshot, const TokenSequences& data,
                                  int histogramBins, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  const int L = model.config().nLayer;
  const double eps = model.config().layerNormEpsilon;
  const std::vector<SiteId> sites = model.norms().sites();
  std::vector<std::vector<float>> norm0(L + 1), normRest(L + 1), sigma0(sites.size()),
      sigmaRest(sites.size());
  const HookPoint finalResidual = HookPoint::residPost(L - 1);
  // The input each site normalizes: resid_pre for LN_qk and LN_v, resid_mid for LN_mlp (resid_pre with a
  // parallel residual), the last resid_post for LN_f.
  const bool parallel = model.config().parallelResidual;
  // The statistic the family's own norm divides by: σ (LayerNorm) or the root mean square (RMSNorm).
  const bool centred = centresInput(familyNamed(model.config().family).norm);
  auto inputOf = [&](const SiteId& site) {
    switch (site.kind) {
      case SiteKind::Mlp:
        return parallel ? HookPoint::residPre(site.layer) : HookPoint::residMid(site.layer);
      case SiteKind::Final:
        return finalResidual;
      default:
        return HookPoint::residPre(site.layer);
    }
  };
  forEachBatch(
      data, 8, model.device(),
      [&](const torch::Tensor& tokens, int64_t) {
        HookSet hooks;
        for (int l = 0; l < L; ++l) hooks.cache(HookPoint::residPre(l)), hooks.cache(HookPoint::residMid(l));
        hooks.cache(finalResidual);
        model.forward(tokens, &hooks);
        for (int l = 0; l <= L; ++l) {
          const torch::Tensor& x = hooks.at(l < L ? HookPoint::residPre(l) : finalResidual);
          split(x.norm(2, -1), norm0[l], normRest[l]);
        }
        for (size_t i = 0; i < sites.size(); ++i) {
          const torch::Tensor& x = hooks.at(inputOf(sites[i]));
          split(tokenScale(x, centred, eps), sigma0[i], sigmaRest[i]);
        }
      },
      progress, "residual norms");

  ResidualNormsResult r;
  r.header = makeHeader("residual_norms", snapshot, data.source, data.count, data.length);
  for (int l = 0; l <= L; ++l)
    r.rows.push_back(
        {l < L ? HookPoint::residPre(l).name() : "final", spreadOf(norm0[l]), spreadOf(normRest[l])});
  for (size_t i = 0; i < sites.size(); ++i) {
    ScaleHistogram h = histogramOf(sigma0[i], sigmaRest[i], histogramBins);
    const SiteNorm& norm = model.norms().at(sites[i]);
    h.site = siteName(sites[i]);
    h.kind = normKindName(norm.kind);
    h.frozenScale = isFakeNorm(norm.kind) ? norm.scale : 0.0;
    r.scales.push_back(std::move(h));
  }
  return r;
}

nlohmann::json toJson(const ResidualNormsResult& r) {
  nlohmann::json rows = nlohmann::json::array(), scales = nlohmann::json::array();
  for (const ResidualNormRow& row : r.rows)
    rows.push_back({{"point", row.point}, {"position0", toJson(row.position0)}, {"rest", toJson(row.rest)}});
  for (const ScaleHistogram& h : r.scales)
    scales.push_back({{"site", h.site},
                      {"kind", h.kind},
                      {"frozen_scale", h.frozenScale},
                      {"edges", h.edges},
                      {"counts", h.counts},
                      {"position0", toJson(h.position0)},
                      {"rest", toJson(h.rest)}});
  return {{"header", toJson(r.header)}, {"residual_norms", rows}, {"sigma", scales}};
}

ResidualNormsResult residualNormsResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    ResidualNormsResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.rows = j["residual_norms"].list([](const JsonIn& row) {
      return ResidualNormRow{row["point"].text(), spreadFromJson(row["position0"]),
                             spreadFromJson(row["rest"])};
    });
    r.scales = j["sigma"].list([](const JsonIn& s) {
      ScaleHistogram h;
      h.site = s["site"].text();
      h.kind = s["kind"].text();
      h.frozenScale = s["frozen_scale"].real();
      h.edges = s["edges"].reals();
      h.counts = s["counts"].wholes<int64_t>();
      s["edges"].requireSize(static_cast<int64_t>(h.counts.size()) + 1, "counts + 1");
      h.position0 = spreadFromJson(s["position0"]);
      h.rest = spreadFromJson(s["rest"]);
      return h;
    });
    return r;
  });
}

}  // namespace nf
