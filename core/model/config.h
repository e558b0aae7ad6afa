// A model's shape and hyper-parameters, read from and written to a Hugging Face config.json by the model's
// family (model/family.h). The fields are the building blocks the families share; each family reads the
// ones it has and fixes the others. Our own additions (the norm state of every site) live under the
// "normfree" key, which Hugging Face ignores: a model with the family's own norms stays loadable by its
// class, one with other norms is typed "normfree_<family>" (kNormFreeModelType), which its Auto classes
// refuse (the standard export is the form for Hugging Face).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/norm_state.h"

namespace nf {

// The largest model the engine takes (about 1.1 T parameters): a bound on what a config.json may ask for.
inline constexpr int64_t kMaxParameters = int64_t{1} << 40;

// The ε of an LN-free model's standard form (train/export.h): its sites stay LayerNorm (or RMSNorm), for any
// reader of the format, but √ε = 10⁶ swamps every residual's variance, so each divides by that constant.
// A model whose ε is this large is LN-free whatever its sites are called.
inline constexpr double kLayerNormFreeEpsilon = 1e12;

struct ModelShape {
  std::string family = "gpt2";  // model/family.h: "gpt2", "gpt_neox", "llama" or "qwen2"
  int nLayer = 12;
  int nHead = 12;
  int nEmbd = 768;
  int nPositions = 1024;
  int vocabSize = 50257;
  double layerNormEpsilon = 1e-5;  // the norms' ε (LayerNorm's or RMSNorm's)
  int eotTokenId = 50256;          // end-of-text ("eos_token_id"); used by the LN_v EOT treatment
  bool tiedUnembedding = true;     // "tie_word_embeddings": the unembedding is the token embedding

  // Building blocks beyond GPT-2's (GPT-2 keeps these defaults).
  int nKvHead = 0;                  // key/value heads (grouped-query attention); 0: as many as nHead
  int mlpWidth = 0;                 // the MLP's hidden width ("intermediate_size"); 0: 4·nEmbd
  double rotaryFraction = 0;        // share of each head's dimensions rotated (RoPE); 0: learned positions
  double rotaryBase = 10000;        // RoPE's θ ("rope_theta", "rotary_emb_base")
  bool parallelResidual = false;    // attention and MLP both read the block's input (GPT-NeoX)
  bool qkvBias = true;              // the query, key and value projections have biases
  bool attentionOutputBias = true;  // the attention output projection has one
  bool mlpBias = true;              // the MLP's projections have them

  int headDim() const { return nEmbd / nHead; }
  int kvHeads() const { return nKvHead > 0 ? nKvHead : nHead; }
  int mlpHidden() const { return mlpWidth > 0 ? mlpWidth : 4 * nEmbd; }
  int rotaryDims() const;  // dimensions of each head that rotary embeddings rotate (even; 0 without RoPE)
  int64_t parameterCount() const;
  // Throws FileError naming source and field: a value out of range, or a shape beyond kMaxParameters.
  void validate(const std::string& source) const;
  bool operator==(const ModelShape& o) const;
};

struct ModelConfig {
  ModelShape shape;
  NormState norms;
  bool folded = false;  // LN-free with the FakeLN scales folded into the weights (normfree.folded)
};

// The norms in a phrase: "LayerNorm", "LN-free (FakeLN at all 13 sites)", "5 of 13 sites FakeLN, 2 ramping",
// "LN-free (standard form: LayerNorm with a huge ε)".
std::string normSummary(const ModelConfig& config);

ModelConfig parseConfigJson(const std::string& text, const std::string& source);
ModelConfig loadConfigFile(const std::string& path);
// Pretty-printed, Hugging Face compatible; torch_dtype says how the weights are stored (transformers loads
// in it with torch_dtype="auto").
std::string configToJson(const ModelConfig& config, const std::string& torchDtype = "float32");
// Every id config.json's eos_token_id names (LLaMA 3 Instruct lists several; ModelShape keeps the first):
// generation stops at any of them. Empty when it names none.
std::vector<int32_t> endOfSequenceIds(const std::string& configPath);
// A model saved from another (a run's result, an export) keeps that one's bos_token_id, eos_token_id (a
// list too) and pad_token_id, and no BOS id where it has none: configToJson writes the end-of-text id for
// the first two and no pad id.
// Rewrites toFolder's config.json atomically; fromFolder's config.json is read as it is.
void keepTokenIds(const std::string& fromFolder, const std::string& toFolder);

struct ParameterShape {
  std::string name;  // the parameter's name in the module, e.g. GPT-2's "h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;
};

// Every parameter of a model of this shape, in the order its family's module registers them, named and
// laid out as Hugging Face stores them (model/family.h).
std::vector<ParameterShape> parameterShapes(const ModelShape& config);

}  // namespace nf
