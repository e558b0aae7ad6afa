#include "model/config.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/file_format.h"

namespace nf {

int64_t ModelShape::parameterCount() const {
  int64_t count = 0;
  for (const ParameterShape& p : parameterShapes(*this)) {
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    count += n;
  }
  return count;
}

void ModelShape::validate(const std::string& source) const {
  auto positive = [&](int value, const char* key) {
    if (value <= 0)
      throw FileError(source, std::string(key) + " must be positive, got " + std::to_string(value));
  };
  positive(nLayer, "n_layer");
  positive(nHead, "n_head");
  positive(nEmbd, "n_embd");
  positive(nPositions, "n_positions");
  positive(vocabSize, "vocab_size");
  if (nEmbd % nHead != 0)
    throw FileError(source, "n_embd (" + std::to_string(nEmbd) + ") is not divisible by n_head (" +
                                std::to_string(nHead) + ")");
  if (!(layerNormEpsilon >= 0)) throw FileError(source, "layer_norm_epsilon must be non-negative");
  if (eotTokenId < 0 || eotTokenId >= vocabSize)
    throw FileError(source, "eos_token_id (" + std::to_string(eotTokenId) +
                                ") is outside the vocabulary of " + std::to_string(vocabSize));
}

bool ModelShape::operator==(const ModelShape& o) const {
  return nLayer == o.nLayer && nHead == o.nHead && nEmbd == o.nEmbd && nPositions == o.nPositions &&
         vocabSize == o.vocabSize && layerNormEpsilon == o.layerNormEpsilon && eotTokenId == o.eotTokenId &&
         tiedUnembedding == o.tiedUnembedding;
}

namespace {

nlohmann::ordered_json siteToJson(const SiteNorm& n) {
  nlohmann::ordered_json j = {{"kind", normKindName(n.kind)}};
  if (n.kind == NormKind::FakeLN) {
    j["scale"] = n.scale;
    if (n.pos0Treatment || n.eotTreatment) j["scale_pos0"] = n.scalePos0;
    if (n.pos0Treatment) j["pos0_treatment"] = true;
    if (n.eotTreatment) j["eot_treatment"] = true;
    if (n.realMix > 0) j["real_mix"] = n.realMix;
  }
  return j;
}

SiteNorm siteFromJson(const nlohmann::json& j) {
  SiteNorm n;
  n.kind = parseNormKind(j.at("kind").get<std::string>());
  n.scale = j.value("scale", 1.0);
  n.scalePos0 = j.value("scale_pos0", 1.0);
  n.pos0Treatment = j.value("pos0_treatment", false);
  n.eotTreatment = j.value("eot_treatment", false);
  n.realMix = j.value("real_mix", 0.0);
  return n;
}

}  // namespace

ModelConfig parseConfigJson(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw FileError(source, "not a JSON object");
  ModelConfig config;
  ModelShape& c = config.shape;
  try {
    if (j.contains("model_type") && j["model_type"] != "gpt2")
      throw FileError(source, "model_type is '" + j["model_type"].get<std::string>() + "', expected 'gpt2'");
    for (const char* key : {"n_layer", "n_head", "n_embd", "vocab_size"})
      if (!j.contains(key)) throw FileError(source, std::string("missing required field ") + key);
    c.nLayer = j.at("n_layer").get<int>();
    c.nHead = j.at("n_head").get<int>();
    c.nEmbd = j.at("n_embd").get<int>();
    c.vocabSize = j.at("vocab_size").get<int>();
    c.nPositions = j.value("n_positions", j.value("n_ctx", 1024));
    c.layerNormEpsilon = j.value("layer_norm_epsilon", 1e-5);
    // Without one, the last id (GPT-2's 50256 for its 50257 tokens, and what our tokenizer trainer does).
    c.eotTokenId = c.vocabSize - 1;
    if (j.contains("eos_token_id") && j["eos_token_id"].is_number_integer())
      c.eotTokenId = j["eos_token_id"].get<int>();
    c.tiedUnembedding = j.value("tie_word_embeddings", true);
    // Variants of Hugging Face's GPT-2 class that this model does not implement: refuse rather than misread.
    if (j.contains("n_inner") && j["n_inner"].is_number() && j["n_inner"].get<int>() != 4 * c.nEmbd)
      throw FileError(source, "n_inner " + std::to_string(j["n_inner"].get<int>()) +
                                  " is not supported (the MLP width is 4 × n_embd)");
    for (const char* flag : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
      if (j.value(flag, false)) throw FileError(source, std::string(flag) + " = true is not supported");
    if (!j.value("scale_attn_weights", true))
      throw FileError(source, "scale_attn_weights = false is not supported");
    if (j.contains("activation_function") && j["activation_function"] != "gelu_new")
      throw FileError(source, "activation_function '" + j["activation_function"].get<std::string>() +
                                  "' is not supported (GPT-2 uses gelu_new, the tanh approximation)");
  } catch (const nlohmann::json::exception& e) {
    throw FileError(source, std::string("malformed field: ") + e.what());
  }
  c.validate(source);

  config.norms = NormState(c.nLayer);
  if (j.contains("normfree")) {
    const nlohmann::json& block = j["normfree"];
    // Written as {"format_version": 1} before every format carried "format" + "version".
    if (block.is_object() && block.contains("format_version") && !block.contains("format")) {
      nlohmann::json legacy{{"format", kModelBlockFormat.name}, {"version", block["format_version"]}};
      checkFileFormat(legacy, kModelBlockFormat, source + " (\"normfree\" block)");
    } else {
      checkFileFormat(block, kModelBlockFormat, source + " (\"normfree\" block)", WhenUnmarked::IsVersion1);
    }
    config.folded = block.value("folded", false);
  }
  if (j.contains("normfree") && j["normfree"].contains("sites")) {
    try {
      for (auto& [name, site] : j["normfree"]["sites"].items())
        config.norms.at(parseSiteName(name, c.nLayer)) = siteFromJson(site);
      config.norms.validate();
    } catch (const std::exception& e) {
      throw FileError(source, std::string("normfree.sites: ") + e.what());
    }
  }
  return config;
}

ModelConfig loadConfigFile(const std::string& path) { return parseConfigJson(readTextFile(path), path); }

std::string configToJson(const ModelConfig& config) {
  const ModelShape& c = config.shape;
  nlohmann::ordered_json j;
  j["model_type"] = "gpt2";
  j["architectures"] = {"GPT2LMHeadModel"};
  j["n_layer"] = c.nLayer;
  j["n_head"] = c.nHead;
  j["n_embd"] = c.nEmbd;
  j["n_positions"] = c.nPositions;
  j["n_ctx"] = c.nPositions;
  j["vocab_size"] = c.vocabSize;
  j["layer_norm_epsilon"] = c.layerNormEpsilon;
  j["activation_function"] = "gelu_new";
  j["bos_token_id"] = c.eotTokenId;
  j["eos_token_id"] = c.eotTokenId;
  j["tie_word_embeddings"] = c.tiedUnembedding;
  // Dropout is never used by the workbench; zero keeps Hugging Face evaluation identical.
  j["resid_pdrop"] = 0.0;
  j["embd_pdrop"] = 0.0;
  j["attn_pdrop"] = 0.0;
  j["initializer_range"] = 0.02;
  j["torch_dtype"] = "float32";
  nlohmann::ordered_json sites = nlohmann::ordered_json::object();
  for (SiteId s : config.norms.sites()) sites[siteName(s)] = siteToJson(config.norms.at(s));
  j["normfree"] = {{"format", kModelBlockFormat.name},
                   {"version", kModelBlockFormat.version},
                   {"layernorm_free", config.norms.isLayerNormFree()},
                   {"folded", config.folded},
                   {"sites", sites}};
  return j.dump(2) + "\n";
}

std::vector<ParameterShape> parameterShapes(const ModelShape& c) {
  const int64_t d = c.nEmbd;
  std::vector<ParameterShape> out = {{"wte.weight", {c.vocabSize, d}}, {"wpe.weight", {c.nPositions, d}}};
  for (int l = 0; l < c.nLayer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    out.push_back({p + "ln_1.weight", {d}});
    out.push_back({p + "ln_1.bias", {d}});
    out.push_back({p + "attn.c_attn.weight", {d, 3 * d}});
    out.push_back({p + "attn.c_attn.bias", {3 * d}});
    out.push_back({p + "attn.c_proj.weight", {d, d}});
    out.push_back({p + "attn.c_proj.bias", {d}});
    out.push_back({p + "ln_2.weight", {d}});
    out.push_back({p + "ln_2.bias", {d}});
    out.push_back({p + "mlp.c_fc.weight", {d, 4 * d}});
    out.push_back({p + "mlp.c_fc.bias", {4 * d}});
    out.push_back({p + "mlp.c_proj.weight", {4 * d, d}});
    out.push_back({p + "mlp.c_proj.bias", {d}});
  }
  out.push_back({"ln_f.weight", {d}});
  out.push_back({"ln_f.bias", {d}});
  if (!c.tiedUnembedding) out.push_back({"lm_head.weight", {c.vocabSize, d}});
  return out;
}

}  // namespace nf
