#include "analysis/logit_lens.h"

#include <torch/torch.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "analysis/analysis_kernels.h"
#include "io/json_read.h"
#include "model/causal_lm.h"
#include "model/norm.h"

namespace nf {
namespace {

constexpr SiteId kFinal{SiteKind::Final, -1};

// What LN_f reads and applies, for a residual of the batch (NormInputs refers to `w`: keep it alive).
NormInputs finalNormInputs(const CausalLMImpl& model, const CausalLMImpl::NormWeights& w,
                           const torch::Tensor& x, const torch::Tensor& tokens) {
  return {x, w.gamma, w.beta, model.config().layerNormEpsilon, 1, &tokens, model.config().eotTokenId};
}

// The mean over the analysed tokens, position 0 and end-of-text excluded (as the auxiliary loss's σ̂), of
// the divisor LN_f applies to the final residual.
double meanFinalDivisor(CausalLMImpl& model, const TokenSequences& data, int64_t batch,
                        const ProgressFn& progress) {
  const int L = model.config().nLayer;
  const CausalLMImpl::NormWeights weights = model.normWeights(kFinal);
  double sum = 0, all = 0;
  int64_t count = 0, allCount = 0;
  forEachBatch(
      data, batch, model.device(),
      [&](const torch::Tensor& tokens, int64_t) {
        HookSet hooks;
        hooks.cache(HookPoint::residPost(L - 1));
        model.finalHidden(tokens, &hooks);
        const torch::Tensor x = hooks.at(HookPoint::residPost(L - 1));
        const torch::Tensor divisor =
            normDivisor(model.norms().at(kFinal), finalNormInputs(model, weights, x, tokens))
                .to(torch::kFloat64)
                .expand({tokens.size(0), tokens.size(1)});
        torch::Tensor counted = tokens != model.config().eotTokenId;
        counted.select(1, 0).fill_(false);
        sum += divisor.masked_select(counted).sum().item<double>();
        count += counted.sum().item<int64_t>();
        all += divisor.sum().item<double>();
        allCount += divisor.numel();
      },
      progress, "logit lens: the final scale");
  return count > 0 ? sum / static_cast<double>(count) : all / static_cast<double>(allCount);
}

std::vector<int64_t> longs(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kCPU, torch::kLong).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

struct Accumulator {
  double ce = 0, kl = 0, probability = 0, top1 = 0;
  std::vector<int64_t> ranks;
  LensFigures figures() const {
    const double n = static_cast<double>(std::max<size_t>(ranks.size(), 1));
    std::vector<int64_t> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    const size_t m = sorted.size();
    const double median =
        m == 0 ? 0 : (m % 2 ? double(sorted[m / 2]) : 0.5 * double(sorted[m / 2 - 1] + sorted[m / 2]));
    return {ce / n, kl / n, probability / n, median, top1 / n};
  }
};

}  // namespace

const char* lensModeName(LensMode mode) {
  switch (mode) {
    case LensMode::Recomputed:
      return "recomputed";
    case LensMode::Frozen:
      return "frozen";
    default:
      return "linear";
  }
}

LogitLensResult logitLens(const ModelSnapshot& snapshot, const TokenSequences& data,
                          const LogitLensOptions& options, const ProgressFn& progress) {
  CausalLMImpl& model = snapshot.model();
  const int L = model.config().nLayer;
  const int64_t T = data.length, D = model.config().nEmbd;
  if (options.traceSequence < 0 || options.traceSequence >= data.count)
    throw std::invalid_argument("the trace sequence " + std::to_string(options.traceSequence) +
                                " is not among the " + std::to_string(data.count) + " sequences");
  // The cached residuals (L + 1 of them) bound the batch.
  const int64_t batch = std::clamp<int64_t>((int64_t{1} << 26) / std::max<int64_t>(T * D * (L + 1), 1), 1, 8);
  torch::NoGradGuard noGrad;
  const torch::Tensor unembedding = model.unembedding();
  const CausalLMImpl::NormWeights weights = model.normWeights(kFinal);
  const int64_t V = unembedding.size(0);
  const int top = static_cast<int>(std::min<int64_t>(options.top, V));
  const int64_t rowsPerChunk = std::max<int64_t>(1, options.logitBudget / V);

  LogitLensResult r;
  r.finalNorm = normKindName(model.norms().at(kFinal).kind);
  const bool perToken = dividesPerToken(model.norms().at(kFinal));
  if (perToken) r.linearDivisor = meanFinalDivisor(model, data, batch, progress);

  std::vector<std::array<Accumulator, kLensModes>> sums(L + 1);
  LensTrace& trace = r.trace;
  trace.sequence = options.traceSequence;
  trace.positions = std::min(T, options.tracePositions);
  trace.top = top;
  const int64_t traced = std::min(T, trace.positions + 1);  // the traced tokens and the one after
  trace.tokens.assign(data.row(trace.sequence), data.row(trace.sequence) + traced);
  trace.points.resize(L + 1);

  forEachBatch(
      data, batch, model.device(),
      [&](const torch::Tensor& tokens, int64_t first) {
        const int64_t B = tokens.size(0);
        HookSet hooks;
        for (int l = 0; l < L; ++l) hooks.cache(HookPoint::residPre(l));
        hooks.cache(HookPoint::residPost(L - 1));
        const torch::Tensor modelHidden = model.finalHidden(tokens, &hooks).reshape({B * T, D});
        const SiteNorm& finalNorm = model.norms().at(kFinal);
        const torch::Tensor finalResidual = hooks.at(HookPoint::residPost(L - 1));
        const torch::Tensor frozenDivisor =
            normDivisor(finalNorm, finalNormInputs(model, weights, finalResidual, tokens));
        const torch::Tensor linearDivisor =
            perToken ? torch::full_like(frozenDivisor, r.linearDivisor) : torch::Tensor();
        // The next token of every position; −1 at the last, which has none.
        const torch::Tensor targets =
            torch::cat({tokens.slice(1, 1), torch::full({B, 1}, -1, tokens.options())}, 1).reshape({-1});
        const int64_t traceRow = trace.sequence - first;
        const bool tracing = traceRow >= 0 && traceRow < B;

        for (int p = 0; p <= L; ++p) {
          const torch::Tensor& x = hooks.at(p < L ? HookPoint::residPre(p) : HookPoint::residPost(L - 1));
          const NormInputs in = finalNormInputs(model, weights, x, tokens);
          const torch::Tensor own = normDivisor(finalNorm, in);
          const std::array<torch::Tensor, kLensModes> divisors{own, frozenDivisor,
                                                               perToken ? linearDivisor : own};
          std::array<torch::Tensor, kLensModes> hidden;
          for (int m = 0; m < kLensModes; ++m)
            hidden[m] = normalizeBy(finalNorm, in, divisors[m]).reshape({B * T, D});

          for (int64_t row0 = 0; row0 < B * T; row0 += rowsPerChunk) {
            const int64_t n = std::min(rowsPerChunk, B * T - row0);
            const torch::Tensor target = targets.slice(0, row0, row0 + n);
            const torch::Tensor valid = target >= 0;
            const torch::Tensor safeTarget = target.clamp_min(0).unsqueeze(1);
            const torch::Tensor modelLogp =
                torch::log_softmax(torch::matmul(modelHidden.slice(0, row0, row0 + n), unembedding.t()), -1);
            // The traced sequence's rows in this chunk, as positions.
            const int64_t traceFirst = std::max(row0, traceRow * T),
                          traceEnd = std::min(row0 + n, traceRow * T + trace.positions);
            for (int m = 0; m < kLensModes; ++m) {
              const torch::Tensor logits = torch::matmul(hidden[m].slice(0, row0, row0 + n), unembedding.t());
              const torch::Tensor logp = torch::log_softmax(logits, -1);
              const torch::Tensor targetLogp = logp.gather(1, safeTarget).squeeze(1);
              const torch::Tensor rank =
                  (logits > logits.gather(1, safeTarget)).sum(1) + 1;  // 1 = the lens's top token
              const torch::Tensor kl =
                  (modelLogp.exp() * (modelLogp - logp)).sum(1).clamp_min(0);  // ≥ 0 but for rounding
              Accumulator& acc = sums[p][m];
              acc.ce -= targetLogp.masked_select(valid).sum().item<double>();
              acc.probability += targetLogp.exp().masked_select(valid).sum().item<double>();
              acc.kl += kl.masked_select(valid).sum().item<double>();
              const std::vector<int64_t> ranks = longs(rank.masked_select(valid));
              acc.top1 += static_cast<double>(std::count(ranks.begin(), ranks.end(), 1));
              acc.ranks.insert(acc.ranks.end(), ranks.begin(), ranks.end());
              if (!tracing || traceFirst >= traceEnd) continue;
              const torch::Tensor rows = logp.slice(0, traceFirst - row0, traceEnd - row0);
              const auto [topLogp, topIds] = rows.topk(top, 1);
              LensGrid& grid = trace.points[p][m];
              for (int64_t id : longs(topIds)) grid.topIds.push_back(static_cast<int32_t>(id));
              const std::vector<double> probabilities = toDoubles(topLogp.exp());
              grid.topProbabilities.insert(grid.topProbabilities.end(), probabilities.begin(),
                                           probabilities.end());
              const torch::Tensor hasTarget = valid.slice(0, traceFirst - row0, traceEnd - row0);
              const std::vector<double> targetProbability = toDoubles(
                  targetLogp.slice(0, traceFirst - row0, traceEnd - row0).exp().masked_select(hasTarget));
              grid.targetProbability.insert(grid.targetProbability.end(), targetProbability.begin(),
                                            targetProbability.end());
              const std::vector<int64_t> tracedRanks =
                  longs(rank.slice(0, traceFirst - row0, traceEnd - row0).masked_select(hasTarget));
              grid.targetRank.insert(grid.targetRank.end(), tracedRanks.begin(), tracedRanks.end());
            }
          }
        }
      },
      progress, "logit lens");

  r.header = makeHeader("logit_lens", snapshot, data.source, data.count, data.length);
  for (int p = 0; p <= L; ++p) {
    LensPoint point{p < L ? HookPoint::residPre(p).name() : "final", {}};
    for (int m = 0; m < kLensModes; ++m) point.modes[m] = sums[p][m].figures();
    r.points.push_back(std::move(point));
  }
  return r;
}

namespace {

nlohmann::json figuresJson(const LensFigures& f) {
  return {{"ce", f.ce},
          {"kl", f.kl},
          {"probability", f.probability},
          {"median_rank", f.medianRank},
          {"top1", f.top1}};
}

LensFigures figuresFromJson(const JsonIn& j) {
  return {j["ce"].real(), j["kl"].real(), j["probability"].real(), j["median_rank"].real(), j["top1"].real()};
}

// A positions × top list as rows of `top` values.
template <class T>
nlohmann::json rowsOf(const std::vector<T>& values, int top) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i + top <= values.size(); i += top)
    rows.push_back(std::vector<T>(values.begin() + i, values.begin() + i + top));
  return rows;
}

