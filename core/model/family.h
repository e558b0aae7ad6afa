// A model family: its module, and its Hugging Face layout — which config.json is its own, how the shape reads
// from and writes to it, which tensors the weights hold (names and shapes, in the order the family's module
// registers them) and which stored names are no parameters (buffers older checkpoints carry). The registry
// (modelFamilies) is the only place that lists the families. Plain C++ (the module is only declared): model
// folders are read and written through it by the CLI and the GUI too. The family's module and these
// functions live in one file, model/<family>.cpp; to add a family, write that file and list it in family.cpp.
#pragma once
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"

namespace nf {

class CausalLMImpl;

// The MLP of a block: GELU(x·W_in)·W_out (GPT-2, GPT-NeoX), or SwiGLU, (SiLU(x·W_gate) ⊙ x·W_up)·W_down
// (LLaMA, Qwen2), with three matrices and more activations to keep.
enum class MlpKind { Gelu, SwiGlu };

// A published model's shape, for planning without its folder (`plan --shape`).
struct StandardShape {
  std::string name;  // as the model is known: "gpt2-xl", "pythia-1b", "smollm2-135m" …
  ModelShape shape;
};

struct ModelFamily {
  std::string name;  // ModelShape::family and Hugging Face's model_type: "gpt2", "gpt_neox", "llama", "qwen2"
  NormKind norm;     // the family's own normalization at every site: LayerNorm or RMSNorm
  MlpKind mlp;
  // The family's module (model/<family>.h), its weights initialised or left for a loader to fill. (Null
  // in the fuzzers' build, which links the config readers without LibTorch: NF_MODULE below.)
  std::shared_ptr<CausalLMImpl> (*make)(const ModelShape& shape, bool initialize);
  // config.json is this family's (its model_type or architectures say so).
  bool (*claims)(const nlohmann::json& config);
  // Sets the building blocks to the family's defaults, as its Hugging Face config class has them (sizes
  // untouched): for models created from scratch.
  void (*applyDefaults)(ModelShape& shape);
  // Reads the shape's fields from config.json; throws FileError(source, …) for missing, malformed or
  // unsupported settings, naming them.
  void (*readShape)(const nlohmann::json& config, ModelShape& shape, const std::string& source);
  // Writes the fields Hugging Face's class for this family needs to load the folder without custom code.
  void (*writeShape)(const ModelShape& shape, nlohmann::ordered_json& config);
  std::vector<ParameterShape> (*parameterShapes)(const ModelShape& shape);  // the token embedding first
  // The parameter a stored tensor name holds, or "" for stored tensors that are no parameters.
  std::string (*canonicalName)(const std::string& storedName);
  // The base model's prefix that the family's save_pretrained writes before the names of the base model's
  // tensors ("transformer." for GPT-2: its head, lm_head, has none); "" for families whose names are
  // always whole. canonicalName strips it.
  const char* basePrefix;
  // The family's published models of up to a few billion parameters.
  std::vector<StandardShape> (*standardShapes)();
};

// A family's `make`, as its ModelFamily constant names it: the fuzzers compile the family files with
// NF_FAMILY_CONFIG_ONLY (tests/fuzz/CMakeLists.txt), where no module may be reached.
#ifdef NF_FAMILY_CONFIG_ONLY
#define NF_MODULE(make) nullptr
#else
#define NF_MODULE(make) make
#endif

// Reads a family's config.json fields strictly: a field of the wrong type (n_head 1.5 or true, a number
// beyond int) or a missing required one is a FileError naming the file and the field.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& config, std::string source)
      : m_config(config), m_source(std::move(source)) {}
  template <typename T>
  T required(const char* key) const;
  // Absent: the fallback. Null: false for a flag (transformers keeps None, which its models test as false);
  // refused for a number (transformers keeps None there too, and its model cannot compute with it: a norm's
  // epsilon of None fails at the first forward), so no default stands in for a value the file lost.
  template <typename T>
  T optional(const char* key, T fallback) const;
  // A number whose None its config class replaces by the default (GPT-2's n_inner, LLaMA's
  // num_key_value_heads): absent or null, the fallback.
  template <typename T>
  T nullable(const char* key, T fallback) const;
  // A count Hugging Face also reads under another name (a config class's attribute_map: GPT-2's
  // num_attention_heads for n_head): either, or both when they agree (which one transformers takes depends
  // on the order it sets them: disagreeing, they are refused by name). nullopt when neither is there.
  std::optional<int> either(const char* key, const char* alias) const;
  // eos_token_id (an id, or a list whose first id counts); without one, the family's default where its
  // transformers config class has one (LLaMA's and GPT-NeoX's 2), else the vocabulary's last id.
  int endOfText(int vocabSize, std::optional<int> familyDefault = std::nullopt) const;
  // The field, when present, must be `value`; else the error says what the family implements (`why`).
  void requireValue(const char* key, const std::string& value, const std::string& why) const;
  // A rotary setting wherever the config's writer put it: one of `keys` (a family's older names first), or
  // rope_parameters.<parameter> as transformers 5 writes it; `fallback` when none is. Names disagreeing
  // values, and refuses scaled rotary embeddings (rope_scaling, or a rope_type other than "default") and
  // rope_parameters it does not know, each by name: read wrongly they would give wrong logits silently.
  double rotary(std::initializer_list<const char*> keys, const char* parameter, double fallback) const;
  const std::string& source() const { return m_source; }

 private:
  const nlohmann::json& m_config;
  std::string m_source;
};

const std::vector<const ModelFamily*>& modelFamilies();
// The norm state of a model of this shape as its family trained it (every site its own normalization).
NormState nativeNorms(const ModelShape& shape);
// The family of a shape; throws std::invalid_argument for a name no family has.
const ModelFamily& familyNamed(const std::string& name);
// A published model's shape by its name (any family's); throws std::invalid_argument listing the names.
ModelShape standardShape(const std::string& name);
std::vector<std::string> standardShapeNames();
// The family that claims config.json; throws FileError(source, …) naming its model_type otherwise.
// A model_type "normfree_<family>" is that family's, with norms other than its own (kNormFreeModelType).
const ModelFamily& familyOfConfig(const nlohmann::json& config, const std::string& source);
// The model_type prefix of a model whose norms are not its family's own — a removal's checkpoints and
// final/, a folded export: transformers' Auto classes, which would run the family's norms on it and give
// other logits without a word, refuse the type they do not know (the family's class named directly only
// warns). The standard export is the family's own.
inline constexpr const char* kNormFreeModelType = "normfree_";

}  // namespace nf
