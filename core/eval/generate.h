// Prompt → continuation, deterministic for a seed: sampling uses the portable nf::Random on the CPU in
// double precision, so the same seed gives the same text on every machine and device.
#pragma once
#include <cstdint>
#include <vector>

#include "model/causal_lm.h"
#include "util/random.h"

namespace nf {

struct GenerationOptions {
  int64_t maxNewTokens = 50;
  double temperature = 1.0;  // 0: greedy (ties go to the lowest id)
  int64_t topK = 0;          // 0: the whole vocabulary
  // Nucleus sampling (transformers' top_p, applied after temperature and top k): the most likely tokens
  // whose probabilities first sum to at least topP; 1: all.
  double topP = 1.0;
  uint64_t seed = 0;
  bool stopAtEndOfText = true;
  std::vector<int32_t> otherStopIds;  // more end-of-sequence ids that stop it (config.json's list)
};

// Returns only the new tokens. The prompt is cropped to the model's context from the left as it grows.
std::vector<int32_t> generate(CausalLMImpl& model, const std::vector<int32_t>& prompt,
                              const GenerationOptions& options);

// Samples one token id from logits [vocab] (any device) under the options; exposed for tests.
int32_t sampleToken(const torch::Tensor& logits, const GenerationOptions& options, Random& random);

}  // namespace nf
