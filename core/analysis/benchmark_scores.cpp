#include "analysis/benchmark_scores.h"

#include "analysis/analysis_header.h"
#include "eval/benchmark.h"

namespace nf {

nlohmann::json benchmarkOnSnapshot(const ModelSnapshot& snapshot, const Tokenizer& tokenizer,
                                   const BenchmarkData& data, const ProgressFn& progress) {
  if (tokenizer.vocabSize() > snapshot.config().shape.vocabSize)
    throw std::invalid_argument("the tokenizer has " + std::to_string(tokenizer.vocabSize()) +
                                " tokens, the model only " +
                                std::to_string(snapshot.config().shape.vocabSize));
  nlohmann::json j = toJson(scoreBenchmark(snapshot.model(), tokenizer, data, {}, progress), data, true);
  j["header"] =
      toJson(makeHeader("benchmark", snapshot, data.file, static_cast<int64_t>(data.items.size()), 0));
  return j;
}

}  // namespace nf