template <class T>
std::vector<T> flatRows(const JsonIn& rows, int top, T (*read)(const JsonIn&)) {
  std::vector<T> out;
  for (const std::vector<T>& row : rows.list([&](const JsonIn& r) {
         r.requireSize(top, "top");
         return r.list(read);
       }))
    out.insert(out.end(), row.begin(), row.end());
  return out;
}

}  // namespace

nlohmann::json toJson(const LogitLensResult& r) {
  nlohmann::json layers = nlohmann::json::array(), tracePoints = nlohmann::json::array();
  for (size_t p = 0; p < r.points.size(); ++p) {
    nlohmann::json entry = {{"point", r.points[p].point}, {"ce", r.points[p].modes[0].ce}};
    nlohmann::json traced = {{"point", r.points[p].point}};
    for (int m = 0; m < kLensModes; ++m) {
      const char* mode = lensModeName(static_cast<LensMode>(m));
      entry[mode] = figuresJson(r.points[p].modes[m]);
      const LensGrid& g = r.trace.points[p][m];
      traced[mode] = {{"top_ids", rowsOf(g.topIds, r.trace.top)},
                      {"top_probabilities", rowsOf(g.topProbabilities, r.trace.top)},
                      {"target_probability", g.targetProbability},
                      {"target_rank", g.targetRank}};
    }
    layers.push_back(entry);
    tracePoints.push_back(traced);
  }
  nlohmann::json texts = nlohmann::json::object();
  for (const auto& [id, text] : r.trace.texts) texts[std::to_string(id)] = text;
  return {{"header", toJson(r.header)},
          {"modes", {"recomputed", "frozen", "linear"}},
          {"final_norm", r.finalNorm},
          {"linear_divisor", r.linearDivisor},
          {"layers", layers},
          {"trace",
           {{"sequence", r.trace.sequence},
            {"positions", r.trace.positions},
            {"top", r.trace.top},
            {"tokens", r.trace.tokens},
            {"points", tracePoints},
            {"texts", texts}}}};
}

