// What every analysis result carries: where it came from (the snapshot's step and norm state, the data),
// and the summary statistics the analyses share. Plain C++, so the GUI can hold results.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "data/token_sequences.h"
#include "run/snapshot.h"

namespace nf {

class JsonIn;

// What a result says about its origin: the model's step and norm state, and the data.
struct AnalysisHeader {
  std::string analysis;  // "residual_norms", "attention_sinks", ...
  std::string model;     // the snapshot's source
  int64_t step = -1;
  std::string norms;  // normSummary()
  std::string data;   // TokenSequences::source or the prompt set
  int64_t sequences = 0, length = 0;
};
AnalysisHeader makeHeader(const std::string& analysis, const ModelSnapshot& snapshot, const std::string& data,
                          int64_t sequences, int64_t length);
nlohmann::json toJson(const AnalysisHeader& header);
// The inverse of toJson, for results computed elsewhere; every result's xxxFromJson reads the same way:
// extra keys are ignored, a missing or mistyped field throws std::invalid_argument naming its path, and
// every struct field is read unless its reader says otherwise. The JsonIn form reads a part of a larger
// result (errors name the path there).
AnalysisHeader analysisHeaderFromJson(const nlohmann::json& j);
AnalysisHeader analysisHeaderFromJson(const JsonIn& j);

// Mean, median and 10th / 90th percentiles of a set of values.
struct Spread {
  int64_t count = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0;
};
Spread spreadOf(std::vector<float> values);
nlohmann::json toJson(const Spread& spread);
Spread spreadFromJson(const nlohmann::json& j);  // as analysisHeaderFromJson
Spread spreadFromJson(const JsonIn& j);

}  // namespace nf
