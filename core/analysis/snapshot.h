// What every analysis runs on: a consistent, read-only copy of a model (from disk, or taken from a
// running trainer between two optimizer steps) and the token sequences it reads. Plain C++ (no torch), so
// the GUI can hold snapshots and results; analyses reach the model through model() in engine code.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/config.h"

namespace nf {

class GPT2Impl;

class ModelSnapshot {
 public:
  // A model folder, a run directory (its final model) or a checkpoint folder (its step is read from
  // state.json). device: "cpu", "cuda", "cuda:1". Errors name the folder and the problem.
  static std::shared_ptr<const ModelSnapshot> load(const std::string& folder,
                                                   const std::string& device = "cpu");
  // A copy of `model` (weights and norm state; nothing trains it, no parameter needs gradients) labelled
  // with the optimizer steps it has seen (-1: unknown) and where it came from.
  static std::shared_ptr<const ModelSnapshot> copyOf(GPT2Impl& model, int64_t step,
                                                     const std::string& source);
  ~ModelSnapshot();

  int64_t step() const { return m_step; }
  const std::string& source() const { return m_source; }
  const ModelConfig& config() const { return m_config; }
  std::string label() const;        // "runs/a at step 400"
  std::string normSummary() const;  // "LayerNorm", "LN-free (FakeLN at all 13 sites)", "5 of 13 sites FakeLN"
  GPT2Impl& model() const;          // engine code only; analyses never change it

 private:
  ModelSnapshot() = default;
  struct Holder;
  std::unique_ptr<Holder> m_model;
  int64_t m_step = -1;
  std::string m_source;
  ModelConfig m_config;
};

using SnapshotPtr = std::shared_ptr<const ModelSnapshot>;

// Token sequences of equal length, with a description of where they came from.
struct TokenSequences {
  std::string source;  // "val.bin: 16 chunks × 128 tokens from token 0"
  int64_t count = 0, length = 0;
  std::vector<int32_t> tokens;  // count × length, row-major
  const int32_t* row(int64_t i) const { return tokens.data() + i * length; }
};
// The first `count` consecutive, non-overlapping chunks of `length` tokens of a token file (fewer when the
// file is shorter; an error when it holds not even one). Ids must fit the vocabulary (checked by the model).
TokenSequences readSequences(const std::string& tokenFile, int64_t count, int64_t length);

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
