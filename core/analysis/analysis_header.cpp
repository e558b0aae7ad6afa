#include "analysis/analysis_header.h"

#include <nlohmann/json.hpp>

#include "eval/loss_summary.h"
#include "io/file_format.h"
#include "io/json_read.h"

namespace nf {

AnalysisHeader makeHeader(const std::string& analysis, const ModelSnapshot& snapshot, const std::string& data,
                          int64_t sequences, int64_t length) {
  return {analysis, snapshot.source(), snapshot.step(), snapshot.normSummary(), data, sequences, length};
}

nlohmann::json toJson(const AnalysisHeader& h) {
  nlohmann::json j = formatHeader(kAnalysisFormat);
  j.update({{"analysis", h.analysis},
            {"model", h.model},
            {"step", h.step},
            {"norms", h.norms},
            {"data", h.data},
            {"sequences", h.sequences},
            {"length", h.length}});
  return j;
}

AnalysisHeader analysisHeaderFromJson(const nlohmann::json& j) {
  return readJson(j, "analysis result", [](const JsonIn& in) { return analysisHeaderFromJson(in); });
}

AnalysisHeader analysisHeaderFromJson(const JsonIn& j) {
  // A result of a newer build (a served run's, a saved file) is refused; one without "format" is version 1.
  if (j["format"].present()) {
    const std::string format = j["format"].text();
    const int version = j["version"].whole<int>();
    if (version < 1)  // as checkFileFormat refuses one of a file
      throw std::invalid_argument("analysis result: version " + std::to_string(version) +
                                  " is not a version (they count from 1)");
    if (format != kAnalysisFormat.name || version > kAnalysisFormat.version)
      throw std::invalid_argument("analysis result: is " + format + " version " + std::to_string(version) +
                                  ", but this build reads " + kAnalysisFormat.name + " up to version " +
                                  std::to_string(kAnalysisFormat.version) + " (from a newer build?)");
  }
  return {j["analysis"].text(),        j["model"].text(), j["step"].whole<int64_t>(),
          j["norms"].text(),           j["data"].text(),  j["sequences"].whole<int64_t>(),
          j["length"].whole<int64_t>()};
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

Spread spreadFromJson(const nlohmann::json& j) {
  return readJson(j, "analysis result", [](const JsonIn& in) { return spreadFromJson(in); });
}

Spread spreadFromJson(const JsonIn& j) {
  return {j["count"].whole<int64_t>(), j["mean"].real(), j["median"].real(), j["p10"].real(),
          j["p90"].real()};
}

}  // namespace nf
