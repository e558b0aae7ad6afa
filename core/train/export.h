// Turning a FakeLN model into an LN-free model others can use (PROTOCOL §5).
#pragma once
#include <string>

#include "model/causal_lm.h"

namespace nf {

// Every family exports through its components (CausalLMImpl::normWeights, readersOf, residualWriters).
//
// (a) Folded: every block site becomes the identity, its γ/s folded into the maps that read it (LN_qk into
// the query and key projections, LN_v into the value projection, LN_mlp into the MLP's input projections)
// and its β into their biases. In a LayerNorm family the writers to the residual (embeddings, W_O, b_O,
// W_out, b_out) are centred so the residual is zero-mean and FakeLN's centring is the identity, and the
// unembedding is untied (the centred token embedding only embeds); FakeRMSNorm does not centre, so an
// RMSNorm family keeps its weights' means and its tying. LN_f stays a fixed linear map (x/s·γ + β),
// because these families have no logit bias to fold β·W_U into. Throws std::invalid_argument unless every
// site is fake (FakeLN or FakeRMSNorm) with no special treatment or ramp in effect.
CausalLM foldLayerNorms(CausalLMImpl& fake);

// (b) The family's standard format: every norm stays its family's own (LayerNorm or RMSNorm) with
// γ' = γ·10⁶/s and ε = 10¹², so sqrt(Var + 10¹²) ≈ 10⁶ (likewise sqrt(mean x² + 10¹²)) and it computes
// x̂/s·γ + β to a relative error of about Var/(2·10¹²). The attention norm's one γ carries LN_qk's s; the
// value projection absorbs s_qk/s_v. Loads in the family's Hugging Face class without custom code. The
// weights overflow float16. Same preconditions as foldLayerNorms.
CausalLM standardFormatWithHugeEpsilon(CausalLMImpl& fake);

// Largest |γ'| of the standard-format model, to warn about float16 (max 65504).
double largestNormWeight(CausalLMImpl& model);

inline constexpr int64_t kComparedSequences = 8;  // the export's logit comparison: sequences of ≤ 128 tokens

// What `normfree-cli export` made of an LN-free model folder.
struct ExportedModel {
  std::string folded, standard;  // the two folders written
  double foldedDifference = 0;   // the largest |logit difference| from the LN-free model
  double standardDifference = 0;
  int64_t comparedTokens = 0;
  double largestStandardNormWeight = 0;  // above 65504 the standard form overflows float16
};

// Writes <out>/folded and <out>/standard (each with the source's tokenizer files) of the LN-free model in
// `folder`, and compares each one's logits with the source's on the first kComparedSequences chunks of up
// to 128 tokens of `tokenFile` (as many as it holds), or on as many of random tokens when it is empty. Each
// folder appears whole or not at all: written under a temporary name, then renamed over any previous export.
// std::runtime_error naming the folder when it is not LN-free.
ExportedModel exportLayerNormFree(const std::string& folder, const std::string& out,
                                  const std::string& tokenFile, const torch::Device& device);

}  // namespace nf
