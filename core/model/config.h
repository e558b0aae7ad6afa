// A model's shape and hyper-parameters (today GPT-2's), read from and written to a Hugging Face config.json.
// Our own additions (the norm state of every site) live under the "normfree" key, which
// Hugging Face ignores, so the file stays loadable by GPT2LMHeadModel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/norm_state.h"

namespace nf {

struct ModelShape {
  std::string family = "gpt2";  // model/family.h: how config.json and the weights are laid out
  int nLayer = 12;
  int nHead = 12;
  int nEmbd = 768;
  int nPositions = 1024;
  int vocabSize = 50257;
  double layerNormEpsilon = 1e-5;
  int eotTokenId = 50256;       // end-of-text ("eos_token_id"); used by the LN_v EOT treatment
  bool tiedUnembedding = true;  // "tie_word_embeddings": unembedding is wte.weight transposed

  int headDim() const { return nEmbd / nHead; }
  int64_t parameterCount() const;
  void validate(const std::string& source) const;  // throws FileError naming source and field
  bool operator==(const ModelShape& o) const;
};

struct ModelConfig {
  ModelShape shape;
  NormState norms;
  bool folded = false;  // LN-free with the FakeLN scales folded into the weights (normfree.folded)
};

ModelConfig parseConfigJson(const std::string& text, const std::string& source);
ModelConfig loadConfigFile(const std::string& path);
std::string configToJson(const ModelConfig& config);  // pretty-printed, Hugging Face compatible

struct ParameterShape {
  std::string name;  // the parameter's name in the module, e.g. GPT-2's "h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;
};

// Every parameter of a model of this shape, in the order its family's module registers them, named and
// laid out as Hugging Face stores them (model/family.h).
std::vector<ParameterShape> parameterShapes(const ModelShape& config);

}  // namespace nf
