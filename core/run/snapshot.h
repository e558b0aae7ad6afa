// A consistent, read-only copy of a model: loaded from a model folder, a run or a checkpoint, or taken from
// a running trainer between two optimizer steps. What every analysis runs on. Plain C++ (no torch), so the
// GUI can hold snapshots; engine code reaches the model through model().
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"

namespace nf {

class CausalLMImpl;

class ModelSnapshot {
 public:
  // A model folder, a run directory (its final model) or a checkpoint folder (its step is read from
  // state.json). device: "cpu", "cuda", "cuda:1". Errors name the folder and the problem.
  static std::shared_ptr<const ModelSnapshot> load(const std::string& folder,
                                                   const std::string& device = "cpu");
  // A copy of `model` (weights and norm state; nothing trains it, no parameter needs gradients) labelled
  // with the optimizer steps it has seen (-1: unknown) and where it came from.
  static std::shared_ptr<const ModelSnapshot> copyOf(CausalLMImpl& model, int64_t step,
                                                     const std::string& source);
  ~ModelSnapshot();

  int64_t step() const { return m_step; }
  const std::string& source() const { return m_source; }
  const ModelConfig& config() const { return m_config; }
  std::string label() const;        // "runs/a at step 400"
  std::string normSummary() const;  // "LayerNorm", "LN-free (FakeLN at all 13 sites)", "5 of 13 sites FakeLN"
  CausalLMImpl& model() const;      // engine code only; analyses never change it

 private:
  ModelSnapshot() = default;
  struct Holder;
  std::unique_ptr<Holder> m_model;
  int64_t m_step = -1;
  std::string m_source;
  ModelConfig m_config;
};

using SnapshotPtr = std::shared_ptr<const ModelSnapshot>;

}  // namespace nf
