// Turning a FakeLN model into an LN-free model others can use (PROTOCOL §5).
#pragma once
#include <string>

#include "model/causal_lm.h"

namespace nf {

// (a) Folded: every block site becomes the identity, its γ/s folded into the weights that read it
// (LN_qk into the Q/K columns of c_attn, LN_v into the V columns, LN_mlp into c_fc) and its β into their
// biases; the writers to the residual (wte, wpe, W_O, b_O, W_out, b_out) are centred so the residual is
// zero-mean and FakeLN's centring is the identity. The unembedding is untied (the centred wte only
// embeds); LN_f stays a fixed linear map (FakeLN on a zero-mean residual), because GPT-2 has no logit
// bias to fold β·W_U into. Throws std::invalid_argument unless every site is FakeLN with no special
// treatment or ramp in effect.
CausalLM foldLayerNorms(CausalLMImpl& fake);

// (b) Standard GPT-2: every LN stays a LayerNorm with γ' = γ·10⁶/s and ε = 10¹², so sqrt(Var + 10¹²)
// ≈ 10⁶ and it computes (x − μ)/s·γ + β to a relative error of about Var/(2·10¹²). ln_1's one γ carries
// LN_qk's s; the V columns of c_attn absorb s_qk/s_v. Loads in any GPT-2 implementation. The weights
// overflow float16. Same preconditions as foldLayerNorms.
CausalLM standardFormatWithHugeEpsilon(CausalLMImpl& fake);

// Largest |γ'| of the standard-format model, to warn about float16 (max 65504).
double largestNormWeight(CausalLMImpl& model);

}  // namespace nf