LogitLensResult logitLensResultFromJson(const nlohmann::json& result) {
  LogitLensResult r = readJson(result, "analysis result", [](const JsonIn& j) {
    LogitLensResult r;
    r.header = analysisHeaderFromJson(j["header"]);
    r.finalNorm = j["final_norm"].text();
    r.linearDivisor = j["linear_divisor"].real();
    r.points = j["layers"].list([](const JsonIn& e) {
      LensPoint p{e["point"].text(), {}};
      for (int m = 0; m < kLensModes; ++m) p.modes[m] = figuresFromJson(e[lensModeName(LensMode(m))]);
      return p;
    });
    const JsonIn t = j["trace"];
    LensTrace& trace = r.trace;
    trace.sequence = t["sequence"].whole<int64_t>();
    trace.positions = t["positions"].whole<int64_t>();
    trace.top = t["top"].whole<int>();
    trace.tokens = t["tokens"].wholes<int32_t>();
    const JsonIn points = t["points"];
    points.requireSize(static_cast<int64_t>(r.points.size()), "layers");
    const int top = trace.top;
    trace.points = points.list([top](const JsonIn& e) {
      std::array<LensGrid, kLensModes> grids;
      for (int m = 0; m < kLensModes; ++m) {
        const JsonIn g = e[lensModeName(LensMode(m))];
        grids[m].topIds =
            flatRows<int32_t>(g["top_ids"], top, [](const JsonIn& x) { return x.whole<int32_t>(); });
        grids[m].topProbabilities =
            flatRows<double>(g["top_probabilities"], top, [](const JsonIn& x) { return x.real(); });
        grids[m].targetProbability = g["target_probability"].reals();
        grids[m].targetRank = g["target_rank"].wholes<int64_t>();
      }
      return grids;
    });
    // The shapes the window indexes by (a served run's result, of another build perhaps): the traced tokens
    // and one after, a row of `top` per position, a target for each position that has one.
    const auto positions = static_cast<std::size_t>(std::max<int64_t>(trace.positions, 0));
    bool fits = !r.points.empty() && top >= 1 && trace.positions >= 0 && trace.tokens.size() >= positions &&
                trace.tokens.size() <= positions + 1;
    for (const auto& grids : trace.points)
      for (const LensGrid& g : grids)
        fits = fits && g.topIds.size() == positions * top && g.topProbabilities.size() == g.topIds.size() &&
               g.targetRank.size() == g.targetProbability.size() && g.targetRank.size() <= positions;
    if (!fits)
      throw std::invalid_argument("analysis result: the logit lens's trace does not fit its " +
                                  std::to_string(trace.positions) + " positions, " + std::to_string(top) +
                                  " top tokens and " + std::to_string(r.points.size()) + " layers");
    return r;
  });
  // The token texts a caller added, by id (ids that are not numbers are not ours and are skipped).
  const auto trace = result.find("trace");
  if (trace != result.end() && trace->is_object() && trace->contains("texts") &&
      (*trace)["texts"].is_object())
    for (const auto& [key, text] : (*trace)["texts"].items()) {
      int32_t id = -1;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (error == std::errc() && end == key.data() + key.size() && text.is_string())
        r.trace.texts[id] = text;
    }
  return r;
}

}  // namespace nf
