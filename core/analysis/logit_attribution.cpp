#include "analysis/logit_attribution.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "eval/loss_summary.h"
#include "io/json_read.h"
#include "model/causal_lm.h"
#include "model/norm.h"
#include "util/random.h"

namespace nf {
namespace {

constexpr SiteId kFinal{SiteKind::Final, -1};

// Everything below runs in float64: DE is a difference of two nearly equal logits, and on an LN-free model
// float32 rounding alone would make DLA and DE differ by ~1e-3 %.
// The final norm applied to k components at once: x [B, n, k, D] is laid out as B·k sequences of n
// positions [B·k, n, D] (so position-dependent treatments stay right); each result is dotted with
// u [B, n, D], giving [B, n, k].
class FinalNorm {
 public:
  FinalNorm(CausalLMImpl& model, const torch::Tensor& tokens, const torch::Tensor& u)
      : m_model(model),
        m_state(model.norms().at(kFinal)),
        m_gamma(model.finalNorm()->weight.to(torch::kFloat64)),
        m_beta(model.finalNorm()->bias.defined() ? model.finalNorm()->bias.to(torch::kFloat64)
                                                 : torch::Tensor()),
        m_tokens(tokens),
        m_u(u) {}

  // DLA: the component normalized by the cached divisor [B, n], less what the norm adds to nothing (β).
  torch::Tensor attribution(const torch::Tensor& components, const torch::Tensor& divisor) const {
    const torch::Tensor flatDivisor = divisor.repeat_interleave(components.size(2), 0);
    return dotted(components, [&](const NormInputs& in) {
      const torch::Tensor zeros = torch::zeros_like(in.x);
      const NormInputs zero{zeros, in.gamma, in.beta, in.eps, in.depth, in.tokens, in.eotTokenId};
      return normalizeBy(m_state, in, flatDivisor) - normalizeBy(m_state, zero, flatDivisor);
    });
  }
  // What the norm outputs for a zero input (β; nothing for identity), dotted with u: [B, n].
  torch::Tensor offset(const torch::Tensor& divisor) const {
    const torch::Tensor zeros = torch::zeros({m_u.size(0), m_u.size(1), 1, m_u.size(2)}, m_u.options());
    return dotted(zeros, [&](const NormInputs& in) { return normalizeBy(m_state, in, divisor); }).squeeze(-1);
  }
  // The divisor DLA takes [B, n]: the forward's (`cached`, float32) where the norm divides each token by its
  // own scale; else the frozen one in double, as output() applies it — so DLA and DE of an LN-free model
  // agree exactly, not within float32's rounding of s.
  torch::Tensor divisor(const torch::Tensor& cached) const {
    if (dividesPerToken(m_state)) return cached;
    const torch::Tensor x = torch::zeros({cached.size(0), cached.size(1), 1}, cached.options());
    const NormInputs in{
        x, m_gamma, m_beta, m_model.config().layerNormEpsilon, 1, &m_tokens, m_model.config().eotTokenId};
    return normDivisor(m_state, in);
  }
  // The final norm of x ([B, n, k, D]) itself, dotted with u.
  torch::Tensor output(const torch::Tensor& x) const {
    return dotted(x, [&](const NormInputs& in) { return applyNorm(m_state, in); });
  }

 private:
  template <typename Fn>
  torch::Tensor dotted(const torch::Tensor& x, Fn&& apply) const {
    const int64_t B = x.size(0), n = x.size(1), k = x.size(2), D = x.size(3);
    const torch::Tensor flat = x.permute({0, 2, 1, 3}).reshape({B * k, n, D});
    const torch::Tensor flatTokens = m_tokens.repeat_interleave(k, 0);
    const NormInputs in{flat,
                        m_gamma,
                        m_beta,
                        m_model.config().layerNormEpsilon,
                        1,
                        &flatTokens,
                        m_model.config().eotTokenId};
    const torch::Tensor y = apply(in).view({B, k, n, D});
    return (y * m_u.unsqueeze(1)).sum(-1).permute({0, 2, 1});  // [B, n, k]
  }

