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

// Mean, median and 10th / 90th percentiles of a set of values.
struct Spread {
  int64_t count = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0;
};
Spread spreadOf(std::vector<float> values);
nlohmann::json toJson(const Spread& spread);

}  // namespace nf
