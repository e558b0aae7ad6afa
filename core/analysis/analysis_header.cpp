#include "analysis/analysis_header.h"

#include <nlohmann/json.hpp>

#include "eval/loss_summary.h"

namespace nf {

AnalysisHeader makeHeader(const std::string& analysis, const ModelSnapshot& snapshot, const std::string& data,
                          int64_t sequences, int64_t length) {
  return {analysis, snapshot.source(), snapshot.step(), snapshot.normSummary(), data, sequences, length};
}

nlohmann::json toJson(const AnalysisHeader& h) {
  return {{"analysis", h.analysis}, {"model", h.model},         {"step", h.step},    {"norms", h.norms},
          {"data", h.data},         {"sequences", h.sequences}, {"length", h.length}};
}

Spread spreadOf(std::vector<float> values) {
  Spread s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (float v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.median = quantile(values, 0.5);
  s.p10 = quantile(values, 0.1);
  s.p90 = quantile(std::move(values), 0.9);
  return s;
}

nlohmann::json toJson(const Spread& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p10", s.p10}, {"p90", s.p90}};
}

}  // namespace nf