  CausalLMImpl& m_model;
  const SiteNorm& m_state;
  const torch::Tensor m_gamma, m_beta;
  const torch::Tensor& m_tokens;
  const torch::Tensor& m_u;
};

double nmaeOf(double error, double effect) {
  if (effect > 0) return 100.0 * error / effect;
  return error > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

AttributionResult logitAttribution(const ModelSnapshot& snapshot, const TokenSequences& data,
                                   const AttributionOptions& options, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  const int L = model.config().nLayer, H = model.config().nHead;
  if (options.traceLayer < 0 || options.traceLayer >= L || options.traceHead < 0 || options.traceHead >= H)
    throw std::invalid_argument("head L" + std::to_string(options.traceLayer) + "H" +
                                std::to_string(options.traceHead) + " does not exist (" + std::to_string(L) +
                                " layers × " + std::to_string(H) + " heads)");
  if (options.traceSequence < 0 || options.traceSequence >= data.count)
    throw std::invalid_argument("sequence " + std::to_string(options.traceSequence) + " is not among the " +
                                std::to_string(data.count) + " sequences");
  const int64_t S = data.count, others = 1 + 2 * L;
  // Per sequence: Σ over positions of |DLA − DE|, |DE| and |DLA|, for heads and for the other components.
  torch::Tensor headSums = torch::zeros({3, S, L * H}, torch::kFloat64);
  torch::Tensor otherSums = torch::zeros({3, S, others}, torch::kFloat64);
  const torch::Tensor unembedding = model.unembedding();
  AttributionResult r;
  r.trace.layer = options.traceLayer;
  r.trace.head = options.traceHead;
  r.trace.sequence = options.traceSequence;

  forEachBatch(
      data, options.batchSize, model.device(),
      [&](const torch::Tensor& tokens, int64_t first) {
        HookSet hooks;
        hooks.cache({HookKind::EmbedTok});
        hooks.cache({HookKind::EmbedPos});
        for (int l = 0; l < L; ++l) hooks.cache(HookPoint::headOut(l)), hooks.cache(HookPoint::mlpOut(l));
        hooks.cache(HookPoint::residPost(L - 1));
        hooks.cache(HookPoint::normScale(kFinal));
        const torch::Tensor logits = model.forward(tokens, &hooks);
        const int64_t B = tokens.size(0), n = tokens.size(1) - 1, D = model.config().nEmbd;
        const torch::Tensor input = tokens.slice(1, 0, n), targets = tokens.slice(1, 1);
        const torch::Tensor u =
            unembedding.index_select(0, targets.reshape(-1)).view({B, n, D}).to(torch::kFloat64);
        const torch::Tensor residual =
            hooks.at(HookPoint::residPost(L - 1)).slice(1, 0, n).to(torch::kFloat64);
        const FinalNorm finalNorm(model, input, u);
        const torch::Tensor divisor =
            finalNorm.divisor(hooks.at(HookPoint::normScale(kFinal)).slice(1, 0, n).to(torch::kFloat64));
        const torch::Tensor full = finalNorm.output(residual.unsqueeze(2));  // [B, n, 1]
        torch::Tensor dlaTotal = torch::zeros({B, n}, residual.options());

        // DLA and DE of components [B, n, k, D]; adds their sums per sequence to sums[:, first.., column..].
        auto measure = [&](const torch::Tensor& components32, torch::Tensor& sums, int64_t column) {
          const torch::Tensor components = components32.to(torch::kFloat64);
          const torch::Tensor dla = finalNorm.attribution(components, divisor);
          const torch::Tensor de = full - finalNorm.output(residual.unsqueeze(2) - components);
          dlaTotal += dla.sum(-1);
          const int64_t k = components.size(2);
          auto add = [&](int which, const torch::Tensor& perPosition) {
            sums[which].slice(0, first, first + B).slice(1, column, column + k) +=
                perPosition.abs().sum(1).to(torch::kCPU, torch::kFloat64);
          };
          add(0, dla - de);
          add(1, de);
          add(2, dla);
          return std::make_pair(dla, de);
        };
        auto expand = [&](const torch::Tensor& perPosition) {  // [*, T, D] → [B, n, 1, D]
          return perPosition.slice(-2, 0, n).expand({B, n, D}).unsqueeze(2);
        };
        // Rotary families have no position embedding in the residual stream.
        const auto& cached = hooks.activations();
        const torch::Tensor embedded = cached.count({HookKind::EmbedPos})
                                           ? hooks.at({HookKind::EmbedTok}) + hooks.at({HookKind::EmbedPos})
                                           : hooks.at({HookKind::EmbedTok});
        measure(expand(embedded), otherSums, 0);
        for (int l = 0; l < L; ++l) {
          const auto [dla, de] = measure(hooks.at(HookPoint::headOut(l)).slice(1, 0, n), headSums, l * H);
          if (l == options.traceLayer && options.traceSequence >= first &&
              options.traceSequence < first + B) {
            const int64_t row = options.traceSequence - first;
            r.trace.dla = toDoubles(dla[row].select(-1, options.traceHead));
            r.trace.de = toDoubles(de[row].select(-1, options.traceHead));
            r.trace.tokens.assign(data.row(options.traceSequence),
                                  data.row(options.traceSequence) + data.length);
          }
          measure(model.attentionOutputBias(l).expand({B, n, D}).unsqueeze(2), otherSums, 1 + 2 * l);
          measure(hooks.at(HookPoint::mlpOut(l)).slice(1, 0, n).unsqueeze(2), otherSums, 2 + 2 * l);
        }
        const torch::Tensor logit = logits.slice(1, 0, n).gather(-1, targets.unsqueeze(-1)).squeeze(-1);
        r.decompositionError = std::max(
            r.decompositionError, (dlaTotal + finalNorm.offset(divisor) - logit).abs().max().item<double>());
      },
      progress, "DLA vs DE");

  r.header = makeHeader("logit_attribution", snapshot, data.source, data.count, data.length);
  r.layers = L;
  r.heads = H;
  const double pairs = static_cast<double>(S * (data.length - 1));
  auto summarize = [&](const torch::Tensor& sums, int64_t column, std::string name, int layer, int head) {
    ComponentAttribution c;
    c.name = std::move(name);
    c.layer = layer;
    c.head = head;
    c.meanAbsError = sums[0].select(1, column).sum().item<double>() / pairs;
    c.meanAbsDe = sums[1].select(1, column).sum().item<double>() / pairs;
    c.meanAbsDla = sums[2].select(1, column).sum().item<double>() / pairs;
    c.nmae = nmaeOf(c.meanAbsError, c.meanAbsDe);
    return c;
  };
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      r.headAttributions.push_back(
          summarize(headSums, l * H + h, "L" + std::to_string(l) + "H" + std::to_string(h), l, h));
  r.others.push_back(summarize(otherSums, 0, "embed", -1, -1));
  for (int l = 0; l < L; ++l) {
    r.others.push_back(summarize(otherSums, 1 + 2 * l, "attn bias " + std::to_string(l), l, -1));
    r.others.push_back(summarize(otherSums, 2 + 2 * l, "MLP " + std::to_string(l), l, -1));
  }
  for (const ComponentAttribution& c : r.headAttributions) r.overallNmae += c.nmae / (L * H);

  // Bootstrap over sequences: resample S sequences with replacement, recompute every head's NMAE from its
  // per-sequence sums and average over heads. Too few sequences give no interval (one resamples to itself:
  // not [x, x]; a few, to about their own range).
  if (options.bootstrapSamples > 0 && S >= kMinIntervalSequences) {
    Random random(options.seed);
    torch::Tensor weights = torch::zeros({options.bootstrapSamples, S}, torch::kFloat64);
    auto w = weights.accessor<double, 2>();
    for (int b = 0; b < options.bootstrapSamples; ++b)
      for (int64_t i = 0; i < S; ++i) w[b][static_cast<int64_t>(random.below(S))] += 1.0;
    const torch::Tensor error = weights.matmul(headSums[0]), effect = weights.matmul(headSums[1]);
    // As nmaeOf: an error with no effect to divide it by is infinite (x/0), not 0; 0 where both are 0.
    const torch::Tensor perHead =
        (100.0 * error / effect).masked_fill_(effect.le(0).logical_and(error.le(0)), 0.0);
    const std::vector<float> overall = toVector(perHead.mean(1));
    r.overallLow = quantile(overall, 0.025);
    r.overallHigh = quantile(overall, 0.975);
  } else {  // no resamples or too few sequences, no interval (null in the JSON)
    r.overallLow = r.overallHigh = std::nan("");
  }
  return r;
}

nlohmann::json toJson(const AttributionResult& r) {
  auto component = [](const ComponentAttribution& c) {
    return nlohmann::json{{"name", c.name},
                          {"layer", c.layer},
                          {"head", c.head},
                          {"mean_abs_dla", c.meanAbsDla},
                          {"mean_abs_de", c.meanAbsDe},
                          {"mean_abs_error", c.meanAbsError},
                          {"nmae_percent", c.nmae}};
  };
  nlohmann::json heads = nlohmann::json::array(), others = nlohmann::json::array();
  for (const auto& c : r.headAttributions) heads.push_back(component(c));
  for (const auto& c : r.others) others.push_back(component(c));
  return {{"header", toJson(r.header)},
          {"layers", r.layers},
          {"heads", r.heads},
          {"overall_nmae_percent", r.overallNmae},
          // null, not a NaN number, where there is none: the object equals what its text reads back as
          {"overall_nmae_interval95", std::isnan(r.overallLow)
                                          ? nlohmann::json::array({nullptr, nullptr})
                                          : nlohmann::json::array({r.overallLow, r.overallHigh})},
          {"decomposition_error", r.decompositionError},
          {"head_attributions", heads},
          {"other_components", others},
          {"trace",
           {{"layer", r.trace.layer},
            {"head", r.trace.head},
            {"sequence", r.trace.sequence},
            {"tokens", r.trace.tokens},
            {"dla", r.trace.dla},
            {"de", r.trace.de}}}};
}

AttributionResult attributionResultFromJson(const nlohmann::json& result) {
  return readJson(result, "analysis result", [](const JsonIn& j) {
    auto component = [](const JsonIn& c) {
      ComponentAttribution a;
      a.name = c["name"].text();
      a.layer = c["layer"].whole<int>();
      a.head = c["head"].whole<int>();
      a.meanAbsDla = c["mean_abs_dla"].real();
      a.meanAbsDe = c["mean_abs_de"].real();
      a.meanAbsError = c["mean_abs_error"].real();
      a.nmae = c["nmae_percent"].real();
      return a;
    };
    AttributionResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.layers = j["layers"].whole<int>();
    r.heads = j["heads"].whole<int>();
    r.overallNmae = j["overall_nmae_percent"].real();
    const std::array<double, 2> interval = j["overall_nmae_interval95"].realArray<2>();
    r.overallLow = interval[0];
    r.overallHigh = interval[1];
    r.decompositionError = j["decomposition_error"].real();
    r.headAttributions = j["head_attributions"].list(component);
    j["head_attributions"].requireSize(int64_t{r.layers} * r.heads, "layers × heads");
    r.others = j["other_components"].list(component);
    const JsonIn t = j["trace"];
    r.trace.layer = t["layer"].whole<int>();
    r.trace.head = t["head"].whole<int>();
    r.trace.sequence = t["sequence"].whole<int64_t>();
    r.trace.tokens = t["tokens"].wholes<int32_t>();
    r.trace.dla = t["dla"].reals();
    r.trace.de = t["de"].reals();
    t["de"].requireSize(static_cast<int64_t>(r.trace.dla.size()), "the number of \"dla\" values");
    return r;
  });
}

}  // namespace nf
